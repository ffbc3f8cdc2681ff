"""``runtime/rendered-index.bin``: how ``rendered/`` was laid out by the last whole render, for
``render_splice`` (the module doc there says what it is for and when it is not used).

For every line of every canonical record file, in file order: the record's id, where it is shown
(MEMORY.md's L1 or L2 section, nowhere, or nowhere because it is tombstoned), its project name, the
byte length of its block in the page and of its line in the file; with the stamps (inode, size,
mtime) of the record files and of the tombstones it was rendered from, the stamps of the pages as
written, and ``projection_cache.fingerprint()`` (the code a block depends on) with the stamps of
the modules that lay the index out and splice. Derived and machine-local, like the projection
cache; a missing, torn, foreign or unreadable index is simply not used.

A splice writes MEMORY.md without waiting for the disk (no fsync: 13-22 ms of an apply at 100,000
records; ``page_writer``). Until the kernel writes it back, a crash of the machine can leave that
page torn (blocks of zeros, a size without its bytes) under the very stamp the index holds. So the
index then also holds the machine's boot id (``boot``, :func:`boot_id`): an index written in
another boot than this one vouches for nothing (:meth:`Index.decode`), and the next apply renders
every page whole, comparing its bytes (``render_all``). An index whose pages were all fsynced
has no boot id and holds across reboots. Where there is no boot id (no ``/proc``), pages are
always fsynced.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from itertools import accumulate, compress
from pathlib import Path
from typing import Any

from commonkeep.store.layout import Layout
from commonkeep.store.record_lookup import stamp
from commonkeep.store.render import _LONE_SURROGATE, _page, _Shown

Row = dict[str, Any]
Stamp = tuple[int, int, int]
NAME = "rendered-index.bin"
_MAGIC = b"commonkeep rendered-index 2\n"  # 2: the ids as lines of UTF-8 (1: a JSON list; not read, rebuilt)
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


_BOOT = "/proc/sys/kernel/random/boot_id"
_boot: list[str | None] = []


def boot_id() -> str | None:
    """This boot of the machine (Linux's random boot id; it changes at every boot, so after a crash
    too), or ``None`` where there is none: then derived pages are fsynced like canonical files."""
    if not _boot:
        try:
            with open(_BOOT, "rb") as fh:
                got = fh.read(100).strip().decode("ascii")
            _boot.append(got if 16 <= len(got) <= 64 else None)
        except (OSError, UnicodeDecodeError):
            _boot.append(None)
    return _boot[0]


class _Doubt(Exception):
    """Something :func:`render_changed` cannot be sure of: the caller renders everything."""


_stat = stamp  # a record file's stamp (``os.stat``), ``None`` when it is missing: the one the apply takes


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


def id_lines(ids: Iterable[str]) -> bytes:
    """Ids as the index keeps them: each in UTF-8 and ended by a newline (``ValueError`` for an id
    that holds a newline, ``UnicodeEncodeError`` for a lone surrogate: then there is no index)."""
    ids = list(ids)
    out = "\n".join(ids) + "\n" if ids else ""
    if out.count("\n") != len(ids):
        raise ValueError("an id holds a newline")
    return out.encode("utf-8")


class Index:
    """The sidecar: every line of the canonical record files in file order (module doc). The ids
    are kept as the file holds them (``idblob``, :func:`id_lines`): a splice looks up the few it
    changes there, and the list (``ids``) is made only when asked for."""

    def __init__(self, files: list[tuple[str, Stamp | None, int]], tomb: Stamp | None, pages: list[tuple[str, Stamp]],
                 names: list[str], ids: list[str] | bytes, kind: bytearray, proj: array[int], blen: array[int],
                 llen: array[int]) -> None:
        self.files = files  # (path relative to the root, stamp, lines) in ``canonical_files`` order
        self.tomb = tomb  # the tombstones' stamp
        self.pages = pages  # (page relative to the root, stamp as written): MEMORY.md, then the project pages
        self.names = names  # project names; ``proj`` holds 1 + an index into it, 0 for none
        self._ids = ids if isinstance(ids, list) else None
        self._blob = ids if isinstance(ids, bytes) else None
        self.spans: list[int] | None = None  # each file's bytes of ``idblob`` (``None``: worked out from ``ids``)
        self.kind = kind
        self.proj = proj
        self.blen = blen
        self.llen = llen
        self._sections: tuple[_Section, _Section] | None = None
        # the boot in which a page it vouches for was written without fsync (module doc); ``None``: all synced
        self.boot: str | None = None

    @property
    def ids(self) -> list[str]:
        if self._ids is None:
            self._ids = (self._blob or b"").decode("utf-8").split("\n")[:-1]
        return self._ids

    @property
    def idblob(self) -> bytes:
        if self._blob is None:
            self._blob = id_lines(self._ids or [])
        return self._blob

    @property
    def sections(self) -> tuple[_Section, _Section]:
        """MEMORY.md's L1 and L2 sections, as these lines give them."""
        if self._sections is None:
            self._sections = _sections(self.kind, self.blen)
        return self._sections

    def encode(self) -> bytes:
        return b"".join(self.parts())

    def parts(self) -> list[bytes | bytearray | array[int]]:
        """:meth:`encode`'s bytes in pieces, not joined (4 MB at 100,000 records, written as they are)."""
        import orjson

        ids = self.idblob  # an id with a newline or a lone surrogate: ValueError, no index
        n = len(self.kind)
        spans = self.spans
        if spans is None:
            spans, at = [], 0
            for _, _, c in self.files:
                spans.append(len(id_lines(self.ids[at:at + c])))
                at += c
        head = orjson.dumps({"fingerprint": _fingerprint(), "byteorder": sys.byteorder, "n": n, "spans": spans,
                             "files": self.files, "tomb": self.tomb, "pages": self.pages, "names": self.names,
                             "boot": self.boot})
        if ids.count(b"\n") != n or sum(spans) != len(ids):
            raise ValueError("the ids and the lines disagree")
        parts: list[bytes | bytearray | array[int]] = [_MAGIC, _LENGTHS.pack(len(head), len(ids)), head, ids, self.kind,
                                                       self.proj, self.blen, self.llen]
        crc = 0
        for part in parts:
            crc = zlib.crc32(part, crc)
        parts.append(_CRC.pack(crc))
        return parts

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
            ids = data[at + hl:at + hl + il]
            n = head["n"]
            if (head["fingerprint"] != _fingerprint() or head["byteorder"] != sys.byteorder or not isinstance(n, int)
                    or len(data) != at + hl + il + n * _PER_LINE + _CRC.size or ids.count(b"\n") != n
                    or (n and not ids.endswith(b"\n"))):
                return None
            if not ids.isascii():
                ids.decode("utf-8")  # UnicodeDecodeError (a ValueError): not an index this code wrote
            files = [(str(r), _tuple(s), int(c)) for r, s, c in head["files"]]
            spans = [int(x) for x in head["spans"]]
            if len(spans) != len(files) or sum(spans) != il or any(x < 0 for x in spans):
                return None
            pages = [(str(r), _stamp(s)) for r, s in head["pages"]]
            names = head["names"]
            tomb = _tuple(head["tomb"])
            boot = head["boot"]
        except (ValueError, TypeError, KeyError):
            return None
        if boot is not None and boot != boot_id():
            return None  # pages written unsynced in another boot: a crash may have torn them (module doc)
        if not isinstance(names, list) or not all(isinstance(x, str) for x in names) or not pages:
            return None
        if sum(c for _, _, c in files) != n or any(c < 0 for _, _, c in files):
            return None
        o = at + hl + il
        view = memoryview(data)
        kind = bytearray(view[o:o + n])
        o += n
        proj, blen, llen = array("I"), array("Q"), array("Q")
        for arr in (proj, blen, llen):
            size = n * arr.itemsize
            arr.frombytes(view[o:o + size])
            o += size
        if n and (sum(map(kind.count, range(DEAD + 1))) != n or max(proj) > len(names)):
            return None
        ix = Index(files, tomb, pages, names, ids, kind, proj, blen, llen)
        ix.spans = spans
        ix.boot = boot
        start = at = 0
        for (_, s, c), span in zip(files, spans, strict=True):  # each file's lines add up to its size, its ids to its lines
            if sum(llen[start:start + c]) + c != (s[1] if s is not None else 0) or ids.count(b"\n", at, at + span) != c:
                return None
            start += c
            at += span
        return ix if ix.sections[1].end + len(TAIL) == pages[0][1][1] else None


def _tuple(s: Any) -> Stamp | None:
    return None if s is None else _stamp(s)


def _stamp(s: Any) -> Stamp:
    a, b, c = s
    if not all(isinstance(x, int) for x in (a, b, c)):
        raise TypeError("a stamp of three integers")
    return (a, b, c)


_MODULES = ("rendered_index.py", "rendered_source.py", "render_splice.py", "page_writer.py")


def _fingerprint() -> str:
    """``projection_cache.fingerprint()`` (the code a block depends on) and the files of the code
    that lays the index out and splices (:data:`_MODULES`)."""
    from commonkeep.store.projection_cache import fingerprint

    parts = [fingerprint()]
    for name in _MODULES:
        try:
            st = os.stat(os.path.join(os.path.dirname(__file__), name))
        except OSError:
            parts.append(f"{name}:-")
            continue
        parts.append(f"{st.st_size}:{st.st_mtime_ns}")
    return ":".join(parts)


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



def forget(layout: Layout) -> None:
    """Remove the index (the pages are about to change); its blocks are freed by a thread
    (``store/release.py``)."""
    from commonkeep.store import release

    with contextlib.suppress(FileNotFoundError):
        release.unlink(layout.runtime_dir / NAME)



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
        data = index.parts()
    except (TypeError, ValueError):  # a name or an id that cannot be written (a lone surrogate, a newline)
        return False
    path = layout.runtime_dir / NAME
    tmp = ""
    try:  # renamed into place, not fsynced: a file cut short by a crash fails its checksum
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{NAME}.tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            for part in data:
                fh.write(part)
        os.replace(tmp, path)
    except OSError:
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    return True


def _file_stamp(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _read(path: Path) -> tuple[tuple[int, int, int, int], Index | None]:
    """The index file's stamp (inode, size, mtime, ctime: ``render_splice._still`` compares it
    again) and the index it holds (``None``: torn, foreign, from other code)."""
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        data = fh.read()
    if len(data) != st.st_size:
        raise OSError("the index changed while read")
    try:
        ix = Index.decode(data)
    except ImportError:
        ix = None
    if ix is not None:
        ix.sections  # noqa: B018 (worked out now: the splice asks for them)
    return _file_stamp(st), ix


def load(layout: Layout) -> Index | None:
    """The index, or ``None`` when it is missing, unreadable, torn or from other code."""
    try:
        return _read(layout.runtime_dir / NAME)[1]
    except OSError:
        return None
