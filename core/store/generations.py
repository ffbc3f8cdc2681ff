"""Rewriting a file that other programs append to without a lock, losing none of their lines.

OMP's OmpKeep appends to ``inbox/captured.jsonl`` (and other store files) with a plain
``O_APPEND`` open, write and close, and no lock. A rewrite replaces the file by renaming a new
one over it, so an appender that opened the file before the rename and writes after it writes
into the old inode. No timing assumption can make that safe (the delay between its ``open`` and
its ``write`` is unbounded), so the old inode is never let go while anyone may still write to it:

1. Before the rename, the old file is hard-linked under a known name next to it,
   ``.<name>.tmp-gen-<inode>`` (a *generation*), and ``.<name>.tmp-gens`` records how many of its
   bytes the new file already holds (its *offset*).
2. Every later read or rewrite (under the file's lock) carries over what landed in a generation
   beyond its offset: complete lines only while someone may still be writing, everything once
   nobody can (a dead appender's partial line becomes a line of its own, reported as bad).
3. A generation is dropped when the kernel confirms no process has it open: a write lease
   (``F_SETLEASE``) is granted only on a file nobody else holds open, and nobody can open the old
   inode by its old name any more. After the unlink the lease is taken again: an appender that
   had looked the old name up before our rename and takes write access only now is waited for
   (it blocks on our lease, we let it through and read what it wrote). The one case the kernel
   cannot show is an ``open`` call suspended between its path lookup and its write access for
   the whole time from our rename to that second lease. Where leases are unavailable, at most
   ``MAX_GENS`` generations are kept.

Crash safety (SIGKILL at any point): the state file is written, with the new file's inode as a
pending commit, *before* the rename; whoever takes the lock next sees whether the rename
happened (the file's inode) and settles to exactly one of the two states, so a carried line is
neither lost nor carried twice.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from commonkeep.store.jsonl import (
    NEW_FILE_MODE,
    append_bytes,
    file_lock,
    fsync_dir,
    joined,
    write_all,
    write_temp,
)

MAX_GENS = 16  # kept without proof that they are unused, where the kernel gives no leases


@dataclass(frozen=True)
class Gen:
    """A previous generation of a file: its link name, inode, and the bytes already carried."""

    name: str
    ino: int
    offset: int
    clean: int = 0  # bytes from the start already overwritten with zeros (carried over, not needed)


def state_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-gens")


def gen_prefix(path: Path) -> str:
    return f".{path.name}.tmp-gen-"


def _ino(path: Path) -> int | None:
    try:
        return os.lstat(path).st_ino
    except FileNotFoundError:
        return None


def _load(path: Path) -> tuple[list[Gen], dict[str, Any] | None]:
    try:
        doc = json.loads(state_path(path).read_bytes())
        gens = [_gen(g) for g in doc.get("gens", [])]
        pending = doc.get("pending")
        return gens, pending if isinstance(pending, dict) else None
    except FileNotFoundError:
        return [], None
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError, OSError):
        return [], None  # unreadable state: the generations on disk are adopted by ``_recover``


def _gen(g: dict[str, Any]) -> Gen:
    return Gen(str(g["name"]), int(g["ino"]), int(g["offset"]), int(g.get("clean", 0)))


def _save(path: Path, gens: list[Gen], pending: dict[str, Any] | None = None) -> None:
    sp = state_path(path)
    if not gens and pending is None:
        with suppress(FileNotFoundError):
            os.unlink(sp)
        return
    doc = {"gens": [asdict(g) for g in gens], "pending": pending}
    tmp, _ = write_temp(sp, json.dumps(doc).encode("utf-8"), NEW_FILE_MODE)
    os.rename(tmp, sp)


def _unlink(folder: Path, name: str, ino: int | None = None) -> None:
    """Remove ``folder/name`` (only when it is still inode ``ino``, if given)."""
    p = folder / name
    if ino is not None and _ino(p) != ino:
        return
    with suppress(FileNotFoundError):
        os.unlink(p)


def _recover(path: Path) -> list[Gen]:
    """Settle what a killed rewriter left (under the lock); returns the live generations."""
    folder = path.parent
    gens, pending = _load(path)
    cur = _ino(path)
    changed = pending is not None
    if pending is not None:
        new = [_gen(g) for g in pending.get("gens", [])]
        if cur is not None and cur == pending.get("ino"):  # the rename happened: the new state holds
            keep = {g.name for g in new}
            for g in gens:
                if g.name not in keep:
                    _unlink(folder, g.name, g.ino)
            gens = new
        else:  # it did not: the link made for the current file is not a generation
            old = {g.name for g in gens}
            for g in new:
                if g.name not in old and g.ino == cur:
                    _unlink(folder, g.name, g.ino)
    tmp_prefix, prefix = f".{path.name}.tmp-", gen_prefix(path)
    known = {g.name for g in gens}
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        names = []
    for name in names:
        if name.startswith(prefix) and name not in known:
            st = os.lstat(folder / name)
            if st.st_ino == cur:  # linked, then killed before the state was written
                _unlink(folder, name, st.st_ino)
            else:  # state lost: adopt it, counting what it holds as carried
                gens.append(Gen(name, st.st_ino, st.st_size))
            changed = True
        elif (name.startswith(tmp_prefix) and not name.startswith(prefix) and name != state_path(path).name) \
                or name.startswith(f".{state_path(path).name}.tmp-"):
            _unlink(folder, name)  # a temp file of a rewrite that was killed (we hold the lock)
    alive = [g for g in gens if _ino(folder / g.name) == g.ino]
    if changed or len(alive) != len(gens):
        _save(path, alive)
    return alive


def _lease(fd: int) -> bool | None:
    """Take a write lease on ``fd``: granted only when no other open file description refers to
    the inode (``None``: leases are not available here). A lease break is signalled with SIGURG,
    which is ignored by default, instead of SIGIO, which would end the process."""
    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None:
        return None
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETSIG", 10), signal.SIGURG)
        fcntl.fcntl(fd, setlease, fcntl.F_WRLCK)
    except OSError as exc:
        return False if exc.errno == errno.EAGAIN else None
    return True


def _unlease(fd: int) -> None:
    with suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)


def _unused(fd: int) -> bool | None:
    """Whether nobody else holds the inode open right now (``None``: cannot tell)."""
    got = _lease(fd)
    if got:
        _unlease(fd)
    return got


def _pread_all(fd: int, size: int, offset: int) -> bytes:
    parts = []
    while size > 0:
        chunk = os.pread(fd, min(size, 1 << 24), offset)
        if not chunk:
            break
        parts.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(parts)


@dataclass(frozen=True)
class Late:
    """What landed in a generation beyond its offset."""

    gen: Gen
    data: bytes  # complete lines to carry now (a dead appender's partial line ends with "\n" added)
    offset: int  # the generation's offset once ``data`` is carried
    unused: bool | None  # True: nobody can write to it any more, it can be dropped


def _late(path: Path, g: Gen) -> Late:
    try:
        fd = os.open(path.parent / g.name, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:  # removed by hand: nothing more can be carried from it
        return Late(g, b"", g.offset, True)
    try:
        unused = _unused(fd)  # first: once unused, nothing can land after the read below
        size = os.fstat(fd).st_size
        chunk = _pread_all(fd, size - g.offset, g.offset) if size > g.offset else b""
    finally:
        os.close(fd)
    if unused:
        data = chunk if not chunk or chunk.endswith(b"\n") else chunk + b"\n"
        return Late(g, data, g.offset + len(chunk), True)
    whole = chunk[: chunk.rfind(b"\n") + 1]  # a partial line may still be finished by its writer
    return Late(g, whole, g.offset + len(whole), unused)


def _read_fd(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 24):
        chunks.append(chunk)
    return b"".join(chunks)


def replace(path: Path, build: Callable[[bytes], bytes]) -> None:
    """Replace ``path`` with ``build(current bytes + late lines)``; the caller holds its lock."""
    folder = path.parent
    lates = [_late(path, g) for g in _recover(path)]
    kept = [Gen(x.gen.name, x.gen.ino, x.offset, x.gen.clean) for x in lates]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        fd = -1
    try:
        data = _read_fd(fd) if fd >= 0 else b""
        # An unfinished last line (a write still landing page by page, or a writer that died) is
        # not ours to judge yet: it stays in the old file, beyond the offset, and is carried over
        # whole once it is finished or nobody can finish it any more.
        data = data[: data.rfind(b"\n") + 1]
        new = build(joined(data, b"".join(x.data for x in lates)))
        if fd < 0:
            tmp, tmp_ino = write_temp(path, new, NEW_FILE_MODE)
        else:
            st = os.fstat(fd)
            # lines appended to the current file since we read it go into the new file now
            grown = _pread_all(fd, st.st_size - len(data), len(data)) if st.st_size > len(data) else b""
            grown = grown[: grown.rfind(b"\n") + 1]
            body = joined(new, grown)
            tmp, tmp_ino = write_temp(path, body, st.st_mode & 0o7777)
            name = f"{gen_prefix(path)}{st.st_ino}"
            kept.append(Gen(name, st.st_ino, len(data) + len(grown)))
        # the pending commit is on disk before the link and the rename: whoever comes next knows
        # from the file's inode which of the two states holds (see ``_recover``)
        _save(path, [x.gen for x in lates], {"ino": tmp_ino, "tmp": os.path.basename(tmp), "gens": [asdict(g) for g in kept]})
        if fd >= 0:
            if not _link_old(path, name, st.st_ino):
                # no hard links here: only what landed before the rename is carried (above),
                # and an unfinished last line now, on a line of its own (reported as bad when
                # it is not JSON), since nothing keeps the old file to finish it in
                _carry_tail(fd, len(data) + len(grown), tmp, body)
            _refuse_swapped(path, name, st.st_ino, tmp, [x.gen for x in lates])
        os.replace(tmp, path)
        fsync_dir(folder)
        _save(path, kept)
    finally:
        if fd >= 0:
            os.close(fd)
    _tidy(path, kept)


def _link_old(path: Path, name: str, ino: int) -> bool:
    """The current file (inode ``ino``) kept under the generation's ``name`` by a hard link; False
    where the filesystem has no hard links (the caller carries on without the old file)."""
    folder = path.parent
    if _ino(folder / name) == ino:
        return True
    _unlink(folder, name)
    try:
        os.link(path, folder / name)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        return False
    return True


def _refuse_swapped(path: Path, name: str, ino: int, tmp: str, lates: list[Gen]) -> None:
    """Undo and refuse when the generation's name holds another inode than ``ino``: the file was
    swapped under us (not by a locked writer)."""
    folder = path.parent
    if _ino(folder / name) in (ino, None):
        return
    _unlink(folder, name)
    _unlink(folder, os.path.basename(tmp))
    _save(path, lates)
    from commonkeep.errors import BadInput

    raise BadInput(f"{path} was replaced by another program while commonkeep rewrote it; nothing was changed",
                   hint="run the command again")


def swap_in(path: Path, st: os.stat_result, tmp: str, tmp_ino: int) -> list[Gen] | None:
    """Rename the temp file ``tmp`` (inode ``tmp_ino``, fsynced, holding the new content built from
    all ``st.st_size`` bytes of the open current file ``fd``) over ``path``, the old inode kept as a
    generation as :func:`replace` keeps it; returns the generations for :func:`tidy`. The caller
    holds the file's lock and found no generation (``_recover``). ``None``, and nothing changed
    (``tmp`` removed), where hard links are not available: the caller takes :func:`replace`."""
    folder = path.parent
    name = f"{gen_prefix(path)}{st.st_ino}"
    kept = [Gen(name, st.st_ino, st.st_size)]
    _save(path, [], {"ino": tmp_ino, "tmp": os.path.basename(tmp), "gens": [asdict(g) for g in kept]})
    try:
        if not _link_old(path, name, st.st_ino):
            _unlink(folder, os.path.basename(tmp))
            _save(path, [])
            return None
        _refuse_swapped(path, name, st.st_ino, tmp, [])
        os.replace(tmp, path)
    except BaseException:
        _unlink(folder, os.path.basename(tmp))
        raise
    fsync_dir(folder)
    # The state is left as the pending commit written before the rename: it already says what holds
    # now (``_recover`` adopts ``kept`` once the file is the new inode), and :func:`tidy`, which the
    # caller runs next, writes what is left of it (or removes it): one state file written and
    # fsynced per edit, not two.
    return kept


def _carry_tail(fd: int, offset: int, tmp: str, body: bytes) -> None:
    """Append to the temp file ``tmp`` (holding ``body``) what ``fd`` holds beyond ``offset``."""
    size = os.fstat(fd).st_size
    tail = _pread_all(fd, size - offset, offset) if size > offset else b""
    if not tail:
        return
    data = joined(body, tail)[len(body):]
    out = os.open(tmp, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    try:
        write_all(out, data if data.endswith(b"\n") else data + b"\n")
        os.fsync(out)
    finally:
        os.close(out)


def tidy(path: Path, gens: list[Gen]) -> None:
    """:func:`_tidy` for a caller of :func:`swap_in`."""
    _tidy(path, gens)


def _tidy(path: Path, gens: list[Gen]) -> None:
    """Let go of generations nobody holds open and everything of which is carried over."""
    if not gens:
        return
    keep = []
    no_leases = []
    for g in gens:
        done = _retire(path, g)
        if done is None:
            no_leases.append(g)
        elif not done:
            keep.append(g)
    # without leases nothing proves a generation unused: keep the newest MAX_GENS of them
    for g in no_leases[: max(0, len(no_leases) - MAX_GENS)]:
        if _ino(path.parent / g.name) == g.ino and os.lstat(path.parent / g.name).st_size <= g.offset:
            _unlink(path.parent, g.name, g.ino)
        else:
            keep.append(g)
    keep += no_leases[max(0, len(no_leases) - MAX_GENS):]
    keep = [g for g in gens if g in keep]
    scrubbed = [_scrub(path, g) for g in keep]
    if scrubbed != gens:
        _save(path, scrubbed)


def _scrub(path: Path, g: Gen) -> Gen:
    """Overwrite with zeros what the new file already holds, so the old text (a purged statement,
    say) does not outlive the rewrite on disk while a writer keeps the old file open. Appends land
    at the end (``O_APPEND``), beyond what is zeroed."""
    if g.clean >= g.offset:
        return g
    try:
        fd = os.open(path.parent / g.name, os.O_WRONLY | os.O_NOFOLLOW)
    except OSError:
        return g
    try:
        pos = g.clean
        zeros = bytes(1 << 20)
        while pos < g.offset:
            n = os.pwrite(fd, zeros[: min(len(zeros), g.offset - pos)], pos)
            pos += n
        os.fsync(fd)
    finally:
        os.close(fd)
    return Gen(g.name, g.ino, g.offset, g.offset)


def _retire(path: Path, g: Gen) -> bool | None:
    """Remove generation ``g`` if nobody holds it open and all of it is carried over; ``None``
    when leases are unavailable. The caller holds the file's lock."""
    try:
        fd = os.open(path.parent / g.name, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return True
    gone = False
    try:
        got = _lease(fd)
        if not got:
            return got
        if os.fstat(fd).st_size != g.offset:
            return False  # late lines: carried first by a rewrite (crash-safe), retired afterwards
        os.unlink(path.parent / g.name)
        gone = True
        # An appender that looked the old name up before our rename may take write access only
        # now, after the unlink: the lease cannot be taken again until it has closed the file.
        # (``None``: the lease failed for another reason than a holder; waiting would not help.)
        deadline = time.monotonic() + 60
        while _lease(fd) is False and time.monotonic() < deadline:
            _unlease(fd)  # let it open, write and close
            time.sleep(0.005)
        size = os.fstat(fd).st_size
        if size > g.offset:
            late = _pread_all(fd, size - g.offset, g.offset)
            out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, NEW_FILE_MODE)
            try:
                append_bytes(out, late if late.endswith(b"\n") else late + b"\n")
            finally:
                os.close(out)
        return True
    finally:
        if gone:  # the last descriptor of an unlinked file: its blocks are freed while the command goes on
            from commonkeep.store import release

            release.later(fd)  # (which also ends the lease)
        else:
            os.close(fd)  # also ends the lease


def settle(path: Path) -> bytes | None:
    """Carry late lines of previous generations into ``path`` and drop unused generations.

    Returns ``None`` when done; on a root this process cannot write (read-only), returns the late
    lines instead, for the reader to include without writing them.
    """
    try:
        with file_lock(path):
            for _ in range(4):
                gens = _recover(path)
                if not gens:
                    return None
                lates = [_late(path, g) for g in gens]
                if any(x.data for x in lates):
                    replace(path, lambda data: data)
                    continue
                _tidy(path, gens)
                return None
            return None
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise
    gens, _ = _load(path)
    out = b""
    for g in gens:
        with suppress(OSError):
            fd = os.open(path.parent / g.name, os.O_RDONLY | os.O_NOFOLLOW)
            try:
                size = os.fstat(fd).st_size
                chunk = _pread_all(fd, size - g.offset, g.offset) if size > g.offset else b""
            finally:
                os.close(fd)
            out += chunk[: chunk.rfind(b"\n") + 1]
    return out


__all__ = ["Gen", "MAX_GENS", "replace", "settle", "swap_in", "tidy", "state_path", "gen_prefix", "write_all"]
