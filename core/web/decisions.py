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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.web import actions
from commonkeep.web.flow import CONFLICT_KINDS, DUPLICATE_KINDS

Row = dict[str, Any]
CHOICES = ("", "add", "reinforce", "replace", "keep_both", "contest")


def _takes_choice() -> bool:
    return "choice" in inspect.signature(actions.decide).parameters


# ``actions.decide`` as a server that takes ``choice=`` has it (typed loosely: older ones do not)
_chosen: Any = actions.decide


def decide(root: Path | str, role: str | None, action: str, ids: list[str], *, reason: str = "", edit: str = "",
           choice: str = "", pending: dict[str, Row] | None = None, conflict_choice: str = "keep_both",
           item: Callable[[str], Any] | None = None) -> str:
    """Make one decision on ``ids``; returns the sentence shown to the reviewer.

    ``pending``: the pending candidates by id (scored: risk, match). A batch approve without a
    choice takes each candidate's default; the conflicts in it take ``conflict_choice`` (the
    confirmation page asks which); ``item(id)`` gives a candidate's review item (its ``choices``),
    asked only for the repeats, which the server may find to be conflicts after all.
    """
    if choice not in CHOICES or conflict_choice not in CHOICES:
        raise actions.Refused(f"unknown choice {choice or conflict_choice!r}")
    rows = pending or {}
    if action == "reject" or (choice and not _takes_choice() and choice == "reinforce"):
        return _split(root, role, action, ids, reason=reason, edit=edit, pending=rows)
    if not _takes_choice():
        if conflict_choice == "replace" and any(rows.get(i, {}).get("match_kind") in CONFLICT_KINDS for i in ids):
            raise actions.Refused("replacing the existing record is not available on this server yet; "
                                  "keep both (contested) or reject the candidate. Nothing was changed.")
        if not choice:
            return _split(root, role, action, ids, reason=reason, edit=edit, pending=rows)
        if choice in ("contest", "keep_both") and all(rows.get(i, {}).get("match_kind") in CONFLICT_KINDS for i in ids):
            return actions.decide(root, role, action, ids, reason=reason, edit=edit)  # curation's own add + contest
        raise actions.Refused("replacing the existing record is not available on this server yet; "
                              "keep both (contested) or reject the candidate. Nothing was changed.")
    if choice:
        return str(_chosen(root, role, action, ids, reason=reason, edit=edit, choice=choice))
    # a batch: each candidate's default; conflicts (no default) take the one asked on the confirmation page
    repeats = _repeats([i for i in ids if i in rows], rows)
    again = {i for more in repeats.values() for i in more}
    per: dict[str, list[str]] = {}
    for i in ids:
        if i in again:
            continue
        kind = rows.get(i, {}).get("match_kind")
        named = list(getattr(item(i), "choices", None) or []) if item is not None and kind in DUPLICATE_KINDS else []
        conflict = kind in CONFLICT_KINDS or bool(named and "reinforce" not in named and "add" not in named)
        per.setdefault(conflict_choice if conflict else "", []).append(i)
    said = [str(_chosen(root, role, action, group, reason=reason, edit=edit if len(group) == 1 else "", choice=which))
            for which, group in per.items()]
    return "; ".join([*said, *_close_repeats(root, role, repeats)])


def _repeats(ids: list[str], pending: dict[str, Row]) -> dict[str, list[str]]:
    """The same statement more than once in one decision: the first id -> the ids repeating it."""
    first: dict[str, str] = {}
    out: dict[str, list[str]] = {}
    for i in ids:
        key = same_text(pending[i])
        if key in first:
            out.setdefault(first[key], []).append(i)
        else:
            first[key] = i
    return out


def _close_repeats(root: Path | str, role: str | None, repeats: dict[str, list[str]]) -> list[str]:
    """Close the repeats of a statement approved in the same decision (approved once, the rest rejected as repeats)."""
    said = []
    for kept, more in repeats.items():
        actions.decide(root, role, "reject", more, reason=f"repeats {kept}, approved in the same decision")
        said.append(f"{len(more)} repeat(s) of {kept} closed")
    return said


def _split(root: Path | str, role: str | None, action: str, ids: list[str], *, reason: str, edit: str,
           pending: dict[str, Row]) -> str:
    """Approve the new ones; a plain duplicate among them keeps its record (curation's own answer:
    the candidate is closed as a duplicate of it, nothing added)."""
    if action != "approve":
        return actions.decide(root, role, action, ids, reason=reason, edit=edit)
    dups = [i for i in ids if pending.get(i, {}).get("match_kind") == "duplicate"]
    repeats = _repeats([i for i in ids if i not in dups and i in pending], pending)
    again = {i for more in repeats.values() for i in more}
    rest = [i for i in ids if i not in dups and i not in again]
    said = []
    if rest:
        said.append(actions.decide(root, role, action, rest, reason=reason, edit=edit if len(rest) == 1 else ""))
    said.extend(_close_repeats(root, role, repeats))
    if dups:
        for rid in sorted({str((pending[i].get("matched_memory_ids") or ["?"])[0]) for i in dups}):
            mine = [i for i in dups if str((pending[i].get("matched_memory_ids") or ["?"])[0]) == rid]
            actions.decide(root, role, "reject", mine, reason=f"duplicate of {rid}: the existing record is kept")
            said.append(f"kept {rid} for {len(mine)} duplicate(s) ({', '.join(mine)})")
    return "; ".join(said)


def same_text(cand: Row) -> str:
    """A candidate's statement with case, spacing and punctuation folded (two agents' identical captures)."""
    from commonkeep.gate.matching import words

    return " ".join(words(str(cand.get("text", ""))))


def undo(root: Path | str, role: str | None, ids: list[str]) -> str:
    """Undo the decisions on ``ids`` with a reversing, audited patch (``actions.undo``)."""
    if not ids:
        raise actions.Refused("nothing to undo")
    fn = getattr(actions, "undo", None)
    if fn is None:
        raise actions.Refused("undo is not available on this server yet; nothing was changed")
    return str(fn(root, role, ids))
