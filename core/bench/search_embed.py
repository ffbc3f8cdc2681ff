"""The index sync after a one-op patch with the embedder on (``commonkeep bench search``, extra ``embed``).

Both paths run in the same process on the same store, alternated:

- **now**: ``sync_root`` as ``apply`` calls it; a delta sync embeds the records it wrote
  (``recall.search.changed_vectors``);
- **old**: the delta sync, then ``refresh_vectors_if_available(root, 2048)``, what the after-apply
  sync did before: hash every record's statement, embed up to 2,048 records without a current vector;
- **off**: the delta sync without embedding (the figure without the extra), for scale.

First with every vector current (``runs`` each), then once each with a backlog of 2,048 records
that have no vector (a store an embedder-less program wrote, or one indexed without embedding).
The model is loaded before timing (a new process pays about 0.4 s more for it, both paths alike);
the vectors taken away for the backlog are put back after each run (none is embedded again).
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

BACKLOG = 2048
OLD_LIMIT = 2048  # the after-apply embed limit before changed_vectors


def _one_op(root: Path, i: int) -> None:
    from commonkeep.store.core import Store

    def change(rs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        k = (3000 + i) % len(rs)
        rs[k] = {**rs[k], "statement": f"Embedded patched statement number {i}."}
        return rs

    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", change)


def _now(root: Path) -> tuple[float, int]:
    from commonkeep.recall.search.sync import sync_root

    start = time.perf_counter()
    report = sync_root(root)
    return time.perf_counter() - start, report.vectors


def _old(root: Path) -> tuple[float, int]:
    from commonkeep.recall.search import semantic
    from commonkeep.recall.search.sync import sync_root

    start = time.perf_counter()
    sync_root(root, embed=False)
    embedded = semantic.refresh_vectors_if_available(root, OLD_LIMIT)
    return time.perf_counter() - start, embedded


def _off(root: Path) -> tuple[float, int]:
    from commonkeep.recall.search.sync import sync_root

    start = time.perf_counter()
    sync_root(root, embed=False)
    return time.perf_counter() - start, 0


def _drop_vectors(root: Path, n: int) -> list[tuple[Any, ...]]:
    """Remove ``n`` vectors (a backlog); returns them, to be put back by :func:`_restore`."""
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        rows = conn.execute("SELECT id, model, text_hash, dim, vec FROM vectors ORDER BY id LIMIT ?", (n,)).fetchall()
        conn.executemany("DELETE FROM vectors WHERE id = ?", ((r[0],) for r in rows))
        conn.execute("DELETE FROM meta WHERE key = 'vectors_fingerprint'")
    return rows


def _restore(root: Path, rows: list[tuple[Any, ...]]) -> None:
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        conn.executemany("INSERT OR IGNORE INTO vectors (id, model, text_hash, dim, vec) VALUES (?, ?, ?, ?, ?)", rows)


def patch_sync_embedded(root: Path, runs: int = 5) -> dict[str, Any]:
    """p50 of the one-op sync with the embedder on, now and by the old path (module doc)."""
    from commonkeep.recall.search import semantic

    semantic.root_model(str(root)).embed(["warm the model"])
    semantic.refresh_vectors_if_available(root)  # every vector current, the stamp set
    times: dict[str, list[float]] = {"now": [], "old": [], "off": []}
    counts: dict[str, list[int]] = {"now": [], "old": [], "off": []}
    for run in range(runs):
        for k, (label, path) in enumerate((("now", _now), ("old", _old), ("off", _off))):
            _one_op(root, 3 * run + k)
            took, n = path(root)
            times[label].append(took)
            counts[label].append(n)
    out: dict[str, Any] = {
        "embed_sync_after_one_op_patch_ms": round(statistics.median(times["now"]) * 1000, 1),
        "embed_sync_after_one_op_patch_embedded": max(counts["now"]),
        "embed_sync_after_one_op_patch_old_path_ms": round(statistics.median(times["old"]) * 1000, 1),
        "embed_sync_after_one_op_patch_old_path_embedded": max(counts["old"]),
        "embed_sync_after_one_op_patch_embedder_off_ms": round(statistics.median(times["off"]) * 1000, 1),
    }
    for label, path in (("now", _now), ("old", _old)):
        dropped = _drop_vectors(root, BACKLOG)
        _one_op(root, 100 + (label == "old"))
        took, n = path(root)
        _restore(root, dropped)  # what the old path did not embed (the same vectors: nothing re-embedded)
        suffix = "" if label == "now" else "_old_path"
        out[f"embed_sync_with_{BACKLOG}_backlog{suffix}_ms"] = round(took * 1000, 1)
        out[f"embed_sync_with_{BACKLOG}_backlog{suffix}_embedded"] = n
    semantic.refresh_vectors_if_available(root)  # the stamp set again for what follows (nothing left to embed)
    return out
