"""Lazy shifts of ``record_at.offset`` and ``records.ord``: "from stored value X on, add D".

When a record's line changes length, the byte offset of every later line of its file moves; when a
record leaves the index (a deprecate), the store order of every later record moves by one. Writing
those moves into ~50,000 rows (``UPDATE … WHERE offset >= …``) cost a one-op apply ~20 ms for the
offsets and ~45 ms for the store order at 100,000 records, plus the pages SQLite then writes back
at its checkpoint (issue 38). The delta sync (``delta.py``) writes an entry here instead:

    shifts (kind, file, at, delta)    kind 'offset' (``file``: the record file) or 'ord' (``file`` '')

A row's true value is its stored value plus the ``delta`` of every entry of its kind (and file)
whose ``at`` is at most the stored value. Every entry sits at the stored value of a row (its
*anchor*: the first row after a changed run), so the stored order of rows is their true order and
a true bound maps to a stored one (:meth:`Shifts.bound`). Entries hold only while meta
``shifts`` is the index's fingerprint (the delta writes both in one transaction): a sync by other
code (an older commonkeep rewrites the rows with true values and its own fingerprint) leaves them
stale, and stale entries are never applied, only dropped. Any other sync folds them into the rows
first (:func:`fold`, one ``UPDATE`` per kind), and so does a delta when the entries would exceed
``MAX_ENTRIES`` or a change does not fit the scheme (:func:`place`: an insert before other rows).
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections.abc import Sequence

OFFSET, ORD = "offset", "ord"
MAX_ENTRIES = 64  # per kind and file; beyond, the delta folds them into the rows
SCHEMA = ("CREATE TABLE IF NOT EXISTS shifts (kind TEXT NOT NULL, file TEXT NOT NULL, at INTEGER NOT NULL, "
          "delta INTEGER NOT NULL, PRIMARY KEY (kind, file, at)) WITHOUT ROWID")


class Shifts:
    """The valid entries of an index, per ``(kind, file)``: anchors ascending, with the sum of the
    deltas up to and including each."""

    def __init__(self, entries: dict[tuple[str, str], list[tuple[int, int]]], stale: bool = False) -> None:
        self.entries = {k: sorted(v) for k, v in entries.items() if v}
        self.stale = stale  # entries are on disk that no longer hold (dropped by the next writer)
        self._cum: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
        for key, es in self.entries.items():
            ats, cum, c = [], [], 0
            for at, d in es:
                c += d
                ats.append(at)
                cum.append(c)
            self._cum[key] = (ats, cum)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def of(self, kind: str, file: str = "") -> list[tuple[int, int]]:
        return list(self.entries.get((kind, file), []))

    def true(self, kind: str, file: str, stored: int) -> int:
        """The true value of a row stored as ``stored``."""
        got = self._cum.get((kind, file))
        if got is None:
            return stored
        k = bisect_right(got[0], stored)
        return stored + (got[1][k - 1] if k else 0)

    def bound(self, kind: str, file: str, t: int) -> int:
        """The stored lower bound of the rows whose true value is at least ``t`` (rows are in the
        same order stored and true, every anchor being a row's stored value)."""
        got = self._cum.get((kind, file))
        if got is None:
            return t
        ats, cum = got
        j = 0  # the last anchor whose row's true value is below t (0: none)
        for k in range(len(ats)):
            if ats[k] + cum[k] < t:
                j = k + 1
        c = cum[j - 1] if j else 0
        lo = t - c
        if j:
            lo = max(lo, ats[j - 1] + 1)
        if j < len(ats):
            lo = min(lo, ats[j])
        return lo


def load(conn: sqlite3.Connection, fingerprint: str | None = None) -> Shifts:
    """The entries, when they hold for the index's fingerprint (``fingerprint``: the one the caller
    read in the same transaction); stale ones are reported, never applied."""
    try:
        rows = conn.execute("SELECT kind, file, at, delta FROM shifts").fetchall()
    except sqlite3.OperationalError:  # an index without the table (made by other code): nothing shifted
        return Shifts({})
    if not rows:
        return Shifts({})
    if fingerprint is None:
        fp = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
        fingerprint = None if fp is None else str(fp[0])
    mark = conn.execute("SELECT value FROM meta WHERE key = 'shifts'").fetchone()
    if fingerprint is None or mark is None or str(mark[0]) != fingerprint:
        return Shifts({}, stale=True)
    out: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for kind, file, at, d in rows:
        out.setdefault((str(kind), str(file)), []).append((int(at), int(d)))
    return Shifts(out)


def fold(conn: sqlite3.Connection) -> None:
    """Write the valid entries into the rows and drop every entry (inside the caller's
    transaction): afterwards every stored value is the true one."""
    tab = load(conn)
    if tab:
        conn.execute("UPDATE record_at SET offset = offset + (SELECT coalesce(sum(s.delta), 0) FROM shifts s "
                     "WHERE s.kind = 'offset' AND s.file = record_at.file AND s.at <= record_at.offset) "
                     "WHERE offset >= (SELECT min(at) FROM shifts WHERE kind = 'offset' AND file = record_at.file)")
        if tab.of(ORD):
            conn.execute("UPDATE records SET ord = ord + (SELECT coalesce(sum(s.delta), 0) FROM shifts s "
                         "WHERE s.kind = 'ord' AND s.file = '' AND s.at <= records.ord) "
                         "WHERE ord >= (SELECT min(at) FROM shifts WHERE kind = 'ord' AND file = '')")
    if tab or tab.stale:
        conn.execute("DELETE FROM shifts")
    conn.execute("DELETE FROM meta WHERE key = 'shifts'")


def drop(conn: sqlite3.Connection) -> None:
    """Drop every entry without applying it (the rows are about to be written whole)."""
    try:
        conn.execute("DELETE FROM shifts")
    except sqlite3.OperationalError:
        return
    conn.execute("DELETE FROM meta WHERE key = 'shifts'")


def place(entries: Sequence[tuple[int, int]], removed: Sequence[int], added: Sequence[int], first_true: int | None,
          nxt: int | None, delta: int) -> tuple[list[tuple[int, int]], list[int]] | None:
    """A changed run of one sequence (one file's offsets, or the store order) without touching the
    rows after it: ``removed``, the stored values of the run's old rows (ascending); ``added``, the
    true values of its new rows (ascending); ``first_true``, the true value of ``removed[0]``;
    ``nxt``, the stored value of the first row after the run (``None``: no row after it); ``delta``,
    what every row from ``nxt`` on moves by. Returns the new entries and the stored values of the
    new rows, or ``None`` when the run does not fit (new rows that would need a stored value taken
    by another row, too many entries): the caller folds and writes the moves into the rows."""
    es = dict(entries)
    carried = 0
    gone = set(removed)
    kept_anchor = bool(removed) and bool(added) and first_true == added[0]
    for r in removed:
        if r in es and not (kept_anchor and r == removed[0]):
            carried += es.pop(r)  # its row leaves: the rows after it are now those from ``nxt`` on
    if nxt is not None:
        if nxt in gone or (removed and nxt <= removed[-1]):
            return None
        es[nxt] = es.get(nxt, 0) + carried + delta
    es = {a: d for a, d in es.items() if d}
    anchors = sorted(es)
    stored: list[int] = []
    for i, t in enumerate(added):
        if i == 0 and kept_anchor:
            stored.append(removed[0])  # the first new row takes the first old row's place, anchor and all
            continue
        before = [a for a in anchors if nxt is None or a < nxt]
        c = sum(es[a] for a in before)
        x = t - c
        if (before and x <= before[-1]) or (nxt is not None and x >= nxt) or (stored and x <= stored[-1]):
            return None
        stored.append(x)
    if len(es) > MAX_ENTRIES:
        return None
    return sorted(es.items()), stored


def write(conn: sqlite3.Connection, kind: str, file: str, entries: Sequence[tuple[int, int]]) -> None:
    """Replace the entries of ``(kind, file)`` (inside the caller's transaction)."""
    conn.execute("DELETE FROM shifts WHERE kind = ? AND file = ?", (kind, file))
    conn.executemany("INSERT INTO shifts (kind, file, at, delta) VALUES (?, ?, ?, ?)",
                     ((kind, file, a, d) for a, d in entries))
