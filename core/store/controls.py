"""Terminal control characters are made visible at capture, never stored raw.

A candidate's text, tags, evidence refs, source and provenance may arrive with ANSI/OSC escape
sequences or other C0/C1 controls (an OSC 8 hyperlink to a collector, a cursor move that hides
what follows). Stored raw, they would reach every terminal that later prints the memory and every
context it is rendered into. ``visible`` writes each control (except newline and tab) as its
``\\xNN`` escape: the text keeps what it said, a person sees it, and the poisoning score counts it
(``commonkeep.gate.poisoning``: ``terminal_control_characters``).
"""

from __future__ import annotations

from typing import Any

from commonkeep.util.terminal import CONTROLS, escape_controls


def visible(value: Any) -> Any:
    """``value`` (a string, or a list/dict of them) with every terminal control made visible."""
    if isinstance(value, str):
        return escape_controls(value) if CONTROLS.search(value) else value
    if isinstance(value, list):
        return [visible(v) for v in value]
    if isinstance(value, dict):
        return {visible(k): visible(v) for k, v in value.items()}
    return value


def visible_candidate(cand: dict[str, Any]) -> dict[str, Any]:
    """``visible`` for a whole candidate, with a quick look first: its ``repr`` (which writes every
    control as ``\\xNN``, or ``\\r``; newline and tab as ``\\n`` and ``\\t``) shows whether any
    key or string holds one, so a candidate without controls (nearly all) is not walked field by
    field. A backslash the text holds shows as ``\\\\``, so a written ``\\x41`` takes the walk too,
    which leaves it as it is."""
    try:
        shown = repr(cand)
    except Exception:  # noqa: BLE001 - an extra value whose repr fails: walk it
        return dict(visible(cand))
    if "\\x" not in shown and "\\r" not in shown:
        return cand
    return dict(visible(cand))
