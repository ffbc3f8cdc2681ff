"""``rendered/`` after an apply that changed a few records, spliced from the pages' previous bytes.

``render_all`` renders MEMORY.md and every project page from every record: at 100,000 records
about 1.8 s (the projection cache loaded and saved whole, a 38 MB page built and compared),
although a one-op apply changes one block. Each time ``render_all`` writes or confirms the pages
from record files it read whole and found plainly clean (every line a valid record), it also
leaves ``runtime/rendered-index.bin`` (:data:`NAME`): for every line of every canonical record
file, in file order, the record's id, where it is shown (MEMORY.md's L1 or L2 section, nowhere,
or nowhere because it is tombstoned), its project name, the byte length of its block in the page
and of its line in the file; with the stamps (inode, size, mtime) of the record files and of the
tombstones it was rendered from, the stamps of the pages as written, and
``projection_cache.fingerprint()`` (the code a block depends on) with this module's own stamp.

:func:`render_changed` then builds the pages an apply leaves from that index: slices of the old
MEMORY.md for every block that did not change, ``_shown`` (redacted, rendered) for the records
the apply wrote. It reads neither the record files nor the projection cache (the tombstones,
yes: a tombstone hides every line of its id). It answers ``None``, and the caller renders with
``render_all``, whenever it cannot be sure: no index, or one from other code; record files not
as the index saw them when the apply read them; a file the apply did not write changed since; a
page changed since it was written (by hand, by another program) or made a link; a tombstone taken
back; a written file whose size is not the one the apply's changes give (another program wrote
to it meanwhile); a written record that is not a valid one.

What it cannot see: a record file changed in place by another program keeping its inode, size
and mtime, or written between the apply's write and this render with the size the apply's
changes give. ``commonkeep render`` (``render_all``) renders everything again.

The index is derived and machine-local, like the projection cache; a missing, torn, foreign or
unreadable one is simply not used.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress, repeat
from pathlib import Path
from typing import Any

from commonkeep.store.layout import Layout, slug
from commonkeep.store.render import _CACHE, _LONE_SURROGATE, _page, _Shown, _shown

Row = dict[str, Any]
Stamp = tuple[int, int, int]
NAME = "rendered-index.bin"
_MAGIC = b"commonkeep rendered-index 1\n"
_LENGTHS = struct.Struct("<QQ")  # the header's and the ids' byte lengths
_CRC = struct.Struct("<I")
HIDDEN, L1, L2, DEAD = 0, 1, 2, 3  # where a line's record is shown: nowhere, L1, L2, nowhere (tombstoned)
# per line: kind (1 byte), project (uint32, 0: none), block length (uint64), line length (uint64, without its newline)
_PER_LINE = 1 + array("I").itemsize + 2 * array("Q").itemsize
_ONLY = {k: bytes(1 if i == k else 0 for i in range(256)) for k in (L1, L2)}  # ``translate``: a mask of one kind
_SHOWN = bytes(0 if i == DEAD else 1 for i in range(256))  # the lines ``render_all`` sees (not tombstoned)


def _skeleton() -> tuple[bytes, bytes, bytes, bytes, bytes]:
    """A page's fixed parts, as ``render._page`` writes them: before L1, the empty L1, between,
    the empty L2, after."""
    empty = _page([]).encode("utf-8")
    no1, no2 = b"_No L1 records._", b"_No L2 records._"
    i, j = empty.index(no1), empty.index(no2)
    return empty[:i], no1, empty[i + len(no1):j], no2, empty[j + len(no2):]


PREFIX, NO_L1, MID, NO_L2, TAIL = _skeleton()


class _Doubt(Exception):
    """Something :func:`render_changed` cannot be sure of: the caller renders everything."""


def _stat(path: Path) -> Stamp | None:
    """A record file's stamp (``os.stat``), ``None`` when it is missing."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _page_stamp(path: Path) -> Stamp | None:
    """A page's stamp, ``None`` when it is missing or not a regular file (a link)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns) if stat.S_ISREG(st.st_mode) else None


def stamps(layout: Layout) -> dict[Path, Stamp | None]:
    """Every canonical record file's stamp, as :func:`render_changed` compares ``before`` with the
    index: ``(st_ino, st_size, st_mtime_ns)`` of ``os.stat``, ``None`` for a missing file."""
    return {p: _stat(p) for p in layout.canonical_files()}


def _bytes(text: str) -> bytes:
    """A page's text as ``render_all`` writes it (a lone surrogate as U+FFFD, as Node does)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")


_LAYERS = {"L1": L1, "L2": L2}


def _kind(s: _Shown) -> int:
    if s.status == "deleted":
        return HIDDEN
    return L1 if s.layer == "L1" else L2 if s.layer == "L2" else HIDDEN


def _blen(s: _Shown, kind: int) -> int:
    """The byte length of a shown block on the page (a lone surrogate and U+FFFD are both 3 bytes)."""
    if kind == HIDDEN:
        return 0
    b = s.block
    return len(b) if b.isascii() else len(b.encode("utf-8", "surrogatepass"))


class Index:
    """The sidecar: every line of the canonical record files in file order (module doc)."""

    def __init__(self, files: list[tuple[str, Stamp | None, int]], tomb: Stamp | None, pages: list[tuple[str, Stamp]],
                 names: list[str], ids: list[str], kind: bytearray, proj: array[int], blen: array[int],
                 llen: array[int]) -> None:
        self.files = files  # (path relative to the root, stamp, lines) in ``canonical_files`` order
        self.tomb = tomb  # the tombstones' stamp
        self.pages = pages  # (page relative to the root, stamp as written): MEMORY.md, then the project pages
        self.names = names  # project names; ``proj`` holds 1 + an index into it, 0 for none
        self.ids = ids
        self.kind = kind
        self.proj = proj
        self.blen = blen
        self.llen = llen
        self._sections: tuple[_Section, _Section] | None = None

    @property
    def sections(self) -> tuple[_Section, _Section]:
        """MEMORY.md's L1 and L2 sections, as these lines give them."""
        if self._sections is None:
            self._sections = _sections(self.kind, self.blen)
        return self._sections

    def encode(self) -> bytes:
        import orjson

        head = orjson.dumps({"fingerprint": _fingerprint(), "byteorder": sys.byteorder, "n": len(self.ids),
                             "files": self.files, "tomb": self.tomb, "pages": self.pages, "names": self.names})
        ids = orjson.dumps(self.ids)  # a lone surrogate: TypeError, no index
        body = b"".join((_MAGIC, _LENGTHS.pack(len(head), len(ids)), head, ids, bytes(self.kind),
                         self.proj.tobytes(), self.blen.tobytes(), self.llen.tobytes()))
        return body + _CRC.pack(zlib.crc32(body))

    @staticmethod
    def decode(data: bytes) -> Index | None:
        """The index ``data`` holds, or ``None`` when it is torn, foreign or from other code."""
        import orjson

        at = len(_MAGIC) + _LENGTHS.size
        if not data.startswith(_MAGIC) or len(data) < at + _CRC.size:
            return None
        if _CRC.unpack_from(data, len(data) - _CRC.size)[0] != zlib.crc32(memoryview(data)[:-_CRC.size]):
            return None
        hl, il = _LENGTHS.unpack_from(data, len(_MAGIC))
        try:
            head = orjson.loads(data[at:at + hl])
            ids = orjson.loads(data[at + hl:at + hl + il])
            n = head["n"]
            if (head["fingerprint"] != _fingerprint() or head["byteorder"] != sys.byteorder or not isinstance(n, int)
                    or len(data) != at + hl + il + n * _PER_LINE + _CRC.size or not isinstance(ids, list) or len(ids) != n
                    or (n and set(map(type, ids)) != {str})):
                return None
            files = [(str(r), _tuple(s), int(c)) for r, s, c in head["files"]]
            pages = [(str(r), _stamp(s)) for r, s in head["pages"]]
            names = head["names"]
            tomb = _tuple(head["tomb"])
        except (ValueError, TypeError, KeyError):
            return None
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names) or not pages:
            return None
        if sum(c for _, _, c in files) != n or any(c < 0 for _, _, c in files):
            return None
        o = at + hl + il
        kind = bytearray(data[o:o + n])
        o += n
        proj, blen, llen = array("I"), array("Q"), array("Q")
        for arr in (proj, blen, llen):
            size = n * arr.itemsize
            arr.frombytes(data[o:o + size])
            o += size
        if n and (sum(map(kind.count, range(DEAD + 1))) != n or max(proj) > len(names)):
            return None
        ix = Index(files, tomb, pages, names, ids, kind, proj, blen, llen)
        start = 0
        for _, s, c in files:  # each file's lines add up to its size
            if sum(llen[start:start + c]) + c != (s[1] if s is not None else 0):
                return None
            start += c
        return ix if ix.sections[1].end + len(TAIL) == pages[0][1][1] else None


def _tuple(s: Any) -> Stamp | None:
    return None if s is None else _stamp(s)


def _stamp(s: Any) -> Stamp:
    a, b, c = s
    if not all(isinstance(x, int) for x in (a, b, c)):
        raise TypeError("a stamp of three integers")
    return (a, b, c)


def _fingerprint() -> str:
    """``projection_cache.fingerprint()`` (the code a block depends on) and this module's own file
    (the code that lays the index out and splices)."""
    from commonkeep.store.projection_cache import fingerprint

    try:
        st = os.stat(__file__)
    except OSError:
        return fingerprint()
    return f"{fingerprint()}:{st.st_size}:{st.st_mtime_ns}"


class _Section:
    """One section (L1 or L2) of a page whose lines have ``kind`` and ``blen``, starting at byte ``start``."""

    def __init__(self, kind: bytes | bytearray, blen: array[int], which: int, start: int) -> None:
        self.mask = kind.translate(_ONLY[which])
        self.lens = list(compress(blen, self.mask))
        self._acc: list[int] | None = None  # where each block starts, counted from the section's start (when asked)
        self.m = len(self.lens)
        self.start = start
        self.end = start + (sum(self.lens) + 2 * (self.m - 1) if self.m else len(NO_L1 if which == L1 else NO_L2))

    def first(self, k: int) -> int:
        """Where block ``k`` of the section starts."""
        if self._acc is None:
            self._acc = [0, *accumulate(self.lens)]
        return self.start + self._acc[k] + 2 * k

    def last(self, k: int) -> int:
        """Where block ``k`` of the section ends."""
        return self.first(k) + self.lens[k]

    def numbers(self, lines: Iterable[int]) -> list[int]:
        """The section's block number of each line (ascending, each of this section's kind)."""
        out, at, k = [], 0, 0
        for g in lines:
            k += self.mask.count(1, at, g)
            out.append(k)
            at = g
        return out


def _sections(kind: bytes | bytearray, blen: array[int]) -> tuple[_Section, _Section]:
    one = _Section(kind, blen, L1, len(PREFIX))
    return one, _Section(kind, blen, L2, one.end + len(MID))


def _page_size(kind: bytes | bytearray, blen: array[int]) -> int:
    """The byte length of the MEMORY.md these lines give."""
    size = len(PREFIX) + len(MID) + len(TAIL)
    for k, empty in ((L1, NO_L1), (L2, NO_L2)):
        mask = kind.translate(_ONLY[k])
        m = mask.count(1)
        size += sum(compress(blen, mask)) + 2 * (m - 1) if m else len(empty)
    return size


def _joined(parts: Sequence[bytes | memoryview], empty: bytes) -> list[bytes | memoryview]:
    """``b"\\n\\n".join(parts)`` as a list of pieces (``empty`` when there are none)."""
    if not parts:
        return [empty]
    out: list[bytes | memoryview] = []
    for p in parts:
        if out:
            out.append(b"\n\n")
        out.append(p)
    return out


# ---------------------------------------------------------------------------------------------
# the index, as ``render_all`` leaves it


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


def forget(layout: Layout) -> None:
    """Remove the index (the pages are about to change)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(layout.runtime_dir / NAME)


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


def _save(layout: Layout, index: Index, pages: list[Path], size: int) -> bool:
    """Write ``index`` with the stamps ``pages`` have now (none may be a link, MEMORY.md the
    ``size`` its lines give), atomically."""
    import tempfile

    page_stamps = [_page_stamp(p) for p in pages]
    if not pages or pages[0] != layout.rendered_memory or any(s is None for s in page_stamps):
        return False
    index.pages = [(layout.rel(p), s) for p, s in zip(pages, page_stamps, strict=True) if s is not None]
    if index.pages[0][1][1] != size:
        return False  # the page is not the one these lines give
    try:
        data = index.encode()
    except (TypeError, ValueError):  # a name or an id orjson cannot write (a lone surrogate)
        return False
    path = layout.runtime_dir / NAME
    tmp = ""
    try:  # renamed into place, not fsynced: a file cut short by a crash fails its checksum
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{NAME}.tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    return True


def load(layout: Layout) -> Index | None:
    """The index, or ``None`` when it is missing, unreadable, torn or from other code."""
    try:
        data = (layout.runtime_dir / NAME).read_bytes()
    except OSError:
        return None
    try:
        return Index.decode(data)
    except ImportError:
        return None


# ---------------------------------------------------------------------------------------------
# splicing


class _New:
    """A line the apply wrote: its record's id, kind, project name, block and line length."""

    __slots__ = ("block", "id", "kind", "llen", "name")

    def __init__(self, rid: str, kind: int, name: str | None, block: bytes, llen: int) -> None:
        self.id = rid
        self.kind = kind
        self.name = name
        self.block = block
        self.llen = llen


def _new(rid: str, rec: Row, dead: set[str]) -> _New:
    """The line the apply wrote for ``rec`` (``RecordChanges`` writes ``encode_rows([rec])``), as
    a render that reads it back shows it."""
    from commonkeep.store.jsonl import encode_rows
    from commonkeep.store.records import memory_record_problem

    line = encode_rows([rec])
    try:
        row = json.loads(line.decode("utf-8", "surrogateescape"))  # what a read of the file gives
    except (ValueError, RecursionError) as exc:
        raise _Doubt("a written line does not read back") from exc
    if not isinstance(row, dict) or row.get("id") != rid or line.count(b"\n") != 1 or memory_record_problem(row):
        raise _Doubt(f"{rid}: not a valid record, or not under its own id")
    if rid in dead:
        return _New(rid, DEAD, None, b"", len(line) - 1)
    token = _CACHE.set(None)  # never the projection cache (loading it is the cost this module saves)
    try:
        s = _shown(row)
    finally:
        _CACHE.reset(token)
    k = _kind(s)
    return _New(rid, k, str(s.project) if s.project is not None else None, _bytes(s.block) if k != HIDDEN else b"",
                len(line) - 1)


Segment = tuple[int, int] | _New  # old lines a..b-1 kept, or a written line


def render_changed(layout: Layout, before: dict[Path, tuple[int, int, int] | None],
                   changed: dict[Path, dict[str, Row | None]]) -> list[Path] | None:
    """Re-render ``rendered/`` after an apply wrote ``changed`` (per canonical file, record id ->
    the new record, ``None``: its line dropped; ``RecordChanges`` semantics) to record files whose
    stamps were ``before`` (every canonical file, as :func:`stamps` gives them, taken under the
    writer lock before the apply wrote). The pages are spliced from their previous bytes and the
    index; only pages whose bytes change are written. Returns the pages written, as ``render_all``
    would, or ``None`` when the index cannot vouch for the pages (module doc): then nothing was
    written, and the caller calls ``render_all``. The caller holds the writer lock."""
    old: list[int] = []  # MEMORY.md as the index saw it, open from the first look to the last copy
    try:
        try:
            plan = _plan(layout, before, changed, old)
        except (_Doubt, OSError):
            return None
        try:
            return plan.write(layout)
        except _Doubt:  # MEMORY.md, written first, changed while copied: nothing was written
            return None
    finally:
        for fd in old:
            os.close(fd)


class _Plan:
    """The pages to write and the index to leave."""

    def __init__(self, index: Index, memory: _Pieces | None, writes: list[tuple[Path, bytes]], pages: list[Path],
                 files: list[Path], size: int) -> None:
        self.index = index
        self.size = size  # MEMORY.md's, as the index's lines give it
        self.memory = memory  # MEMORY.md when its bytes change
        self.writes = writes  # the project pages whose bytes change
        self.pages = pages
        self.files = files

    def write(self, layout: Layout) -> list[Path]:
        from commonkeep.store.jsonl import atomic_write_bytes

        written = []
        if self.memory is not None or self.writes:
            forget(layout)
        if self.memory is not None:
            self.memory.write(layout.rendered_memory)  # _Doubt when the old page changed meanwhile: nothing written
            written.append(layout.rendered_memory)
        for path, data in self.writes:
            atomic_write_bytes(path, data)
            written.append(path)
        ix = self.index
        try:  # the files as the caller, holding the writer lock, has just written them
            ix.files = [(layout.rel(p), _stat(p), c) for p, (_, _, c) in zip(self.files, ix.files, strict=True)]
        except OSError:
            return written  # no index: the next apply renders everything
        _save(layout, ix, self.pages, self.size)
        return written


class _Pieces:
    """A page as runs of the old page's bytes (``fd``, as stamped ``stamp``) and new bytes."""

    def __init__(self, fd: int, stamp: Stamp) -> None:
        self.fd = fd
        self.stamp = stamp
        self.parts: list[tuple[int, int] | bytes] = []
        self.starts: list[int] = []  # where each part starts in the new page
        self.size = 0

    def run(self, a: int, b: int) -> None:
        """The old page's bytes ``a..b-1``."""
        if b <= a:
            return
        last = self.parts[-1] if self.parts else None
        if isinstance(last, tuple) and last[1] == a:
            self.parts[-1] = (last[0], b)
        else:
            self.starts.append(self.size)
            self.parts.append((a, b))
        self.size += b - a

    def add(self, data: bytes) -> None:
        if not data:
            return
        last = self.parts[-1] if self.parts else None
        if isinstance(last, bytes) and len(last) < 4096:
            self.parts[-1] = last + data
        else:
            self.starts.append(self.size)
            self.parts.append(data)
        self.size += len(data)

    def read(self, a: int, b: int) -> bytes:
        """The new page's bytes ``a..b-1``."""
        import bisect

        out = []
        i = bisect.bisect_right(self.starts, a) - 1
        while a < b:
            part, start = self.parts[i], self.starts[i]
            end = start + (part[1] - part[0] if isinstance(part, tuple) else len(part))
            stop = min(b, end)
            if isinstance(part, tuple):
                out.append(_pread(self.fd, stop - a, part[0] + a - start))
            else:
                out.append(part[a - start:stop - start])
            a = stop
            i += 1
        return b"".join(out)

    def same(self) -> bool:
        """Whether the new page is the old one, byte for byte."""
        if self.size != self.stamp[1]:
            return False
        for start, part in zip(self.starts, self.parts, strict=True):
            if isinstance(part, bytes):
                if _pread(self.fd, len(part), start) != part:
                    return False
            elif part[0] != start:  # a run moved: compared a megabyte at a time
                for at in range(0, part[1] - part[0], 1 << 20):
                    n = min(1 << 20, part[1] - part[0] - at)
                    if _pread(self.fd, n, start + at) != _pread(self.fd, n, part[0] + at):
                        return False
        return True

    def write(self, path: Path) -> None:
        """Write the page as ``jsonl.atomic_write_bytes`` does (a temp file beside it, fsynced,
        renamed, the folder fsynced), the old page's runs copied by the kernel; ``_Doubt`` and
        nothing written when the old page changed meanwhile."""
        import tempfile

        from commonkeep.store.jsonl import NEW_FILE_MODE, fsync_dir, mode_for, refuse_symlink, write_all

        path.parent.mkdir(parents=True, exist_ok=True)
        refuse_symlink(path)
        mode = mode_for(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
        try:
            if mode != NEW_FILE_MODE:
                os.fchmod(fd, mode)
            for part in self.parts:
                if isinstance(part, bytes):
                    write_all(fd, part)
                else:
                    _copy(self.fd, fd, part[0], part[1])
            os.fsync(fd)
            st = os.fstat(self.fd)
            if (st.st_ino, st.st_size, st.st_mtime_ns) != self.stamp:
                raise _Doubt("MEMORY.md changed while copied")
            os.close(fd)
            fd = -1
            os.replace(tmp, path)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        fsync_dir(path.parent)


def _pread(fd: int, n: int, at: int) -> bytes:
    out = b""
    while len(out) < n:
        got = os.pread(fd, n - len(out), at + len(out))
        if not got:
            raise _Doubt("MEMORY.md got shorter")
        out += got
    return out


def _copy(src: int, dst: int, a: int, b: int) -> None:
    """The bytes ``a..b-1`` of ``src`` appended to ``dst`` (in the kernel where it can)."""
    import errno

    while a < b:
        try:
            n = os.copy_file_range(src, dst, b - a, a) if hasattr(os, "copy_file_range") else -1
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                raise
            n = -1
        if n < 0:  # no kernel copy here: read and write
            from commonkeep.store.jsonl import write_all

            data = _pread(src, min(b - a, 1 << 20), a)
            write_all(dst, data)
            n = len(data)
        elif n == 0:
            raise _Doubt("MEMORY.md got shorter")
        a += n


def _plan(layout: Layout, before: dict[Path, Stamp | None], changed: dict[Path, dict[str, Row | None]],
          opened: list[int]) -> _Plan:
    ix = load(layout)
    if ix is None:
        raise _Doubt("no index")
    rel = layout.rel
    then = {rel(p): s for p, s in before.items()}
    if len(then) != len(before) or then != {r: s for r, s, _ in ix.files}:
        raise _Doubt("the record files are not those the pages were rendered from")
    now = layout.canonical_files()
    now_rel = [rel(p) for p in now]
    edits = {rel(p): c for p, c in changed.items()}
    if len(edits) != len(changed) or not set(edits) | set(then) <= set(now_rel) or not set(now_rel) <= set(edits) | set(then):
        raise _Doubt("record files came or went")
    for p, r in zip(now, now_rel, strict=True):
        if r not in edits and _stat(p) != then[r]:
            raise _Doubt(f"{r} changed since the apply read it")
    for r, s in ix.pages:
        if _page_stamp(layout.root / r) != s:
            raise _Doubt(f"{r} changed since it was written")
    fd = _open_page(layout.rendered_memory, ix.pages[0][1])
    opened.append(fd)
    old1, old2 = ix.sections
    if (_pread(fd, len(PREFIX), 0) != PREFIX or _pread(fd, len(MID), old1.end) != MID
            or _pread(fd, len(TAIL), old2.end) != TAIL or ix.pages[0][1][1] != old2.end + len(TAIL)
            or (not old1.m and _pread(fd, len(NO_L1), old1.start) != NO_L1)
            or (not old2.m and _pread(fd, len(NO_L2), old2.start) != NO_L2)):
        raise _Doubt("MEMORY.md is not laid out as the index says")

    from commonkeep.store.core import Store

    t0 = _stat(layout.tombstones)
    dead = Store(layout.root, warn=False).tombstoned_ids()
    if _stat(layout.tombstones) != t0:
        raise _Doubt("the tombstones changed while read")
    kind, proj, blen = ix.kind, ix.proj, ix.blen
    gone: list[int] = []  # old lines whose block leaves the page, or whose project loses them
    if t0 != ix.tomb:  # tombstones added: their lines are hidden from now on
        kind, proj, blen = bytearray(kind), array("I", proj), array("Q", blen)
        for g, rid in enumerate(ix.ids):
            if rid in dead:
                if kind[g] != DEAD:
                    gone.append(g)
                    kind[g], proj[g], blen[g] = DEAD, 0, 0
            elif kind[g] == DEAD:
                raise _Doubt(f"{rid} is no longer tombstoned")

    # each file's lines after the apply: kept runs of old lines, and the lines it wrote
    offsets, at = {}, 0
    for r, _, c in ix.files:
        offsets[r] = (at, at + c)
        at += c
    segments: list[Segment] = []
    counts: list[int] = []
    for path, r in zip(now, now_rel, strict=True):
        a, b = offsets.get(r, (0, 0))
        change = edits.get(r)
        if change is None:
            if b > a:
                segments.append((a, b))
            counts.append(b - a)
            continue
        mine: list[Segment] = []
        seen: set[str] = set()
        pos = a
        for g in _lines_of(ix.ids, a, b, change):
            if g > pos:
                mine.append((pos, g))
            pos = g + 1
            gone.append(g)
            rid = ix.ids[g]
            if rid in seen:
                continue  # a later line of the same id is dropped
            seen.add(rid)
            rec = change[rid]
            if rec is not None:
                mine.append(_new(rid, rec, dead))
        if b > pos:
            mine.append((pos, b))
        mine += [_new(rid, rec, dead) for rid, rec in change.items() if rec is not None and rid not in seen]
        size = sum(sum(ix.llen[x[0]:x[1]]) + x[1] - x[0] if isinstance(x, tuple) else x.llen + 1 for x in mine)
        st = _stat(path)
        if size != (st[1] if st is not None else 0):
            raise _Doubt(f"{r} is not the size the apply's changes give")
        segments += mine
        counts.append(sum(x[1] - x[0] if isinstance(x, tuple) else 1 for x in mine))

    # MEMORY.md: each section is the old one without the blocks gone, with the new blocks after
    # the nearest kept block before them
    last = {L1: -1, L2: -1}
    after: dict[int, dict[int, list[bytes]]] = {L1: {}, L2: {}}
    for x in segments:
        if isinstance(x, tuple):
            for k in (L1, L2):
                found = kind.rfind(k, x[0], x[1])
                if found >= 0:
                    last[k] = found
        elif x.kind in (L1, L2):
            after[x.kind].setdefault(last[x.kind], []).append(x.block)
    gone = sorted(set(gone))
    page = _Pieces(fd, ix.pages[0][1])
    page.run(0, len(PREFIX))
    for sec, k, empty, tail in ((old1, L1, NO_L1, MID), (old2, L2, NO_L2, TAIL)):
        out = [g for g in gone if ix.kind[g] == k]
        anchors = sorted(after[k])
        numbered = dict(zip(anchors[1:] if anchors and anchors[0] == -1 else anchors,
                            sec.numbers(a for a in anchors if a >= 0), strict=True))
        events = sorted([(n, 0, -1) for n in sec.numbers(out)] + [(numbered.get(a, -1), 1, a) for a in anchors])
        items: list[tuple[int, int] | bytes] = []  # runs of old blocks, new blocks
        cur = 0
        for n, what, a in events:
            if what == 0:  # block n leaves
                if cur < n:
                    items.append((sec.first(cur), sec.last(n - 1)))
                cur = n + 1
            else:  # new blocks after block n (-1: at the start)
                if cur <= n:
                    items.append((sec.first(cur), sec.last(n)))
                cur = n + 1
                items += after[k][a]
        if cur < sec.m:
            items.append((sec.first(cur), sec.last(sec.m - 1)))
        for i, item in enumerate(items):
            if i:
                page.add(b"\n\n")
            if isinstance(item, tuple):
                page.run(*item)
            else:
                page.add(item)
        if not items:
            page.add(empty)
        page.add(tail)

    # the new index's lines
    names = list(ix.names)
    number = {x: i for i, x in enumerate(names, 1)}
    ids: list[str] = []
    nkind = bytearray()
    nproj, nblen, nllen = array("I"), array("Q"), array("Q")
    for x in segments:
        if isinstance(x, tuple):
            a, b = x
            ids += ix.ids[a:b]
            nkind += kind[a:b]
            nproj += proj[a:b]
            nblen += blen[a:b]
            nllen += ix.llen[a:b]
        else:
            ids.append(x.id)
            nkind.append(x.kind)
            if x.name is not None and x.name not in number:
                names.append(x.name)
                number[x.name] = len(names)
            nproj.append(number[x.name] if x.name is not None else 0)
            nblen.append(len(x.block))
            nllen.append(x.llen)
    if _page_size(nkind, nblen) != page.size:
        raise _Doubt("the spliced page does not add up")  # never expected: a bug, not a state of the root
    writes: list[tuple[Path, bytes]] = []

    # the project pages of the names whose lines changed, and of the slugs another name now wins
    touched = {ix.proj[g] for g in gone}
    touched |= {number[x.name] for x in segments if not isinstance(x, tuple) and x.name is not None and x.kind != DEAD}
    touched.discard(0)
    pages = [layout.rendered_memory] + [layout.root / r for r, _ in ix.pages[1:]]
    if touched:
        was = _winners(ix.names, ix.kind, ix.proj)
        won = _winners(names, nkind, nproj)
        tracked = {r for r, _ in ix.pages[1:]}
        todo = {name: w for name, w in won.items()
                if w in touched or was.get(name) != w or rel(_project_page(layout, name)) not in tracked}
        if todo:
            built = _project_pages(page, nkind, nproj, nblen, set(todo.values()))
            for name, w in todo.items():
                path = _project_page(layout, name)
                data = built[w]
                if path.is_symlink():
                    raise _Doubt(f"{rel(path)} is a link")
                try:  # as render_all: a page of another size differs, not read to be compared
                    if path.stat().st_size == len(data) and path.read_bytes() == data:
                        continue
                except FileNotFoundError:
                    pass
                writes.append((path, data))
        pages = [layout.rendered_memory] + [_project_page(layout, s) for s in won]
    index = Index(list(ix.files), t0, [], names, ids, nkind, nproj, nblen, nllen)
    index.files = [(r, None, c) for r, c in zip(now_rel, counts, strict=True)]  # stamps taken once written
    return _Plan(index, None if page.same() else page, writes, pages, now, page.size)


def _lines_of(ids: list[str], a: int, b: int, change: dict[str, Any]) -> list[int]:
    """The lines ``a..b-1`` whose id is one of ``change``'s, in order (a few ids are looked for
    one by one, in C; many in one pass)."""
    if len(change) > 16:
        return [a + i for i, x in enumerate(ids[a:b]) if x in change]
    out = []
    for rid in change:
        at = a
        while True:
            try:
                at = ids.index(rid, at, b)
            except ValueError:
                break
            out.append(at)
            at += 1
    return sorted(out)


def _open_page(path: Path, expect: Stamp) -> int:
    """MEMORY.md open for reading, when it is still the page the index saw."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    st = os.fstat(fd)
    if (st.st_ino, st.st_size, st.st_mtime_ns) != expect:
        os.close(fd)
        raise _Doubt("MEMORY.md changed since it was written")
    return fd


def _project_page(layout: Layout, s: str) -> Path:
    return layout.rendered_projects_dir / f"{s}.md"


def _winners(names: list[str], kind: bytes | bytearray, proj: array[int]) -> dict[str, int]:
    """Slug -> the name whose page it gets, in ``render_all``'s order: names first seen in line
    order (tombstoned lines are not seen), one page per name, a later name winning its slug."""
    out: dict[str, int] = {}
    for x in dict.fromkeys(compress(proj, kind.translate(_SHOWN))):
        if x:
            out[slug(names[x - 1])] = x
    return out


def _project_pages(page: _Pieces, kind: bytearray, proj: array[int], blen: array[int],
                   want: set[int]) -> dict[int, bytes]:
    """The project page of each name in ``want``, from the blocks of the new ``page``."""
    lines: dict[int, list[int]] = {x: [] for x in want}
    for g, x in enumerate(proj):
        if x in want:
            lines[x].append(g)
    secs = _sections(kind, blen)
    out = {}
    for x, gs in lines.items():
        parts: list[bytes | memoryview] = [PREFIX]
        for sec, k, empty, tail in ((secs[0], L1, NO_L1, MID), (secs[1], L2, NO_L2, TAIL)):
            ns = sec.numbers(g for g in gs if kind[g] == k)
            parts += _joined([page.read(sec.first(n), sec.last(n)) for n in ns], empty)
            parts.append(tail)
        out[x] = b"".join(parts)
    return out
