"""Fold a text for secret scanning, keeping where each folded character came from.

A token written in full-width letters (NFKC), with zero-width or bidi characters inside (Unicode
format characters, dropped) or with Cyrillic look-alikes (the Unicode confusables table of the
maintained ``confusable-homoglyphs`` package, as ``commonkeep.util.normalize`` loads it) is
scanned as the ASCII a reader sees; the spans found are mapped back to the text as written, so
the redaction removes the disguised characters themselves. ``normalize.fold`` folds whole texts
for scoring and does not keep offsets, which redaction needs.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache


@lru_cache(maxsize=1)
def _table() -> dict[int, str]:
    from commonkeep.util.normalize import _confusables

    table: dict[int, str] = _confusables()
    return table


@lru_cache(maxsize=4096)
def _char(ch: str) -> str:
    cp = ord(ch)
    if unicodedata.category(ch) == "Cf" or 0xFE00 <= cp <= 0xFE0F:
        return ""
    nf = unicodedata.normalize("NFKC", ch)
    if nf.isascii():
        return nf
    return _table().get(cp, ch)


def fold_map(text: str) -> tuple[str, list[int]]:
    """``(folded, origin)``: ``origin[i]`` is the index in ``text`` of folded character ``i``;
    ``origin`` has one more entry, ``len(text)``, so an end offset maps too."""
    out: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        f = ch if ch.isascii() else _char(ch)
        out.append(f)
        origin.extend([i] * len(f))
    origin.append(len(text))
    return "".join(out), origin


def to_original(origin: list[int], start: int, end: int, length: int) -> tuple[int, int]:
    """The span of the written text behind folded span ``[start, end)`` (dropped characters at its
    edges inside a token are included: they belong to the disguised secret)."""
    s = origin[start]
    e = origin[end - 1] + 1 if end > start else s
    return s, min(e, length)
