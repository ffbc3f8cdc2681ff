"""The reviewer's choices, mapped onto the governance functions: approve, reject, ratify, and the
explicit choices for duplicates (``reinforce`` the existing record, or ``replace`` it) and conflicts
(``replace`` the existing record, or keep both, ``contest``); and undo.

This is the one seam between the pages and the server-side decision code. Where the governance
layer takes a ``choice`` (``actions.decide(..., choice=...)``) and offers ``actions.undo``, they
are called as they are; where it does not yet, a choice is done with the ops curation itself
proposes (a duplicate kept by reinforcing the record is the curator's ``reject_candidate`` "duplicate
of …"; a conflict kept as both is its ``add`` + ``contest``), and a choice it cannot express is
refused in plain words, nothing written.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from commonkeep.web import actions
from commonkeep.web.flow import CONFLICT_KINDS

Row = dict[str, Any]
CHOICES = ("", "reinforce", "replace", "contest")


def _takes_choice() -> bool:
    return "choice" in inspect.signature(actions.decide).parameters


def decide(root: Path | str, role: str | None, action: str, ids: list[str], *, reason: str = "", edit: str = "",
           choice: str = "", pending: dict[str, Row] | None = None) -> str:
    """Make one decision on ``ids``; returns the sentence shown to the reviewer."""
    if choice not in CHOICES:
        raise actions.Refused(f"unknown choice {choice!r}")
    if action == "reject" or not choice:
        return _split(root, role, action, ids, reason=reason, edit=edit, pending=pending or {})
    if _takes_choice():
        return str(actions.decide(root, role, action, ids, reason=reason, edit=edit, choice=choice))  # type: ignore[call-arg]
    rows = pending or {}
    if choice == "reinforce":
        return _split(root, role, action, ids, reason=reason, edit=edit, pending=rows)
    if choice == "contest" and all(rows.get(i, {}).get("match_kind") in CONFLICT_KINDS for i in ids):
        return actions.decide(root, role, action, ids, reason=reason, edit=edit)  # curation's own add + contest
    raise actions.Refused("replacing the existing record is not available on this server yet; "
                          "keep both (contested) or reject the candidate. Nothing was changed.")


def _split(root: Path | str, role: str | None, action: str, ids: list[str], *, reason: str, edit: str,
           pending: dict[str, Row]) -> str:
    """Approve the new ones; a plain duplicate among them keeps its record (curation's own answer:
    the candidate is closed as a duplicate of it, nothing added)."""
    if action != "approve":
        return actions.decide(root, role, action, ids, reason=reason, edit=edit)
    dups = [i for i in ids if pending.get(i, {}).get("match_kind") == "duplicate"]
    first: dict[str, str] = {}  # the same statement twice in one decision: approved once, the repeat closed
    repeats: dict[str, list[str]] = {}
    for i in ids:
        if i in dups or i not in pending:
            continue
        key = same_text(pending[i])
        if key in first:
            repeats.setdefault(first[key], []).append(i)
        else:
            first[key] = i
    again = {i for more in repeats.values() for i in more}
    rest = [i for i in ids if i not in dups and i not in again]
    said = []
    if rest:
        said.append(actions.decide(root, role, action, rest, reason=reason, edit=edit if len(rest) == 1 else ""))
    for kept, more in repeats.items():
        actions.decide(root, role, "reject", more, reason=f"repeats {kept}, approved in the same decision")
        said.append(f"{len(more)} repeat(s) of {kept} closed")
    if dups:
        for rid in sorted({str((pending[i].get("matched_memory_ids") or ["?"])[0]) for i in dups}):
            mine = [i for i in dups if str((pending[i].get("matched_memory_ids") or ["?"])[0]) == rid]
            actions.decide(root, role, "reject", mine, reason=f"duplicate of {rid}: the existing record is kept")
            said.append(f"kept {rid} for {len(mine)} duplicate(s) ({', '.join(mine)})")
    return "; ".join(said)


def same_text(cand: Row) -> str:
    """A candidate's statement with case, spacing and punctuation folded (two agents' identical captures)."""
    from commonkeep.governance.matching import words

    return " ".join(words(str(cand.get("text", ""))))


def undo(root: Path | str, role: str | None, ids: list[str]) -> str:
    """Undo the decisions on ``ids`` with a reversing, audited patch (``actions.undo``)."""
    if not ids:
        raise actions.Refused("nothing to undo")
    fn = getattr(actions, "undo", None)
    if fn is None:
        raise actions.Refused("undo is not available on this server yet; nothing was changed")
    return str(fn(root, role, ids))
