"""Keyword search over the daily logs (L3) and the evidence records: the ``notes_fts`` table.

Neither is canonical memory (daily logs are never stored in canonical JSONL, contract §2.3;
evidence lives in ``memory/evidence.jsonl``, §4.4), so OMP's ``memory_fts`` never holds them:
they go to commonkeep's own derived ``search/recall.db``, table ``notes_fts`` (FTS5,
``porter unicode61``), one row per

- daily-log *block*: a run of non-blank lines of ``daily/*.md``; a block made only of headings
  (``## …``) or HTML comments (the session markers ``<!-- ISO -->``) is joined to the block after
  it, so a section's title stays with its first paragraph; a block longer than ``CHUNK_CHARS`` is
  several rows (``chunks``). ``ref`` is ``daily/<name>.md:<line>`` (the 1-based line the row
  starts at), ``date`` the file's ``YYYY-MM-DD`` stem;
- evidence record: ``ref`` is its id, ``date`` the day of ``created_at``, ``text`` its
  ``source_summary``, ``source_excerpt``, ``notes`` and ``source_ref`` (one per line). Records a
  privacy purge blanked (``redaction_status: "deleted"``) are left out.

Text is redacted (``commonkeep.secrets.redact``) before it is indexed, so no secret sits in the
index or in a snippet cut from it; it is redacted again on output.

Freshness, cheaply and only when notes are asked for (plain ``search`` never looks at these
files): the ``(name, size, mtime)`` of ``daily/*.md`` and ``memory/evidence.jsonl`` is stored in
``meta`` (``notes_fingerprint``) and per file in ``notes_files``; a search with notes compares the
fingerprint and, when it moved, re-reads only the files whose stamp changed and rewrites only the
rows whose content changed (``notes_src`` keeps each row's source file and digest). Unreadable or
undecodable files and malformed evidence lines are skipped with one stderr notice naming the file
and line (once per version of the file); nothing is ever written to the source files.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from commonkeep.recall.search import fts

EVIDENCE = "memory/evidence.jsonl"
FINGERPRINT_KEY = "notes_fingerprint"
SNIPPET_TOKENS = 32
# The largest row: a longer block is indexed as several rows (at line boundaries; a longer line is
# cut at a space), so a search's BM25, snippet and redaction each handle a few KB, never a whole
# log. SQLite's snippet() is quadratic in the hits of one row: 80 s on one 1.1 MB block.
CHUNK_CHARS = 2000
# Stored before the fingerprint: an index built by a commonkeep that cut rows differently (no
# chunks, digests of redacted rows) is rebuilt once.
FORMAT = "notes-v2|"
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_WS = re.compile(r"\s+")
_HEADING_OR_MARKER = re.compile(r"^\s*(?:#{1,6}\s.*|#{1,6}|<!--.*-->)\s*$")

# Row = (kind, ref, date, text)
NoteRow = tuple[str, str, str, str]


@dataclass(frozen=True)
class Note:
    """One note hit: ``kind`` (``daily`` | ``evidence``), ``ref``, ``date``, the (redacted) text,
    ``abs(bm25)`` as ``score`` and a one-line ``snippet`` around the match."""

    kind: str
    ref: str
    date: str
    text: str
    score: float
    snippet: str = ""

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("snippet")
        return data


@dataclass(frozen=True)
class NotesSync:
    """What a notes sync did: files re-read, rows added and removed, notices (already printed)."""

    files: int = 0
    added: int = 0
    removed: int = 0
    notices: tuple[str, ...] = ()


# --- what is indexed ---------------------------------------------------------------------------


def file_stamps(root: Path | str) -> dict[str, str]:
    """``{relative name: "size:mtime_ns"}`` of ``daily/*.md`` and ``memory/evidence.jsonl``."""
    base = str(root)
    out: dict[str, str] = {}
    try:
        entries = list(os.scandir(os.path.join(base, "daily")))
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for e in entries:
        if e.name.endswith(".md"):
            try:
                if not e.is_file():
                    continue
                st = e.stat()
            except OSError:
                continue
            out[f"daily/{e.name}"] = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    try:
        st = os.stat(os.path.join(base, EVIDENCE))
        out[EVIDENCE] = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    except OSError:
        pass
    return out


def fingerprint(stamps: dict[str, str]) -> str:
    return "|".join(f"{name}:{stamp}" for name, stamp in sorted(stamps.items()))


def _redacted(text: str) -> str:
    from commonkeep.recall.search.fts import encodable
    from commonkeep.secrets import redact

    return encodable(redact(text).text)


def _redacted_again(text: str) -> str:
    """Output of the index, redacted at indexing: our rules again, without loading the provider layer."""
    from commonkeep.recall.search.fts import encodable
    from commonkeep.secrets import redact_again

    return encodable(redact_again(text).text)


def daily_blocks(text: str) -> list[tuple[int, str]]:
    """``(start line, text)`` of each block of a daily log (see the module docstring)."""
    blocks: list[tuple[int, list[str]]] = []
    current: tuple[int, list[str]] | None = None
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            if current is None:
                current = (i, [])
            current[1].append(line)
        elif current is not None:
            blocks.append(current)
            current = None
    if current is not None:
        blocks.append(current)
    out: list[tuple[int, str]] = []
    pending: tuple[int, list[str]] | None = None
    for start, lines in blocks:
        if pending is not None:
            start, lines = pending[0], [*pending[1], *lines]
            pending = None
        if all(_HEADING_OR_MARKER.match(ln) for ln in lines):
            pending = (start, lines)
            continue
        out.append((start, "\n".join(lines)))
    if pending is not None:
        out.append((pending[0], "\n".join(pending[1])))
    return out


def chunks(start: int, block: str, size: int = CHUNK_CHARS) -> list[tuple[int, str]]:
    """``block`` (starting at line ``start``) as ``(start line, text)`` pieces of at most ``size``
    characters, cut at line boundaries, a longer line at its last space before the limit."""
    out: list[tuple[int, str]] = []
    cur: list[str] = []
    cur_start, used = start, 0
    for n, line in enumerate(block.split("\n"), start):
        while len(line) > size:
            if cur:
                out.append((cur_start, "\n".join(cur)))
                cur, used = [], 0
            cut = line.rfind(" ", 0, size + 1)
            cut = cut if cut > 0 else size
            out.append((n, line[:cut]))
            line = line[cut:].lstrip(" ")
        if not line:
            continue
        if cur and used + 1 + len(line) > size:
            out.append((cur_start, "\n".join(cur)))
            cur, used = [], 0
        if not cur:
            cur_start = n
        used += len(line) + (1 if cur else 0)
        cur.append(line)
    if cur:
        out.append((cur_start, "\n".join(cur)))
    return out


def _daily_rows(root: Path, name: str) -> tuple[list[NoteRow], list[str]]:
    path = root / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        return [], [f"notes index skipped {name}: cannot read it ({exc.strerror or type(exc).__name__})"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return [], [f"notes index skipped {name}: line {line} is not UTF-8 (byte {data[exc.start]:#04x}); "
                    "the file is left as it is"]
    text = text.removeprefix("\ufeff")
    stem = name.rsplit("/", 1)[-1][:-3]
    date = stem if _DATE.match(stem) else ""
    return [("daily", f"{name}:{line}", date, piece)
            for start, block in daily_blocks(text) for line, piece in chunks(start, block)], []


def evidence_text(row: dict[str, Any]) -> str:
    """The searchable text of one evidence record: summary, excerpt, notes, source ref."""
    parts: list[str] = []
    for key in ("source_summary", "source_excerpt", "notes"):
        value = row.get(key)
        if isinstance(value, str) and value.strip() and value.strip() not in parts:
            parts.append(value.strip())
    ref = row.get("source_ref") or row.get("source_file") or row.get("source_tool")
    if isinstance(ref, str) and ref.strip():
        parts.append(ref.strip())
    return "\n".join(parts)


def _evidence_rows(root: Path) -> tuple[list[NoteRow], list[str]]:
    from commonkeep.store.jsonl import parse_jsonl

    path = root / EVIDENCE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"notes index skipped {EVIDENCE}: cannot read it ({exc.strerror or type(exc).__name__})"]
    read = parse_jsonl(data, path)
    bad = [(b.line_no, b.error) for b in read.bad]
    rows: list[NoteRow] = []
    for value, line_no in zip(read.rows, read.line_nos, strict=True):
        rid = value.get("id")
        if not isinstance(rid, str) or not rid:
            bad.append((line_no, "no string id"))
            continue
        if value.get("redaction_status") == "deleted":
            continue
        text = evidence_text(value)
        created = value.get("created_at")
        date = created[:10] if isinstance(created, str) and _DATE.match(created[:10]) else ""
        try:
            (rid + text).encode("utf-8")
        except UnicodeEncodeError:
            bad.append((line_no, "not UTF-8"))
            continue
        if text:
            rows.append(("evidence", rid, date, text))
    if not bad:
        return rows, []
    bad.sort()
    shown = ", ".join(f"line {n} ({why})" for n, why in bad[:5])
    more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
    return rows, [f"notes index skipped {EVIDENCE} {shown}{more}; the other lines are indexed, the file is left as it is"]


def _digest(row: NoteRow) -> str:
    return hashlib.sha1("\x1f".join(row).encode("utf-8")).hexdigest()


# --- sync --------------------------------------------------------------------------------------


def _replace_source(conn: sqlite3.Connection, source: str, rows: Iterable[NoteRow]) -> tuple[int, int]:
    """Make ``source``'s rows exactly ``rows`` (as read, not yet redacted), touching only those that
    differ (in the caller's transaction); only the rows added are redacted (an appended daily log
    costs its new blocks, not the whole day again). Returns ``(added, removed)``."""
    have: dict[str, list[int]] = {}
    for rowid, digest in conn.execute("SELECT id, digest FROM notes_src WHERE source = ?", (source,)):
        have.setdefault(str(digest), []).append(int(rowid))
    want: dict[str, NoteRow] = {}
    for row in rows:
        want.setdefault(_digest(row), row)
    gone = [rowid for digest, ids in have.items() for i, rowid in enumerate(ids) if digest not in want or i > 0]
    conn.executemany("DELETE FROM notes_fts WHERE rowid = ?", ((r,) for r in gone))
    conn.executemany("DELETE FROM notes_src WHERE id = ?", ((r,) for r in gone))
    fresh = [(d, r) for d, r in want.items() if d not in have]
    for digest, row in fresh:
        cur = conn.execute("INSERT INTO notes_src (source, digest) VALUES (?, ?)", (source, digest))
        conn.execute(
            "INSERT INTO notes_fts (rowid, kind, ref, date, text) VALUES (?, ?, ?, ?, ?)",
            (cur.lastrowid, *row[:3], _redacted(row[3])),
        )
    return len(fresh), len(gone)


def sync_notes(root: Path | str, conn: sqlite3.Connection, *, full: bool = False) -> NotesSync:
    """Bring ``notes_fts`` in line with the daily logs and evidence (``full``: re-read every file).

    Cheap when nothing moved: one ``scandir`` of ``daily/`` and one meta lookup.
    """
    base = Path(root)
    stamps = file_stamps(base)
    stamp = FORMAT + fingerprint(stamps)
    if not full:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (FINGERPRINT_KEY,)).fetchone()
        if row is not None and row[0] == stamp:
            return NotesSync()
        full = row is None or not str(row[0]).startswith(FORMAT)
    notices: list[str] = []
    files = added = removed = 0
    from commonkeep.recall.search.health import transaction

    with transaction(conn):
        if full:
            conn.execute("DELETE FROM notes_fts")
            conn.execute("DELETE FROM notes_src")
            conn.execute("DELETE FROM notes_files")
        known = {str(n): str(s) for n, s in conn.execute("SELECT name, stamp FROM notes_files")}
        for name in sorted(set(known) - set(stamps)):
            _, rm = _replace_source(conn, name, ())
            removed += rm
            conn.execute("DELETE FROM notes_files WHERE name = ?", (name,))
        todo = [(name, st) for name, st in sorted(stamps.items()) if known.get(name) != st]
        from commonkeep.util import progress

        # the first build over megabytes of logs takes seconds (each new block is redacted): say so on a terminal
        with progress.bar(sum(int(st.split(":", 1)[0]) for _, st in todo), "notes index", unit="B",
                          unit_scale=True) as shown:
            for name, st in todo:
                rows, problems = _evidence_rows(base) if name == EVIDENCE else _daily_rows(base, name)
                notices += problems
                add, rm = _replace_source(conn, name, rows)
                files, added, removed = files + 1, added + add, removed + rm
                conn.execute("INSERT OR REPLACE INTO notes_files (name, stamp) VALUES (?, ?)", (name, st))
                shown.update(int(st.split(":", 1)[0]))
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (FINGERPRINT_KEY, stamp))
    for notice in notices:
        print(f"commonkeep: notice: {notice}", file=sys.stderr)
    return NotesSync(files, added, removed, tuple(notices))


# --- query -------------------------------------------------------------------------------------

_SELECT = (
    "SELECT rowid, bm25(notes_fts) AS score FROM notes_fts WHERE notes_fts MATCH ? ORDER BY score LIMIT ?"
)


def _run(conn: sqlite3.Connection, expression: str, limit: int) -> list[fts.Hit]:
    try:
        ranked = conn.execute(_SELECT, (expression, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        if fts.is_query_error(exc):
            return []
        raise
    return [fts.Hit(str(r[0]), "", "", 0.0, "", abs(float(r[1]))) for r in ranked]


def query_notes(conn: sqlite3.Connection, query: str, limit: int) -> list[Note]:
    """Notes with all the query terms first, then any content term, by BM25 (``fts.search_with``)."""
    hits = fts.search_with(lambda expr, n: _run(conn, expr, n), query, limit)
    out: list[Note] = []
    expression = fts.match_any(query) or ""
    for hit in hits:
        row = conn.execute(
            "SELECT kind, ref, date, text, snippet(notes_fts, 3, '', '', '…', ?) FROM notes_fts "
            "WHERE notes_fts MATCH ? AND rowid = ?",
            (SNIPPET_TOKENS, expression, int(hit.id)),
        ).fetchone()
        if row is None:  # matched only by the all-terms expression's phrase form: plain row
            row = conn.execute(
                "SELECT kind, ref, date, text, substr(text, 1, 240) FROM notes_fts WHERE rowid = ?", (int(hit.id),)
            ).fetchone()
        if row is None:
            continue
        kind, ref, date, text, snip = (str(v or "") for v in row)
        out.append(Note(kind, ref, date, _redacted_again(text), hit.score, _redacted_again(_WS.sub(" ", snip).strip())))
    return out


def index_conn(root: Path | str) -> sqlite3.Connection:
    """This thread's shared ``recall.db`` connection (``index.reader``; do not close it), the
    database created (and the records synced) first when it is missing; ``BadInput`` when
    ``root`` is not a memory root."""
    from commonkeep.recall.search import index
    from commonkeep.store.root import require_root

    base = require_root(root)
    path = index.recall_db_path(base)
    return index.reader(path) if path.exists() else index.open_fresh(base)


def search_notes(root: Path | str, query: str, limit: int = 8) -> list[Note]:
    """Search the daily logs and evidence records of ``root``, best first (``BadInput`` when it
    is not a memory root). Re-syncs ``notes_fts`` first when the files moved."""
    from commonkeep.errors import BadInput

    if limit <= 0:
        raise BadInput(f"--limit must be positive, got {limit}")
    conn = index_conn(root)
    sync_notes(root, conn)
    return query_notes(conn, query, limit)
