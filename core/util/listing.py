"""Lists in messages, bounded: an error names the first few items and says how many there are."""

from __future__ import annotations

from collections.abc import Sequence

SHOWN = 10


def capped(items: Sequence[str], shown: int = SHOWN, empty: str = "(none)") -> str:
    """``a, b, c`` for a short list; ``a, …, j and 290 more (300 in all)`` for a long one."""
    if not items:
        return empty
    if len(items) <= shown:
        return ", ".join(items)
    return f"{', '.join(items[:shown])} and {len(items) - shown} more ({len(items)} in all)"
