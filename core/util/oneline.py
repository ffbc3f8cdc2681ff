"""One line of text for a narration or a listing, cut at a word."""

from __future__ import annotations


def brief(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary within ``limit`` characters, with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.") + "…"
