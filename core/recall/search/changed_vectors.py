"""Embedding the records one small change wrote (the sync after a one-op apply), and nothing else.

The after-apply sync used to refresh every vector: hash all statements, then embed up to 2,048
records of the backlog (issue 38: 51-79 s at 100,000 records). A delta sync knows which records it
wrote; only those are embedded here. The backlog (records nobody embedded yet) is left to searches
(``semantic.QUERY_EMBED_LIMIT`` a query) and ``reindex``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path

from commonkeep.recall.search.semantic import (
    BUILTIN_BACKENDS,
    MODEL_ID,
    _mark_refreshed,
    embed_text,
    root_model,
    store_vectors,
    text_hash,
    warn_once,
)


def embed_changed_if_available(root: Path | str, ids: Sequence[str], synced_from: str,
                               conn: sqlite3.Connection | None = None) -> int:
    """Embed just the records a delta sync wrote (``ids``) when the local embedder is installed
    (``conn``: the sync's own connection to ``recall.db``, else this thread's shared one)."""
    backend = BUILTIN_BACKENDS[0]
    if not ids or os.environ.get("COMMONKEEP_SEMANTIC", "") in ("off", "qmd") or backend.available(str(root)) is not None:
        return 0
    try:
        return embed_changed(str(root), ids, synced_from, conn)
    except Exception as exc:
        warn_once(
            "refresh", f"could not embed records ({type(exc).__name__}: {exc}); keyword search still works"
        )
        return 0


def embed_changed(root: str, ids: Sequence[str], synced_from: str, own: sqlite3.Connection | None = None) -> int:
    """Embed the records ``ids`` a delta sync just wrote, and nothing else; returns how many.

    ``synced_from`` is the fingerprint the index had before that sync: when every vector was
    current then, it is current now too and the stamp moves on (no later pass hashes all
    records); otherwise the backlog stays for searches and ``reindex``.
    """
    from commonkeep.recall.search import models
    from commonkeep.recall.search.index import borrowed, recall_db_path

    with nullcontext(own) if own is not None else borrowed(recall_db_path(root)) as conn:
        mid = models.embedder(root).id  # the model itself is loaded (~0.3 s) only when a text changed

        def stamped(fp: str) -> str:
            return fp if mid == MODEL_ID else f"{mid}:{fp}"

        fp = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        done = conn.execute("SELECT value FROM meta WHERE key = 'vectors_fingerprint'").fetchone()
        was_current = done is not None and done[0] == stamped(synced_from)
        todo: list[tuple[str, str, str]] = []
        for start in range(0, len(ids), 500):
            part = list(ids[start : start + 500])
            marks = ",".join("?" * len(part))
            have = dict(conn.execute(
                f"SELECT id, text_hash FROM vectors WHERE model = ? AND id IN ({marks})", (mid, *part)))  # noqa: S608
            for rid, statement, context in conn.execute(
                    f"SELECT id, statement, context FROM records WHERE id IN ({marks})", part):  # noqa: S608
                text = embed_text(statement, context)
                h = text_hash(text, mid)
                if have.get(rid) != h:
                    todo.append((rid, h, text))
        if todo:
            store_vectors(conn, root_model(root), mid, todo)
        if was_current and fp is not None:
            _mark_refreshed(conn, (stamped(str(fp[0])),))
        return len(todo)
