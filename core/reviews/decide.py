"""One review decision, computed for the candidate it decides: never a re-curation of the inbox.

``approve`` used to run curation over every pending candidate to find the ops of one (seconds at
10,000 pending). Here a decision reads the records once into a :class:`Context` (the records, a
:class:`~commonkeep.gate.matching.MatchIndex` over the active ones, the tombstoned and known
ids), finds the candidate's neighbours in that index, and runs curation's own ``propose`` on that
candidate and those few records: the same scoring, matching and special cases (tombstoned,
already promoted, another machine's contested version), at the cost of one candidate.

What approving does is a named **choice** (:data:`CHOICES`), never a guess from small print:

- a new statement: ``add``;
- a duplicate or near-duplicate of an active record: ``reinforce`` (keep the existing record, add
  the candidate's evidence, raise its confidence; the default) or ``replace`` (the candidate's
  statement replaces it: the old record is kept as superseded, or updated in place when curation
  found the same topic);
- a conflict with an active record: ``replace`` or ``keep_both`` (both kept, both marked
  contested). There is no default: an approve without one of them is refused, so a contradicting
  record is never added as if it agreed.

Whatever the choice, an approve never leaves two active records with the same statement in the
same scope (:func:`record_key`: the statement compared after :func:`statement_key`).

A match curation calls a duplicate or an agreement but that says the opposite (:func:`contradicts`:
a negation on one side only, or different numbers) is treated as the conflict it is.

Public functions: :func:`load_context`, :func:`plan`, :func:`preview`, :func:`approve`, :func:`choices_for`,
:func:`statement_key`, :func:`record_key`, :func:`contradicts`; :class:`Plan`, :class:`Context`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.gate.matching import MatchIndex, subject_change, supersedes_target, tokens
from commonkeep.reviews.words import CHOICE_WORDS, choice_words, kind_words

Row = dict[str, Any]

CHOICES: dict[str, str] = {k: CHOICE_WORDS[k] for k in ("add", "reinforce", "replace", "keep_both")}
#: the choices that change or retire a record: never a default, always named (``--replace``)
REPLACING = ("replace",)
ALIASES = {"contest": "keep_both", "keep-both": "keep_both"}  # the words a page or a shell may use
SAME = ("duplicate", "strengthens_existing")
CONFLICT = ("potential_conflict", "ambiguous")


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def contradicts(text: str, other: str) -> bool:
    """Whether two similar statements say opposite things: one negates (a contradiction cue) and
    the other does not, or they say the same but for a number ("line length is 120" / "... 110")."""
    from commonkeep.gate.matching import DUPLICATE_SIMILARITY, has_contradiction_cue, similarity

    if has_contradiction_cue(text) != has_contradiction_cue(other):
        return True
    if sorted(_NUMBER.findall(text)) == sorted(_NUMBER.findall(other)):
        return False
    return similarity(tokens(_NUMBER.sub(" ", text)), tokens(_NUMBER.sub(" ", other))) >= DUPLICATE_SIMILARITY


#: the statuses of a record that says its statement: an add of the same statement makes a second copy
_SAYS = ("active", "contested")


@dataclass
class Context:
    """The records a decision is matched against (read once; see :func:`load_context`)."""

    root: Path
    by_id: dict[str, Row]  # every record, any status
    index: MatchIndex  # the active records, by token
    order: list[str]  # index entry -> record id
    tombstoned: set[str]
    statements: dict[str, str]  # record_key -> the id of a record that says it (active or contested)
    governance_mode: str = "compatibility"
    writer_role: str | None = None
    extra: dict[str, Row] = field(default_factory=dict)  # records added or changed since the index was built

    def live(self, rid: str) -> Row | None:
        rec = self.extra.get(rid) or self.by_id.get(rid)
        return rec if rec is not None and rec.get("status") in ("active", "contested") else None

    def note(self, rec: Row) -> None:
        """Take a record added or changed by a decision into account (no re-read of the files)."""
        rid = str(rec["id"])
        old = self.by_id.get(rid)
        if old is not None and old.get("status") in _SAYS:
            key = record_key(old)
            if self.statements.get(key) == rid:
                del self.statements[key]
        self.by_id[rid] = rec
        self.extra[rid] = rec
        if rec.get("status") in _SAYS:
            self.statements.setdefault(record_key(rec), rid)

    def relevant(self, text: str, tags: list[str]) -> list[Row]:
        """The records a candidate can match: its neighbours in the index, the record it says it
        supersedes, and every record added or changed since the index was built."""
        ids = {self.order[i] for i in self.index.neighbours(tokens(text))}
        target = supersedes_target(text, tags)
        if target:
            ids.add(target)
        ids.update(self.extra)
        out = [r for r in (self.extra.get(i) or self.by_id.get(i) for i in sorted(ids)) if r is not None]
        return [r for r in out if r.get("status") == "active"]


def load_context(root: Path | str, *, shared: bool = False) -> Context:
    """Read the records of ``root`` once and index the active ones (about 0.1 s for 2,000 records).

    ``shared``: the records as ``record_lines`` remembers them, the very objects the apply that
    follows reads (one parse of the files per decision, not two), for a context used by one
    decision and dropped (:func:`approve` without ``ctx``). Nothing here changes a record in
    place (a decision's ops are built on copies); a context kept across decisions (the web app's
    queue) takes records parsed for it alone (the default)."""
    from commonkeep.gate.writer import configured_writer_role
    from commonkeep.reviews.statement_words import index_records
    from commonkeep.store import record_lines
    from commonkeep.store.core import Store
    from commonkeep.store.curators import curator_config

    store = Store(root, warn=False)
    by_id: dict[str, Row] = {}
    # parsed anew (the context keeps them) unless shared; checked once for this read and the apply's
    files = record_lines.records_by_file(store, fresh=not shared) or store.records_by_file(active_only=False)
    for rows in files.values():
        for r in rows:
            by_id.setdefault(str(r["id"]), r)
    # the words and keys of the statements, as the last decision left them (``statement_words``)
    index, order, statements = index_records(store.layout.runtime_dir, by_id, _SAYS)
    return Context(Path(root), by_id, index, order, store.tombstoned_ids(), statements,
                   str(curator_config(root)["governanceMode"]), configured_writer_role(root))


@dataclass
class Plan:
    """What approving one candidate can do, and the ops of the chosen way."""

    candidate: Row  # enriched: scores, match kind and matched records against the records now
    kind: str  # the match kind
    matched: list[str]  # the live records it matches
    choices: list[str]  # what approving may do (keys of CHOICES); empty: it cannot be approved
    default: str | None  # the choice taken when none is given (None: one must be given)
    ops: list[Row]  # the ops of ``choice`` (empty when it cannot be approved or a choice is needed)
    choice: str | None = None
    below_gate: bool = False
    refusal: str = ""  # why it cannot be approved (plain words)
    curated: list[Row] = field(default_factory=list)  # the ops curation alone would propose
    target_text: str = ""  # the statement of the record it would reinforce or replace
    why: str = ""  # why it is a new statement although it looks like a record (another subject)
    repeats: str = ""  # the candidate of the same batch it repeats (closed with it)

    @property
    def needs_choice(self) -> bool:
        """Approving needs a named choice (a replace, a conflict): there is no default."""
        return bool(self.choices) and self.default is None and not self.ops

    def to_json(self) -> dict[str, Any]:
        """The plan as a page shows it: what the candidate is, what it would change, each choice in
        plain words, the one taken (or that one must be named), and why it cannot be approved."""
        chosen = self.choice if self.ops else None
        return {"id": self.candidate.get("id"), "text": self.candidate.get("text"), "kind": self.kind,
                "kind_words": kind_words(self.kind), "target_id": self.matched[0] if self.matched else None,
                "target_text": self.target_text, "why": self.why, "repeats": self.repeats or None,
                "choices": [{"choice": c, "words": choice_words(c)} for c in self.choices],
                "default": self.default, "choice": chosen, "choice_words": choice_words(chosen) if chosen else "",
                "needs_choice": self.needs_choice, "replaces": chosen in REPLACING,
                "refusal": self.refusal, "ops": [{"op": o["op"], "target_id": o.get("target_id"), "reason": o.get("reason")} for o in self.ops]}


def choices_for(kind: str) -> tuple[list[str], str | None]:
    """The choices approving offers for a match kind, and the default one (``None``: must choose)."""
    if kind in SAME:
        return ["reinforce", "replace"], "reinforce"
    if kind == "updates_existing":  # a near-repeat: as a repeat, the record is kept; replacing it is named
        return ["reinforce", "replace", "add"], "reinforce"
    if kind == "supersedes_existing":  # a replace is never a default: a person names it
        return ["replace", "add"], None
    if kind == "potential_conflict":
        return ["replace", "keep_both"], None
    if kind == "ambiguous":
        return ["keep_both"], None
    return ["add"], "add"


def _curated(ctx: Context, raw: Row) -> Any:
    from commonkeep.patches.curate import propose

    rel = ctx.relevant(str(raw.get("text", "")), [str(t) for t in raw.get("tags") or []])
    contested = raw.get("contested")
    other = ctx.live(str(contested.get("id"))) if isinstance(contested, dict) else None
    return propose(rel, [raw], tombstoned=ctx.tombstoned, known_ids=set(ctx.by_id), governance_mode=ctx.governance_mode,
                   writer_role=ctx.writer_role, contested_records=[other] if other and other.get("status") == "contested" else [],
                   root=ctx.root)


def plan(ctx: Context, raw: Row, choice: str | None = None, *, state: Context | None = None) -> Plan:
    """What approving ``raw`` (a stored ``new`` candidate, its text possibly edited) does with ``choice``.

    Never raises for a candidate that cannot be approved: :attr:`Plan.refusal` says why and
    :attr:`Plan.ops` is empty (``approve`` raises it). A ``choice`` outside :attr:`Plan.choices`
    is a refusal too.

    ``ctx`` is what the candidate is matched against (the records as they are); ``state`` (default
    ``ctx``) the records as the decisions before it in the same batch leave them, which its ops are
    built on: a batch is judged as a whole, never against the records it is about to create.
    A candidate updates or replaces a record only when both are about the same subject
    (``matching.subject_change``); otherwise it is a new statement.
    """
    from commonkeep.gate.scoring import candidate_confidence, proposed_layer
    from commonkeep.gate.trust import max_risk
    from commonkeep.patches.curate import _merge_evidence, add_target, record_from_candidate, route
    from commonkeep.util.timeutil import today

    state = state or ctx
    cid = str(raw["id"])
    prop = _curated(ctx, raw)
    cand = prop.scored.get(cid) or dict(raw)
    curated = [o for o in prop.ops if o.get("candidate_id") == cid]
    below = cid in prop.pending
    kind = str(cand.get("match_kind") or "new")
    matched = [m for m in cand.get("matched_memory_ids") or [] if ctx.live(str(m))]
    out = Plan(cand, kind, matched, [], None, [], choice, below, curated=curated)
    special = [o for o in curated if o["op"] == "reject_candidate" and not str(o.get("reason", "")).startswith("duplicate")]
    if special:
        out.refusal = str(special[0].get("reason"))
        return out
    if any(o["op"] == "update" and str(o.get("reason", "")).startswith("contested") for o in curated):
        out.choices, out.default = ["replace"], None  # another machine's version: take it (named), or reject
        rid = str(curated[0].get("target_id") or "")
        out.matched, out.target_text = [rid], str((ctx.live(rid) or {}).get("statement", ""))
        out.ops = _pick(out, choice, lambda: [dict(o) for o in curated])
        return out
    if kind != "new" and not matched:
        kind = out.kind = "new"
    first_rec = ctx.live(matched[0]) if matched else None
    text = str(cand.get("text", ""))
    named = supersedes_target(text, [str(t) for t in cand.get("tags") or []])
    if kind in ("updates_existing", "supersedes_existing") and first_rec is not None and named != matched[0]:
        other = subject_change(text, str(first_rec.get("statement", "")))
        if other:  # another subject, or a lossy rewrite: never a replace; a statement of its own
            kind, matched, first_rec = "new", [], None
            out.kind, out.matched, out.why = kind, matched, other
    if kind in (*SAME, "updates_existing") and first_rec is not None and contradicts(str(cand.get("text", "")), str(first_rec.get("statement", ""))):
        kind = out.kind = "potential_conflict"  # "line length is 120" never reinforces "... 110"
    out.choices, out.default = choices_for(kind)
    risk = str(cand.get("poisoning_risk") or "low")
    conf = candidate_confidence(cand)
    record = record_from_candidate(cand, on=today(), layer=proposed_layer(cand))
    record["confidence"] = conf
    if kind in SAME and first_rec is not None and first_rec.get("scope") != record.get("scope"):
        out.choices, out.default = ["add", "reinforce", "replace"], "add"  # the same rule in another scope
    first = state.live(matched[0]) if matched else None
    if first_rec is not None and first is None:
        out.refusal = (f"{matched[0]} is replaced or retired by another candidate of this decision; "
                       "decide this one on its own, after it")
        return out
    out.target_text = str((first or {}).get("statement", ""))

    def build(which: str) -> list[Row]:
        base: Row = {"risk": risk, "candidate_id": cid, "choice": which}
        if which == "add":
            same = state.statements.get(record_key(record))
            if same:
                held = state.by_id.get(same) or {}
                if held.get("status") == "contested":  # a second copy would outlive the contest's settling
                    raise _Refuse(f"a contested record ({same}) already says this; approving would add a second copy: "
                                  "settle that record first (replace or reject what contradicts it), or reject this candidate")
                raise _Refuse(f"an active record ({same}) already says this; approving would add a second copy: "
                              "reinforce the existing record or reject this candidate")
            return [{**base, "op": "add", "target": add_target(record), "record": record, "reason": CHOICES["add"]}]
        assert first is not None
        merged = _merge_evidence(list(first.get("evidence") or []), list(cand.get("evidence_refs") or []))
        if which == "reinforce":
            upd = {"evidence": merged, "confidence": round(min(0.95, max(float(first.get("confidence", 0)), conf) + 0.02), 4)}
            return [{**base, "op": "update", "target": route(first), "target_id": first["id"], "updates": upd,
                     "before": _before(first, upd), "reason": f"{kind}: {CHOICES['reinforce']}"}]
        if which == "replace":
            if kind == "updates_existing" or (first.get("status") == "contested" and kind != "supersedes_existing"):
                upd = {"statement": record["statement"], "evidence": merged, "confidence": conf}
                return [{**base, "op": "update", "target": route(first), "target_id": first["id"], "updates": upd,
                         "before": _before(first, upd), "risk": max_risk(risk, "medium"), "reason": f"{kind}: {CHOICES['replace']}"}]
            to = {**record, "supersedes": [first["id"]]}
            return [{**base, "op": "supersede", "target": route(first), "target_id": first["id"], "to_record": to,
                     "risk": max_risk(risk, "medium"), "reason": f"{kind}: {CHOICES['replace']}"}]
        # keep_both: the new record and every record it contradicts, all contested
        ops = [{**base, "op": "add", "target": add_target(record), "record": {**record, "status": "contested"},
                "risk": max_risk(risk, "medium"), "reason": f"{kind}: {CHOICES['keep_both']}"}]
        for m in matched:
            rec = state.live(m)
            if rec is not None and rec.get("status") == "active":
                ops.append({**base, "op": "contest", "target": route(rec), "target_id": m, "risk": "medium",
                            "reason": f"contradicted by candidate {cid} (kept both)"})
        return ops

    out.ops = _pick(out, choice, lambda: build(str(out.choice)))
    return out


def _before(rec: Row, updates: Row) -> Row:
    """The values ``updates`` replaces (kept in the op, so an undo can put them back and a page can
    show an update's old statement)."""
    return {k: json.loads(json.dumps(rec.get(k))) for k in updates}


class _Refuse(Exception):
    pass


def _pick(out: Plan, choice: str | None, build: Any) -> list[Row]:
    which = ALIASES.get(str(choice), choice) or out.default
    if which is None:
        ids = ", ".join(out.matched)
        old = f' ("{out.target_text}")' if out.target_text else ""
        what = (f"it contradicts {ids}{old}" if out.kind in CONFLICT
                else f"approving would replace {ids}{old} with this statement")
        out.refusal = (f"{what}: approving needs an explicit choice, "
                       + " or ".join(f"'{c}' ({CHOICES[c]})" for c in out.choices))
        return []
    if which not in out.choices:
        named = f"'{which}'" if which in CHOICES else f"{which!r} (not a choice)"
        out.refusal = (f"{named} does not apply to a {out.kind.replace('_', ' ')} candidate; its choices are "
                       + ", ".join(f"'{c}' ({CHOICES[c]})" for c in out.choices))
        return []
    out.choice = which
    try:
        ops: list[Row] = build()
    except _Refuse as exc:
        out.refusal = str(exc)
        return []
    return ops


def approve(root: Path | str, ids: list[str], *, role: str | None, edits: dict[str, str] | None = None,
            ratify: bool = False, choice: str | dict[str, str] | None = None, ctx: Context | None = None,
            inbox: list[Row] | None = None) -> Any:
    """Approve candidates, each by its own :func:`plan`: one manual patch, applied now.

    ``choice``: one choice for every id, or a dict id -> choice (missing ids take their default).
    ``edits``: id -> an edited statement (matched and stored instead of the candidate's text).
    ``ctx`` / ``inbox``: the records and candidates as already read (the web app keeps them);
    read here when not given. A refusal (unknown or decided candidate, a choice needed, L1
    without ratify, a second copy of an active statement) raises ``BadInput`` and applies nothing.
    Returns the ``ApplyResult``; with ``ctx`` given it is updated with what was applied.
    """
    from commonkeep.gate.agent_shell import refuse_inside_agent
    from commonkeep.gate.writer import require_writer
    from commonkeep.patches.patch import apply_patch
    from commonkeep.reviews.review import _manual_patch

    refuse_inside_agent("ratifying" if ratify else "approving or editing a candidate")
    require_writer("ratify" if ratify else "review", role, root)
    rows = inbox if inbox is not None else candidates_named(root, ids)
    ctx = ctx if ctx is not None else load_context(root, shared=True)  # this decision's alone: the apply reads the same records
    ops = [json.loads(json.dumps(o)) for p in preview(ctx, rows, ids, choice=choice, edits=edits, ratify=ratify) for o in p.ops]
    verb = "ratify" if ratify else "approve"
    patch = _manual_patch(ops, f"{verb} {', '.join(ids)}", role)
    result = apply_patch(root, patch, role=role, ratify=ratify)
    if result.skipped:
        raise BadInput("some ops were refused and skipped: " + "; ".join(f"{k}: {v}" for k, v in result.skipped.items()),
                       hint=f"patch {result.patch['patch_id']} records what was applied")
    for o in result.patch["ops"]:
        _note(ctx, o)
    return result


def preview(ctx: Context, rows: list[Row], ids: list[str], *, choice: str | dict[str, str] | None = None,
            edits: dict[str, str] | None = None, ratify: bool = False, strict: bool = True) -> list[Plan]:
    """What approving ``ids`` together does (a dry run of :func:`approve`: nothing is written, ``ctx``
    is not changed): each candidate's :class:`Plan`, every replace, reinforce and conflict with its
    own choice (``choice``: one for all, or id -> choice; :meth:`Plan.to_json` for a page).

    A batch is judged as a whole: every candidate is matched against the records as they are,
    never against a record an earlier candidate of the batch is about to create (so B never
    "contradicts" A's record-to-be); each one's ops are built on the records as the ones before it
    leave them (two reinforces of one record both count). A candidate repeating one approved
    earlier in the batch is closed as its repeat (``kind`` ``repeat``), never a second record.
    Raises ``BadInput`` naming the first candidate that cannot be approved, and why; with
    ``strict=False`` it returns every plan instead, a refused one with its :attr:`Plan.refusal`.
    """
    from commonkeep.reviews.review import _edit
    from commonkeep.secrets import redact

    if not ids:
        raise BadInput("select at least one candidate")
    wanted = set(ids)
    by_id = {str(c["id"]): c for c in rows if str(c.get("id")) in wanted}
    work = Context(ctx.root, dict(ctx.by_id), ctx.index, ctx.order, ctx.tombstoned, dict(ctx.statements),
                   ctx.governance_mode, ctx.writer_role, dict(ctx.extra))  # the records as the batch leaves them
    added = MatchIndex()  # the records the batch adds so far: a repeat of one reinforces it
    added_by: dict[str, str] = {}  # record id -> the candidate of the batch adding it
    plans: list[Plan] = []

    def refuse(p: Plan, hint: str) -> None:
        if strict:
            raise BadInput(f"{p.candidate.get('id')} cannot be approved: {p.refusal or 'nothing to add'}; nothing was applied",
                           hint=hint)
        plans.append(p)

    for cid in dict.fromkeys(ids):
        raw = by_id.get(cid)
        if raw is None or raw.get("status") != "new":
            state = f"was already {'approved' if raw.get('status') == 'patched' else raw.get('status')}" if raw else "is not in the inbox"
            if strict:
                raise BadInput(f"candidate {cid} {state}; nothing was applied", hint="list the queue with `commonkeep review --list`")
            plans.append(Plan({"id": cid, **(raw or {})}, "new", [], [], None, [], refusal=f"candidate {cid} {state}"))
            continue
        if edits and cid in edits:
            raw = {**raw, "text": redact(edits[cid].strip()).text}
        want = choice.get(cid) if isinstance(choice, dict) else choice
        p = plan(ctx, raw, want, state=work)
        text, tags = str(raw.get("text", "")), [str(t) for t in raw.get("tags") or []]
        adds = p.choice == "add" or "already says this" in p.refusal
        first = added.match(text, tags, None) if adds and len(added) else None
        if first is not None and first.kind == "duplicate":  # the record-to-be of an earlier one: reinforced, as a repeat of a record is
            p = _repeat(p, work, first.ids[0], added_by[first.ids[0]])
        if not p.ops:
            refuse(p, f"choose with --choice (a replace: --replace), or reject it: commonkeep review --reject {cid} --reason duplicate")
            continue
        layer_l1 = any((o.get("record") or o.get("to_record") or {}).get("layer") == "L1" for o in p.ops)
        if layer_l1 and not ratify:
            if strict:
                raise BadInput(f"{cid} is an L1 (identity) candidate; L1 is never applied by review", hint=f"ratify it: commonkeep ratify {cid}")
            p.refusal, p.ops = "it is an L1 (identity) candidate; L1 is never applied by review: ratify it", []
            plans.append(p)
            continue
        if edits and cid in edits:
            for o in p.ops:
                # the edited statement goes where the candidate's would: a new record, a replacement;
                # a reinforce keeps the record's own statement (the edit is what was matched to it)
                if o["op"] in ("add", "supersede") or "statement" in (o.get("updates") or {}):
                    _edit(o, edits[cid])
                o["edited"] = True  # the outcome says "approved with an edit"
        for o in p.ops:
            _note(work, o)
        for o in p.ops:
            if o["op"] == "add":
                added.add(str(o["record"]["id"]), text, tags, None)
                added_by[str(o["record"]["id"])] = cid
        plans.append(p)
    return plans


def _repeat(p: Plan, work: Context, rid: str, by: str) -> Plan:
    """The plan of a candidate repeating ``by``, approved in the same batch: reinforce its record ``rid``."""
    from commonkeep.gate.scoring import candidate_confidence
    from commonkeep.patches.curate import _merge_evidence, route

    rec = work.live(rid)
    cid = str(p.candidate["id"])
    if rec is None:
        return Plan(p.candidate, "repeat", [], [], None, [], refusal=f"it repeats {by}, whose record this decision retires")
    conf = candidate_confidence(p.candidate)
    upd = {"evidence": _merge_evidence(list(rec.get("evidence") or []), list(p.candidate.get("evidence_refs") or [])),
           "confidence": round(min(0.95, max(float(rec.get("confidence", 0)), conf) + 0.02), 4)}
    op = {"risk": str(p.candidate.get("poisoning_risk") or "low"), "candidate_id": cid, "choice": "reinforce", "op": "update",
          "target": route(rec), "target_id": rid, "updates": upd, "before": _before(rec, upd),
          "reason": f"repeats {by}, approved in the same decision: {CHOICES['reinforce']}"}
    return Plan(p.candidate, "repeat", [rid], ["reinforce"], "reinforce", [op], "reinforce",
                target_text=str(rec.get("statement", "")), repeats=by)


def _note(ctx: Context, op: Row) -> None:
    """What an applied op did to the records, told to ``ctx`` (so the next decision sees it)."""
    kind = op.get("op")
    if kind == "add":
        ctx.note(dict(op["record"]))
    elif kind == "supersede":
        old = ctx.live(str(op["target_id"]))
        if old is not None:
            ctx.note({**old, "status": "superseded", "superseded_by": [*(old.get("superseded_by") or []), op["to_record"]["id"]]})
        ctx.note(dict(op["to_record"]))
    elif kind in ("update", "contest", "uncontest", "deprecate"):
        old = ctx.live(str(op["target_id"]))
        if old is not None:
            status = {"contest": "contested", "uncontest": "active", "deprecate": "deprecated"}.get(str(kind))
            ctx.note({**old, **(op.get("updates") or {}), **({"status": status} if status else {})})


from commonkeep.patches.waiting import (  # noqa: E402,F401  (moved there in 0.3; the old name keeps working)
    _KEYS,
    _record_key,
    candidates_for,
    candidates_named,
    record_key,
    statement_key,
)
