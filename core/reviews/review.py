"""Review: the librarian's queue of pending candidates, and approve / reject / edit.

``pending(root)`` shows every ``new`` candidate with its provenance, trust, poisoning risk and
reasons, matches, memory-worth, and the ops curation would propose for it, each with a
before/after rendering of the record it touches. ``approve`` writes a ``manual`` patch with
those ops (a candidate below the curator's gate gets a plain ``add``: the reviewer's decision
overrides the gate, not the hard rules) and applies it; ``reject`` writes a patch of
``reject_candidate`` ops. High-risk candidates can be approved only here, by a person.
L1 candidates are ratified with ``commonkeep ratify`` instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.gate.agent_shell import refuse_inside_agent
from commonkeep.gate.scoring import memory_worth, proposed_layer
from commonkeep.gate.writer import require_writer
from commonkeep.patches.curate import Proposal, add_target, curate, record_from_candidate
from commonkeep.patches.patch import ApplyResult, apply_patch
from commonkeep.secrets import redact, redacted_kinds
from commonkeep.store.core import Store
from commonkeep.store.ids import patch_id
from commonkeep.store.render import render_record
from commonkeep.util.timeutil import now, now_iso, today

Row = dict[str, Any]
CONTENT_OPS = ("add", "update", "supersede", "contest")


@dataclass
class ReviewItem:
    """One pending candidate as the reviewer sees it."""

    candidate: Row
    ops: list[Row] = field(default_factory=list)
    below_gate: bool = False
    before_after: list[tuple[str, str]] = field(default_factory=list)
    choices: list[str] = field(default_factory=list)  # what approving may do (``decide.CHOICES``); empty: it cannot
    default_choice: str | None = None  # taken when approving names none; None with choices: one must be named
    refusal: str = ""  # why approving is refused as things stand (plain words)

    def to_json(self) -> dict[str, Any]:
        c = self.candidate
        return {
            "id": c["id"],
            "created_at": c.get("created_at"),
            "text": c["text"],
            "source": c.get("source"),
            "provenance": c.get("provenance"),
            "trust": c.get("primary_trust_class"),
            "confidence": c.get("confidence"),
            "poisoning_risk": c.get("poisoning_risk"),
            "poisoning_risk_reasons": c.get("poisoning_risk_reasons", []),
            "match_kind": c.get("match_kind"),
            "matched_memory_ids": c.get("matched_memory_ids", []),
            "worth": {"decision": c.get("worth_decision"), "score": c.get("worth_score")},
            "below_gate": self.below_gate,
            "ops": [{"op": o["op"], "target_id": o.get("target_id"), "risk": o["risk"], "reason": o.get("reason")} for o in self.ops],
            "before_after": [{"before": b, "after": a} for b, a in self.before_after],
            "choices": self.choices,
            "default_choice": self.default_choice,
            "refusal": self.refusal,
            "secrets_removed": secrets_removed(c),
            "session": session_of(c),
        }


def secrets_removed(cand: Row) -> list[str]:
    """The kinds of secret removed from a candidate's text before it was stored (for a badge)."""
    return sorted(set(redacted_kinds(str(cand.get("text", "")))))


def session_of(cand: Row) -> str:
    """The session a candidate was captured in (``provenance.session_id``), or ``""``."""
    prov = cand.get("provenance")
    return str(prov.get("session_id") or "") if isinstance(prov, dict) else ""


def item_of(plan: Any, records: dict[str, Row]) -> ReviewItem:
    """A :class:`ReviewItem` for one candidate from its ``decide.Plan``: the ops approving does by
    default (curation's own ops when approving is refused or needs a choice), with before/after."""
    ops = plan.ops or plan.curated
    if plan.below_gate and not plan.ops:
        ops = []
    return ReviewItem(plan.candidate, ops, plan.below_gate, [_before_after(o, records) for o in ops], list(plan.choices),
                      plan.default if plan.choices else None, plan.refusal)


def _plain_add(cand: Row) -> Row:
    layer = proposed_layer(cand)
    rec = record_from_candidate(cand, on=today(), layer=layer)
    return {"op_id": "op_000", "op": "add", "target": add_target(rec), "record": rec, "risk": cand.get("poisoning_risk") or "low",
            "default_selected": False, "candidate_id": cand["id"], "reason": "approved by a reviewer below the curator's gate"}


def _before_after(op: Row, records: dict[str, Row]) -> tuple[str, str]:
    kind = op["op"]
    if kind == "add":
        return "(no record)", render_record(op["record"])
    if kind == "reject_candidate":
        return f"candidate {op.get('candidate_id')}: new", f"candidate {op.get('candidate_id')}: rejected ({op.get('reason')})"
    old = records.get(str(op.get("target_id")))
    if old is None:
        return "(record not found)", "(nothing)"
    new = json.loads(json.dumps(old))
    if kind == "update":
        new.update(op.get("updates") or {})
    elif kind == "contest":
        new["status"] = "contested"
    elif kind == "supersede":
        new["status"] = "superseded"
        return render_record(old), render_record(new) + "\n\n" + render_record(op["to_record"])
    return render_record(old), render_record(new)


def _proposal(root: Path | str, role: str | None) -> tuple[Proposal, dict[str, Row]]:
    prop = curate(root, role=role, write=False)
    records = {str(r["id"]): r for r in Store(root, warn=False).records(active_only=False)}
    return prop, records


def pending(root: Path | str, *, role: str | None) -> list[ReviewItem]:
    """The review queue: every ``new`` candidate, oldest first."""
    from commonkeep.store import exitgate

    exitgate.sweep_inbox(root, reason="review queue")  # lines OmpKeep appended raw: redacted in place first
    prop, records = _proposal(root, role)
    items = []
    by_candidate: dict[str, list[Row]] = {}  # each candidate's ops, found in one pass (not 10,000 x 10,000)
    for o in [*prop.ops, *prop.held]:
        if isinstance(o.get("candidate_id"), str):
            by_candidate.setdefault(o["candidate_id"], []).append(o)
    for cid, cand in prop.scored.items():
        cand = dict(cand)
        worth = memory_worth(str(cand["text"]), evidence_count=len(cand.get("evidence_refs") or []),
                             secret_kinds=redacted_kinds(str(cand["text"])))
        cand.setdefault("worth_decision", worth.decision)
        cand.setdefault("worth_score", worth.score)
        # a candidate already waiting in a patch is not proposed again (``held``), yet it is shown
        # here with the ops curation computes for it, as for any other pending candidate
        ops = by_candidate.get(cid, []) if isinstance(cid, str) else []
        below = cid in prop.pending
        if below:
            ops = [_plain_add(cand)]
        choices, default = _choices(cand, ops)
        items.append(ReviewItem(cand, ops, below, [_before_after(o, records) for o in ops], choices, default,
                                "" if choices else "; ".join(str(o.get("reason")) for o in ops)))
    return items


def _choices(cand: Row, ops: list[Row]) -> tuple[list[str], str | None]:
    """The choices approving offers (``decide.choices_for`` of the match kind); none when curation
    can only reject it (deleted, already promoted, another machine's deleted version)."""
    from commonkeep.reviews.decide import choices_for

    if ops and all(o["op"] == "reject_candidate" and not str(o.get("reason", "")).startswith("duplicate") for o in ops):
        return [], None
    if any(o["op"] == "update" and str(o.get("reason", "")).startswith("contested") for o in ops):
        return ["replace"], None  # a replace is named, never a default
    return choices_for(str(cand.get("match_kind") or "new"))


def _manual_patch(ops: list[Row], summary: str, role: str | None = None, **extra: Any) -> Row:
    """A reviewer's patch: every op selected; ``decided_by`` names the role that decided (an extension
    field, shown as "who" in a decision's outcome), ``extra`` more top-level fields (``undoes``)."""
    for i, op in enumerate(ops, 1):
        op["op_id"] = f"op_{i:03d}"
        op["default_selected"] = True
    patch = {"patch_id": patch_id(now()), "created_at": now_iso(), "generated_by": "manual", "mode": "supervised",
             "summary": summary, "ops": ops, "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": []}
    if role:
        patch["decided_by"] = role
    patch.update(extra)
    return patch


def _edit(op: Row, text: str) -> None:
    from commonkeep.store.candidates import MAX_TEXT_CHARS

    clean = redact(text.strip()).text
    if not clean:
        raise BadInput("an edited statement cannot be empty")
    if len(clean) > MAX_TEXT_CHARS:  # the same bound as the candidate it replaces; refused, not cut
        raise BadInput(f"the edited statement is {len(clean)} characters; the limit is {MAX_TEXT_CHARS}; nothing was applied",
                       hint="store one durable fact; put long material in the wiki (commonkeep dossier ingest)")
    for key in ("record", "to_record"):
        if isinstance(op.get(key), dict):
            op[key]["statement"] = clean
    if op["op"] == "update" and isinstance(op.get("updates"), dict):
        op["updates"]["statement"] = clean


def approve(
    root: Path | str, ids: list[str], *, role: str | None, edits: dict[str, str] | None = None, ratify: bool = False,
    choice: str | dict[str, str] | None = None, ctx: Any = None, inbox: list[Row] | None = None,
) -> ApplyResult:
    """Approve candidates (optionally with an edited statement and a named ``choice``): one manual
    patch, applied now. Each candidate's ops are computed for it alone against the records as they
    are (``commonkeep.reviews.decide``), never by re-curating the inbox; see ``decide.approve``."""
    from commonkeep.reviews.decide import approve as decide_approve

    refuse_inside_agent("ratifying" if ratify else "approving or editing a candidate")
    result: ApplyResult = decide_approve(root, ids, role=role, edits=edits, ratify=ratify, choice=choice, ctx=ctx, inbox=inbox)
    return result


def reject(root: Path | str, ids: list[str], *, reason: str, role: str | None, inbox: list[Row] | None = None) -> ApplyResult:
    """Reject candidates: one manual patch of ``reject_candidate`` ops, applied now (``inbox``: the
    candidates as already read, e.g. by the web app; read here when not given)."""
    refuse_inside_agent("rejecting a candidate")
    require_writer("review", role, root)
    if not reason or not reason.strip():
        raise BadInput("rejecting needs --reason", hint="say why, e.g. --reason 'not durable'")
    if inbox is None:
        from commonkeep.patches.waiting import candidates_named

        inbox = candidates_named(root, ids)  # their lines, not the whole inbox parsed
    rows = inbox
    new = {str(c["id"]) for c in rows if c.get("status") == "new"}
    missing = [i for i in ids if i not in new]
    if missing:
        raise BadInput(f"no pending candidate {', '.join(missing)}", hint="list the queue with `commonkeep review --list`")
    ops = [{"op_id": "", "op": "reject_candidate", "candidate_id": cid, "reason": redact(reason).text, "risk": "low",
            "default_selected": True} for cid in ids]
    _revoke_stamps(root, [c for c in rows if str(c.get("id")) in set(ids)])  # first: no window where it still counts
    return apply_patch(root, _manual_patch(ops, f"reject {', '.join(ids)}", role), role=role)


def _revoke_stamps(root: Path | str, rows: list[Row]) -> None:
    """A person rejected these candidates: the stamps they claim never count again (``stamps.record_revoke``),
    so a line set back to ``new`` by a file tool applies nothing by itself."""
    from commonkeep.gate import stamps
    from commonkeep.gate.autoapply import claimed_stamp
    from commonkeep.gate.writer import configured_writer_role

    writer = configured_writer_role(root)
    stamped = [str(c.get("id")) for c in rows if claimed_stamp(c, writer) is not None]
    if stamped:
        stamps.record_revoke(root, stamped)
