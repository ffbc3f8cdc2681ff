"""The places and store order of a delta sync's new rows without moving the rows after them
(``shifts.py``): the first row after the changed run is found by reading the lines that follow it,
and the change becomes an entry anchored there. ``None`` from :func:`lazy_places` whenever that
cannot be done exactly (the rows are then moved as before, ``delta._apply``)."""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.recall.search.shifts import OFFSET, ORD, Shifts, place, write

LOOK = 16  # lines read after the run for the first indexed one (inactive lines are not indexed)
END = (-1, -1)  # no indexed line follows the run in its file


class After:
    """What follows the changed run in the new file: its lines from ``new_end`` on, at ``new_stop``."""

    def __init__(self, rconn: sqlite3.Connection, rel: str, read: Callable[[int, int], bytes], lens: array[int],
                 new_end: int, new_stop: int, grew: int) -> None:
        self.rconn = rconn
        self.rel = rel
        self.read = read
        self.lens = lens
        self.new_end = new_end
        self.new_stop = new_stop
        self.grew = grew

    def row(self, tab: Shifts) -> tuple[int, int] | None:
        """``(stored offset, stored ord)`` of the first indexed row after the run, :data:`END`
        when none is in the file, ``None`` when that is not known for sure."""
        at, i = self.new_stop, self.new_end
        for _ in range(LOOK):
            if i >= len(self.lens):
                return END
            try:
                rec = json.loads(self.read(at, self.lens[i]))
            except (ValueError, RecursionError):
                return None
            rid = rec.get("id") if isinstance(rec, dict) else None
            if not isinstance(rid, str):
                return None
            got = self.rconn.execute("SELECT a.file, a.offset, a.length, r.ord FROM record_at a JOIN records r "
                                     "ON r.id = a.id WHERE a.id = ?", (rid,)).fetchone()
            if got is not None:
                file, off, length, ord_ = got
                # the row of this very line, where the old file had it
                if file != self.rel or int(length) != self.lens[i] or tab.true(OFFSET, self.rel, int(off)) != at - self.grew:
                    return None
                return int(off), int(ord_)
            at += self.lens[i] + 1
            i += 1
        return None


def lazy_places(rconn: sqlite3.Connection, tab: Shifts, rel: str, removed: list[tuple[Any, ...]],
                added: list[tuple[dict[str, Any], int, int]], first: int, after: After,
                shift: int) -> tuple[list[int], list[int]] | None:
    """The stored offsets and store orders of the ``added`` rows, the entries written for the
    rows after the run (inside the caller's transaction); ``None``, nothing written, when the
    change does not fit (``shifts.place``) or the row after the run is not known for sure."""
    ids = [str(r[0]) for r in removed]
    offs: list[int] = []
    if ids:
        marks = ",".join("?" * len(ids))
        offs = sorted(int(r[0]) for r in rconn.execute(
            f"SELECT offset FROM record_at WHERE file = ? AND id IN ({marks})", (rel, *ids)))  # noqa: S608
        if len(offs) != len(ids):
            return None
    nxt = after.row(tab)
    if nxt is None:
        return None
    n_off: int | None = nxt[0]
    n_ord: int | None = nxt[1]
    if nxt == END:
        docs = rconn.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone()
        if docs is None or int(docs[0]) != first + len(removed):
            return None  # the next row in store order is in another file
        n_off = n_ord = None
    elif tab.true(ORD, "", int(nxt[1])) != first + len(removed):
        return None
    by_offset = place(tab.of(OFFSET, rel), offs, [off for _, off, _ in added],
                      tab.true(OFFSET, rel, offs[0]) if offs else None, n_off, after.grew)
    by_order = place(tab.of(ORD), sorted(int(r[7]) for r in removed), [first + i for i in range(len(added))],
                     first if removed else None, n_ord, shift)
    if by_offset is None or by_order is None:
        return None
    write(rconn, OFFSET, rel, by_offset[0])
    write(rconn, ORD, "", by_order[0])
    return by_offset[1], by_order[1]


def count_before(rconn: sqlite3.Connection, root: Path | str, rel: str, start: int, tab: Shifts) -> int:
    """How many indexed records come before byte ``start`` of ``rel`` in store order (``tab``: the
    index's shifts); ``delta.Declined`` when the places and the store order disagree."""
    from commonkeep.recall.search.delta import Declined
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    order = [p.relative_to(lay.root).as_posix() for p in lay.canonical_files()]
    if rel not in order:
        raise Declined
    before = order[: order.index(rel)]
    marks = ",".join("?" * len(before)) or "''"
    at = tab.bound(OFFSET, rel, start)  # the stored offsets (``shifts``)
    first = int(rconn.execute(
        f"SELECT count(*) FROM record_at WHERE file IN ({marks}) OR (file = ? AND offset < ?)",  # noqa: S608
        (*before, rel, at)).fetchone()[0])
    # the neighbours in this file must sit at first - 1 and first in store order (an id on two
    # lines elsewhere would make places and order disagree)
    prev = rconn.execute("SELECT r.ord FROM record_at a JOIN records r ON r.id = a.id WHERE a.file = ? AND a.offset < ? "
                         "ORDER BY a.offset DESC LIMIT 1", (rel, at)).fetchone()
    after = rconn.execute("SELECT r.ord FROM record_at a JOIN records r ON r.id = a.id WHERE a.file = ? AND a.offset >= ? "
                          "ORDER BY a.offset LIMIT 1", (rel, at)).fetchone()
    if (prev is not None and tab.true(ORD, "", int(prev[0])) != first - 1) or \
            (after is not None and tab.true(ORD, "", int(after[0])) != first):
        raise Declined
    return first
