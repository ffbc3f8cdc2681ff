"""What became of a candidate: the decision, the patch that made it, who, when, why, the records.

``outcome(root, cid)`` finds the applied patch whose ops decided the candidate (the latest
applied; a patch file is parsed only when its bytes name the candidate), and the undo patch that
reversed it, if any. For outcome links on a decided candidate's page and ``commonkeep review --undo``.

Public: :func:`outcome`, :class:`Outcome`, :func:`decision_patches`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.patches.waiting import applied_op_ids
from commonkeep.store.layout import Layout

Row = dict[str, Any]


@dataclass
class Outcome:
    """The decision on one candidate (``decision`` is ``pending`` while it is ``new``)."""

    candidate_id: str
    status: str  # the candidate's status in the inbox: new, patched, rejected (or "unknown")
    decision: str  # approved, approved with an edit, rejected, pending, unknown
    patch_id: str | None = None  # the patch that decided it
    when: str | None = None  # its applied_at
    who: str | None = None  # the role that decided (a reviewer's patch names it), or the patch's generated_by
    reason: str = ""  # a rejection's reason, or what approving did (the choice, in words)
    choice: str | None = None
    records: list[str] = field(default_factory=list)  # the records the decision added or changed
    ops: list[Row] = field(default_factory=list)  # the applied ops of that patch for this candidate
    undone_by: str | None = None  # the patch that reversed it
    requeued_as: str | None = None  # the candidate put back in the queue by that undo

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("ops")
        return out


def decision_patches(layout: Layout, needle: str) -> Iterator[tuple[str, Row]]:
    """Patch files that mention ``needle``, newest first (patch ids start with their minute)."""
    folder = layout.patches_dir
    paths = sorted(folder.glob("*.json"), key=lambda p: p.name, reverse=True) if folder.is_dir() else []
    raw = needle.encode("utf-8")
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if raw not in data:
            continue
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError):
            continue
        if isinstance(doc, dict):
            yield str(doc.get("patch_id") or path.stem), doc


def outcome(root: Path | str, cid: str, *, inbox: list[Row] | None = None) -> Outcome:
    """The outcome of candidate ``cid`` (``inbox``: the candidates as already read)."""
    from commonkeep.store.core import Store

    rows = inbox if inbox is not None else Store(root, warn=False).candidates()
    cand = next((c for c in rows if c.get("id") == cid), None)
    status = str(cand.get("status")) if cand else "unknown"
    out = Outcome(cid, status, "pending" if status == "new" else "unknown")
    again = next((c for c in rows if (c.get("provenance") or {}).get("requeued_from") == cid), None) if status != "new" else None
    out.requeued_as = str(again["id"]) if again else None
    if status == "new":
        return out
    best: tuple[str, str, Row, list[Row]] | None = None  # (applied_at, patch id, patch, its ops for cid)
    undos: list[tuple[str, str]] = []  # (applied_at, patch id) of the undos naming cid
    for pid, doc in decision_patches(Layout(root), cid):
        if cid in (doc.get("undoes_candidates") or []):
            undos.append((str(doc.get("applied_at") or ""), pid))
            continue
        done = applied_op_ids(doc)
        mine = [o for o in doc.get("ops") or [] if isinstance(o, dict) and o.get("candidate_id") == cid and o.get("op_id") in done]
        if mine and (best is None or str(doc.get("applied_at") or "") > best[0]):
            best = (str(doc.get("applied_at") or ""), pid, doc, mine)
    if best is None:
        out.undone_by = max(undos)[1] if undos else None
        return out
    # an undo counts only when it came after the decision (an undone candidate keeps its id and can be decided again)
    later = [u for u in undos if u >= best[:2]]
    out.undone_by = max(later)[1] if later else None
    _, pid, doc, mine = best
    out.patch_id, out.when, out.ops = pid, doc.get("applied_at"), mine
    out.who = str(doc.get("decided_by") or doc.get("generated_by") or "") or None
    if all(o.get("op") == "reject_candidate" for o in mine):
        out.decision, out.reason = "rejected", str(mine[0].get("reason") or "")
        return out
    out.decision = "approved with an edit" if any(o.get("edited") for o in mine) else "approved"
    out.choice = next((str(o["choice"]) for o in mine if o.get("choice")), None)
    from commonkeep.reviews.decide import CHOICES

    out.reason = CHOICES.get(out.choice or "", "") or str(mine[0].get("reason") or "")
    for o in mine:
        rid = o.get("target_id") or (o.get("record") or {}).get("id")
        new = (o.get("to_record") or {}).get("id")
        out.records += [str(x) for x in (rid, new) if x and str(x) not in out.records]
    return out
