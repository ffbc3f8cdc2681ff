"""The contract's keyword index: ``search/memory-fts.db``, table ``memory_fts`` (FTS5, WAL).

``contracts/ompkeep-store.md`` §9.1 fixes the schema, what is indexed (every *active,
non-tombstoned* record as ``(id, layer, ruleType ?? "", confidence, statement, tags joined by
" ")``) and the query (``bm25`` order, ``abs(score)`` reported). OMP reads the index we write and
we read the one OMP writes, so the table stays exactly as the contract says; anything extra
would live in other tables.

Where upstream is plainly wrong we do better and say so (§14.12): a hyphenated query is an FTS5
syntax error upstream (swallowed into "no results"); here every term is quoted, so ``pi-memory``
searches the phrase ``"pi memory"``. Natural-language questions rarely contain *all* their
words in one record, so :func:`search_keyword` first asks for all terms (the contract's
semantics) and then fills up with records matching *any* content term, ranked by BM25.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.recall.search.health import private_file, transaction
from commonkeep.recall.search.omp_syntax import column_filter, js_number

TABLE = "memory_fts"
SCHEMA = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5(id UNINDEXED, layer UNINDEXED, rule_type UNINDEXED, "
    "confidence UNINDEXED, statement, tags, tokenize='porter unicode61')"
)
COLUMNS = ("id", "layer", "rule_type", "confidence", "statement", "tags")
BUSY_TIMEOUT_MS = 30_000

# Characters the contract strips from a user query before MATCH (§9.1 step 1).
_CONTRACT_STRIP = re.compile(r"[\"'*()]")
# A query term: a run of word characters, possibly joined by hyphens/dots/slashes (kept as a phrase).
_TERM = re.compile(r"\w+(?:[-./:]\w+)*")
_WORD = re.compile(r"\w+")

# Function words that carry no topic: dropped from the "any term" query only (the "all terms"
# query keeps every word, as the contract does). A plain English list, not tuned to any data set.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "might",
        "more",
        "most",
        "must",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "shall",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "ever",
        "also",
        "yet",
        "get",
        "got",
    ]
)

Row = tuple[str, str, str, float, str, str]


@dataclass(frozen=True)
class Hit:
    """One keyword result: the record's indexed columns and ``abs(bm25)`` (higher is better)."""

    id: str
    layer: str
    rule_type: str
    confidence: float
    statement: str
    score: float


@dataclass(frozen=True)
class SyncResult:
    """What a sync changed: rows added, rows removed, rows in the index afterwards."""

    added: int
    removed: int
    total: int


# --- connection --------------------------------------------------------------------------------


def connect(db_path: Path | str, *, create: bool = True) -> sqlite3.Connection:
    """Open the index in WAL mode with a busy timeout; create the contract table if missing."""
    path = Path(db_path)
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
        private_file(path)
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    if create:
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode=WAL")
        if not table_exists(conn):
            # DDL under an immediate transaction: two processes creating the table at once must not
            # both run CREATE (IF NOT EXISTS is not atomic across WAL connections).
            with transaction(conn):
                if not table_exists(conn):
                    conn.execute(SCHEMA)
    return conn


def table_exists(conn: sqlite3.Connection) -> bool:
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (TABLE,)).fetchone()
        is not None
    )


def table_sql(conn: sqlite3.Connection) -> str | None:
    """The ``CREATE`` statement stored for ``memory_fts`` (to check it is the contract's)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type='table' AND name=?", (TABLE,)).fetchone()
    return None if row is None else str(row[0])


# --- what is indexed ---------------------------------------------------------------------------


# JSON (and so JS) strings may hold lone surrogates ("\udcff"); SQLite only takes UTF-8, so the
# index holds U+FFFD in their place, one character for one (the JSONL keeps the original).
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (what SQLite and stdout can take)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def row_for(record: Mapping[str, Any], *, clean: bool = False) -> Row:
    """The contract row of one record: ``(id, layer, ruleType ?? "", confidence, statement, tags)``.

    ``clean``: the record is a valid memory record (``records.memory_record_problem``) read from a
    line that is valid UTF-8 and holds no ``\\u`` escape, so none of its strings can hold a lone
    surrogate and they go in as they are (``reindex`` reads 100,000 such records)."""
    if clean:
        return (record["id"], record["layer"], record.get("ruleType") or "",
                js_number(record["confidence"]), record["statement"], " ".join(record["tags"]))
    tags = record.get("tags") or []
    return (
        str(record["id"]),
        encodable(str(record.get("layer", ""))),
        encodable(str(record.get("ruleType") or "")),
        js_number(record.get("confidence", 0) or 0),
        encodable(str(record.get("statement", ""))),
        encodable(" ".join(str(t) for t in tags)),
    )


def indexable(records: Iterable[Mapping[str, Any]], tombstoned: Iterable[str] = ()) -> dict[str, Row]:
    """Rows for every active, non-tombstoned record, by id (first occurrence of an id wins)."""
    dead = set(tombstoned)
    rows: dict[str, Row] = {}
    for record in records:
        rid = record.get("id")
        if not isinstance(rid, str) or rid in dead or rid in rows or record.get("status") != "active":
            continue
        if _LONE_SURROGATE.search(rid):
            continue  # not a contract id (mem_…); it could not be stored in SQLite nor looked up
        rows[rid] = row_for(record)
    return rows


def _normalise(row: tuple[Any, ...]) -> Row:
    rid, layer, rule_type, confidence, statement, tags = row
    conf = float(confidence) if isinstance(confidence, int | float) else float(str(confidence or 0))
    return (str(rid), str(layer or ""), str(rule_type or ""), conf, str(statement or ""), str(tags or ""))


def indexed_rows(conn: sqlite3.Connection) -> list[tuple[int, Row]]:
    """Every row in the index as ``(rowid, row)``."""
    cur = conn.execute(f"SELECT rowid, {', '.join(COLUMNS)} FROM {TABLE}")
    return [(int(r[0]), _normalise(r[1:])) for r in cur]


# --- sync --------------------------------------------------------------------------------------


def rebuild(conn: sqlite3.Connection, rows: Mapping[str, Row]) -> SyncResult:
    """The contract's sync (delete every row, insert every row) in one transaction, as a new table:
    dropping and creating it (the contract's statement) ends in the same rows as ``DELETE FROM
    memory_fts`` without deleting 100,000 rows one by one from the FTS index, and leaves the
    index compact (row deletes leave tombstones in FTS5 segments: 28 MB against 9 MB at 100k)."""
    with transaction(conn):
        removed = conn.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
        conn.execute(f"DROP TABLE {TABLE}")
        conn.execute(SCHEMA)
        conn.executemany(
            f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)", rows.values()
        )
    return SyncResult(added=len(rows), removed=int(removed), total=len(rows))


def sync(conn: sqlite3.Connection, rows: Mapping[str, Row]) -> SyncResult:
    """Bring the index to exactly ``rows``, touching only rows that differ.

    The end state is the one the contract's delete-all-and-insert gives (same rows, same
    columns); it just does not rewrite an unchanged 100k-row index after every patch.
    """
    with transaction(conn):
        seen: set[str] = set()
        stale: list[int] = []
        for rowid, row in indexed_rows(conn):
            rid = row[0]
            if rid in seen or rows.get(rid) != row:
                stale.append(rowid)
            else:
                seen.add(rid)
        conn.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", ((r,) for r in stale))
        fresh = [row for rid, row in rows.items() if rid not in seen]
        conn.executemany(f"INSERT INTO {TABLE} ({', '.join(COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)", fresh)
    return SyncResult(added=len(fresh), removed=len(stale), total=len(rows))


@dataclass(frozen=True)
class Drift:
    """Differences between the canonical records and the index."""

    missing: list[str]  # active records not in the index
    extra: list[str]  # indexed ids that are not active records (deleted, tombstoned, unknown)
    changed: list[str]  # indexed with other columns than the record has now
    duplicates: list[str]  # ids indexed more than once

    @property
    def clean(self) -> bool:
        return not (self.missing or self.extra or self.changed or self.duplicates)


def drift(conn: sqlite3.Connection, rows: Mapping[str, Row]) -> Drift:
    """Compare the index with the rows it should hold."""
    counts: dict[str, int] = {}
    changed: list[str] = []
    for _, row in indexed_rows(conn):
        rid = row[0]
        counts[rid] = counts.get(rid, 0) + 1
        if rid in rows and rows[rid] != row and rid not in changed:
            changed.append(rid)
    return Drift(
        missing=sorted(r for r in rows if r not in counts),
        extra=sorted(r for r in counts if r not in rows),
        changed=sorted(changed),
        duplicates=sorted(r for r, n in counts.items() if n > 1),
    )


# --- query -------------------------------------------------------------------------------------


def contract_query(text: str) -> str:
    """Upstream's query sanitising (§9.1 step 1): ``" ' * ( )`` become spaces, nothing more."""
    return _CONTRACT_STRIP.sub(" ", text)


def query_terms(text: str) -> list[str]:
    """The terms of a query, in order, de-duplicated (case-insensitive); hyphenated words stay whole."""
    out: list[str] = []
    seen: set[str] = set()
    for term in _TERM.findall(text):
        key = term.lower()
        if key not in seen:
            seen.add(key)
            out.append(term)
    return out


def _quote(term: str) -> str:
    """One term as an FTS5 string (tokenised like the documents: "pi-memory" becomes the phrase
    pi memory); ``statement:word`` / ``tags:word`` filter that column, as in OMP."""
    col = column_filter(term)
    if col is not None:
        return f"{col[0]} : " + _quote(col[1])
    return '"' + term.replace('"', '""') + '"'


def match_all(text: str) -> str | None:
    """MATCH expression requiring every term (the contract's implicit AND), or ``None`` if empty."""
    terms = query_terms(text)
    return " ".join(_quote(t) for t in terms) if terms else None


def content_terms(text: str) -> list[str]:
    """The query terms minus stopwords (all terms if every one is a stopword)."""
    terms = query_terms(text)
    kept = [t for t in terms if t.lower() not in STOPWORDS]
    return kept or terms


def match_any(text: str, *, drop_stopwords: bool = True) -> str | None:
    """MATCH expression for records containing any (content) term, or ``None`` if empty."""
    terms = content_terms(text) if drop_stopwords else query_terms(text)
    return " OR ".join(_quote(t) for t in terms) if terms else None


_SELECT = (
    f"SELECT id, layer, rule_type, confidence, statement, bm25({TABLE}) AS score FROM {TABLE} "
    f"WHERE {TABLE} MATCH ? ORDER BY score LIMIT ?"
)


def is_query_error(exc: sqlite3.OperationalError) -> bool:
    """A malformed MATCH expression (reachable with raw expressions, e.g. the contract's sanitised
    query): upstream answers "no results", and so do we. Other errors (locked, no table) are real."""
    msg = str(exc).lower()
    return any(
        k in msg for k in ("fts5", "syntax error", "no such column", "unterminated", "malformed match")
    )


def run_select(conn: sqlite3.Connection, sql: str, expression: str, limit: int) -> list[Hit]:
    """Run a ``SELECT id, layer, rule_type, confidence, statement, score … MATCH ? … LIMIT ?``."""
    try:
        cur = conn.execute(sql, (expression, limit))
        rows = cur.fetchall()
    except sqlite3.OperationalError as exc:
        if is_query_error(exc):
            return []
        raise
    return [
        Hit(str(r[0]), str(r[1] or ""), str(r[2] or ""), float(r[3] or 0), str(r[4] or ""), abs(float(r[5])))
        for r in rows
    ]


def run_match(conn: sqlite3.Connection, expression: str, limit: int) -> list[Hit]:
    """Run one MATCH expression on ``memory_fts``; best first, ``abs(bm25)`` as score."""
    return run_select(conn, _SELECT, expression, limit)


def search_with(
    run: Callable[[str, int], list[Hit]], query: str, limit: int, *, own_columns: str | None = None
) -> list[Hit]:
    """Records matching all terms first (BM25 order), then records matching any content term.

    ``own_columns`` (e.g. ``"statement tags"``) restricts the all-terms stage to those columns,
    so a record's own words decide the exact matches and context columns only widen the rest.
    """
    if limit <= 0:
        return []
    strict = match_all(query)
    if strict is None:
        return []
    if own_columns:
        strict = "{" + own_columns + "} : (" + strict + ")"
    hits = run(strict, limit)
    if len(hits) < limit:
        loose = match_any(query)
        if loose is not None and own_columns and len(content_terms(query)) <= 1:
            # One word: context would only add the neighbours of every exact match.
            loose = "{" + own_columns + "} : (" + loose + ")"
        if loose is not None and loose != strict:
            have = {h.id for h in hits}
            for hit in run(loose, limit + len(hits)):
                if hit.id not in have:
                    hits.append(hit)
                    have.add(hit.id)
                    if len(hits) >= limit:
                        break
    return hits


def search_keyword(conn: sqlite3.Connection, query: str, limit: int = 8) -> list[Hit]:
    """Keyword search on the contract table (works on an index OMP wrote)."""
    return search_with(lambda expr, n: run_match(conn, expr, n), query, limit)
