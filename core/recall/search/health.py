"""The search databases' health: transactions whose failure is reported as itself, damaged files
found, moved aside and rebuilt, and roots that cannot be written.

- :func:`transaction`: ``BEGIN IMMEDIATE`` … ``COMMIT``; on failure a ``ROLLBACK`` only when a
  transaction is still open (SQLite rolls back by itself on a full disk and some I/O errors, and
  a second ``ROLLBACK`` would raise "cannot rollback - no transaction is active" over the real
  cause), and never one that hides the first error.
- :func:`is_damaged`: a file that is not a database, or whose pages are malformed (random bytes,
  a truncated file). :func:`problem` finds that without changing the file (``doctor``);
  :func:`move_aside` renames it (and its ``-wal``/``-shm``) to ``<name>.damaged-<time>`` so
  ``reindex`` can build a new one and nothing is deleted.
- :func:`writable`: whether the folder of the databases can be written (a read-only root is
  searched read-only, or in memory).
"""

from __future__ import annotations

import os
import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_DAMAGED_TEXT = ("file is not a database", "database disk image is malformed", "malformed database schema")
_READONLY = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")
_READONLY_TEXT = ("readonly database", "unable to open database file", "read-only file system")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``with transaction(conn):`` an immediate write transaction (autocommit connections)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):  # the first error is the one to report
                conn.execute("ROLLBACK")
        raise


def _name(exc: BaseException) -> str:
    return str(getattr(exc, "sqlite_errorname", "") or "")


def is_damaged(exc: BaseException) -> bool:
    """The database file is not a database or is malformed (not: locked, full, read-only)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = _name(exc)
    if name:
        return name.startswith(_DAMAGED)
    return any(t in str(exc).lower() for t in _DAMAGED_TEXT)


def is_readonly(exc: BaseException) -> bool:
    """The database (or its folder, for the WAL files) cannot be written."""
    if isinstance(exc, PermissionError) or (isinstance(exc, OSError) and exc.errno == 30):  # EROFS
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    return _name(exc).startswith(_READONLY) or any(t in str(exc).lower() for t in _READONLY_TEXT)


def writable(folder: Path) -> bool:
    """Whether ``folder`` (``search/``) can take new files: the databases and their WAL files."""
    return os.access(folder, os.W_OK) if folder.is_dir() else os.access(folder.parent, os.W_OK)


def private_file(path: Path) -> None:
    """Create the database file ``path``, if missing, readable by its owner only (0600, as every
    file of the root; SQLite gives its ``-wal`` and ``-shm`` the same mode). An empty file is an
    empty database to SQLite; an existing file keeps its mode."""
    from commonkeep.store.jsonl import NEW_FILE_MODE

    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, NEW_FILE_MODE))


def readonly_uri(path: Path) -> str:
    """A URI that opens ``path`` without writing anything (no WAL index, no locks): for a root
    that cannot be written, whose index is known to be fresh."""
    from urllib.parse import quote

    return f"file:{quote(str(path))}?mode=ro&immutable=1"


def problem(path: Path) -> str | None:
    """What is wrong with the SQLite file ``path`` (``None``: it reads as a database whose pages
    check out). Opens it read-only; changes nothing."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        conn.close()
    found = [str(r[0]) for r in rows if str(r[0]) != "ok"]
    return "; ".join(found[:3]) if found else None


def move_aside(path: Path) -> Path:
    """Rename a damaged database (and its ``-wal`` / ``-shm``) to ``<name>.damaged-<time>``;
    returns the new name of the database file."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    if path.exists():
        os.replace(path, target)
    return target


# --- comparing an FTS5 table's schema (not its spelling) -----------------------------------------

_CREATE = re.compile(r"^\s*create\s+virtual\s+table\s+(?:if\s+not\s+exists\s+)?[\"'`\[]?(\w+)[\"'`\]]?\s+using\s+(\w+)\s*\((.*)\)\s*;?\s*$",
                     re.IGNORECASE | re.DOTALL)


def _args(text: str) -> list[str]:
    """Split FTS5 module arguments on top-level commas (quotes respected)."""
    out, cur, quote = [], [], ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
            cur.append(ch)
        elif ch == ",":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [a.strip() for a in out if a.strip()]


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1]
    return text


def fts5_shape(sql: str) -> tuple[str, tuple[tuple[str, bool], ...], tuple[tuple[str, str], ...]] | None:
    """``(table, ((column, unindexed), …), ((option, value), …))`` of a ``CREATE VIRTUAL TABLE …
    USING fts5(…)`` statement, independent of spacing, case of keywords and quoting; ``None``
    when it is not one."""
    m = _CREATE.match(sql)
    if m is None or m.group(2).lower() != "fts5":
        return None
    columns: list[tuple[str, bool]] = []
    options: list[tuple[str, str]] = []
    for arg in _args(m.group(3)):
        if "=" in arg:
            key, value = arg.split("=", 1)
            options.append((key.strip().lower(), " ".join(_unquote(value).split()).lower()))
            continue
        words = arg.split()
        columns.append((_unquote(words[0]).lower(), any(w.lower() == "unindexed" for w in words[1:])))
    return m.group(1).lower(), tuple(columns), tuple(sorted(options))
