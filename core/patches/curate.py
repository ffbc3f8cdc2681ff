"""Curation: turn pending capture candidates into a proposed patch (``patches/<patch_id>.json``).

``propose(root)`` scores every ``new`` candidate (``scoring``), matches it against the active records and
those proposed earlier in the run (``matching``), and emits ops as the contract's §4.3, §6.6, §6.7 do:

| candidate                                   | op                                        | default_selected |
|---------------------------------------------|-------------------------------------------|------------------|
| below the gate (confidence < 0.75 or < 2 refs) | none: stays ``new`` for review          |                  |
| record id already exists or is tombstoned   | ``reject_candidate``                      | yes              |
| ``duplicate`` (similarity ≥ 0.82)           | ``reject_candidate``                      | yes              |
| ``strengthens_existing`` (adds nothing)     | ``update`` (evidence merged)              | if auto-eligible |
| ``updates_existing`` (adds to or changes it) | ``update`` (statement replaced), medium  | never            |
| ``supersedes_existing``                     | ``supersede``, medium                     | never            |
| ``potential_conflict``                      | ``add`` + ``contest`` of the other, medium; an inquiry | never |
| ``ambiguous``                               | ``add``, medium; an inquiry               | never            |
| contested (``commonkeep share sync``)        | ``update`` of that record, medium (or ``reject_candidate`` when it was deleted) | never |
| ``new`` L2                                  | ``add``                                   | if auto-eligible |
| ``new`` L1                                  | ``add``, medium (needs ``commonkeep ratify``) | never        |

Active records whose reinforcement suggests another stability get ``update_stability`` (§4.6). Ops of
candidates written in one session carry ``review_group`` (``<host>:<session id>``): reviewed together.
An op's risk is at least the candidate's poisoning risk; a high-risk op is never default-selected.

Nothing is proposed twice: a candidate with an op still waiting in a patch (every op of a ``proposed``
patch; the unselected, unrefused ops of a ``partially_applied`` one) and an ``update_stability``
identical to a waiting one are left out and named in ``Proposal.already_proposed``; with nothing
else left, no patch is written. Patch ids are ``patch_<minute>_ck<6 base36>``, never OMP's ``_001``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from commonkeep.gate.matching import MatchIndex, subject_change
from commonkeep.gate.scoring import (
    auto_apply_blockers,
    candidate_confidence,
    enrich_candidate,
    proposed_layer,
)
from commonkeep.gate.trust import DEFAULT_CANDIDATE_CONFIDENCE, MIN_CONFIDENCE, MIN_EVIDENCE_COUNT, max_risk
from commonkeep.patches import curate_parity as parity
from commonkeep.patches.review_groups import group_by_session
from commonkeep.patches.waiting import Waiting, op_signature, waiting_in, waiting_ops
from commonkeep.store.ids import patch_id, record_id_of
from commonkeep.store.project import infer_project_name  # noqa: F401  (moved to the store in 0.3; the old name keeps working)
from commonkeep.util.timeutil import now, now_iso, today

CHANGE_CONDITION = parity.CHANGE_CONDITION  # OmpKeep's wording
REVIEW_CADENCE_DAYS = 30
EVIDENCE_NOTE = "Captured evidence reference"


def record_from_candidate(cand: dict[str, Any], *, on: str | None = None, layer: str | None = None) -> dict[str, Any]:
    """The MemoryRecord a candidate becomes (§6.7), in upstream key order."""
    day = on or today()
    src = cand.get("source") or {}
    cwd = src.get("cwd") if isinstance(src, dict) else None
    scope: dict[str, Any] = {"type": "project", "project": infer_project_name(str(cwd))} if cwd else {"type": "global"}
    conf = cand.get("confidence")
    rec: dict[str, Any] = {"id": record_id_of(cand)}
    for key in ("resource_id", "profile_id", "thread_id"):  # right after the id, as OmpKeep writes them
        if isinstance(cand.get(key), str):
            rec[key] = cand[key]
    rec.update({
        "layer": layer or proposed_layer(cand),
        "scope": scope,
        "tags": [t for t in cand.get("tags") or [] if not str(t).startswith("supersedes:")],
        "statement": cand["text"],
        "evidence": [{"type": "artifact", "ref": ref, "note": EVIDENCE_NOTE} for ref in cand.get("evidence_refs") or []],
        "confidence": conf if isinstance(conf, int | float) and not isinstance(conf, bool) else DEFAULT_CANDIDATE_CONFIDENCE,
        "stability": "semi-stable",
        "created_at": day,
        "updated_at": day,
        "review": {
            "cadence_days": REVIEW_CADENCE_DAYS,
            "next_review": (date.fromisoformat(day) + timedelta(days=REVIEW_CADENCE_DAYS)).isoformat(),
            "change_condition": CHANGE_CONDITION,
        },
        "status": "active",
        "supersedes": [],
        "superseded_by": [],
        "vault_ref": None,
    })
    for key in ("ruleType", "memory_kind"):
        if cand.get(key):
            rec[key] = cand[key]
    for src_key, dst in (
        ("proposed_applies_when", "applies_when"),
        ("proposed_does_not_apply_when", "does_not_apply_when"),
        ("proposed_known_exceptions", "known_exceptions"),
    ):
        if cand.get(src_key):
            rec[dst] = list(cand[src_key])
    if cand.get("normalized_key"):
        rec["normalized_key"] = cand["normalized_key"]  # last, as OmpKeep adds it
    return rec


def route(record: dict[str, Any]) -> str:
    """The canonical file (relative to the root) a record lives in (§2.2; ``layout.record_file``)."""
    from commonkeep.store.layout import record_file

    return record_file(record)


def add_target(record: dict[str, Any]) -> str:
    """The ``target`` of an ``add`` op: the layer's file, as OmpKeep's curator names it (§14.4).

    Informational in both writers (neither's apply reads it): a record lands where its scope
    says, so a project playbook proposed as ``memory/L2.playbooks.jsonl`` is written to
    ``memory/projects/<slug>.jsonl``, by OmpKeep and by commonkeep.
    """
    return "memory/L1.identity.jsonl" if record.get("layer") == "L1" else "memory/L2.playbooks.jsonl"


def _revived_by_share(cand: dict[str, Any], tombstoned: set[str]) -> str | None:
    """The tombstoned record id a contested candidate from ``commonkeep share sync`` would bring
    back (the ``contested`` field it carries names the merged record), else ``None``."""
    contested = cand.get("contested")
    if not isinstance(contested, dict):
        return None
    rid = contested.get("id")
    return rid if isinstance(rid, str) and rid in tombstoned else None


def _contested_record(cand: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The live record a contested candidate from ``commonkeep share sync`` is another version of."""
    contested = cand.get("contested")
    rid = contested.get("id") if isinstance(contested, dict) else None
    return by_id.get(rid) if isinstance(rid, str) else None


def suggested_stability(events: list[dict[str, Any]]) -> str:
    """§4.6: any correction or a negative sum → ``low``; a sum ≥ 1 → ``stable``; else ``semi-stable``."""
    weights = {"explicit_reinforcement": 1.0, "implicit_success": 0.2, "neutral_exposure": 0.0, "explicit_correction": -1.0}
    score = sum(weights.get(str(e.get("outcome")), 0.0) for e in events)
    if any(e.get("outcome") == "explicit_correction" for e in events) or score < 0:
        return "low"
    return "stable" if score >= 1 else "semi-stable"


@dataclass
class Proposal:
    """A proposed patch and what curation saw."""

    patch: dict[str, Any]
    scored: dict[str, dict[str, Any]] = field(default_factory=dict)  # candidate id -> enriched candidate
    op_confidence: dict[str, float] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)  # candidates below the gate
    inquiries: list[dict[str, Any]] = field(default_factory=list)
    path: Path | None = None
    already_proposed: dict[str, str] = field(default_factory=dict)  # op description -> the pending patch holding it
    apply_commands: dict[str, str] = field(default_factory=dict)  # patch id -> the command that applies what it holds
    held: list[dict[str, Any]] = field(default_factory=list)  # the ops of candidates already waiting in a patch (not in ``patch``)

    @property
    def ops(self) -> list[dict[str, Any]]:
        ops: list[dict[str, Any]] = self.patch["ops"]
        return ops


class _Ops:
    def __init__(self) -> None:
        self.ops: list[dict[str, Any]] = []
        self.confidence: dict[str, float] = {}

    def add(self, op: str, *, risk: str, selected: bool, confidence: float, **fields: Any) -> dict[str, Any]:
        op_id = f"op_{len(self.ops) + 1:03d}"
        body: dict[str, Any] = {"op_id": op_id}
        if fields.get("candidate_id") is not None:
            body["candidate_id"] = fields.pop("candidate_id")  # OmpKeep's key order: op_id, candidate_id, op
        body["op"] = op
        body.update({k: v for k, v in fields.items() if v is not None})
        body["risk"] = risk
        body["default_selected"] = bool(selected and risk != "high")
        self.ops.append(body)
        self.confidence[op_id] = confidence
        return body


def _merge_evidence(existing: list[dict[str, Any]], refs: list[str]) -> list[dict[str, Any]]:
    have = {e.get("ref") for e in existing}
    return [*existing, *({"type": "artifact", "ref": r, "note": EVIDENCE_NOTE} for r in refs if r not in have)]


def propose(
    records: list[dict[str, Any]],
    candidates: list[dict[str, Any]],
    *,
    tombstoned: set[str],
    known_ids: set[str],
    reinforcement: list[dict[str, Any]] | None = None,
    min_confidence: float = MIN_CONFIDENCE,
    min_evidence: int = MIN_EVIDENCE_COUNT,
    governance_mode: str = "compatibility",
    generated_by: str = "curator",
    mode: str = "supervised",
    waiting: Waiting | None = None,
    writer_role: str | None = None,
    contested_records: list[dict[str, Any]] | None = None,
    root: Any = None,
) -> Proposal:
    """Build a patch proposal from in-memory state (pure: reads and writes nothing).

    ``waiting`` is what still-pending patches hold (:func:`waiting_ops`); none of it is proposed
    again (``already_proposed`` names it, ``apply_commands`` says how to apply it):

    - a candidate with an op in one of them: all its ops go to ``held``, not into the patch (it is
      still scored and matched, so a new duplicate of it is found; ``review`` shows ``held``);
    - a candidate-less op identical to one of them (``update_stability``).

    A candidate rejected meanwhile is no longer ``new``, so it is never proposed again; applying
    the older patch then refuses its ops (``its candidate … was rejected``).

    ``root`` is where the candidates live: a stamp counts only when the stamp journal binds it to
    the candidate in that root (``commonkeep.gate.stamps``); without it no candidate is stamped.
    """
    waiting = waiting or Waiting()
    day = today()
    index = MatchIndex()
    by_id: dict[str, dict[str, Any]] = {}
    for rec in records:
        index.add_record(rec)
        by_id[str(rec["id"])] = rec
    # records in status ``contested`` are live too: another machine's version of one is an update of it
    live_by_id = {**{str(r["id"]): r for r in contested_records or []}, **by_id}
    targets = parity.Targets(records)  # what a candidate may supersede, indexed once
    ops = _Ops()
    held = _Ops()
    held_keys: dict[str, list[str]] = {}  # patch id -> the waiting candidates / signatures it holds for this run
    scored: dict[str, dict[str, Any]] = {}
    pending: list[str] = []
    inquiries: list[dict[str, Any]] = []
    proposed_ids: set[str] = set()
    proposed_selected: dict[str, bool] = {}
    already: dict[str, str] = {}
    from commonkeep.util import progress

    for raw in progress.track(candidates, len(candidates), "curate", unit="candidate"):
        if raw.get("status") != "new":
            continue
        cid = str(raw["id"])
        cand = enrich_candidate(raw, index, governance_mode, writer_role, root)
        scored[cid] = cand
        conf = candidate_confidence(cand)
        mem_id = record_id_of(raw)
        if cid in waiting.candidates:  # already proposed: computed (for review and matching), not proposed again
            pid = waiting.candidates[cid]
            already[f"candidate {cid} ({waiting.described[cid]})"] = pid
            held_keys.setdefault(pid, []).append(cid)
            sink = held
        else:
            sink = ops
        # What can never be added is rejected whatever its confidence (below the gate it would
        # wait for review as a plain add, and approving that would bring deleted content back).
        if mem_id in tombstoned:
            sink.add("reject_candidate", risk="low", selected=True, confidence=1.0, candidate_id=cid,
                     reason=f"{mem_id} was deleted (tombstoned) and can never come back")
            continue
        revived = _revived_by_share(cand, tombstoned)
        if revived:  # another machine's version of a record this root deleted (commonkeep share sync)
            sink.add("reject_candidate", risk="low", selected=True, confidence=1.0, candidate_id=cid,
                     reason=f"it is another machine's version of {revived}, which was deleted (tombstoned) "
                            "and can never come back")
            continue
        other = _contested_record(cand, live_by_id)
        if other is not None:  # another machine's version of a live record (commonkeep share sync)
            theirs = {"statement": cand["text"],
                      "evidence": _merge_evidence(list(other.get("evidence") or []), list(cand.get("evidence_refs") or []))}
            # the other machine's values of the fields in conflict (e.g. status superseded): taking
            # the op restores what that machine did, not only its statement
            fields = cand["contested"].get("updates") if isinstance(cand.get("contested"), dict) else None
            if isinstance(fields, dict):
                theirs.update({k: v for k, v in fields.items() if k not in ("id", "statement", "evidence")})
            sink.add("update", target=route(other), target_id=other["id"], updates=theirs,
                     risk=max_risk(str(cand.get("poisoning_risk") or "low"), "medium"), selected=False,
                     confidence=conf, candidate_id=cid,
                     reason=f"contested: another machine's version of {other['id']} lost the git merge; select this "
                            "op to take it, or reject the candidate to keep the local statement")
            continue
        if conf < min_confidence or len(set(cand.get("evidence_refs") or [])) < min_evidence:  # a repeated ref counts once
            pending.append(cid)
            continue
        risk = str(cand.get("poisoning_risk") or "low")
        blockers = auto_apply_blockers(cand, governance_mode, writer_role, root)
        auto = not blockers
        kind = cand.get("match_kind", "new")
        matched = list(cand.get("matched_memory_ids") or [])
        why = "; ".join(cand.get("match_reasons") or [])
        if mem_id in known_ids or mem_id in proposed_ids:
            sink.add("reject_candidate", risk="low", selected=True, confidence=1.0, candidate_id=cid,
                     reason=f"already promoted as {mem_id}")
            continue
        layer = proposed_layer(cand)
        record = record_from_candidate(cand, on=day, layer=layer)
        record["confidence"] = conf
        # OmpKeep keeps the match a candidate was captured with (applyCandidateMatch), so a conflict
        # its capture found opens the inquiry even where this run's matching finds none
        asked, asked_ids = (raw["match_kind"], list(raw.get("matched_memory_ids") or [])) if raw.get("match_kind") else (kind, matched)
        if asked in parity.INQUIRY_PRIORITY and sink is ops:  # as OmpKeep, whatever op the candidate gets
            # by id only: the candidate's text is not vetted, and open inquiries reach agents' context
            # (a held candidate's inquiry was opened when it was first proposed)
            seen = cand if asked == kind else {**cand, "match_kind": asked, "matched_memory_ids": asked_ids,
                                                  "match_reasons": list(raw.get("match_reasons") or [])}
            inquiries.append({"question": f"Which holds: candidate {cid} or {', '.join(asked_ids) or 'the matching memory'}?",
                              "context": parity.inquiry_context(seen), "related_memory_ids": asked_ids,
                              "tags": record["tags"], "priority": parity.INQUIRY_PRIORITY[asked]})
        replaces = parity.supersede_target(raw, targets) if layer != "L1" and kind != "duplicate" else None
        if (replaces is not None and parity.named_target(raw) is None and replaces[0] in by_id
                and subject_change(str(cand.get("text", "")), str(by_id[replaces[0]].get("statement", "")))):
            replaces = None  # a guess from cues and tags about another subject: never a supersession
        if replaces is not None:  # OmpKeep's supersession (named, or a contradiction cue with shared tags)
            kind, matched, why = "supersedes_existing", [replaces[0], *[m for m in matched if m != replaces[0]]], replaces[1]
        if kind == "duplicate":
            # a duplicate of a record proposed in this run (or held in a waiting patch) goes only where that proposal goes
            first = matched[0] if matched else ""
            sink.add("reject_candidate", risk="low", selected=first in by_id or proposed_selected.get(first, False),
                     confidence=1.0, candidate_id=cid, reason=f"duplicate: {why}")
            continue
        if layer == "L1" and kind in ("new", "strengthens_existing", "updates_existing"):
            sink.add("add", target=add_target(record), record=record, rationale=parity.add_rationale(raw, auto=False),
                     risk=max_risk(risk, "medium"), selected=False, confidence=conf, candidate_id=cid,
                     reason="L1 identity: needs commonkeep ratify")
        elif kind in ("strengthens_existing", "updates_existing") and matched and matched[0] in by_id:
            old = by_id[matched[0]]
            updates: dict[str, Any] = {"evidence": _merge_evidence(list(old.get("evidence") or []), list(cand.get("evidence_refs") or []))}
            if kind == "updates_existing":  # a changed statement is a person's decision, whoever stamped it
                updates = {"statement": cand["text"], **updates, "confidence": conf}
                op_risk: str = max_risk(risk, "medium")
            else:
                updates["confidence"] = round(min(0.95, max(float(old.get("confidence", 0)), conf) + 0.02), 4)
                op_risk = risk
            sink.add("update", target=route(old), target_id=old["id"], updates=updates, risk=op_risk,
                     selected=auto and kind == "strengthens_existing",
                     confidence=conf, candidate_id=cid, reason=f"{kind}: {why}")
        elif kind == "supersedes_existing" and matched and matched[0] in by_id:
            record["supersedes"] = [matched[0]]
            sink.add("supersede", target_id=matched[0], to_record=record, reason=why,
                     rationale=parity.supersede_rationale(raw, matched[0]),
                     risk=max_risk(risk, "medium"), selected=False, confidence=conf, candidate_id=cid)
        elif kind in ("potential_conflict", "ambiguous"):
            sink.add("add", target=add_target(record), record=record, rationale=parity.add_rationale(raw, auto=False),
                     risk=max_risk(risk, "medium"), selected=False, confidence=conf, candidate_id=cid, reason=f"{kind}: {why}")
            if kind == "potential_conflict" and matched and matched[0] in by_id:
                sink.add("contest", target=route(by_id[matched[0]]), target_id=matched[0], risk="medium", selected=False,
                         confidence=conf, candidate_id=cid, reason=f"contradicted by candidate {cid}")
        else:
            sink.add("add", target=add_target(record), record=record, rationale=parity.add_rationale(raw, auto=auto), risk=risk,
                     selected=auto, confidence=conf, candidate_id=cid, reason="; ".join(blockers) if blockers else None)
        index.add_record(record)
        proposed_ids.add(mem_id)
        proposed_selected[mem_id] = bool(sink.ops[-1]["default_selected"]) if sink.ops[-1].get("candidate_id") == cid else False
    if reinforcement:
        per: dict[str, list[dict[str, Any]]] = {}
        for ev in reinforcement:
            per.setdefault(str(ev.get("memory_id")), []).append(ev)
        for mid, events in per.items():
            target = by_id.get(mid)
            if target is None or target.get("status") != "active" or target.get("layer") == "L1":
                continue
            want = suggested_stability(events)
            if want != target.get("stability"):
                sig = op_signature({"op": "update_stability", "target_id": mid, "updates": {"stability": want}})
                if sig in waiting.ops:
                    already[f"update_stability {mid} -> {want}"] = waiting.ops[sig]
                    held_keys.setdefault(waiting.ops[sig], []).append(sig)
                    continue
                ops.add("update_stability", target=route(target), target_id=mid, updates={"stability": want}, risk="low",
                        selected=True, confidence=1.0, reason=f"reinforcement: {len(events)} event(s) suggest {want}")
    group_by_session(scored, [*ops.ops, *held.ops])
    counts: dict[str, int] = {}
    for op in ops.ops:
        counts[op["op"]] = counts.get(op["op"], 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing to change"
    summary += f"; {len(pending)} candidate(s) below the gate left for review" if pending else ""
    when = now()
    patch = {
        "patch_id": patch_id(when),
        "created_at": now_iso(),
        "generated_by": generated_by,
        "mode": mode,
        "summary": summary,
        "ops": ops.ops,
        "status": "proposed",
        "applied_at": None,
        "applied_ops": [],
        "skipped_ops": [],
    }
    commands = {pid: waiting.apply_command(keys) for pid, keys in held_keys.items()}
    return Proposal(patch, scored, ops.confidence, pending, inquiries, already_proposed=already, apply_commands=commands,
                    held=held.ops)


def _load_inputs(root: Path | str) -> dict[str, Any]:
    from commonkeep.store.core import Store

    store = Store(root)
    store.ensure()
    by_file = store.records_by_file(active_only=False)
    all_recs = [r for rows in by_file.values() for r in rows]
    return {
        "store": store,
        "records": [r for r in all_recs if r.get("status") == "active"],
        "contested_records": [r for r in all_recs if r.get("status") == "contested"],
        "candidates": store.candidates(status="new"),
        "tombstoned": store.tombstoned_ids(),
        "known_ids": {str(r["id"]) for r in all_recs},
        "reinforcement": store.rows(store.layout.reinforcement),
        "waiting": waiting_ops(store.layout.patches_dir),
    }


def check_gate(min_confidence: float, min_evidence: int) -> None:
    """Refuse a curator gate no candidate could be measured against (§6.6)."""
    from commonkeep.errors import BadInput

    if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float) or not 0 <= min_confidence <= 1:
        raise BadInput(f"--min-confidence {min_confidence} is not a confidence: give a number from 0 to 1",
                       hint=f"the default gate is {MIN_CONFIDENCE}")
    if isinstance(min_evidence, bool) or not isinstance(min_evidence, int) or min_evidence < 0:
        raise BadInput(f"--min-evidence {min_evidence} is not a count of evidence refs: give a whole number 0 or more",
                       hint=f"the default is {MIN_EVIDENCE_COUNT}")


def curate(
    root: Path | str,
    *,
    role: str | None,
    min_confidence: float = MIN_CONFIDENCE,
    min_evidence: int = MIN_EVIDENCE_COUNT,
    governance_mode: str | None = None,
    mode: str = "supervised",
    write: bool = True,
    wait: float | None = None,
) -> Proposal:
    """Propose a patch from the inbox and write it to ``patches/`` (status ``proposed``).

    A proposal without ops writes no file (``Proposal.path`` stays ``None``). What a still-pending
    patch already proposes (its candidates, an identical ``update_stability``) is not proposed
    again (``Proposal.already_proposed``), so running curate twice writes no second patch.
    Writer only (the role gate runs first). Opens inquiries for conflicting candidates. With
    ``write=False`` nothing is written (a dry run, for ``review``).
    """
    from commonkeep.gate.writer import configured_writer_role, require_writer
    from commonkeep.patches.lock import writer_lock

    if write:  # a dry run (``review --list``) only reads: reading the queue is for everyone
        require_writer("curate", role, root)
    check_gate(min_confidence, min_evidence)
    writer = configured_writer_role(root)
    if governance_mode is None:
        from commonkeep.store.curators import curator_config

        governance_mode = str(curator_config(root)["governanceMode"])
    if not write:
        inputs = _load_inputs(root)
        return propose(inputs["records"], inputs["candidates"], tombstoned=inputs["tombstoned"],
                       known_ids=inputs["known_ids"], reinforcement=inputs["reinforcement"], waiting=inputs["waiting"],
                       contested_records=inputs["contested_records"],
                       min_confidence=min_confidence, min_evidence=min_evidence, governance_mode=governance_mode, mode=mode,
                       writer_role=writer, root=root)
    from commonkeep.patches.patch import patch_path, write_patch
    from commonkeep.store.inquiries import upsert_inquiries

    with writer_lock(root, str(role), "curate", wait):
        inputs = _load_inputs(root)
        from commonkeep.gate.user_turn import stamp_from_hosts  # issue 22: OMP's user_turn stamps

        stamp_from_hosts(inputs["store"], inputs["candidates"])
        prop = propose(inputs["records"], inputs["candidates"], tombstoned=inputs["tombstoned"],
                       known_ids=inputs["known_ids"], reinforcement=inputs["reinforcement"], waiting=inputs["waiting"],
                       contested_records=inputs["contested_records"],
                       min_confidence=min_confidence, min_evidence=min_evidence, governance_mode=governance_mode, mode=mode,
                       writer_role=writer, root=root)
        layout = inputs["store"].layout
        if prop.ops:  # nothing to change writes nothing (session-end curation runs often)
            while patch_path(layout, prop.patch["patch_id"]).exists():  # 36^6 suffixes; never loops in practice
                prop.patch["patch_id"] = patch_id(now())
            prop.path, _ = write_patch(layout, prop.patch)
        upsert_inquiries(root, prop.inquiries)
    return prop


# the session-end run and the curation settings live in their own modules; these names keep importing from here
from commonkeep.patches.auto import AutoCuration, auto_curate, auto_select  # noqa: E402
from commonkeep.store.curators import AUTO_POLICIES, curator_config  # noqa: E402

__all__ = ["AUTO_POLICIES", "AutoCuration", "Proposal", "Waiting", "op_signature", "waiting_in", "waiting_ops", "auto_curate", "auto_select", "curate", "curator_config", "propose"]
