"""A rejection for poisoning on one machine wins over a promotion of the same candidate on another.

Machine A rejects a candidate as poisoned while machine B, offline, promotes it: after the merge
B's record is live and A's rejection is in A's patch file. ``rejections_win`` finds such records
(an applied ``reject_candidate`` op whose reason names poisoning or an injection, or that a
person made for a candidate scored ``medium`` or ``high`` risk) and deletes them through a patch
of their own (``deletion_reason: poisoned``, audit-preserving), so the rejection holds on every
machine; the candidate is marked ``rejected``. A rejection that only says the candidate was
already promoted is no rejection of its content and changes nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from commonkeep.patches.waiting import applied_op_ids
from commonkeep.store.core import Store
from commonkeep.store.ids import memory_id_for

_POISON_WORDS = re.compile(r"poison|inject|malicious|prompt.?attack|jailbreak", re.IGNORECASE)
_NOT_CONTENT = re.compile(r"^already (promoted|applied)|was deleted \(tombstoned\)", re.IGNORECASE)


def poisoning_rejections(store: Store) -> dict[str, str]:
    """candidate id -> reason, for every applied rejection of a candidate for its content's risk."""
    risky = {str(c.get("id")) for c in store.candidates() if c.get("poisoning_risk") in ("medium", "high")}
    out: dict[str, str] = {}
    lay = store.layout
    for path in sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else []:
        try:
            doc: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict):
            continue
        # a patch file from another machine (or a hand edit) may hold anything: what is not a list
        # of op ids and a list of ops names no rejection, and the sync goes on
        ops = doc.get("ops")
        applied = applied_op_ids(doc)
        by_person = doc.get("generated_by") == "manual"  # `commonkeep review --reject`
        for op in ops if isinstance(ops, list) else []:
            if not isinstance(op, dict) or op.get("op") != "reject_candidate" or op.get("op_id") not in applied:
                continue
            cid, why = str(op.get("candidate_id") or ""), str(op.get("reason") or "")
            if not cid or _NOT_CONTENT.search(why):
                continue
            if _POISON_WORDS.search(why) or (by_person and cid in risky):
                out[cid] = why
    return out


def rejections_win(root: Path, role: str | None) -> list[str]:
    """Delete every live record whose candidate was rejected for poisoning; returns their ids."""
    from commonkeep.patches.patch import apply_selected_by_policy
    from commonkeep.store.ids import patch_id
    from commonkeep.util.timeutil import now, now_iso

    store = Store(root, warn=False)
    rejected = poisoning_rejections(store)
    if not rejected:
        return []
    live = {str(r["id"]) for r in store.records(active_only=False)} - store.tombstoned_ids()
    hits = {memory_id_for(cid): (cid, why) for cid, why in rejected.items() if memory_id_for(cid) in live}
    if not hits:
        return []
    ops: list[dict[str, str | bool]] = [{"op_id": f"op_{n:03d}", "op": "delete", "target_id": rid, "risk": "medium", "default_selected": True,
            "deletion_mode": "audit_preserving", "deletion_reason": "poisoned",
            "reason": f"share sync: candidate {cid} was rejected on another machine ({why[:200]}); the rejection wins "
                      "over the promotion"}
           for n, (rid, (cid, why)) in enumerate(sorted(hits.items()), 1)]
    patch = {"patch_id": patch_id(now()), "created_at": now_iso(), "generated_by": "maintainer", "mode": "supervised",
             "summary": f"share sync: {len(ops)} record(s) whose candidate was rejected for poisoning",
             "ops": ops, "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": []}
    result = apply_selected_by_policy(root, patch, role=role, op_ids=[str(o["op_id"]) for o in ops])
    cids = {cid for cid, _ in hits.values()}

    def mark(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**c, "status": "rejected"} if c.get("id") in cids and c.get("status") != "rejected" else c for c in rows]

    store.update_candidates(mark)
    by_op = {str(o["op_id"]): str(o["target_id"]) for o in ops}
    return sorted(by_op[op_id] for op_id in result.applied if op_id in by_op)
