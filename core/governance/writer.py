"""The single writer: the role gate and the cross-process writer lock.

Only the configured writer role (default ``librarian``) may apply patches, curate, forget,
review, ratify, reinforce or answer inquiries; every other role only appends candidates. This
is a coordination convention between agents of one user on one machine (``DESIGN.md``
principle 4), not a security boundary. The gate runs before any work is done, and a refusal
says which role may act and how to become it.

The acting role comes from, in order: ``--role``, ``$COMMONKEEP_ROLE``, the host (a host plugin
passes its configured role). The writer role comes from ``$COMMONKEEP_WRITER_ROLE``, then
``config.json`` → ``"commonkeep": {"writerRole": ...}``, then ``librarian``.

The writer lock (``locks/writer.lock``) is an ``flock`` held for the whole mutation; the file
also records who holds it (pid, role, action, since) so a second writer is told
``held by pid N (role, since T)``. The kernel drops an ``flock`` when its process dies, so a lock
left by a dead process is recovered by the next writer (and reported). Re-entrant within one
process, so ``review`` can call ``apply`` under the same lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.errors import LockHeld, RoleRefused
from commonkeep.store.layout import Layout
from commonkeep.util.timeutil import now_iso

DEFAULT_WRITER_ROLE = "librarian"
DEFAULT_LOCK_WAIT = 5.0


def configured_writer_role(root: Path | str | None = None) -> str:
    """The role allowed to mutate the store."""
    env = os.environ.get("COMMONKEEP_WRITER_ROLE", "").strip()
    if env:
        return env
    if root is not None:
        try:
            data = json.loads(Layout(root).config.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            data = None
        section = data.get("commonkeep") if isinstance(data, dict) else None
        role = section.get("writerRole") if isinstance(section, dict) else None
        if isinstance(role, str) and role.strip():
            return role.strip()
    return DEFAULT_WRITER_ROLE


def acting_role(explicit: str | None = None, host_role: str | None = None) -> str | None:
    """The role this process acts as: ``--role``, then ``$COMMONKEEP_ROLE``, then the host's."""
    for value in (explicit, os.environ.get("COMMONKEEP_ROLE"), host_role):
        if value and value.strip():
            return value.strip()
    return None


def require_writer(action: str, role: str | None, root: Path | str | None = None) -> str:
    """Refuse (``RoleRefused``) unless ``role`` is the writer role; returns the role."""
    writer = configured_writer_role(root)
    if role == writer:
        return role
    who = f"role {role!r}" if role else "no role (neither --role nor $COMMONKEEP_ROLE is set)"
    raise RoleRefused(
        f"refused before doing anything: '{action}' changes the shared memory and only the writer role "
        f"{writer!r} may do it; this process has {who}. Other roles may only append candidates "
        f"(`commonkeep write TEXT`).",
        hint=f"act as the writer with --role {writer} or COMMONKEEP_ROLE={writer} "
        "(the writer role is set by $COMMONKEEP_WRITER_ROLE or config.json commonkeep.writerRole)",
    )


@dataclass
class LockInfo:
    """Who holds (or last held) the writer lock."""

    pid: int
    role: str
    action: str
    since: str

    def describe(self) -> str:
        return f"held by pid {self.pid} ({self.role}, since {self.since})"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_lock_info(path: Path) -> LockInfo | None:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    try:
        return LockInfo(int(data["pid"]), str(data.get("role", "?")), str(data.get("action", "?")), str(data.get("since", "?")))
    except (KeyError, TypeError, ValueError):
        return None


_held: dict[str, tuple[int, int]] = {}  # lock path -> (fd, depth), this process only
_held_guard = threading.Lock()


@dataclass
class Acquired:
    """What acquiring the lock found: a recovered dead holder, if any."""

    recovered_from: LockInfo | None = None


@contextmanager
def writer_lock(root: Path | str, role: str, action: str, wait: float | None = None) -> Iterator[Acquired]:
    """Hold the writer lock of ``root``; waits up to ``wait`` seconds, then raises ``LockHeld``."""
    if wait is None:
        wait = float(os.environ.get("COMMONKEEP_LOCK_WAIT", DEFAULT_LOCK_WAIT))
    path = Layout(root).lock_dir / "writer.lock"
    key = os.path.realpath(path)  # the same key before and after the file exists
    with _held_guard:
        if key in _held:
            fd, depth = _held[key]
            _held[key] = (fd, depth + 1)
            reentrant = True
        else:
            reentrant = False
    if reentrant:
        try:
            yield Acquired()
        finally:
            with _held_guard:
                fd, depth = _held[key]
                _held[key] = (fd, depth - 1)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + max(0.0, wait)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    info = read_lock_info(path)
                    held = info.describe() if info else "held by another process"
                    raise LockHeld(
                        f"the writer lock {path} is {held}; waited {wait:g}s",
                        hint="wait for that process to finish (or raise --wait); a lock whose process died is recovered automatically",
                    ) from None
                time.sleep(0.05)
    except BaseException:
        os.close(fd)
        raise
    previous = read_lock_info(path)
    recovered = previous if previous and previous.pid != os.getpid() and not _pid_alive(previous.pid) else None
    meta = json.dumps({"pid": os.getpid(), "role": role, "action": action, "since": now_iso()})
    os.ftruncate(fd, 0)
    os.pwrite(fd, meta.encode(), 0)
    with _held_guard:
        _held[key] = (fd, 1)
    try:
        yield Acquired(recovered)
    finally:
        with _held_guard:
            del _held[key]
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing releases the flock
