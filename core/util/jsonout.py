"""``--json`` on stdout: the same values, but no character a terminal obeys or hides behind.

``json.dumps(..., ensure_ascii=False)`` escapes C0 controls but writes C1 controls (U+0080–U+009F,
e.g. CSI U+009B), DEL, bidi and zero-width controls (U+202A–U+202E, U+2066–U+2069, U+200B–U+200F,
U+061C), line/paragraph separators and the BOM as they are, so stored text piped to a terminal
could move the cursor or reorder what a person reads. Here each of them (and a lone surrogate,
which could not even be encoded) becomes a ``\\uXXXX`` escape: ``json.loads`` gives back exactly
the same values, only the bytes differ. Every command's ``--json`` prints through this module.

Only for what commands print: files on disk keep their contract bytes (``commonkeep.store.jsonjs``).
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

# Outside strings JSON is ASCII, so every match sits inside a string literal, where a character
# and its \uXXXX escape mean the same thing.
_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def dumps(data: Any, *, indent: int | None = 2, ensure_ascii: bool = False) -> str:
    """``json.dumps(data, indent=indent, ensure_ascii=ensure_ascii)`` with the unsafe characters escaped."""
    return _UNSAFE.sub(_escape, json.dumps(data, ensure_ascii=ensure_ascii, indent=indent))


def print_json(data: Any, *, indent: int | None = 2, ensure_ascii: bool = False, file: TextIO | None = None) -> None:
    """Write ``dumps(data)`` and a newline to stdout (or ``file``): what every ``--json`` prints."""
    (file or sys.stdout).write(dumps(data, indent=indent, ensure_ascii=ensure_ascii) + "\n")
