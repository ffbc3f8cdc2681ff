"""Descriptors of files that are gone, closed by a thread while the command goes on.

Closing the last descriptor of a file that was unlinked or renamed over makes the kernel free its
blocks inside ``close``: at 100,000 records 10-17 ms for the 56 MB record file's old generation
(``generations._retire``) and ~7 ms for the 38 MB ``rendered/MEMORY.md`` a splice replaced
(``render_splice``), on ext4 (issue 38); ~5 ms for ``runtime/rendered-index.bin`` (4 MB) removed
before the pages change, ~2 ms for ``runtime/line-index.bin`` replaced (:func:`unlink`,
:func:`replace`). Nothing reads or writes through such a descriptor any more and nobody can open
the file by its name, so :func:`later` hands it to a thread that closes it while the apply goes on. :func:`settle` waits for those threads: an apply calls it before it
returns, and the CLI before it ends a process, so none outlives the command.
"""

from __future__ import annotations

import os
import threading
from contextlib import suppress

# never follows a link, never waits (a FIFO put where the file was opens at once, and is only removed)
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_lock = threading.Lock()
_pending: list[threading.Thread] = []


def _close(fd: int) -> None:
    with suppress(OSError):
        os.close(fd)


def later(fd: int) -> None:
    """Close ``fd`` (the last descriptor of a file that is gone) in a thread of its own."""
    thread = threading.Thread(target=_close, args=(fd,), name="commonkeep-release")
    try:
        thread.start()
    except RuntimeError:  # no new thread now (the interpreter is ending): closed here
        _close(fd)
        return
    with _lock:
        _pending.append(thread)


def unlink(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` (``FileNotFoundError`` when it is missing), its blocks freed by
    :func:`later`: it is held open across the unlink, so the kernel frees it at that close."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:
        os.unlink(path)  # a link, or not readable: removed as it is
        return
    try:
        os.unlink(path)
    except BaseException:
        os.close(fd)
        raise
    later(fd)


def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
    """``os.replace(src, dst)``, the file it replaces freed by :func:`later`."""
    try:
        fd = os.open(dst, _FLAGS)
    except OSError:
        fd = -1
    try:
        os.replace(src, dst)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    if fd >= 0:
        later(fd)


def settle() -> None:
    """Wait until every descriptor handed to :func:`later` is closed."""
    with _lock:
        threads = list(_pending)
        _pending.clear()
    for thread in threads:
        thread.join()
