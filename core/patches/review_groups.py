"""Review groups: candidates of one session are reviewed together.

A split write spreads one harmful instruction over several candidates of a session, each of which
looks harmless alone. Curation marks the ops of candidates written in the same session (with
others in the same run) with ``review_group`` = ``<host or agent>:<session id>``
(``provenance.session_id``); the review queue groups on that field so a person sees them side by
side. Parts of one candidate (text, tags, evidence refs) are always shown together in its op.
"""

from __future__ import annotations

from typing import Any


def review_group(cand: dict[str, Any]) -> str | None:
    """The session a candidate was written in (``provenance.session_id``, with its host or agent), or ``None``."""
    prov = cand.get("provenance")
    sid = prov.get("session_id") if isinstance(prov, dict) else None
    if not isinstance(sid, str) or not sid:
        return None
    who = (prov or {}).get("host") or (prov or {}).get("agent") or "session"
    return f"{who}:{sid}"


def group_by_session(scored: dict[str, dict[str, Any]], ops: list[dict[str, Any]]) -> None:
    """``review_group`` on the ops of candidates written in one session with others of this run.

    Several candidates of one session can each look harmless and only together do harm (a split
    write); review shows the ops of a group side by side (the review queue groups on the field).
    """
    groups = {cid: review_group(c) for cid, c in scored.items()}
    size: dict[str, int] = {}
    for g in groups.values():
        if g:
            size[g] = size.get(g, 0) + 1
    for op in ops:
        g = groups.get(str(op.get("candidate_id")))
        if g and size[g] > 1:
            op["review_group"] = g
