"""Session-end auto-curation: curate the inbox, apply what the gate lets apply itself, hold the rest.

The decision (may a candidate apply itself) is ``commonkeep.gate.autoapply``; this is the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from commonkeep.gate.autoapply import HELD_L1, NOT_STAMPED, stamped_trust
from commonkeep.store.curators import AUTO_POLICIES, curator_config

if TYPE_CHECKING:
    from commonkeep.patches.curate import Proposal


@dataclass
class AutoCuration:
    """What ``auto_curate`` did at session end."""

    policy: str
    proposal: Proposal | None = None
    applied: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)  # why candidates wait for a person -> how many

    def describe(self) -> str:
        if self.proposal is None:
            return f"auto-curation off (policy {self.policy})"
        p = self.proposal.patch
        total = sum(self.held.values())
        held = (f"held {total} for review: " + ", ".join(f"{n} {why}" for why, n in self.held.items())) if total \
            else "held nothing for review"
        if not p["ops"]:
            waiting = len(set(self.proposal.already_proposed.values()))
            return (f"auto-curation ({self.policy}): nothing new to propose; applied 0; {held}"
                    + (f"; {waiting} patch(es) already wait" if waiting else ""))
        return f"auto-curation ({self.policy}): patch {p['patch_id']} with {len(p['ops'])} op(s); applied {len(self.applied)}; {held}"


#: why a candidate waits, in the order ``held_reasons`` tries them (the first that holds is counted)
HELD_FLAGGED = "flagged by detection (risk medium or high)"


HELD_CHANGES = "change or contradict an existing record"


HELD_GATE = "below the curator's gate (confidence or evidence)"


HELD_WAITING = "already wait in an earlier patch"


HELD_CONFIDENCE = "confidence below the auto-apply threshold"


HELD_POLICY = "policy propose: every op waits"


HELD_REFUSED = "refused when applied"


HELD_REDACTED = "secrets redacted from the text"


def held_reasons(prop: Proposal, applied: list[str], *, threshold: float, policy: str,
                 writer_role: str | None, skipped: dict[str, str] | None = None, root: Any = None) -> dict[str, int]:
    """Why each candidate curation saw is not applied, one reason a candidate, counted (most first)."""
    done = set(applied)
    by_cand: dict[str, list[dict[str, Any]]] = {}
    for op in prop.ops:
        if op.get("candidate_id"):
            by_cand.setdefault(str(op["candidate_id"]), []).append(op)
    waiting = {str(op.get("candidate_id")) for op in prop.held}
    counts: dict[str, int] = {}
    for cid, cand in prop.scored.items():
        ops = by_cand.get(cid, [])
        if any(op["op_id"] in done for op in ops):
            continue
        why = _why_held(cand, ops, cid in prop.pending, cid in waiting, threshold=threshold, policy=policy,
                        writer_role=writer_role, prop=prop, skipped=skipped or {}, root=root)
        counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def _why_held(cand: dict[str, Any], ops: list[dict[str, Any]], pending: bool, waiting: bool, *, threshold: float,
              policy: str, writer_role: str | None, prop: Proposal, skipped: dict[str, str], root: Any = None) -> str:
    prov = cand.get("provenance")
    if isinstance(prov, dict) and prov.get("requeued_by"):  # its stamp was withdrawn when a person undid its decision
        return next((r for op in ops for r in str(op.get("reason") or "").split("; ") if "undid" in r), NOT_STAMPED)
    if stamped_trust(cand, writer_role, root) is None:
        return NOT_STAMPED
    if cand.get("poisoning_risk") in ("medium", "high"):
        return HELD_FLAGGED
    if "[REDACTED:" in str(cand.get("text", "")):
        return HELD_REDACTED
    if waiting:
        return HELD_WAITING
    if pending:
        return HELD_GATE
    if any(op["op_id"] in skipped for op in ops):
        return HELD_REFUSED
    if any((op.get("record") or {}).get("layer") == "L1" for op in ops):
        return HELD_L1
    if any(op.get("op") in ("supersede", "contest") or (op.get("op") == "update" and "statement" in (op.get("updates") or {}))
           or op.get("risk") in ("medium", "high") for op in ops):
        return HELD_CHANGES
    if policy != "high-only":
        return HELD_POLICY
    if any(prop.op_confidence.get(op["op_id"], 0.0) < threshold for op in ops):
        return HELD_CONFIDENCE
    reasons = [str(op.get("reason")) for op in ops if op.get("reason")]
    return reasons[0] if reasons else "not selected"


def auto_select(prop: Proposal, threshold: float) -> list[str]:
    """§6.6 ``high-only``: default-selected ops that are low risk (``medium`` and ``high`` never), not L1,
    with confidence ≥ threshold."""
    chosen = []
    for op in prop.ops:
        rec = op.get("record") or op.get("to_record") or {}
        if not op.get("default_selected") or op.get("risk") in ("medium", "high") or rec.get("layer") == "L1":
            continue
        if prop.op_confidence.get(op["op_id"], 0.0) >= threshold:
            chosen.append(op["op_id"])
    return chosen


def auto_curate(
    root: Path | str,
    *,
    role: str | None,
    policy: str | None = None,
    threshold: float | None = None,
    log: bool = True,
) -> AutoCuration:
    """What a host runs at session end (§11.3): curate, then apply per ``policy``.

    ``policy`` defaults to ``config.json`` ``commonkeep.autoCurate``, else ``curator.autoCurate``
    (``high-only``); only stamped candidates can ever be applied (module doc).
    ``high-only`` applies only default-selected, non-high-risk ops with confidence ≥
    ``autoCurateHighThreshold`` (0.85); ``propose`` writes the patch and applies nothing (every
    op waits for ``commonkeep review``); ``off`` does nothing. A ``## Auto-curation`` section is
    logged in the daily log.
    """
    from commonkeep.gate.trust import AUTO_CURATE_HIGH_THRESHOLD
    from commonkeep.gate.writer import require_writer

    conf = curator_config(root)
    policy = policy or str(conf["autoCurate"])
    if policy not in AUTO_POLICIES:
        from commonkeep.errors import BadInput

        raise BadInput(f"unknown auto-curation policy {policy!r}; use one of {', '.join(AUTO_POLICIES)}")
    out = AutoCuration(policy)
    if policy == "off":
        return out
    require_writer("auto-curate", role, root)
    from commonkeep.patches.curate import curate

    prop = curate(root, role=role, mode="auto" if policy == "high-only" else "propose")
    out.proposal = prop
    if threshold is None:
        threshold = float(conf.get("autoCurateHighThreshold", AUTO_CURATE_HIGH_THRESHOLD))
    chosen = auto_select(prop, threshold) if policy == "high-only" else []
    if chosen:
        from commonkeep.patches.patch import apply_selected_by_policy

        res = apply_selected_by_policy(root, prop.patch["patch_id"], role=role, op_ids=chosen)
        out.applied, out.skipped = res.applied, res.skipped
        prop.patch = res.patch
    from commonkeep.gate.writer import configured_writer_role

    out.held = held_reasons(prop, out.applied, threshold=threshold, policy=policy,
                            writer_role=configured_writer_role(root), skipped=out.skipped, root=root)
    if log and prop.ops:
        from commonkeep.store.core import Store

        Store(root).append_daily(f"## Auto-curation\n- {out.describe()}")
    return out
