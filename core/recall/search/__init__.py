"""Recall: keyword (FTS5), semantic and hybrid search over the memory root.

Import-light on purpose: the search CLI is on hosts' hot path, so this package imports nothing
heavy; numpy and the embedder load only when semantic search is actually used.

- ``commonkeep.recall.search.fts``: the contract's ``memory_fts`` table (``search/memory-fts.db``),
  sync and keyword queries (``contracts/ompkeep-store.md`` §9.1).
- ``commonkeep.recall.search.semantic``: semantic backends (``qmd`` and the local embedder extra).
- ``commonkeep.recall.search.notes``: daily logs and evidence records in ``recall.db``'s ``notes_fts``
  (``search --notes``), never in ``memory_fts``.
- ``commonkeep.recall.search.hybrid``: Reciprocal Rank Fusion (§9.3) and the one ``search()`` entry point.
- ``commonkeep.recall.search.plugin``: the hook implementations (index sync after apply, doctor check,
  built-in semantic backends).
"""
