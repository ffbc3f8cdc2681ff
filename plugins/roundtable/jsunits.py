"""Lengths as Orphus counts them: JavaScript string units (UTF-16 code units).

A character outside the basic plane (an emoji such as 🚀) is two units in JavaScript's
``.length`` and one code point in Python's ``len``; the digest's caps and the export's ``chars``
count units, as Orphus does. Cutting differs on purpose: where ``.slice`` would split such a
character in half, :func:`js_cut` stops before it (never half a character on the wire).
"""

from __future__ import annotations


def js_len(text: str) -> int:
    """``text.length`` in JavaScript."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def js_cut(text: str, units: int) -> str:
    """The longest prefix of ``text`` of at most ``units`` UTF-16 units, whole characters only."""
    if units <= 0:
        return ""
    if text.isascii() or len(text) * 2 <= units:
        return text[:units]
    used = 0
    for i, c in enumerate(text):
        used += 2 if ord(c) > 0xFFFF else 1
        if used > units:
            return text[:i]
    return text
