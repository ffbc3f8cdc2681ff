"""The search indexes of a root: ``search/memory-fts.db`` and ``search/recall.db``.

- ``memory-fts.db``: the contract's ``memory_fts`` table, shared with OMP (``fts.py``);
- ``recall.db``: commonkeep's own, rebuildable at any time — ``records`` (id lookup),
  ``recall_fts`` (the same rows plus a low-weight *source context* column, ``rows.py``),
  ``vectors`` (float32 BLOBs of the local embedder), ``terms`` (the document frequency of every
  stemmed term of ``recall_fts``, for query expansion, ``expansion.py``), ``meta`` (the
  fingerprint of the canonical files the indexes were built from, the record count),
  ``notes_fts`` / ``notes_src`` / ``notes_files`` (daily logs and evidence records, with their own
  fingerprint; ``notes.py``), and what prompt selection (``commonkeep.recall.select``) needs
  without reading the whole store: ``record_at`` (where the whole record of every indexed id is,
  as the store holds it) and ``select_rows`` (the active hard rules and the contested records,
  whole, in priority order).

Selection rows: ``record_at`` holds, for every id of ``records``, where the record a reader of the
store gets for that id (the last active line of it) is: the file, byte offset and length of that
line, so :func:`records_by_id` reads a dozen lines from the JSONL instead of the index keeping a
second copy of every record (68 MB at 100,000 records; a record with no readable line of its own
is kept whole in ``body``; the offsets are stored values that ``shifts`` entries move, ``shifts.py``). Those reads are checked: the canonical files must still have the
fingerprint the index was built from and each line must hold its id, or :class:`Moved` is raised
and the reader re-syncs. ``select_rows`` holds one row per line (kind
``hard``: active records that are hard rules, §6.11; kind ``contested``: status ``contested``),
tombstoned ids left out as the store leaves them out, sorted by ``projection.priority_key``
(stable, so store order breaks ties). Bodies parse back to an equal dict with the same key
order, number types and lone surrogates.

Freshness: every sync (``sync.py``) stores the canonical files' ``(name, size, mtime)``
fingerprint; readers call :func:`open_fresh`, which re-syncs (only the rows that changed) when
OMP or anyone else changed the files since. Both databases are derived: ``commonkeep reindex``
rebuilds them, moving a damaged file aside first. A reader never fails because of them: a
damaged database, a root that cannot be written (a stale index there) or a full disk gives a
search over an in-memory index built from the canonical files, with a notice naming the cause
(:func:`take_notices`); a read-only root with a fresh index is read in place, read-only.
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from commonkeep.recall.search import fts, health
from commonkeep.recall.search.rows import (  # noqa: F401 - the public names of the index, as before the split
    CONTEXT_NEIGHBOURS,
    CONTEXT_WEIGHT,
    IndexRow,
    Place,
    SelectRows,
    decode_record,
    encode_record,
    index_rows,
    load_rows,
    select_rows_for,
    source_of,
)
from commonkeep.recall.search.shifts import OFFSET
from commonkeep.recall.search.shifts import SCHEMA as SHIFTS
from commonkeep.recall.search.shifts import load as load_shifts
from commonkeep.store.root import require_root  # noqa: F401  (moved to the store in 0.3; the old name keeps working)

# External content: the texts are read from ``records`` (same rowid), not stored a second time in the
# FTS table (18 MB less at 100,000 records, and a full build tokenizes ``records`` in SQLite itself).
# Every change to ``records`` is mirrored into it by ``sync`` in the same transaction.
RECALL_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS recall_fts USING fts5(id UNINDEXED, statement, tags, context, "
              "content='records', tokenize='porter unicode61')")

RECALL_DB = "recall.db"
# Leads every fingerprint this version stores. Bumped when recall.db gains tables an older
# commonkeep does not keep (2: the selection rows): a sync by an older version sharing the root
# stores a fingerprint without it, so the next reader here re-syncs instead of trusting tables
# that sync left behind.
# 3: ``record_at`` (places of records) replaced ``record_json`` (whole records). 4: ``records``
# keeps each record's ``day`` and ``source`` (the rerank stage's cues, ``cues.py``). 5: ``shifts``
# (``shifts.py``): ``record_at.offset`` and ``records.ord`` are stored values that its entries move;
# code that does not apply them would read wrong places, so it finds the index stale and re-syncs.
INDEX_FORMAT = "commonkeep-index-5"

_RECALL_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, layer TEXT NOT NULL, rule_type TEXT NOT NULL, "
    "confidence REAL NOT NULL, statement TEXT NOT NULL, tags TEXT NOT NULL, context TEXT NOT NULL, ord INTEGER NOT NULL, "
    "day INTEGER, source TEXT NOT NULL DEFAULT '')",
    RECALL_FTS,
    "CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, model TEXT NOT NULL, text_hash TEXT NOT NULL, "
    "dim INTEGER NOT NULL, vec BLOB NOT NULL)",
    # Document frequency of every (porter-stemmed) term of recall_fts, kept by each sync: FTS5
    # does not store it and counting a doclist per query costs ~0.1 ms per 1,000 postings.
    "CREATE TABLE IF NOT EXISTS terms (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID",
    # Daily logs and evidence records (``notes.py``): searched only when asked for, synced then.
    "CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5(kind UNINDEXED, ref UNINDEXED, date UNINDEXED, "
    "text, tokenize='porter unicode61')",
    "CREATE TABLE IF NOT EXISTS notes_src (id INTEGER PRIMARY KEY, source TEXT NOT NULL, digest TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS notes_src_source ON notes_src (source)",
    "CREATE TABLE IF NOT EXISTS notes_files (name TEXT PRIMARY KEY, stamp TEXT NOT NULL)",
    # What ``select_for_prompt`` needs (see "Selection rows" above): ``file`` relative to the root,
    # ``offset`` and ``length`` in bytes; or ``body`` (``file`` empty) for a record kept whole.
    "CREATE TABLE IF NOT EXISTS record_at (id TEXT PRIMARY KEY, file TEXT NOT NULL, offset INTEGER NOT NULL, "
    "length INTEGER NOT NULL, body BLOB) WITHOUT ROWID",
    # The records kept whole (few or none): found without a pass over every place.
    "CREATE INDEX IF NOT EXISTS record_at_whole ON record_at (id) WHERE file = ''",
    "CREATE TABLE IF NOT EXISTS select_rows (kind TEXT NOT NULL, ord INTEGER NOT NULL, body BLOB NOT NULL, "
    "PRIMARY KEY (kind, ord)) WITHOUT ROWID",
    # How far the rows after a changed line moved, instead of every such row written (``shifts.py``).
    SHIFTS,
)
# Every table and index of the schema: a recall.db lacking one (an older version) gets the missing
# ones. Missing selection tables also drop its fingerprint, so that the next reader re-syncs and
# fills them (the notes tables have their own fingerprint).
_SCHEMA_NAMES = tuple(re.findall(r"IF NOT EXISTS (\w+)", " ".join(_RECALL_SCHEMA)))
_SELECT_TABLES = frozenset({"record_at", "select_rows"})
_DROPPED = ("record_json",)  # tables of earlier formats, dropped when found
_TEMP_TABLES = (
    # Per connection, in the temp schema: nothing is added to recall.db's file.
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_df USING fts5vocab(main, recall_fts, row)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.prf_words USING fts5(w, tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.prf_stems USING fts5vocab(temp, prf_words, instance)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.delta_fts USING fts5(statement, tags, context, tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.delta_df USING fts5vocab(temp, delta_fts, row)",
)


def recall_db_path(root: Path | str) -> Path:
    # Plain joins, not ``Layout``: this runs on every search (the hot path).
    return Path(root) / "search" / RECALL_DB


def create_schema(conn: sqlite3.Connection) -> None:
    for stmt in _RECALL_SCHEMA:
        conn.execute(stmt)


def connect_recall(path: Path) -> sqlite3.Connection:
    """Open ``recall.db`` (WAL, busy timeout) and create its tables if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    health.private_file(path)
    conn = sqlite3.connect(str(path), timeout=fts.BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout={fts.BUSY_TIMEOUT_MS}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        names = (*_SCHEMA_NAMES, *_DROPPED)
        marks = ",".join("?" * len(names))
        found = dict(conn.execute(f"SELECT name, sql FROM sqlite_master WHERE name IN ({marks})", names).fetchall())
        present = set(found)
        # An index of an earlier format: recall_fts keeps its own texts, or an older commonkeep
        # synced here (it adds ``record_json`` back and writes recall_fts rows by its own rowids,
        # which an external-content table cannot take). Emptied, so the next sync finds every
        # record new and writes it in this format. ``records`` without ``day`` and ``source``
        # (format 3) is dropped and made again.
        undated = "records" in found and "source TEXT" not in str(found["records"])
        earlier = bool(present & set(_DROPPED)) or undated or ("recall_fts" in found and "content='records'"
                                                                not in str(found["recall_fts"]))
        if len(present & set(_SCHEMA_NAMES)) < len(_SCHEMA_NAMES) or earlier:
            with health.transaction(conn):
                for old in sorted(present & set(_DROPPED)):
                    conn.execute(f"DROP TABLE {old}")
                if earlier:
                    conn.execute("DROP TABLE IF EXISTS recall_fts")
                    if undated:  # made again by create_schema, with the new columns
                        conn.execute("DROP TABLE records")
                        present.discard("records")
                    for table in ("records", "terms", "record_at", "select_rows"):
                        if table in present:
                            conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
                    if "meta" in present:
                        conn.execute("DELETE FROM meta WHERE key IN ('fingerprint', 'terms')")
                create_schema(conn)
                if _SELECT_TABLES - present:
                    # Selection tables added to an existing index are empty: it is not fresh any more,
                    # whatever the canonical files (``open_fresh`` re-syncs, which fills them).
                    conn.execute("DELETE FROM meta WHERE key = 'fingerprint'")
    except BaseException:
        conn.close()
        raise
    return conn


def temp_tables(conn: sqlite3.Connection) -> None:
    """This connection's scratch tables (temp schema: nothing is added to recall.db's file)."""
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'recall_df'").fetchone() is None:
        for stmt in _TEMP_TABLES:
            conn.execute(stmt)


_temp_tables = temp_tables  # the name before the split


def fingerprint(root: Path | str) -> str:
    """``(name, size, mtime_ns, inode)`` of the canonical files and tombstones, as one string.

    The inode catches a rewrite through a temp file and rename (ours, and any writer that
    replaces a file atomically) even when it keeps the size and lands within the same
    modification-time tick; an in-place edit of the same size within one tick is still unseen.
    """
    # The same files as ``Layout.canonical_files()`` plus tombstones, without building a Layout
    # (this runs on every search).
    memory = os.path.join(str(root), "memory")
    projects = os.path.join(memory, "projects")
    try:
        names = sorted(f"projects/{e.name}" for e in os.scandir(projects) if e.name.endswith(".jsonl"))
    except FileNotFoundError:
        names = []
    parts = []
    for name in ("L1.identity.jsonl", "L2.playbooks.jsonl", *names, "tombstones.jsonl"):
        try:
            st = os.stat(os.path.join(memory, name))
        except FileNotFoundError:
            parts.append(f"{name}:-")
            continue
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
    return "|".join([INDEX_FORMAT, *parts])


_local = threading.local()


def reader(path: Path) -> sqlite3.Connection:
    """This thread's open connection to ``recall.db`` (reused: opening and closing a WAL database
    costs more than a query). Reopened when the file was replaced (``reindex --recreate``).
    Callers must not close it."""
    cache: dict[str, tuple[sqlite3.Connection, tuple[int, int, int]]] = getattr(_local, "conns", None) or {}
    _local.conns = cache
    st = os.stat(path)
    # ctime too: a deleted and recreated file may get the same inode number back at once.
    ident = (st.st_dev, st.st_ino, st.st_ctime_ns)
    entry = cache.get(str(path))
    if entry is not None and entry[1] == ident:
        return entry[0]
    # A changed identity (a replaced file, or only a new ctime after a write or checkpoint) opens a
    # new connection; the old one is not closed here, because a caller up the stack may still be
    # using it (a search holds it while its semantic backend re-syncs and embeds): it closes when
    # its last user lets go of it.
    conn = connect_recall(path)
    cache[str(path)] = (conn, ident)
    return conn


def forget_readers() -> None:
    """Close this thread's cached connections (before deleting the database files)."""
    for conn, _ in (getattr(_local, "conns", None) or {}).values():
        conn.close()
    _local.conns = {}


@contextmanager
def borrowed(path: Path) -> Iterator[sqlite3.Connection]:
    """``with borrowed(path) as conn``: this thread's shared connection, left open afterwards."""
    yield reader(path)


def _fresh(conn: sqlite3.Connection, root: Path | str) -> bool:
    row = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
    return row is not None and row[0] == fingerprint(root)


def open_fresh(root: Path | str) -> sqlite3.Connection:
    """This thread's ``recall.db`` connection, after re-syncing when the canonical files changed
    since the last sync. The connection is shared (see :func:`reader`): do not close it.

    Never fails because of the index itself: see the module doc (damaged, read-only, full)."""
    base = require_root(root)
    path = recall_db_path(root)
    try:
        if not health.writable(path.parent) or (path.exists() and not os.access(path, os.W_OK)):
            return _read_only(root, path)
        if path.exists() and (base / "search" / "memory-fts.db").exists():
            conn = reader(path)
            if _fresh(conn, root):
                return conn
        from commonkeep.recall.search.sync import sync_root

        sync_root(root, embed=False)
        return reader(path)
    except (sqlite3.DatabaseError, OSError) as exc:
        why = _why_unusable(root, exc)
        if why is None:
            raise
        return _in_memory(root, why)


def ensure_fresh(root: Path | str) -> None:
    """Re-sync when the canonical files changed since the last sync."""
    open_fresh(root)


def _why_unusable(root: Path | str, exc: BaseException) -> str | None:
    """Why the on-disk index cannot serve this read (``None``: an error that is not the index's)."""
    base = Path(root)
    if health.is_damaged(exc):
        damaged = [f"search/{p.name}" for p in (base / "search" / "memory-fts.db", recall_db_path(root))
                   if health.problem(p) is not None]
        what = " and ".join(damaged) or "a search database"
        return f"{what} is damaged ({exc}); `commonkeep reindex` moves it aside and rebuilds it"
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or "disk is full" in str(exc).lower():
        return f"the search index could not be updated: the disk is full ({exc})"
    if health.is_readonly(exc):
        return f"the search index could not be updated: {exc}"
    return None


_memory = threading.local()  # this thread's in-memory index per root: (fingerprint, connection)
_notices = threading.local()
_said: set[str] = set()


def _notice(text: str) -> None:
    pending: list[str] = getattr(_notices, "items", None) or []
    pending.append(text)
    _notices.items = pending
    if text not in _said:
        _said.add(text)
        print(f"commonkeep: notice: {text}", file=sys.stderr)


def take_notices() -> list[str]:
    """The notices this thread's index reads produced since the last call (for a response)."""
    items: list[str] = getattr(_notices, "items", None) or []
    _notices.items = []
    return items


def _read_only(root: Path | str, path: Path) -> sqlite3.Connection:
    """A root whose ``search/`` cannot be written: its index read in place when it is fresh
    (opened without a WAL index or locks), else an in-memory one."""
    if path.exists() and (path.parent / "memory-fts.db").exists():
        cache: dict[str, sqlite3.Connection] = getattr(_local, "ro", None) or {}
        _local.ro = cache
        conn = cache.get(str(path))
        if conn is None:
            conn = sqlite3.connect(health.readonly_uri(path), uri=True, isolation_level=None)
            cache[str(path)] = conn
        if _fresh(conn, root):
            return conn
    return _in_memory(root, "search/ cannot be written (a read-only root) and its index is out of date")


def _in_memory(root: Path | str, why: str) -> sqlite3.Connection:
    """An index of the canonical files in memory, for this read only (kept while they do not change)."""
    from commonkeep.recall.search import rows, sync

    _notice(f"{why}; searching an in-memory index of the canonical files instead")
    stamp = fingerprint(root)
    cache: dict[str, tuple[str, sqlite3.Connection]] = getattr(_memory, "conns", None) or {}
    _memory.conns = cache
    hit = cache.get(str(root))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    conn = sqlite3.connect(":memory:", isolation_level=None)
    create_schema(conn)
    scan = rows.scan(root)
    sync._sync_recall(conn, scan.rows, full=True, select=scan.select)
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fingerprint', ?)", (stamp,))
    cache[str(root)] = (stamp, conn)
    return conn

def lookup(conn: sqlite3.Connection, ids: list[str]) -> dict[str, fts.Row]:
    """Contract rows of ``ids`` from ``recall.db`` (missing ids are left out)."""
    out: dict[str, fts.Row] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(
            f"SELECT id, layer, rule_type, confidence, statement, tags FROM records WHERE id IN ({marks})",
            chunk,
        ):
            out[str(r[0])] = (str(r[0]), str(r[1]), str(r[2]), float(r[3]), str(r[4]), str(r[5]))
    return out


_RECALL_SELECT = (
    "SELECT id, bm25(recall_fts, 0.0, 1.0, 1.0, {w}) AS score FROM recall_fts WHERE recall_fts MATCH ? "
    "ORDER BY score LIMIT ?"
)


def _run_recall(conn: sqlite3.Connection, expression: str, limit: int) -> list[fts.Hit]:
    # Rank inside FTS5, then fetch the few winning rows by primary key: an SQL join here is
    # flattened by SQLite and joins every match before the sort (3x slower).
    try:
        ranked = conn.execute(_RECALL_SELECT.format(w=CONTEXT_WEIGHT), (expression, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        if fts.is_query_error(exc):
            return []
        raise
    rows = lookup(conn, [str(r[0]) for r in ranked])
    return [fts.Hit(*rows[str(rid)][:5], abs(float(score))) for rid, score in ranked if str(rid) in rows]


def search_recall(conn: sqlite3.Connection, query: str, limit: int, *, expand: bool = False) -> list[fts.Hit]:
    """Keyword search over ``recall_fts``: all terms first, then any content term (see ``fts``).

    ``expand``: the records after the all-terms tier are re-ranked with pseudo-relevance
    feedback (:func:`search_expanded`). Off by default: on the LoCoMo dev split it lowered hit@5
    (README, Benchmarks).
    """
    if expand:
        from commonkeep.recall.search.expansion import search_expanded

        return search_expanded(conn, query, limit)
    return fts.search_with(
        lambda expr, n: _run_recall(conn, expr, n), query, limit, own_columns="statement tags"
    )


def ranked_records(conn: sqlite3.Connection, kind: str, limit: int = -1) -> list[dict[str, Any]]:
    """The ``hard`` or ``contested`` records, in priority order (at most ``limit``; -1: all)."""
    return [
        decode_record(r[0])
        for r in conn.execute(
            "SELECT body FROM select_rows WHERE kind = ? ORDER BY ord LIMIT ?", (kind, limit)
        )
    ]


class Moved(Exception):
    """The canonical files changed since ``records_by_id``'s index was synced: a place it holds
    may point at another line now (re-sync and ask again)."""


def records_by_id(conn: sqlite3.Connection, ids: list[str], root: Path | str) -> dict[str, dict[str, Any]]:
    """The whole records of the indexed ``ids`` (others are left out), as the store holds them:
    read from their lines in ``root``'s files. :class:`Moved` when the files are not the ones the
    index was built from (checked after reading) or a line is not its id's."""
    places: dict[str, Place] = {}
    own = not conn.in_transaction  # one read transaction: the places and the fingerprint of one sync
    if own:
        conn.execute("BEGIN")
    try:
        stamp = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        tab = load_shifts(conn, None if stamp is None else str(stamp[0]))  # the stored offsets' moves
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id, file, offset, length, body FROM record_at WHERE id IN ({marks})"  # noqa: S608
            for rid, file, offset, length, body in conn.execute(sql, chunk):
                places[str(rid)] = (str(file), tab.true(OFFSET, str(file), int(offset)), int(length),
                                    None if body is None else bytes(body))
    finally:
        if own:
            conn.execute("COMMIT")
    out: dict[str, dict[str, Any]] = {}
    by_file: dict[str, list[tuple[str, int, int]]] = {}
    for rid, (file, offset, length, body) in places.items():
        if body is not None:
            out[rid] = decode_record(body)
        else:
            by_file.setdefault(file, []).append((rid, offset, length))
    base = Path(root)
    for file, wanted in by_file.items():
        if not file.startswith("memory/") or ".." in file.split("/"):
            raise Moved(f"{file!r} is not a record file of the root")
        try:
            with open(base / file, "rb") as fh:
                for rid, offset, length in sorted(wanted, key=lambda w: w[1]):
                    fh.seek(offset)
                    try:
                        record = decode_record(fh.read(length))
                    except (ValueError, AssertionError, RecursionError) as exc:
                        raise Moved(f"{file}@{offset} does not hold a record any more") from exc
                    if record.get("id") != rid:
                        raise Moved(f"{file}@{offset} holds another record now")
                    out[rid] = record
        except FileNotFoundError as exc:
            raise Moved(f"{file} is gone") from exc
    if by_file and (stamp is None or stamp[0] != fingerprint(root)):
        raise Moved("the canonical files changed while they were read")
    return {rid: out[rid] for rid in ids if rid in out}  # in the order asked


class _closing:
    """``with`` for sqlite3 connections that also closes them (sqlite3's own only commits)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def __getattr__(name: str) -> Any:
    """Names that moved out of this module when it was split (sync, expansion)."""
    moved = {"sync_root": "sync", "describe": "sync", "SyncReport": "sync", "TERMS_DELTA_MAX": "sync",
             "search_expanded": "expansion", "expansion_terms": "expansion", "FEEDBACK_DOCS": "expansion",
             "FEEDBACK_TERMS": "expansion", "ORIGINAL_WEIGHT": "expansion", "MAX_DF_RATIO": "expansion"}
    if name in moved:
        import importlib

        return getattr(importlib.import_module(f"commonkeep.recall.search.{moved[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
