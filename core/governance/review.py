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
from commonkeep.governance.curate import Proposal, curate, record_from_candidate, route
from commonkeep.governance.patch import ApplyResult, apply_patch
from commonkeep.governance.scoring import memory_worth, proposed_layer
from commonkeep.governance.secrets import redact, redacted_kinds
from commonkeep.governance.writer import require_writer
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
        }


def _plain_add(cand: Row) -> Row:
    layer = proposed_layer(cand)
    rec = record_from_candidate(cand, on=today(), layer=layer)
    return {"op_id": "op_000", "op": "add", "target": route(rec), "record": rec, "risk": cand.get("poisoning_risk") or "low",
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
    prop, records = _proposal(root, role)
    items = []
    for cid, cand in prop.scored.items():
        cand = dict(cand)
        worth = memory_worth(str(cand["text"]), evidence_count=len(cand.get("evidence_refs") or []),
                             secret_kinds=redacted_kinds(str(cand["text"])))
        cand.setdefault("worth_decision", worth.decision)
        cand.setdefault("worth_score", worth.score)
        # a candidate already waiting in a patch is not proposed again (``held``), yet it is shown
        # here with the ops curation computes for it, as for any other pending candidate
        ops = [o for o in [*prop.ops, *prop.held] if o.get("candidate_id") == cid]
        below = cid in prop.pending
        if below:
            ops = [_plain_add(cand)]
        items.append(ReviewItem(cand, ops, below, [_before_after(o, records) for o in ops]))
    return items


def _manual_patch(ops: list[Row], summary: str) -> Row:
    for i, op in enumerate(ops, 1):
        op["op_id"] = f"op_{i:03d}"
        op["default_selected"] = True
    return {"patch_id": patch_id(now()), "created_at": now_iso(), "generated_by": "manual", "mode": "supervised",
            "summary": summary, "ops": ops, "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": []}


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
    root: Path | str, ids: list[str], *, role: str | None, edits: dict[str, str] | None = None, ratify: bool = False
) -> ApplyResult:
    """Approve candidates (optionally with an edited statement): one manual patch, applied now."""
    require_writer("ratify" if ratify else "review", role, root)
    items = {i.candidate["id"]: i for i in pending(root, role=role)}
    ops: list[Row] = []
    for cid in ids:
        item = items.get(cid)
        if item is None:
            raise BadInput(f"no pending candidate {cid}", hint="list the queue with `commonkeep review --list`")
        content = [json.loads(json.dumps(o)) for o in item.ops if o["op"] in CONTENT_OPS]
        if not content:
            why = "; ".join(str(o.get("reason")) for o in item.ops) or "nothing to add"
            raise BadInput(f"{cid} cannot be approved: {why}", hint=f"reject it: commonkeep review --reject {cid} --reason duplicate")
        layer_l1 = any((o.get("record") or o.get("to_record") or {}).get("layer") == "L1" for o in content)
        if layer_l1 and not ratify:
            raise BadInput(f"{cid} is an L1 (identity) candidate; L1 is never applied by review", hint=f"ratify it: commonkeep ratify {cid}")
        if edits and cid in edits:
            for o in content:
                _edit(o, edits[cid])
        ops.extend(content)
    verb = "ratify" if ratify else "approve"
    result = apply_patch(root, _manual_patch(ops, f"{verb} {', '.join(ids)}"), role=role, ratify=ratify)
    if result.skipped:
        raise BadInput(
            "some ops were refused and skipped: " + "; ".join(f"{k}: {v}" for k, v in result.skipped.items()),
            hint=f"patch {result.patch['patch_id']} records what was applied",
        )
    return result


def reject(root: Path | str, ids: list[str], *, reason: str, role: str | None) -> ApplyResult:
    """Reject candidates: one manual patch of ``reject_candidate`` ops, applied now."""
    require_writer("review", role, root)
    if not reason or not reason.strip():
        raise BadInput("rejecting needs --reason", hint="say why, e.g. --reason 'not durable'")
    new = {str(c["id"]) for c in Store(root).candidates(status="new")}
    missing = [i for i in ids if i not in new]
    if missing:
        raise BadInput(f"no pending candidate {', '.join(missing)}", hint="list the queue with `commonkeep review --list`")
    ops = [{"op_id": "", "op": "reject_candidate", "candidate_id": cid, "reason": redact(reason).text, "risk": "low",
            "default_selected": True} for cid in ids]
    return apply_patch(root, _manual_patch(ops, f"reject {', '.join(ids)}"), role=role)
