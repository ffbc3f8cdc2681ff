"""Keeping the search indexes of a root in step with its canonical JSONL.

Two databases under ``search/``:

- ``memory-fts.db``: the contract's ``memory_fts`` table, shared with OMP (``fts.py``);
- ``recall.db``: commonkeep's own, rebuildable at any time — ``records`` (id lookup),
  ``recall_fts`` (the same rows plus a low-weight *source context* column), ``vectors``
  (float32 BLOBs of the local embedder), ``terms`` (the document frequency of every stemmed
  term of ``recall_fts``, for query expansion), ``meta`` (the fingerprint of the canonical
  files the indexes were built from, the record count), ``notes_fts`` / ``notes_src`` /
  ``notes_files`` (daily logs and evidence records, with their own fingerprint; ``notes.py``),
  and what prompt selection (``commonkeep.recall.select``) needs without reading the store:
  ``record_json`` (the whole record of every indexed id, as the store holds it) and
  ``select_rows`` (the active hard rules and the contested records, whole, in priority order).

Source context: a record whose first evidence ref points at a position in a source
(``<source>#<anchor>``, e.g. a conversation turn) is indexed together with the statements of the
``CONTEXT_NEIGHBOURS`` records on each side captured from the same source, in store order. A
memory lifted from a conversation is then also found by the words of the turns around it — a
general document-expansion technique — weighted ``CONTEXT_WEIGHT`` in BM25 so a record's own
words count most. Both values are fixed by reasoning, not measured choices: one neighbour each
side is the adjacency pair of a dialogue (the turn this one answers, the turn that answers it);
0.5 is the midpoint between ignoring the context (0) and counting it as the record's own words
(1). (Earlier values, 2 and 0.3, had been picked by trying a few on the LoCoMo dev split, which
that data's README forbids; they were replaced, and the README reports what these score.)

Selection rows: ``record_json`` holds, for every id of ``records``, the record a reader of the
store gets for that id (the last active line of it, as ``{r["id"]: r for r in active}`` keeps);
``select_rows`` holds one row per line (kind ``hard``: active records that are hard rules, §6.11;
kind ``contested``: status ``contested``), tombstoned ids left out as the store leaves them out,
sorted by ``projection.priority_key`` (stable, so store order breaks ties). The JSON is
Python's own (``ensure_ascii=False``, UTF-8 with ``surrogatepass``), which parses back to an
equal dict with the same key order, number types and lone surrogates.

Freshness: every sync stores the canonical files' ``(name, size, mtime)`` fingerprint; readers
call :func:`ensure_fresh`, which re-syncs (only the rows that changed) when OMP or anyone else
changed the files since. Both databases are derived: ``commonkeep reindex`` rebuilds them.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.recall.search import fts

RECALL_DB = "recall.db"
# Leads every fingerprint this version stores. Bumped when recall.db gains tables an older
# commonkeep does not keep (2: the selection rows): a sync by an older version sharing the root
# stores a fingerprint without it, so the next reader here re-syncs instead of trusting tables
# that sync left behind.
INDEX_FORMAT = "commonkeep-index-2"
CONTEXT_NEIGHBOURS = 1
CONTEXT_WEIGHT = 0.5

_RECALL_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS records (id TEXT PRIMARY KEY, layer TEXT NOT NULL, rule_type TEXT NOT NULL, "
    "confidence REAL NOT NULL, statement TEXT NOT NULL, tags TEXT NOT NULL, context TEXT NOT NULL, ord INTEGER NOT NULL)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS recall_fts USING fts5(id UNINDEXED, statement, tags, context, "
    "tokenize='porter unicode61')",
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
    # What ``select_for_prompt`` needs (see "Selection rows" above). ``digest``: of ``body``, so an
    # incremental sync compares 16 bytes per record instead of the whole JSON.
    "CREATE TABLE IF NOT EXISTS record_json (id TEXT PRIMARY KEY, digest BLOB NOT NULL, body BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS select_rows (kind TEXT NOT NULL, ord INTEGER NOT NULL, body BLOB NOT NULL, "
    "PRIMARY KEY (kind, ord)) WITHOUT ROWID",
)
# Every table and index of the schema: a recall.db lacking one (an older version) gets the missing
# ones. Missing selection tables also drop its fingerprint, so that the next reader re-syncs and
# fills them (the notes tables have their own fingerprint).
_SCHEMA_NAMES = tuple(re.findall(r"IF NOT EXISTS (\w+)", " ".join(_RECALL_SCHEMA)))
_SELECT_TABLES = frozenset({"record_json", "select_rows"})
TERMS_DELTA_MAX = 2000  # a sync changing more rows than this recounts every term from the index
_TEMP_TABLES = (
    # Per connection, in the temp schema: nothing is added to recall.db's file.
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.recall_df USING fts5vocab(main, recall_fts, row)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.prf_words USING fts5(w, tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.prf_stems USING fts5vocab(temp, prf_words, instance)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.delta_fts USING fts5(statement, tags, context, "
    "tokenize='porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.delta_df USING fts5vocab(temp, delta_fts, row)",
)


@dataclass(frozen=True)
class IndexRow:
    """What commonkeep indexes for one record (the contract row plus context and store order)."""

    row: fts.Row
    context: str
    ord: int

    @property
    def id(self) -> str:
        return self.row[0]


@dataclass(frozen=True)
class SyncReport:
    """The outcome of one sync: contract table and recall table changes, vectors embedded."""

    fts: fts.SyncResult
    recall_added: int
    recall_removed: int
    total: int
    vectors: int = 0
    notes: int = 0  # notes_fts rows written (a full sync rebuilds them)


def recall_db_path(root: Path | str) -> Path:
    # Plain joins, not ``Layout``: this runs on every search (the hot path).
    return Path(root) / "search" / RECALL_DB


def connect_recall(path: Path) -> sqlite3.Connection:
    """Open ``recall.db`` (WAL, busy timeout) and create its tables if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=fts.BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={fts.BUSY_TIMEOUT_MS}")
    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode=WAL")
    marks = ",".join("?" * len(_SCHEMA_NAMES))
    present = {
        r[0] for r in conn.execute(f"SELECT name FROM sqlite_master WHERE name IN ({marks})", _SCHEMA_NAMES)
    }
    if len(present) < len(_SCHEMA_NAMES):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _RECALL_SCHEMA:
                conn.execute(stmt)
            if _SELECT_TABLES - present:
                # Selection tables added to an existing index are empty: it is not fresh any more,
                # whatever the canonical files (``open_fresh`` re-syncs, which fills them).
                conn.execute("DELETE FROM meta WHERE key = 'fingerprint'")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return conn


def source_of(record: Mapping[str, Any]) -> str | None:
    """The source a record was captured from: its first evidence ref without the ``#anchor``.

    Only anchored refs (``<source>#<position>``, e.g. a conversation turn) have a source: a
    record citing a whole file (``daily/2026-12-02.md``) has no neighbours worth indexing.
    """
    evidence = record.get("evidence")
    if not isinstance(evidence, list) or not evidence or not isinstance(evidence[0], dict):
        return None
    ref = evidence[0].get("ref")
    if not isinstance(ref, str) or "#" not in ref:
        return None
    return ref.split("#", 1)[0]


def index_rows(records: Iterable[Mapping[str, Any]], tombstoned: Iterable[str] = ()) -> dict[str, IndexRow]:
    """Contract rows of the active, non-tombstoned records, each with its source context."""
    rows = fts.indexable(records, tombstoned)
    # Re-walk in store order to group by source; ``rows`` keeps the first occurrence of each id.
    groups: dict[str, list[str]] = {}
    sources: dict[str, str | None] = {}
    for record in records:
        rid = record.get("id")
        if isinstance(rid, str) and rid in rows and rid not in sources:
            src = source_of(record)
            sources[rid] = src
            if src is not None:
                groups.setdefault(src, []).append(rid)
    position: dict[str, tuple[str, int]] = {}
    for src, ids in groups.items():
        for i, rid in enumerate(ids):
            position[rid] = (src, i)
    out: dict[str, IndexRow] = {}
    for ord_, (rid, row) in enumerate(rows.items()):
        context = ""
        if rid in position:
            src, i = position[rid]
            ids = groups[src]
            lo, hi = max(0, i - CONTEXT_NEIGHBOURS), min(len(ids), i + CONTEXT_NEIGHBOURS + 1)
            context = " ".join(rows[ids[j]][4] for j in range(lo, hi) if j != i)
        out[rid] = IndexRow(row, context, ord_)
    return out


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


def load_rows(root: Path | str) -> dict[str, IndexRow]:
    """Read the store and compute what the indexes should hold."""
    from commonkeep.store.core import Store

    # warn: a line that does not parse is named on stderr once, when it is first quarantined
    store = Store(root)
    records = store.records(active_only=True)
    return index_rows(records, store.tombstoned_ids())


@dataclass(frozen=True)
class SelectRows:
    """What ``record_json`` and ``select_rows`` should hold (bodies: :func:`encode_record`)."""

    bodies: dict[str, bytes]  # indexed id -> the record readers of the store get for it
    ranked: dict[tuple[str, int], bytes]  # (kind, position in priority order) -> record


# One encoder for every record of a sync (``json.dumps`` with options builds one per call).
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def encode_record(record: Mapping[str, Any]) -> bytes:
    """A record as stored in ``recall.db``: :func:`decode_record` gives back an equal dict, with the
    same key order, ints and floats, and lone surrogates (UTF-8 with ``surrogatepass``)."""
    return _ENCODE(record).encode("utf-8", "surrogatepass")


def decode_record(body: bytes) -> dict[str, Any]:
    value = json.loads(bytes(body).decode("utf-8", "surrogatepass"))
    assert isinstance(value, dict)
    return value


def _digest(body: bytes) -> bytes:
    return hashlib.blake2b(body, digest_size=16).digest()


def select_rows_for(records: Sequence[Mapping[str, Any]], rows: Mapping[str, IndexRow]) -> SelectRows:
    """``SelectRows`` of the store's records (all statuses, tombstoned ones already left out, in
    store order, as ``Store.records(active_only=False)`` returns them) and their index rows."""
    from commonkeep.recall.projection import is_hard_rule, priority_key

    active = [r for r in records if r.get("status") == "active"]
    by_id = {str(r["id"]): r for r in active}  # the last line of an id wins, as in select
    hard = sorted((r for r in active if is_hard_rule(r)), key=priority_key)
    contested = sorted((r for r in records if r.get("status") == "contested"), key=priority_key)
    ranked = {("hard", i): encode_record(r) for i, r in enumerate(hard)}
    ranked.update({("contested", i): encode_record(r) for i, r in enumerate(contested)})
    return SelectRows({rid: encode_record(by_id[rid]) for rid in rows if rid in by_id}, ranked)


def _load(root: Path | str) -> tuple[dict[str, IndexRow], SelectRows]:
    """:func:`load_rows` and :func:`select_rows_for` from one read of the store."""
    from commonkeep.store.core import Store

    store = Store(root)  # warns as in load_rows
    records = store.records(active_only=False)
    rows = index_rows([r for r in records if r.get("status") == "active"], store.tombstoned_ids())
    return rows, select_rows_for(records, rows)


def _sync_select(conn: sqlite3.Connection, want: SelectRows, *, full: bool) -> None:
    """``record_json`` and ``select_rows`` in line with ``want`` (inside the caller's transaction)."""
    if full:
        conn.execute("DELETE FROM record_json")
        conn.execute("DELETE FROM select_rows")
        have: dict[str, bytes] = {}
        have_ranked: dict[tuple[str, int], bytes] = {}
    else:
        have = {str(r[0]): bytes(r[1]) for r in conn.execute("SELECT id, digest FROM record_json")}
        have_ranked = {
            (str(r[0]), int(r[1])): bytes(r[2])
            for r in conn.execute("SELECT kind, ord, body FROM select_rows")
        }
    digests = {rid: _digest(body) for rid, body in want.bodies.items()}
    gone = [rid for rid, d in have.items() if digests.get(rid) != d]
    conn.executemany("DELETE FROM record_json WHERE id = ?", ((g,) for g in gone))
    conn.executemany(
        "INSERT INTO record_json (id, digest, body) VALUES (?, ?, ?)",
        ((rid, digests[rid], body) for rid, body in want.bodies.items() if have.get(rid) != digests[rid]),
    )
    gone_ranked = [k for k, body in have_ranked.items() if want.ranked.get(k) != body]
    conn.executemany("DELETE FROM select_rows WHERE kind = ? AND ord = ?", gone_ranked)
    conn.executemany(
        "INSERT INTO select_rows (kind, ord, body) VALUES (?, ?, ?)",
        ((k[0], k[1], body) for k, body in want.ranked.items() if have_ranked.get(k) != body),
    )


def ranked_records(conn: sqlite3.Connection, kind: str, limit: int = -1) -> list[dict[str, Any]]:
    """The ``hard`` or ``contested`` records, in priority order (at most ``limit``; -1: all)."""
    return [
        decode_record(r[0])
        for r in conn.execute(
            "SELECT body FROM select_rows WHERE kind = ? ORDER BY ord LIMIT ?", (kind, limit)
        )
    ]


def records_by_id(conn: sqlite3.Connection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The whole records of the indexed ``ids`` (others are left out), as the store holds them."""
    out: dict[str, dict[str, Any]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for rid, body in conn.execute(f"SELECT id, body FROM record_json WHERE id IN ({marks})", chunk):
            out[str(rid)] = decode_record(body)
    return out


def _sync_recall(
    conn: sqlite3.Connection, rows: Mapping[str, IndexRow], *, full: bool, select: SelectRows | None = None
) -> tuple[int, int]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if select is not None:
            _sync_select(conn, select, full=full)
        if full:
            removed = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
            conn.execute("DELETE FROM records")
            conn.execute("DELETE FROM recall_fts")
            keep: set[str] = set()
            gone_texts: list[tuple[str, str, str]] = []
        else:
            have = {
                r[0]: ((r[0], r[1], r[2], float(r[3]), r[4], r[5]), r[6], int(r[7]))
                for r in conn.execute(
                    "SELECT id, layer, rule_type, confidence, statement, tags, context, ord FROM records"
                )
            }
            gone = [
                rid
                for rid, (row, ctx, ord_) in have.items()
                if rid not in rows or rows[rid] != IndexRow(row, ctx, ord_)
            ]
            removed = len(gone)
            gone_texts = [(have[g][0][4], have[g][0][5], have[g][1]) for g in gone]
            conn.executemany("DELETE FROM records WHERE id = ?", ((g,) for g in gone))
            conn.executemany(
                "DELETE FROM recall_fts WHERE rowid IN (SELECT rowid FROM recall_fts WHERE id = ?)",
                ((g,) for g in gone),
            )
            keep = set(have) - set(gone)
        fresh = [r for rid, r in rows.items() if rid not in keep]
        conn.executemany(
            "INSERT INTO records (id, layer, rule_type, confidence, statement, tags, context, ord) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ((*r.row, r.context, r.ord) for r in fresh),
        )
        conn.executemany(
            "INSERT INTO recall_fts (id, statement, tags, context) VALUES (?, ?, ?, ?)",
            ((r.row[0], r.row[4], r.row[5], r.context) for r in fresh),
        )
        # Vectors of records that left the index go too (text changes are caught by the hash).
        conn.execute("DELETE FROM vectors WHERE id NOT IN (SELECT id FROM records)")
        ready = conn.execute("SELECT 1 FROM meta WHERE key = 'terms'").fetchone() is not None
        if full or not ready or len(gone_texts) + len(fresh) > TERMS_DELTA_MAX:
            _recount_terms(conn)
        else:
            _count_terms(conn, gone_texts, -1)
            _count_terms(conn, [(r.row[4], r.row[5], r.context) for r in fresh], 1)
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('docs', ?)", (str(len(rows)),))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(fresh), removed


def _temp_tables(conn: sqlite3.Connection) -> None:
    """This connection's scratch tables (temp schema: nothing is added to recall.db's file)."""
    if conn.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'recall_df'").fetchone() is None:
        for stmt in _TEMP_TABLES:
            conn.execute(stmt)


def _recount_terms(conn: sqlite3.Connection) -> None:
    """``terms`` from scratch: FTS5's own row counts (inside the caller's transaction)."""
    _temp_tables(conn)
    conn.execute("DELETE FROM terms")
    conn.execute("INSERT INTO terms (term, df) SELECT term, doc FROM temp.recall_df")
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('terms', 'ok')")


def _count_terms(conn: sqlite3.Connection, texts: list[tuple[str, str, str]], sign: int) -> None:
    """Add (``sign`` 1) or remove (-1) the rows ``(statement, tags, context)`` from ``terms``,
    stemmed by the same tokenizer in a scratch table."""
    if not texts:
        return
    _temp_tables(conn)
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


def sync_root(
    root: Path | str, *, full: bool = False, embed: bool = True, embed_limit: int | None = None
) -> SyncReport:
    """Bring both indexes in line with the canonical files (``full``: rebuild from scratch).

    ``embed``: also embed records that have no current vector, when a local embedder is
    installed and usable (otherwise vectors are left alone and keyword search still works);
    ``embed_limit`` caps how many are embedded now (the rest on later syncs and searches).
    """
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    stamp = fingerprint(root)
    rows, select = _load(root)
    contract_rows = {rid: r.row for rid, r in rows.items()}
    with _closing(fts.connect(lay.search_db)) as conn:
        fts_result = fts.rebuild(conn, contract_rows) if full else fts.sync(conn, contract_rows)
    with _closing(connect_recall(recall_db_path(root))) as rconn:
        added, removed = _sync_recall(rconn, rows, full=full, select=select)
        rconn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fingerprint', ?)", (stamp,))
        # Daily logs and evidence only on a full rebuild (``reindex``): the sync after a patch and
        # the search hot path never read them; a search with notes syncs them itself.
        notes_added = 0
        if full:
            from commonkeep.recall.search import notes

            notes_added = notes.sync_notes(root, rconn, full=True).added
    vectors = 0
    if embed:
        from commonkeep.recall.search import semantic

        vectors = semantic.refresh_vectors_if_available(root, embed_limit)
    return SyncReport(fts_result, added, removed, len(rows), vectors, notes_added)


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


def require_root(root: Path | str) -> Path:
    """``root`` when it is a memory root (has a ``memory/`` folder); otherwise ``BadInput``
    (exit 2) saying so. Creates nothing: a typo'd ``--root`` must not become an empty root."""
    base = Path(root)
    if not (base / "memory").is_dir():
        from commonkeep.errors import BadInput

        raise BadInput(f"no memory root at {base} (run `commonkeep init` or check --root / $OMP_MEMORY_ROOT)")
    return base


def open_fresh(root: Path | str) -> sqlite3.Connection:
    """This thread's ``recall.db`` connection, after re-syncing when the canonical files changed
    since the last sync. The connection is shared (see :func:`reader`): do not close it."""
    base = require_root(root)
    path = recall_db_path(root)
    if path.exists() and (base / "search" / "memory-fts.db").exists():
        conn = reader(path)
        row = conn.execute("SELECT value FROM meta WHERE key='fingerprint'").fetchone()
        if row is not None and row[0] == fingerprint(root):
            return conn
    sync_root(root, embed=False)
    return reader(path)


def ensure_fresh(root: Path | str) -> None:
    """Re-sync when the canonical files changed since the last sync."""
    open_fresh(root)


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
        return search_expanded(conn, query, limit)
    return fts.search_with(
        lambda expr, n: _run_recall(conn, expr, n), query, limit, own_columns="statement tags"
    )


# --- pseudo-relevance feedback (RM3-style query expansion) ---------------------------------------
#
# The textbook defaults of Anserini's RM3 (fbDocs 10, fbTerms 10, originalQueryWeight 0.5, terms
# in more than 10 % of the records skipped), fixed before any measurement and not tuned to a data set.
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 10
ORIGINAL_WEIGHT = 0.5
MAX_DF_RATIO = 0.1
FEEDBACK_POOL = 50  # candidates kept from each of the two queries (at least ``limit``)

# unicode61's tokens: runs of letters and digits (``_`` and punctuation separate).
_TOKEN = re.compile(r"[^\W_]+")
_RANKED = (
    "SELECT id, bm25(recall_fts, 0.0, 1.0, 1.0, {w}) AS score FROM recall_fts WHERE recall_fts MATCH ? "
    "ORDER BY score LIMIT ?"
)


def _ranked(conn: sqlite3.Connection, expression: str, limit: int) -> list[tuple[str, float]]:
    """``(id, abs(bm25))`` best first, without fetching the rows."""
    try:
        rows = conn.execute(_RANKED.format(w=CONTEXT_WEIGHT), (expression, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        if fts.is_query_error(exc):
            return []
        raise
    return [(str(r[0]), abs(float(r[1]))) for r in rows]


def _stems(conn: sqlite3.Connection, words: list[str]) -> dict[str, str]:
    """The index's own (porter) stem of each word, from a scratch FTS5 table in the temp schema."""
    _temp_tables(conn)
    # One row, one token per word (``words`` are unicode61 tokens): the instance offset is the
    # word's index. One statement each, so one small temp-schema transaction each.
    conn.execute("DELETE FROM temp.prf_words")
    conn.execute("INSERT INTO temp.prf_words (rowid, w) VALUES (1, ?)", (" ".join(words),))
    out: dict[str, str] = {}
    for term, offset in conn.execute("SELECT term, offset FROM temp.prf_stems"):
        if 0 <= int(offset) < len(words):
            out.setdefault(words[int(offset)], str(term))
    return out


def expansion_terms(
    conn: sqlite3.Connection, query: str, feedback: list[tuple[str, float]], n: int = FEEDBACK_TERMS
) -> list[tuple[str, float]]:
    """The ``n`` best expansion words for ``query`` from the ``feedback`` records ``(id, score)``.

    A stem's weight is ``sum over feedback records of (score / total score) * tf / length``
    (the relevance model) times its BM25 idf in ``recall_fts``; stopwords, the query's own
    stems, one-letter words, numbers and stems in more than ``MAX_DF_RATIO`` of the records are
    skipped. Returns ``(word, weight)`` best first, the word being one surface form of the stem.
    """
    if not feedback or n <= 0:
        return []
    texts = lookup(conn, [rid for rid, _ in feedback])
    total = sum(score for _, score in feedback) or 1.0
    docs: list[tuple[float, list[str]]] = []
    for rid, score in feedback:
        if rid in texts:
            row = texts[rid]
            docs.append((score / total, _TOKEN.findall(f"{row[4]} {row[5]}".lower())))
    query_words = [w.lower() for w in _TOKEN.findall(query)]
    usable = {
        w for _, toks in docs for w in toks if len(w) > 1 and not w.isdigit() and w not in fts.STOPWORDS
    }
    candidates = sorted(usable)
    if not candidates:
        return []
    stem = _stems(conn, [*query_words, *candidates])
    skip = {stem[w] for w in query_words if w in stem}
    weight: dict[str, float] = {}
    surface: dict[str, str] = {}
    for share, toks in docs:
        if not toks:
            continue
        counts: dict[str, int] = {}
        for w in toks:
            s = stem.get(w)
            if s is not None and s not in skip and w in usable:
                counts[s] = counts.get(s, 0) + 1
                surface.setdefault(s, w)
        for s, tf in counts.items():
            weight[s] = weight.get(s, 0.0) + share * tf / len(toks)
    if not weight:
        return []
    docs_row = conn.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone()
    ready = conn.execute("SELECT 1 FROM meta WHERE key = 'terms'").fetchone() is not None
    n_docs = int(docs_row[0]) if docs_row else int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    n_docs = max(n_docs, 1)
    marks = ",".join("?" * len(weight))
    # ``terms`` (kept by every sync); an index synced before it existed is counted by FTS5 itself.
    source = "SELECT term, df FROM terms" if ready else "SELECT term, doc FROM temp.recall_df"
    df = {str(t): int(d) for t, d in conn.execute(f"{source} WHERE term IN ({marks})", list(weight))}
    scored = []
    for term, rm in weight.items():
        d = df.get(term, 0)
        if d == 0 or d / n_docs > MAX_DF_RATIO:
            continue
        idf = math.log(1 + (n_docs - d + 0.5) / (d + 0.5))
        scored.append((rm * idf, term))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(surface[term], value) for value, term in scored[:n]]


def _hits(conn: sqlite3.Connection, ranked: list[tuple[str, float]]) -> list[fts.Hit]:
    rows = lookup(conn, [rid for rid, _ in ranked])
    return [fts.Hit(*rows[rid][:5], score) for rid, score in ranked if rid in rows]


def search_expanded(
    conn: sqlite3.Connection,
    query: str,
    limit: int,
    *,
    docs: int = FEEDBACK_DOCS,
    terms: int = FEEDBACK_TERMS,
    original_weight: float = ORIGINAL_WEIGHT,
) -> list[fts.Hit]:
    """Keyword search with RM3-style pseudo-relevance feedback.

    1. As :func:`fts.search_with`: records with all the terms in their own text (BM25 order)
       come first and are kept as they are; then the any-content-term query (first pass).
    2. The ``docs`` best records of that ranking are the feedback set; its ``terms`` best
       expansion words (:func:`expansion_terms`) are OR-ed into a second query.
    3. The other candidates (the best ``max(limit, FEEDBACK_POOL)`` of each query) are ranked by
       ``original_weight * bm25_first / max_first + (1 - original_weight) * bm25_second / max_second``
       (a record missing from a list counts 0 there) — BM25 is linear in the query's term
       weights, so this is the interpolated query model of RM3 — reported on the first query's
       BM25 scale (times ``max_first``). Ties keep the first pass's order, then the id.
    """
    if limit <= 0:
        return []
    strict = fts.match_all(query)
    if strict is None:
        return []
    own = "{statement tags} : ("
    strict = own + strict + ")"
    top = _ranked(conn, strict, limit)
    loose = fts.match_any(query)
    if loose is not None and len(fts.content_terms(query)) <= 1:
        loose = own + loose + ")"  # one word: context would only add the neighbours of every match
    if len(top) >= limit or loose is None or loose == strict:
        return _hits(conn, top)
    pool = max(limit, FEEDBACK_POOL)
    exact = {rid for rid, _ in top}
    first = [(rid, s) for rid, s in _ranked(conn, loose, pool + len(top)) if rid not in exact][:pool]
    need = limit - len(top)
    words = expansion_terms(conn, query, [*top, *first][:docs], terms)
    if not words:
        return _hits(conn, [*top, *first[:need]])
    expr = " OR ".join(fts._quote(w) for w, _ in words)
    second = [(rid, s) for rid, s in _ranked(conn, expr, pool + len(top)) if rid not in exact][:pool]
    lo, ex = dict(first), dict(second)
    lo_max, ex_max = max(lo.values(), default=0.0), max(ex.values(), default=0.0)
    order = {rid: i for i, rid in enumerate(lo)}
    combined = {}
    for rid in dict.fromkeys([*lo, *ex]):
        a = lo.get(rid, 0.0) / lo_max if lo_max > 0 else 0.0
        b = ex.get(rid, 0.0) / ex_max if ex_max > 0 else 0.0
        combined[rid] = original_weight * a + (1 - original_weight) * b
    scale = lo_max or ex_max or 1.0
    ranked = sorted(combined, key=lambda r: (-combined[r], order.get(r, len(order)), r))[:need]
    return _hits(conn, [*top, *((rid, combined[rid] * scale) for rid in ranked)])


class _closing:
    """``with`` for sqlite3 connections that also closes them (sqlite3's own only commits)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def describe(report: SyncReport) -> str:
    return json.dumps(
        {
            "records": report.total,
            "memory_fts": {"added": report.fts.added, "removed": report.fts.removed},
            "recall": {"added": report.recall_added, "removed": report.recall_removed},
            "vectors_embedded": report.vectors,
            "notes": report.notes,
        }
    )
