"""The sentence-level grounding filter: a returned sentence must be found in its raw source.

The check is lexical and strict: after whitespace, quote and case normalisation the sentence
(or the clipped span of it, without the ``…`` marks) must occur verbatim in the source file.
The same check scores faithfulness in the Hydra9 bench, so faithfulness is 1.0 by construction
for whatever passes; sentences that fail (edited or deleted source, a paraphrase) are dropped.
"""

from __future__ import annotations

from pathlib import Path

from commonkeep.wiki.text import normalise

ELLIPSIS = "…"


class Grounder:
    """Checks sentences against raw sources, reading each source once."""

    def __init__(self, project: Path) -> None:
        self.project = project
        self._cache: dict[str, str | None] = {}

    def source_text(self, source: str) -> str | None:
        if source not in self._cache:
            path = self.project / source
            try:
                self._cache[source] = None if path.is_symlink() else normalise(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                self._cache[source] = None
        return self._cache[source]

    def supported(self, text: str, source: str) -> bool:
        """True when every clipped piece of ``text`` occurs verbatim in ``source``."""
        raw = self.source_text(source)
        if raw is None:
            return False
        pieces = [normalise(p) for p in text.split(ELLIPSIS)]
        pieces = [p for p in pieces if p]
        return bool(pieces) and all(p in raw for p in pieces)
