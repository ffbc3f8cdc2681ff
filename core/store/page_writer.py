"""A page written from runs of the previous page's bytes (copied in the kernel where it can) and
new bytes, through a temp file and a rename, never read whole (``render_splice``); fsynced only
when asked (a page is derived: ``rendered_index``'s module doc says how an unsynced one is never
trusted after a crash)."""

from __future__ import annotations

import contextlib
import os
from array import array
from pathlib import Path

from commonkeep.store.rendered_index import (
    L1,
    L2,
    MID,
    NO_L1,
    NO_L2,
    PREFIX,
    TAIL,
    _Doubt,
    _joined,
    _sections,
)

Stamp = tuple[int, int, int]


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

    def write(self, path: Path, *, durable: bool = True) -> None:
        """Write the page as ``jsonl.atomic_write_bytes`` does (a temp file beside it, fsynced,
        renamed, the folder fsynced; neither fsync unless ``durable``), the old page's runs copied
        by the kernel; ``_Doubt`` and nothing written when the old page changed meanwhile."""
        self.install(self.build(path), path, durable=durable)

    def build(self, path: Path) -> tuple[int, str]:
        """The new page in a temp file beside ``path`` (open, not renamed: :meth:`install` or
        :meth:`discard`); ``_Doubt`` and nothing left when the old page changed while copied."""
        import tempfile

        from commonkeep.store.jsonl import NEW_FILE_MODE, mode_for, refuse_symlink, write_all

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
            self.check()
        except BaseException:
            self.discard((fd, tmp))
            raise
        return fd, tmp

    def check(self) -> None:
        """``_Doubt`` when the old page is no longer as stamped (changed in place)."""
        st = os.fstat(self.fd)
        if (st.st_ino, st.st_size, st.st_mtime_ns) != self.stamp:
            raise _Doubt("MEMORY.md changed while copied")

    def install(self, built: tuple[int, str], path: Path, *, durable: bool = True) -> None:
        """Rename the temp file :meth:`build` left over ``path`` (fsynced first, and the folder
        after, when ``durable``)."""
        from commonkeep.store.jsonl import fsync_dir

        fd, tmp = built
        try:
            if durable:
                os.fsync(fd)
            self.check()
            os.close(fd)
            fd = -1
            os.replace(tmp, path)
        except BaseException:
            self.discard((fd, tmp))
            raise
        if durable:
            fsync_dir(path.parent)

    @staticmethod
    def discard(built: tuple[int, str]) -> None:
        """Close and remove the temp file :meth:`build` left."""
        fd, tmp = built
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


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




def _open_page(path: Path, expect: Stamp) -> int:
    """MEMORY.md open for reading, when it is still the page the index saw."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    st = os.fstat(fd)
    if (st.st_ino, st.st_size, st.st_mtime_ns) != expect:
        os.close(fd)
        raise _Doubt("MEMORY.md changed since it was written")
    return fd


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
