"""Strings as Orphus handles them: JavaScript string units (UTF-16 code units) and its trimming.

A character outside the basic plane (an emoji such as 🚀) is two units in JavaScript's
``.length`` and one code point in Python's ``len``; the digest's caps and the export's ``chars``
count units, as Orphus does. Where JavaScript's ``.slice`` cuts such a character in half,
:func:`js_slice` keeps the half as U+FFFD, the bytes Node writes for a lone surrogate in UTF-8,
so a cut text has the same length and the same UTF-8 bytes as Orphus's (issue 39). A lone
surrogate that came over the wire is written the same way (:func:`utf8_text`).
"""

from __future__ import annotations

import re

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
# JavaScript's WhiteSpace and LineTerminator (String.prototype.trimEnd); Python's str.isspace
# differs (it adds U+001C-U+001F and U+0085, and lacks U+FEFF)
JS_SPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff" + "".join(chr(c) for c in range(0x2000, 0x200B))
)


def js_len(text: str) -> int:
    """``text.length`` in JavaScript."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def js_slice(text: str, units: int) -> str:
    """``text.slice(0, units)`` as Node writes it in UTF-8: a split emoji's half becomes U+FFFD."""
    if units <= 0:
        return ""
    if text.isascii() or len(text) * 2 <= units:
        return text[:units]
    used = 0
    for i, c in enumerate(text):
        used += 2 if ord(c) > 0xFFFF else 1
        if used > units:
            return text[:i] + (REPLACEMENT if used - units == 1 and ord(c) > 0xFFFF else "")
    return text


def js_trim_end(text: str) -> str:
    """``text.trimEnd()`` in JavaScript (linear: only the trailing run is looked at)."""
    end = len(text)
    while end and text[end - 1] in JS_SPACE:
        end -= 1
    return text[:end]


def utf8_text(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD: what Node writes for it, and always encodable."""
    return text if text.isascii() else _SURROGATE.sub(REPLACEMENT, text)
