"""Dossier-compatible command line for the wiki memory (``contracts/dossier.md §2``).

``python -m commonkeep.dossier --project DIR ingest raw/x.md | query "Q" [--limit N] |
gardener | doctor`` and ``commonkeep dossier ...`` are the same program, so an Orphus install
can point ``ORPHUS_MEMORY_COMMAND`` at either.
"""

from __future__ import annotations

from commonkeep.dossier.cli import configure, main

__all__ = ["configure", "main"]
