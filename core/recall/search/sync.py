"""Keeping ``search/memory-fts.db`` and ``search/recall.db`` in step with the canonical JSONL.

:func:`sync_root` after every patch changes only the rows that differ; ``reindex`` (``full``)
rebuilds both: a damaged database file (not a database, malformed, truncated) is first moved
aside (``health.move_aside``) and built anew, and the store is read in one streamed pass
(``rows.scan``) whose record places go straight into ``record_at``, so the rebuild never holds
a dict per record. Stored vectors of records that are still indexed are kept.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.recall.search import fts, health, rows
from commonkeep.recall.search.rows import IndexRow, Place, SelectRows

TERMS_DELTA_MAX = 2000  # a sync changing more rows than this recounts every term from the index


@dataclass(frozen=True)
class SyncReport:
    """The outcome of one sync: contract table and recall table changes, vectors embedded."""

    fts: fts.SyncResult
    recall_added: int
    recall_removed: int
    total: int
    vectors: int = 0
    notes: int = 0  # notes_fts rows written (a full sync rebuilds them)
    moved_aside: tuple[str, ...] = ()  # damaged database files renamed before the rebuild


def _sync_select(conn: sqlite3.Connection, want: SelectRows, *, full: bool) -> None:
    """``record_at`` and ``select_rows`` in line with ``want`` (inside the caller's transaction)."""
    if full:
        conn.execute("DELETE FROM record_at")
        conn.execute("DELETE FROM select_rows")
        have: dict[str, Place] = {}
        have_ranked: dict[tuple[str, int], bytes] = {}
    else:
        have = {
            str(r[0]): (str(r[1]), int(r[2]), int(r[3]), None if r[4] is None else bytes(r[4]))
            for r in conn.execute("SELECT id, file, offset, length, body FROM record_at")
        }
        have_ranked = {
            (str(r[0]), int(r[1])): bytes(r[2])
            for r in conn.execute("SELECT kind, ord, body FROM select_rows")
        }
    conn.executemany("DELETE FROM record_at WHERE id = ?", ((g,) for g in have if g not in want.places))
    conn.executemany(
        _PUT_PLACE, ((rid, *place) for rid, place in want.places.items() if have.get(rid) != place)
    )
    _sync_ranked(conn, want.ranked, have_ranked)


_PUT_PLACE = "INSERT OR REPLACE INTO record_at (id, file, offset, length, body) VALUES (?, ?, ?, ?, ?)"


def _sync_ranked(conn: sqlite3.Connection, want: dict[tuple[str, int], bytes], have: dict[tuple[str, int], bytes]) -> None:
    gone_ranked = [k for k, body in have.items() if want.get(k) != body]
    conn.executemany("DELETE FROM select_rows WHERE kind = ? AND ord = ?", gone_ranked)
    conn.executemany(
        "INSERT INTO select_rows (kind, ord, body) VALUES (?, ?, ?)",
        ((k[0], k[1], body) for k, body in want.items() if have.get(k) != body),
    )


def _insert(conn: sqlite3.Connection, fresh: list[IndexRow], *, everything: bool = False) -> None:
    """Add ``fresh`` to ``records`` and ``recall_fts`` (``everything``: ``records`` holds nothing
    else, so the FTS index is built from it in one statement)."""
    conn.executemany(
        "INSERT INTO records (id, layer, rule_type, confidence, statement, tags, context, ord, day, source) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        ((*r.row, r.context, r.ord, r.day, r.source) for r in fresh),
    )
    if everything:
        conn.execute("INSERT INTO recall_fts (recall_fts) VALUES ('rebuild')")
        return
    conn.executemany(
        "INSERT INTO recall_fts (rowid, id, statement, tags, context) "
        "SELECT rowid, id, statement, tags, context FROM records WHERE id = ?",
        ((r.row[0],) for r in fresh),
    )


def _sync_recall(
    conn: sqlite3.Connection, want: Mapping[str, IndexRow], *, full: bool, select: SelectRows | None = None
) -> tuple[int, int]:
    """The incremental sync (``full``: everything rewritten in place) of ``recall.db``."""
    from commonkeep.recall.search import shifts

    with health.transaction(conn):
        # the rows compared below hold their true places and store order (``shifts.py``)
        if full:
            shifts.drop(conn)
        else:
            shifts.fold(conn)
        if select is not None:
            _sync_select(conn, select, full=full)
        if full:
            removed = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
            conn.execute("INSERT INTO recall_fts (recall_fts) VALUES ('delete-all')")
            conn.execute("DELETE FROM records")
            keep: set[str] = set()
            gone_texts: list[tuple[str, str, str]] = []
        else:
            have = {
                r[0]: ((r[0], r[1], r[2], float(r[3]), r[4], r[5]), r[6], int(r[7]), int(r[8]), r[9], str(r[10]))
                for r in conn.execute(
                    "SELECT id, layer, rule_type, confidence, statement, tags, context, ord, rowid, day, source FROM records"
                )
            }
            gone = [
                rid
                for rid, (row, ctx, ord_, _, day, source) in have.items()
                if rid not in want or want[rid] != IndexRow(row, ctx, ord_, day, source)
            ]
            removed = len(gone)
            gone_texts = [(have[g][0][4], have[g][0][5], have[g][1]) for g in gone]
            # External content: the FTS index is told the old texts before their row goes.
            conn.executemany(
                "INSERT INTO recall_fts (recall_fts, rowid, id, statement, tags, context) VALUES ('delete', ?, ?, ?, ?, ?)",
                ((have[g][3], g, *gone_texts[i]) for i, g in enumerate(gone)),
            )
            conn.executemany("DELETE FROM records WHERE id = ?", ((g,) for g in gone))
            keep = set(have) - set(gone)
        fresh = [r for rid, r in want.items() if rid not in keep]
        _insert(conn, fresh, everything=full)
        # Vectors of records that left the index go too (text changes are caught by the hash).
        conn.execute("DELETE FROM vectors WHERE id NOT IN (SELECT id FROM records)")
        ready = conn.execute("SELECT 1 FROM meta WHERE key = 'terms'").fetchone() is not None
        if full or not ready or len(gone_texts) + len(fresh) > TERMS_DELTA_MAX:
            _recount_terms(conn)
        else:
            _count_terms(conn, gone_texts, -1)
            _count_terms(conn, [(r.row[4], r.row[5], r.context) for r in fresh], 1)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('docs', ?)", (str(len(want)),))
    return len(fresh), removed


def fast(conn: sqlite3.Connection) -> None:
    """For a full rebuild only: no fsync per WAL write and a 32 MB page cache on this connection.
    The databases are derived: if the machine dies mid-rebuild and leaves one damaged, the next
    read uses an in-memory index and ``reindex`` moves the file aside and builds it again."""
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("PRAGMA cache_size=-32768")


def _rebuild_recall(conn: sqlite3.Connection, root: Path | str) -> tuple[rows.Scan, int]:
    """``reindex``: read the store in one streamed pass straight into ``recall.db`` (one
    transaction; the FTS table is dropped and created, not emptied row by row)."""
    from commonkeep.recall.search import index

    fast(conn)
    with health.transaction(conn):
        removed = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
        for table in ("records", "record_at", "select_rows", "terms"):
            conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
        from commonkeep.recall.search import shifts

        shifts.drop(conn)
        conn.execute("DROP TABLE IF EXISTS recall_fts")
        conn.execute(index.RECALL_FTS)
        batch: list[tuple[str, str, int, int, bytes | None]] = []

        def place(rid: str, where: Place) -> None:
            batch.append((rid, *where))
            if len(batch) >= 5000:
                conn.executemany(_PUT_PLACE, batch)
                batch.clear()

        from commonkeep.store.layout import Layout
        from commonkeep.util import progress

        size = sum(p.stat().st_size for p in Layout(root).canonical_files() if p.exists())
        with progress.bar(size, "reindex", unit="B", unit_scale=True) as bar:
            scan = rows.scan(root, on_place=place, read=bar.update)
        conn.executemany(_PUT_PLACE, batch)  # in store order: the last line of an id wins
        _insert(conn, list(scan.rows.values()), everything=True)
        _sync_ranked(conn, scan.ranked, {})
        conn.execute("DELETE FROM vectors WHERE id NOT IN (SELECT id FROM records)")
        _recount_terms(conn)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('docs', ?)", (str(len(scan.rows)),))
    return scan, removed


def _recount_terms(conn: sqlite3.Connection) -> None:
    """``terms`` from scratch: FTS5's own row counts (inside the caller's transaction)."""
    from commonkeep.recall.search import index

    index.temp_tables(conn)
    conn.execute("DELETE FROM terms")
    conn.execute("INSERT INTO terms (term, df) SELECT term, doc FROM temp.recall_df")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('terms', 'ok')")


def _count_terms(conn: sqlite3.Connection, texts: list[tuple[str, str, str]], sign: int) -> None:
    """Add (``sign`` 1) or remove (-1) the rows ``(statement, tags, context)`` from ``terms``,
    stemmed by the same tokenizer in a scratch table."""
    from commonkeep.recall.search import index

    if not texts:
        return
    index.temp_tables(conn)
    conn.execute("DELETE FROM temp.delta_fts")
    conn.executemany("INSERT INTO temp.delta_fts (statement, tags, context) VALUES (?, ?, ?)", texts)
    conn.execute(
        "INSERT INTO terms (term, df) SELECT term, ? * doc FROM temp.delta_df WHERE true "
        "ON CONFLICT(term) DO UPDATE SET df = df + excluded.df",
        (sign,),
    )
    if sign < 0:
        conn.execute("DELETE FROM terms WHERE df <= 0")
    conn.execute("DELETE FROM temp.delta_fts")


def drop_after_sweep(root: Path | str, swept: Iterable[Any]) -> bool:
    """When the exit gate redacted a record file in place (``swept``: ``exitgate.Swept``), drop both
    search databases: rows built from the raw lines may sit in their free pages and FTS segments
    (as ``forget --purge`` does); the next sync builds them again from the redacted files."""
    from commonkeep.recall.search import index
    from commonkeep.store.layout import Layout

    if not any(str(s.file).startswith("memory/") for s in swept):
        return False
    lay = Layout(root)
    index.forget_readers()
    for path in (lay.search_db, index.recall_db_path(root)):
        for suffix in ("", "-wal", "-shm"):
            extra = path.with_name(path.name + suffix)
            if extra.exists():
                extra.unlink()
    return True


def repair(root: Path | str) -> list[str]:
    """Move every damaged search database aside (``reindex`` then builds new ones); returns
    what was moved, as ``old -> new`` names relative to the root."""
    from commonkeep.recall.search import index
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    moved = []
    for path in (lay.search_db, index.recall_db_path(root)):
        why = health.problem(path)
        if why is None:
            continue
        index.forget_readers()
        new = health.move_aside(path)
        moved.append(f"{lay.rel(path)} -> {lay.rel(new)}")
        print(f"commonkeep: {lay.rel(path)} was damaged ({why}); moved it aside to {lay.rel(new)} and rebuilt it",
              file=sys.stderr)
    return moved


def sync_root(
    root: Path | str, *, full: bool = False, embed: bool = True, embed_limit: int | None = None
) -> SyncReport:
    """Bring both indexes in line with the canonical files (``full``: rebuild from scratch, after
    moving damaged database files aside).

    ``embed``: also embed records that have no current vector, when a local embedder is
    installed and usable (otherwise vectors are left alone and keyword search still works);
    ``embed_limit`` caps how many are embedded now (the rest on later syncs and searches).
    """
    from commonkeep.recall.search import index
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    if full:  # ``reindex`` reads every file: what other programs wrote passes the exit gate first (in place)
        from commonkeep.store import exitgate

        drop_after_sweep(root, exitgate.sweep(root, reason="reindex"))
    moved = repair(root) if full else []
    stamp = index.fingerprint(root)
    with index._closing(index.connect_recall(index.recall_db_path(root))) as rconn:
        # recall.db is derived and commonkeep's own: its commits need no fsync (WAL, NORMAL). A power
        # cut may roll back the last sync, fingerprint included, and the next one redoes it; the
        # contract table (memory-fts.db, which OMP reads) keeps SQLite's durable default.
        rconn.execute("PRAGMA synchronous=NORMAL")
        if not full:  # one record file moved by a few lines (a patch): only those lines (``delta``)
            from commonkeep.recall.search import delta

            before = rconn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
            done = delta.try_delta(rconn, root, str(before[0]), stamp) if before else None
            if done is not None:
                docs = rconn.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone()
                total = int(docs[0]) if docs else 0
                vectors = 0
                if embed:  # the records this change wrote, never the backlog (a search or reindex embeds that)
                    from commonkeep.recall.search.changed_vectors import embed_changed_if_available

                    vectors = embed_changed_if_available(root, done.ids, str(before[0]), rconn)
                return SyncReport(fts.SyncResult(done.added, done.removed, total), done.added,
                                  done.removed, total, vectors)
        if full:
            scan, removed = _rebuild_recall(rconn, root)
            added = len(scan.rows)
        else:
            scan = rows.scan(root)
            added, removed = _sync_recall(rconn, scan.rows, full=False, select=scan.select)
        rconn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fingerprint', ?)", (stamp,))
        rconn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('unique_ids', ?)",
                      ("yes" if scan.unique_ids else "no",))
        from commonkeep.recall.search import delta

        delta.save_state(rconn, root, stamp)  # the lines of this version, for the next small change
        # Daily logs and evidence only on a full rebuild (``reindex``): the sync after a patch and
        # the search hot path never read them; a search with notes syncs them itself.
        notes_added = 0
        if full:
            from commonkeep.recall.search import notes

            notes_added = notes.sync_notes(root, rconn, full=True).added
    contract_rows = {rid: r.row for rid, r in scan.rows.items()}
    del scan
    with index._closing(fts.connect(lay.search_db)) as conn:
        if full:
            fast(conn)
        fts_result = fts.rebuild(conn, contract_rows) if full else fts.sync(conn, contract_rows)
    vectors = 0
    if embed:
        from commonkeep.recall.search import semantic

        vectors = semantic.refresh_vectors_if_available(root, embed_limit)
    return SyncReport(fts_result, added, removed, len(contract_rows), vectors, notes_added, tuple(moved))


def describe(report: SyncReport) -> str:
    return json.dumps(
        {
            "records": report.total,
            "memory_fts": {"added": report.fts.added, "removed": report.fts.removed},
            "recall": {"added": report.recall_added, "removed": report.recall_removed},
            "vectors_embedded": report.vectors,
            "notes": report.notes,
            "moved_aside": list(report.moved_aside),
        }
    )
