"""The reviewer's choices, mapped onto the governance functions: approve, reject, ratify, undo.

This is the one seam between the pages (and the Hermes tab) and the server-side decision code,
and it adds no meaning of its own: an approve is ``decide.approve`` with the candidates' named
choices (``add``, ``reinforce``, ``replace``, ``keep_both``; ``contest`` is read as
``keep_both``), exactly as ``commonkeep review --approve`` does it, so approving a near-repeat
reinforces its record on every surface and a replace is always named. :func:`plan` is what a
confirm page shows: every candidate of a batch with what it changes and its own choice.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.web import actions
from commonkeep.web.flow import CONFLICT_KINDS

Row = dict[str, Any]
CHOICES = ("", "add", "reinforce", "replace", "keep_both", "contest")


def decide(root: Path | str, role: str | None, action: str, ids: list[str], *, reason: str = "", edit: str = "",
           choice: str = "", pending: dict[str, Row] | None = None, conflict_choice: str = "",
           item: Callable[[str], Any] | None = None, choices: dict[str, str] | None = None) -> str:
    """Make one decision on ``ids``; returns the sentence shown to the reviewer.

    One meaning on every surface: this is ``commonkeep review --approve`` (``decide.approve``), the
    same batch plan (``decide.preview``), the same defaults (a repeat or near-repeat reinforces its
    record; a replace is never a default), the same refusals. ``choice``: one choice for every
    candidate; ``choices``: each candidate's own (the confirm page's ``choice.<id>`` fields,
    :func:`choices_from_form`); ``conflict_choice``: the one asked for every conflict in ``ids``
    that has none of its own (``pending``: the candidates by id, scored, to find them). ``item`` is
    accepted for older callers and not used.
    """
    del item
    if choice not in CHOICES or conflict_choice not in CHOICES:
        raise actions.Refused(f"unknown choice {choice or conflict_choice!r}")
    per = {i: c for i, c in (choices or {}).items() if c}
    bad = sorted(c for c in per.values() if c not in CHOICES)
    if bad:
        raise actions.Refused(f"unknown choice {bad[0]!r}")
    if action != "approve":
        return actions.decide(root, role, action, ids, reason=reason, edit=edit, choice=choice)
    rows = pending or {}
    if conflict_choice:
        for i in ids:
            if i not in per and not choice and rows.get(i, {}).get("match_kind") in CONFLICT_KINDS:
                per[i] = conflict_choice
    if not per:
        return actions.decide(root, role, action, ids, reason=reason, edit=edit, choice=choice)
    if choice:
        per = {i: per.get(i, choice) for i in ids}
    return actions.decide(root, role, action, ids, reason=reason, edit=edit, choices=per)


def plan(root: Path | str, ids: list[str], *, choice: str = "", choices: dict[str, str] | None = None,
         queue: Any = None) -> list[dict[str, Any]]:
    """What approving ``ids`` together would do, one entry per candidate (``decide.Plan.to_json``:
    what it is, the record it would change and that record's text, its choices in plain words, the
    choice taken or that one is needed, a refusal). Nothing is written."""
    return actions.outline(root, ids, choice=choice, choices=choices, queue=queue)


def choices_from_form(fields: Any) -> dict[str, str]:
    """Each candidate's own choice from a confirm page's fields ``choice.<candidate id>`` = choice."""
    out: dict[str, str] = {}
    for key in list(fields.keys()):
        if str(key).startswith("choice.") and len(str(key)) > len("choice."):
            out[str(key)[len("choice."):]] = str(fields.get(key) or "")
    return out


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
