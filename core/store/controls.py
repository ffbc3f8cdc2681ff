"""Terminal control characters are made visible at capture, never stored raw.

A candidate's text, tags, evidence refs, source and provenance may arrive with ANSI/OSC escape
sequences or other C0/C1 controls (an OSC 8 hyperlink to a collector, a cursor move that hides
what follows). Stored raw, they would reach every terminal that later prints the memory and every
context it is rendered into. ``visible`` writes each control (except newline and tab) as its
``\\xNN`` escape: the text keeps what it said, a person sees it, and the poisoning score counts it
(``commonkeep.governance.poisoning``: ``terminal_control_characters``).
"""

from __future__ import annotations

import json
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
    """``visible`` for a whole candidate, with a quick look first: its JSON (which writes every C0
    control but newline and tab as ``\\u00XX``, ``\\r``, ``\\b`` or ``\\f``, and keeps DEL and C1 as
    they are) shows whether any
    field holds one, so a candidate without controls (nearly all) is not walked field by field."""
    try:
        dumped = json.dumps(cand, ensure_ascii=False)
    except (TypeError, ValueError):
        return dict(visible(cand))
    if not any(esc in dumped for esc in ("\\u00", "\\r", "\\b", "\\f")) and not CONTROLS.search(dumped):
        return cand
    return dict(visible(cand))
