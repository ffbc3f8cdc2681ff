"""``runtime/line-index.bin``: where each record's line is in the record files, keyed by the files'
stat, so a one-op apply finds and rewrites a line without reading a 56 MB file (issue 38).

For every canonical record file (``Layout.canonical_files``, in that order) it keeps the file's
stat — device, inode, size, mtime and ctime, in nanoseconds — and, per line in file order, the
record's id and the line's byte length (its newline included). An index exists only for files
found, whole, to be plainly clean by a full read (every line a valid memory record in the usual
layout, ``record_lookup``'s module doc) with every id unique across the files, or kept so by this
module's own edits (``range_edit``). It says nothing else about the bytes: whoever uses it reads
the line it points at and checks it (:meth:`FileLines.read_line`).

Git's racy-index rule decides when it is trusted (:func:`trusted`): every file's stat must be the
one it holds, and every file's mtime and ctime older than the time the index was written by more
than the file system's timestamp granularity (:data:`GRANULARITY`; two seconds where the
timestamps are whole seconds). A change made after the index was written moves the ctime, which
no program can set back; one made in the same clock tick as the time the index holds would not
show, so such an index is not trusted. Anything else — a missing, torn or foreign index, a file
appended to by OMP (no lock), rewritten in place keeping its size, replaced, truncated — and the
caller takes its checked path, which reads every line and leaves a new index.

What it cannot see: a same-size change made within one timestamp tick of the stat the index
holds *before* the index was written, by a program that takes no lock (the index is written at the
end of the process that made the stat, after at least :data:`GRANULARITY`, and the stat is taken
again then: only a change inside that first tick escapes). The edit never rewrites such a line
from a stale copy: the bytes around the edited line are copied from the file as it is.

The process that writes a file keeps its index in memory (:func:`keep`) and writes it once, at
the end of the command (:func:`flush`), after checking the files' stats again; a derived,
machine-local cache like ``line-edit.json`` (no fsync: a lost index costs one full read).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import struct
import sys
import threading
import time
import zlib
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = "line-index.bin"
_MAGIC = b"commonkeep line-index 1\n"
_HEAD = struct.Struct("<Q")
_CRC = struct.Struct("<I")
GRANULARITY = 20_000_000  # ns: two ticks of a 100 Hz kernel clock (ext4's timestamps come from it)
COARSE = 2_000_000_000  # ns: where the timestamps are whole seconds (FAT keeps two)

Stat = tuple[int, int, int, int, int]  # dev, inode, size, mtime_ns, ctime_ns

# a line's start and its id, in the usual layout (``line_edit._LINE_ID``'s id, without quotes)
_LINE_ID = re.compile(rb'^\{"id":"([\x20\x21\x23-\x5b\x5d-\x7e]*)"[,}]', re.M)
_PLAIN_ID = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")


def stat_of(st: os.stat_result) -> Stat:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_stat(path: Path) -> Stat | None:
    """``path``'s stat, ``None`` when it is missing (a link is refused by the writers: not followed)."""
    try:
        return stat_of(os.lstat(path))
    except FileNotFoundError:
        return None


def _granularity(s: Stat) -> int:
    return COARSE if s[3] % 1_000_000_000 == 0 and s[4] % 1_000_000_000 == 0 else GRANULARITY


def settled(s: Stat | None, when_ns: int) -> bool:
    """Whether a file of stat ``s`` had its last change before ``when_ns`` by more than the
    timestamps' granularity (a missing file: always)."""
    return s is None or max(s[3], s[4]) < when_ns - _granularity(s)


@dataclass
class FileLines:
    """One record file: its stat, its ids (``b"\\nid1\\nid2\\n"``) and line lengths, in file order."""

    rel: str
    stat: Stat | None
    ids: bytes
    lens: array[int]

    def find(self, rid: str) -> tuple[int, int, int] | None:
        """``rid``'s line: (its number from 0, byte offset, length with the newline), or ``None``."""
        if not _PLAIN_ID.fullmatch(rid):
            return None
        key = b"\n" + rid.encode("ascii") + b"\n"
        at = self.ids.find(key)
        if at < 0:
            return None
        i = self.ids.count(b"\n", 0, at)
        return i, sum(self.lens[:i]), self.lens[i]

    def read_line(self, fd: int, rid: str, off: int, length: int) -> bytes | None:
        """The line of ``rid`` at ``off`` in the open file ``fd``, when it is there: it starts right
        after a newline (or at 0) with ``{"id":"<rid>"``, and its ``length`` bytes end with the
        only newline in them. ``None`` otherwise (the caller takes its checked path)."""
        start = max(off - 1, 0)
        data = os.pread(fd, length + off - start, start)
        if len(data) != length + off - start:
            return None
        if off and data[:1] != b"\n":
            return None
        line = data[off - start:]
        head = b'{"id":' + json.dumps(rid).encode("ascii")
        if (not line.startswith(head) or line[len(head):len(head) + 1] not in (b",", b"}")
                or line.find(b"\n") != length - 1):
            return None
        return line

    @property
    def size(self) -> int:
        return sum(self.lens)


@dataclass
class LineIndex:
    """Every canonical record file's lines (module doc); ``written_ns``: when written (0: not yet)."""

    files: list[FileLines]
    written_ns: int = 0

    def file(self, rel: str) -> FileLines | None:
        for f in self.files:
            if f.rel == rel:
                return f
        return None

    def holds(self, rid: str) -> bool:
        return any(f.find(rid) is not None for f in self.files)

    def encode(self) -> bytes:
        return b"".join(self.parts())

    def parts(self) -> list[bytes | array[int]]:
        """:meth:`encode`'s bytes in pieces, not joined (written as they are)."""
        head = json.dumps({"written_ns": self.written_ns, "byteorder": sys.byteorder,
                           "files": [[f.rel, f.stat, len(f.lens), len(f.ids)] for f in self.files]}).encode("utf-8")
        parts: list[bytes | array[int]] = [_MAGIC, _HEAD.pack(len(head)), head]
        for f in self.files:
            parts += [f.ids, f.lens]
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
        parts.append(_CRC.pack(crc))
        return parts

    @staticmethod
    def decode(data: bytes) -> LineIndex | None:
        at = len(_MAGIC) + _HEAD.size
        if not data.startswith(_MAGIC) or len(data) < at + _CRC.size:
            return None
        if _CRC.unpack_from(data, len(data) - _CRC.size)[0] != zlib.crc32(memoryview(data)[:-_CRC.size]):
            return None
        (hl,) = _HEAD.unpack_from(data, len(_MAGIC))
        try:
            head = json.loads(data[at:at + hl])
            written = head["written_ns"]
            if head["byteorder"] != sys.byteorder or not isinstance(written, int):
                return None
            o = at + hl
            files = []
            for rel, st, n, il in head["files"]:
                ids = data[o:o + il]
                o += il
                lens = array("Q")
                lens.frombytes(memoryview(data)[o:o + 8 * n])
                o += 8 * n
                if st is not None and len(st) != 5:
                    return None
                stat: Stat | None = None if st is None else (int(st[0]), int(st[1]), int(st[2]), int(st[3]), int(st[4]))
                if len(lens) != n or ids.count(b"\n") != (n + 1 if n else 0):
                    return None
                if (stat[2] if stat is not None else 0) != sum(lens):
                    return None
                files.append(FileLines(str(rel), stat, ids, lens))
        except (ValueError, TypeError, KeyError):
            return None
        if o != len(data) - _CRC.size:
            return None
        return LineIndex(files, written)


@dataclass(frozen=True)
class Edit:
    """What an edit by the index wrote to one file (``range_edit``), for the search index's sync:
    the file's stat before and after, each replaced line (its number, old length with the
    newline, new bytes: empty when dropped) and the lines appended at the end."""

    before: Stat
    after: Stat
    lines: tuple[tuple[int, int, bytes], ...]
    tail: bytes


_lock = threading.Lock()
_edits: dict[tuple[str, str], Edit] = {}  # (root, file relative to it) -> the last edit this process made
_kept: dict[str, LineIndex] = {}  # root -> the index this process knows (its own writes), not yet written
_loaded: dict[str, LineIndex | None] = {}


def _path(layout: Any) -> Path:
    return Path(layout.runtime_dir) / NAME


def _load(layout: Any) -> LineIndex | None:
    key = str(layout.root)
    with _lock:
        if key in _kept:
            return _kept[key]
        if key in _loaded:
            return _loaded[key]
    try:
        ix = LineIndex.decode(_path(layout).read_bytes())
    except OSError:
        ix = None
    with _lock:
        _loaded[key] = ix
    return ix


def trusted(layout: Any) -> LineIndex | None:
    """The index of ``layout``'s record files when it may be used (module doc), else ``None``. An
    index this process wrote the files of (kept, not yet written) needs only the stats."""
    ix = _load(layout)
    if ix is None:
        return None
    with _lock:
        mine = _kept.get(str(layout.root)) is ix
    files = layout.canonical_files()
    if [layout.rel(p) for p in files] != [f.rel for f in ix.files]:
        return None
    for path, f in zip(files, ix.files, strict=True):
        s = file_stat(path)
        stale = s != f.stat or (not mine and not settled(s, ix.written_ns))
        if stale or (s is not None and os.path.lexists(path.with_name(f".{path.name}.tmp-gens"))):
            # (a previous generation may hold late lines a read carries in: ``generations``)
            if stale and not mine:
                with _lock:  # read from disk again next time: another process may have left a newer one
                    if _loaded.get(str(layout.root)) is ix:
                        del _loaded[str(layout.root)]
            return None
    return ix


def vouches(layout: Any, path: Path, before: Stat | None, size: int) -> bool:
    """Whether ``size`` bytes read from ``path``, whose stat was ``before`` just before the read,
    are the whole file the trusted index describes (so every line is a valid record in the usual
    layout). The stat taken now, after the read, must be the same."""
    ix = trusted(layout)  # every file's stat taken now
    f = ix.file(layout.rel(path)) if ix is not None else None
    return f is not None and f.stat is not None and f.stat == before and f.stat[2] == size


def build(layout: Any, files: list[tuple[Path, bytes, Stat | None]]) -> LineIndex | None:
    """The index of files read whole and found plainly clean (every line a valid record in the
    usual layout), each with its stat taken before and after the read; ``None`` when an id is
    not plain or appears twice."""
    out = []
    seen = 0
    everyone: set[bytes] = set()
    for path, data, st in files:
        starts: list[int] = []
        ids: list[bytes] = []
        for m in _LINE_ID.finditer(data):
            starts.append(m.start())
            ids.append(m.group(1))
        if len(starts) != data.count(b"\n") or (st[2] if st is not None else 0) != len(data):
            return None
        lens = array("Q", [b - a for a, b in zip(starts, [*starts[1:], len(data)], strict=True)] if starts else [])
        everyone.update(ids)
        seen += len(ids)
        if len(everyone) != seen:
            return None
        out.append(FileLines(layout.rel(path), st, b"\n" + b"\n".join(ids) + b"\n" if ids else b"", lens))
    return LineIndex(out)


def keep(layout: Any, ix: LineIndex | None) -> None:
    """``ix`` is what this process knows of the record files now (``None``: nothing), written at
    :func:`flush`."""
    with _lock:
        key = str(layout.root)
        _loaded.pop(key, None)
        if ix is None:
            _kept.pop(key, None)
            _loaded[key] = None
        else:
            _kept[key] = ix
    if ix is None:
        forget(layout)


def noted(root: Path | str, rel: str, edit: Edit | None) -> None:
    """Remember (``None``: forget) the last edit this process made to ``rel``."""
    with _lock:
        if edit is None:
            _edits.pop((str(root), rel), None)
        else:
            _edits[(str(root), rel)] = edit


def edit_of(root: Path | str, rel: str) -> Edit | None:
    """The last edit this process made to ``rel`` (the caller compares its stats with the file's)."""
    with _lock:
        return _edits.get((str(root), rel))


def forget(layout: Any) -> None:
    """Remove the written index (a file of ``layout`` changed in a way it does not follow)."""
    with contextlib.suppress(OSError):
        os.unlink(_path(layout))


def flush(layout: Any) -> None:
    """Write the index kept by this process, when every file is still as it was left; waits out
    the timestamps' granularity first if the last change is that recent (module doc)."""
    key = str(layout.root)
    with _lock:
        ix = _kept.pop(key, None)
    if ix is None:
        return
    files = layout.canonical_files()
    if [layout.rel(p) for p in files] != [f.rel for f in ix.files]:
        forget(layout)
        return
    latest = max((max(f.stat[3], f.stat[4]) + _granularity(f.stat) for f in ix.files if f.stat is not None), default=0)
    wait = latest - time.time_ns()
    if wait >= 0:
        if wait > GRANULARITY:  # a coarse file system: not worth a wait; the next apply reads whole
            forget(layout)
            return
        time.sleep(wait / 1e9 + 0.001)
    if any(file_stat(p) != f.stat for p, f in zip(files, ix.files, strict=True)):
        forget(layout)  # changed since: the next apply reads whole
        return
    ix.written_ns = time.time_ns()
    tmp = _path(layout).with_name(f".{NAME}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        forget(layout)
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in ix.parts():
                fh.write(part)
        from commonkeep.store import release

        release.replace(tmp, _path(layout))  # the old index's blocks freed by a thread
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        forget(layout)
    with _lock:
        _loaded[key] = ix

