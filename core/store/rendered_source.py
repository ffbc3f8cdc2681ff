"""What ``render_all`` hands the rendered index (``rendered_index``): the record files it rendered,
read whole and found plainly clean, and the index written from them (``keep``)."""

from __future__ import annotations

from array import array
from itertools import repeat
from pathlib import Path
from typing import Any

from commonkeep.store.layout import Layout
from commonkeep.store.render import _Shown
from commonkeep.store.rendered_index import (
    _LAYERS,
    DEAD,
    HIDDEN,
    Index,
    _blen,
    _kind,
    _page_size,
    _save,
    _stat,
)

Row = dict[str, Any]
Stamp = tuple[int, int, int]


class Source:
    """The record files ``render_all`` rendered, read whole and found plainly clean: their stamps
    (unchanged across the read), each file's line lengths and its tombstoned lines."""

    def __init__(self, files: list[Path], stamps: list[Stamp | None], tomb: Stamp | None,
                 records: dict[Path, list[Row]], lines: dict[Path, array[int]], dead: dict[Path, dict[int, str]]) -> None:
        self.files = files
        self.stamps = stamps
        self.tomb = tomb
        self.records = records
        self.lines = lines
        self.dead = dead


def read_source(layout: Layout) -> tuple[dict[Path, list[Row]] | None, Source | None]:
    """The records ``record_lines`` reads (``None``: a file is not plainly clean, read it with
    ``Store``), and the :class:`Source` they vouch for when the files held still while read."""
    from commonkeep.store import record_lines
    from commonkeep.store.core import Store

    files = layout.canonical_files()
    try:
        before = [_stat(p) for p in files]
        tomb = _stat(layout.tombstones)
    except OSError:
        return None, None
    store = Store(layout.root)
    got = record_lines.records_by_file(store)
    if got is None:
        return None, None
    try:
        datas = [_read(p) for p in files]
        same = [_stat(p) for p in files] == before and _stat(layout.tombstones) == tomb
    except OSError:
        return got, None
    if not same or layout.canonical_files() != files or list(got) != files:
        return got, None
    dead: dict[Path, dict[int, str]] = {}
    for path, n, row in store.tombstoned_lines:
        dead.setdefault(path, {})[n] = str(row["id"])
    lines = {}
    for p, data in zip(files, datas, strict=True):
        parts = _lines(data)
        if parts is None:
            return got, None
        lines[p] = array("Q", map(len, parts))
    return got, Source(files, before, tomb, got, lines, dead)


def vouch(layout: Layout, records: dict[Path, list[Row]]) -> Source | None:
    """The :class:`Source` for ``records`` a caller renders: the records an apply read, its changes
    made, after it wrote them under the writer lock (the same trust as ``render_changed``'s new
    index). Not read again: each line's id is checked against them, in order, the tombstoned
    lines set apart (a line of any other layout, or that is not one of them, and there is no source)."""
    from commonkeep.store.core import Store

    files = layout.canonical_files()
    try:
        before = [_stat(p) for p in files]
        tomb = _stat(layout.tombstones)
        dead = Store(layout.root, warn=False).tombstoned_ids()
        datas = [_read(p) for p in files]
        same = [_stat(p) for p in files] == before and _stat(layout.tombstones) == tomb
    except OSError:
        return None
    try:
        return _vouched(layout, records, files, before, tomb, dead, datas) if same else None
    except (TypeError, KeyError):  # a row without a string id
        return None


def _vouched(layout: Layout, records: dict[Path, list[Row]], files: list[Path], before: list[Stamp | None],
             tomb: Stamp | None, dead: set[str], datas: list[bytes]) -> Source | None:
    if layout.canonical_files() != files:
        return None
    gone = {d.encode("utf-8", "surrogatepass") for d in dead}
    mine: dict[Path, list[Row]] = {}
    tombstoned: dict[Path, dict[int, str]] = {}
    lines = {}
    for p, data in zip(files, datas, strict=True):
        parts = _lines(data)
        rows = mine[p] = records.get(p, [])
        if parts is None or not all(map(bytes.startswith, parts, repeat(b'{"id":"'))):
            return None  # a line not in the usual layout
        ids = [x[7:x.find(b'"', 7)] for x in parts]
        names = [r["id"] for r in rows]
        try:
            want = "\n".join(names).encode("utf-8")
        except (TypeError, UnicodeEncodeError):
            return None
        if not gone.isdisjoint(ids):
            tombstoned[p] = {n: x.decode("utf-8", "surrogatepass") for n, x in enumerate(ids, 1) if x in gone}
            ids = [x for x in ids if x not in gone]
        if len(ids) != len(rows) or b"\n".join(ids) != want or b"\\" in want or not dead.isdisjoint(names):
            return None
        lines[p] = array("Q", map(len, parts))
    return Source(files, before, tomb, mine, lines, tombstoned)


def _lines(data: bytes) -> list[bytes] | None:
    """A record file's lines, or ``None`` when its last line is unfinished."""
    if data and not data.endswith(b"\n"):
        return None
    parts = data.split(b"\n")
    parts.pop()  # after the last newline
    return parts


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""



def keep(layout: Layout, source: Source, files: list[Path], ordered: list[_Shown], pages: list[Path]) -> bool:
    """Write the index for pages ``render_all`` just wrote or confirmed (``pages``, MEMORY.md
    first) from ``source``'s records shown as ``ordered`` (in ``files`` order); whether it was
    written (the index only saves time: nothing here fails a render)."""
    try:
        return _keep(layout, source, files, ordered, pages)
    except (TypeError, ValueError, KeyError, OSError):
        return False


def _keep(layout: Layout, source: Source, files: list[Path], ordered: list[_Shown], pages: list[Path]) -> bool:
    if files != source.files or len(ordered) != sum(len(source.records[p]) for p in files):
        return False
    names: dict[str, int] = {}
    ids: list[str] = []
    kind = bytearray()
    proj, blen, llen = array("I"), array("Q"), array("Q")
    at = 0
    counts = []
    for path in files:
        rows = source.records[path]
        shown = ordered[at:at + len(rows)]
        at += len(rows)
        lens = source.lines[path]
        dead = source.dead.get(path, {})
        if len(lens) != len(rows) + len(dead):
            return False
        if not dead:  # as _kind and _blen, inline (100,000 records: 30 ms less)
            kinds = [HIDDEN if s.status == "deleted" else _LAYERS.get(s.layer, HIDDEN) for s in shown]
            ids += [r["id"] for r in rows]
            kind += bytes(kinds)
            proj.extend([names.setdefault(str(s.project), len(names) + 1) if s.project is not None else 0 for s in shown])
            blen.extend([0 if not k else len(s.block) if s.block.isascii() else len(s.block.encode("utf-8", "surrogatepass"))
                         for s, k in zip(shown, kinds, strict=True)])
            llen.extend(lens)
            counts.append(len(lens))
            continue
        it = iter(zip(rows, shown, strict=True))
        for n in range(1, len(lens) + 1):
            rid = dead.get(n)
            if rid is not None:
                ids.append(rid)
                kind.append(DEAD)
                proj.append(0)
                blen.append(0)
                continue
            row, s = next(it)
            k = _kind(s)
            ids.append(row["id"])
            kind.append(k)
            proj.append(names.setdefault(str(s.project), len(names) + 1) if s.project is not None else 0)
            blen.append(_blen(s, k))
        llen.extend(lens)
        counts.append(len(lens))
    if ids and set(map(type, ids)) != {str}:
        return False
    index = Index([(layout.rel(p), s, c) for p, s, c in zip(files, source.stamps, counts, strict=True)], source.tomb,
                  [], list(names), ids, kind, proj, blen, llen)
    return _save(layout, index, pages, _page_size(kind, blen))


