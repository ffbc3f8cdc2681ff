"""A few records' lines rewritten in a large record file from the old file's bytes, no pass over it
in Python (issue 38: a one-op apply at 100,000 records read, searched, wrote and hashed 56 MB).

:func:`edit_records` is ``Store.rewrite_records`` for a ``RecordChanges``, when the line index
(``line_index``) is trusted for the file: the lines of the changed ids are found at the offsets
it holds and read back (each must be the id's line, ``FileLines.read_line``); the new file is
the old one's bytes before the first edited line (``copy_file_range``, in the kernel), the new
line, the bytes up to the next one, …, then the appended records, fsynced (work planned for later
done meanwhile, ``store/ahead.py``) and renamed over the file as ``generations.replace`` does (the old inode kept as a generation, for an appender that
still writes to it; contract §3.4). The file's stat, taken under its lock on the open file, must
be the index's: that is the re-read before the write (an OMP append or rewrite since changes it).
The index then takes the new file's stat and line lengths, without reading the file.

It answers ``False`` — nothing written, ``changes`` as it was given — whenever anything is not
as expected, and the caller takes ``Store.edit``'s checked path: no trusted index, a generation
with late lines, a stat that moved, a line not where the index says, a written row that is not a
valid record in the usual layout or under another id, an id on a line of another file, a file
system without ``copy_file_range`` or hard links, bytes appended while the new file was built.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from array import array
from pathlib import Path
from typing import Any

from commonkeep.store import ahead, line_index
from commonkeep.store.line_edit import RecordChanges

Row = dict[str, Any]


class _Declined(Exception):
    """The edit cannot be made here: the checked path makes it."""


def _loads(line: bytes) -> Any:
    try:
        import orjson

        return orjson.loads(line)
    except ImportError:
        import json

        return json.loads(line.decode("utf-8", "surrogateescape"))


def _copy(src: int, dst: int, a: int, b: int) -> None:
    """The bytes ``a..b-1`` of ``src`` appended to ``dst``, copied by the kernel."""
    while a < b:
        try:
            n = os.copy_file_range(src, dst, b - a, a)
        except OSError as exc:
            if exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                raise _Declined("no kernel copy here") from exc
            raise
        if n <= 0:
            raise _Declined("the file got shorter")
        a += n


def edit_records(layout: Any, path: Path, changes: RecordChanges) -> line_index.Stat | None:
    """Write ``changes`` to ``path`` from the old file's bytes (module doc); the caller holds the
    file's lock. Returns the file's stat as left (``None``: declined, nothing written)."""
    from commonkeep.store.generations import _recover, swap_in, tidy

    if not hasattr(os, "copy_file_range"):
        return None
    ix = line_index.trusted(layout)
    f = ix.file(layout.rel(path)) if ix is not None else None
    if ix is None or f is None or f.stat is None or _recover(path):
        return None
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        st = os.fstat(fd)
        if line_index.stat_of(st) != f.stat:
            return None  # changed since the index was taken: the checked path reads it again
        try:
            left, kept, carry = _edit(layout, path, changes, ix, f, fd, st, swap_in)
        except _Declined:
            changes.reset()
            return None
    finally:
        os.close(fd)  # before ``tidy``: a lease on the old inode is refused while anyone holds it open
    tidy(path, kept)
    carry.done()
    return left if left is not None else line_index.file_stat(path)


def _edit(layout: Any, path: Path, changes: RecordChanges, ix: line_index.LineIndex, f: line_index.FileLines,
          fd: int, st: os.stat_result, swap_in: Any) -> tuple[line_index.Stat | None, list[Any], Any]:
    from commonkeep.store.exitcarry import Carry
    from commonkeep.store.jsonl import MAX_LINE_BYTES, NEW_FILE_MODE, encode_rows, write_all

    found: list[tuple[int, int, int, str, bytes]] = []  # (line number, offset, length, id, line)
    for rid in changes.ids:
        loc = f.find(rid)
        if loc is None:
            if ix.holds(rid) or not line_index._PLAIN_ID.fullmatch(rid):
                raise _Declined(f"{rid} is in another file, or not plain")
            continue  # appended (``tail``)
        i, off, length = loc
        line = f.read_line(fd, rid, off, length)
        if line is None:
            line_index.keep(layout, None)  # the index is wrong: dropped, the next checked read makes one
            raise _Declined(f"{rid} is not where the index says")
        found.append((i, off, length, rid, line))
    found.sort()
    carry = Carry(layout.root, path)
    edits: list[tuple[int, int, int, str, bytes]] = []  # (line number, offset, old length, id, new bytes)
    for i, off, length, rid, line in found:
        row = _loads(line)
        if not isinstance(row, dict) or row.get("id") != rid:
            raise _Declined(f"{rid}: the line does not read back")
        rows = changes.one([row])
        if len(rows) > 1 or any(r.get("id") != rid for r in rows):
            raise _Declined(f"{rid}: written under another id")
        edits.append((i, off, length, rid, _checked(encode_rows(carry.wrote(rows)), rows)))
    tail_rows = changes.tail()
    tail_ids = [str(r.get("id")) for r in tail_rows]
    if len(set(tail_ids)) != len(tail_ids) or not all(isinstance(r.get("id"), str) and line_index._PLAIN_ID.fullmatch(r["id"])
                                                      and not ix.holds(r["id"]) for r in tail_rows):
        raise _Declined("an appended record is not plain, or not new")
    tail = _checked(encode_rows(carry.wrote(tail_rows)), tail_rows) if tail_rows else b""

    def _checked_len(data: bytes) -> None:
        if any(len(x) > MAX_LINE_BYTES for x in data.split(b"\n")):
            raise _Declined("a line over the size limit")

    for e in edits:
        _checked_len(e[4])
    _checked_len(tail)
    mode = st.st_mode & 0o7777
    tfd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        if mode != NEW_FILE_MODE:
            os.fchmod(tfd, mode)
        with ahead.during():  # the kernel copies and flushes; what the apply needs later is done meanwhile
            pos = 0
            for _, off, length, _, new in edits:
                _copy(fd, tfd, pos, off)
                write_all(tfd, new)
                pos = off + length
            _copy(fd, tfd, pos, st.st_size)
            write_all(tfd, tail)
            os.fsync(tfd)
        tst = os.fstat(tfd)
        expect = st.st_size + sum(len(e[4]) - e[2] for e in edits) + len(tail)
        if tst.st_size != expect or line_index.stat_of(os.fstat(fd)) != line_index.stat_of(st):
            raise _Declined("appended to while the new file was built")  # the checked path carries it
        kept = swap_in(path, st, tmp, tst.st_ino)
        if kept is None:
            raise _Declined("no hard links here")
        tmp = ""
        now = os.fstat(tfd)  # the new inode after the rename (its ctime moved), before anyone else's write
    except BaseException:
        os.close(tfd)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    os.close(tfd)
    left = line_index.stat_of(now) if now.st_size == expect and now.st_ino == tst.st_ino else None
    _follow(layout, ix, f, edits, tail_ids, tail, left)
    line_index.noted(layout.root, f.rel, None if left is None else line_index.Edit(
        line_index.stat_of(st), left, tuple((e[0], e[2], e[4]) for e in edits), tail))
    carry.built_sizes(st.st_size, expect)
    return left, kept, carry


def _checked(data: bytes, rows: list[Row]) -> bytes:
    """``data`` (``rows`` encoded), when every row is a valid record and the lines are in the usual
    layout (what the index assumes of every line)."""
    from commonkeep.store.line_edit import _is_plain
    from commonkeep.store.records import memory_record_problem

    if any(memory_record_problem(r) for r in rows) or not _is_plain(data) or data.count(b"\n") != len(rows):
        raise _Declined("a written row is not a valid record in the usual layout")
    return data


def _follow(layout: Any, ix: line_index.LineIndex, f: line_index.FileLines,
            edits: list[tuple[int, int, int, str, bytes]], tail_ids: list[str], tail: bytes,
            left: line_index.Stat | None) -> None:
    """The index after the edit: the new line lengths, a dropped line gone, the appended ids."""
    if left is None:
        line_index.keep(layout, None)
        return
    lens = f.lens
    ids = f.ids
    for i, _, _, rid, new in sorted(edits, reverse=True):
        if new:
            lens[i] = len(new)
        else:
            del lens[i]
            key = b"\n" + rid.encode("ascii") + b"\n"
            at = ids.find(key)
            ids = ids[:at] + ids[at + len(key) - 1:]
    if tail_ids:
        lens.extend(len(x) + 1 for x in tail.split(b"\n")[:-1])
        ids = (ids or b"\n") + b"\n".join(x.encode("ascii") for x in tail_ids) + b"\n"
    if not len(lens):
        ids = b""
    f.ids, f.lens, f.stat = ids, array("Q", lens), left
    ix.written_ns = 0
    line_index.keep(layout, ix)

