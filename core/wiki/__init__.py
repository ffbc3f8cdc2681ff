"""The wiki memory: raw sources compiled into a markdown wiki in git (Dossier-compatible).

Python API (what ``commonkeep demo`` and hosts call)::

    from commonkeep import wiki
    report = wiki.ingest(project_dir, "raw/design.md")      # one git commit
    result = wiki.query(project_dir, "what did we decide?", limit=10)
    print(result.render())                                   # Dossier's stdout shape
    wiki.gardener(project_dir)                               # one git commit

The CLI is ``commonkeep dossier`` / ``python -m commonkeep.dossier`` (``contracts/dossier.md``).
"""

from __future__ import annotations

from commonkeep.wiki.doctor import doctor
from commonkeep.wiki.gardener import GardenerReport, gardener
from commonkeep.wiki.ingest import IngestReport, ingest
from commonkeep.wiki.query import Candidate, Evidence, QueryResult, query

__all__ = [
    "Candidate",
    "Evidence",
    "GardenerReport",
    "IngestReport",
    "QueryResult",
    "doctor",
    "gardener",
    "ingest",
    "query",
]
