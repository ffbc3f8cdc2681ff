"""A few records found by id in the record files, without parsing the other lines.

An apply of a confidence update on a store of 100,000 records parsed all 100,000 lines (1.4 s of
a 3.4 s apply) to change one. :class:`RecordLookup` reads each record file's bytes once and finds
a record's line with ``bytes.find``, as ``line_edit`` finds the lines it edits. What it answers is
what ``record_lines.records_by_file`` would give for that id (the first line of the id, in the
order of ``Layout.canonical_files``), under two conditions checked when it opens, else
:meth:`RecordLookup.open` answers ``None`` and the caller reads every line:

- every line is a valid memory record (``isMemoryRecord``): the leading bytes an earlier process
  found so are taken from ``clean_memo`` (kind ``records``), and only the lines after them are
  parsed and checked;
- every line is in the usual layout (``line_edit``: it starts with ``{"id":"``, holds no other
  ``"id"``, and its id has no escape), so a line holds an id exactly when it starts with it.

A lookup of an id that is not plain printable ASCII, or that is not found, answers
:data:`UNSURE`: the caller then reads every line, so "no such record" is always said by the full
read. The stamps of the files as read (``stamps``) let the projection be spliced afterwards
(``render_changed``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final

Row = dict[str, Any]
Stamp = tuple[int, int, int]


class _Unsure:
    """The lookup cannot say (the caller reads every line)."""


UNSURE: Final = _Unsure()


def stamp(path: Path) -> Stamp | None:
    """A file's identity for "unchanged since": inode, size and modification time (``None``: no file)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class RecordLookup:
    """The record files' bytes, read once; records found by id (module doc)."""

    def __init__(self, files: list[tuple[Path, bytes]], stamps: dict[Path, Stamp | None],
                 index: Any = None, layout: Any = None) -> None:
        self.files = files
        self.stamps = stamps  # each canonical file as it was read (``None``: missing)
        self._found: dict[str, tuple[Path, Row] | None] = {}
        self._index = index  # ``line_index.LineIndex``: the files are not read, lines found at its offsets
        self._layout = layout

    @classmethod
    def open(cls, store: Any) -> RecordLookup | None:
        """The lookup over ``store``'s record files, or ``None`` when a file is not plainly clean
        (module doc) or changed while it was read."""
        from commonkeep.store import clean_memo, line_edit, line_index, record_lines
        from commonkeep.store.jsonl import read_bytes

        ix = line_index.trusted(store.layout)
        if ix is not None:  # every file as the line index knows it (stat): nothing read
            paths = store.layout.canonical_files()
            if not any(p.is_symlink() for p in paths):
                return cls([], {p: None if f.stat is None else (f.stat[1], f.stat[2], f.stat[3])
                                for p, f in zip(paths, ix.files, strict=True)}, ix, store.layout)
        memo = store.layout.runtime_dir / clean_memo.NAME
        entries: clean_memo.Memo | None = None
        files: list[tuple[Path, bytes]] = []
        stamps: dict[Path, Stamp | None] = {}
        full: list[tuple[Path, bytes, line_index.Stat | None]] = []
        for path in store.layout.canonical_files():
            if path.is_symlink():
                return None  # refused by every writer: the careful read says so
            before = stamp(path)
            whole = line_index.file_stat(path)
            data = read_bytes(path)
            if stamp(path) != before or line_index.file_stat(path) != whole:
                return None  # another program wrote meanwhile
            stamps[path] = before
            full.append((path, data, whole))
            if not data:
                files.append((path, data))
                continue
            if not data.endswith(b"\n"):
                return None
            entries = clean_memo.load(memo) if entries is None else entries
            vouched = clean_memo.recalled(entries, path, data, ("records", "plain"))
            rest = data[vouched["records"]:]
            if rest:
                lines = record_lines._lines(rest)
                if lines is None or record_lines._parse(lines) is None:
                    return None
            if not line_edit._is_plain(data[vouched["plain"]:]):
                return None
            record_lines.vouch(path, data)  # every line a record: the edit that follows vouches for its result
            line_edit.remember_clean(path, data)  # ... and checks none of them again
            line_edit.remember_plain(path, data)
            files.append((path, data))
        line_index.keep(store.layout, line_index.build(store.layout, full))  # the next apply reads none of it
        return cls(files, stamps)

    def find(self, rid: str) -> tuple[Path, Row] | _Unsure:
        """The file and record of ``rid``'s first line, or :data:`UNSURE` (module doc)."""
        if rid in self._found:
            hit = self._found[rid]
            return UNSURE if hit is None else hit
        from commonkeep.store import line_edit

        hit = None
        if self._index is not None:
            hit = self._indexed(rid)
        elif line_edit._PLAIN_ID.fullmatch(rid):
            for path, data in self.files:
                spans = line_edit._line_starts(data, {rid}) if data else []
                if spans:
                    start = min(spans)
                    hit = (path, _loads(data[start: data.index(b"\n", start)]))
                    break
        self._found[rid] = hit
        return UNSURE if hit is None else hit

    def _indexed(self, rid: str) -> tuple[Path, Row] | None:
        """``rid``'s record read at the line index's offset (``None``: not found there, or the
        line is not where the index says: the caller reads every line)."""
        from commonkeep.store import line_index

        for f in self._index.files:
            loc = f.find(rid)
            if loc is None:
                continue
            path = self._layout.root / f.rel
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            except OSError:
                return None
            try:
                if line_index.stat_of(os.fstat(fd)) != f.stat:
                    return None
                line = f.read_line(fd, rid, loc[1], loc[2])
            finally:
                os.close(fd)
            if line is None:
                line_index.keep(self._layout, None)  # the index is wrong: dropped, the next checked read makes one
                return None
            row = _loads(line)
            return (path, row) if isinstance(row, dict) and row.get("id") == rid else None
        return None


def _loads(line: bytes) -> Row:
    import json

    try:
        import orjson

        row: Row = orjson.loads(line)
    except ImportError:
        row = json.loads(line.decode("utf-8", "surrogateescape"))
    return row
