"""The writer lock: one writer at a time, across processes, for every change of the canonical files.

``locks/writer.lock`` is an ``flock`` held for the whole mutation; the file also records who holds it
(pid, role, action, since) so a second writer is told ``held by pid N (role, since T)``. The kernel
drops an ``flock`` when its process dies, so a lock left by a dead process is recovered by the next
writer (and reported). Re-entrant within one thread, so ``review`` can call ``apply`` under the same
lock; another thread of the same process waits as another process does. ``$COMMONKEEP_LOCK_WAIT``
(seconds, default 5) bounds the wait; a value that is not a number is a clear error. Every writer
first finishes an apply that was interrupted (its journal is still in ``runtime/journal/``).

Who may take it is the role gate's business (``commonkeep.gate.writer``).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput, LockHeld
from commonkeep.store.layout import Layout
from commonkeep.util.timeutil import now_iso

DEFAULT_LOCK_WAIT = 5.0


@dataclass
class LockInfo:
    """Who holds (or last held) the writer lock."""

    pid: int
    role: str
    action: str
    since: str

    def describe(self) -> str:
        return f"held by pid {self.pid} ({self.role}, since {self.since})"


def pid_alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (one owned by another user counts)."""
    if pid <= 0:
        return False
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


_holds: dict[str, _ProcessHold] = {}  # lock path -> this process's hold
_holds_guard = threading.Lock()


class _ProcessHold:
    """This process's hold on one lock file: the thread inside, how deep, and the open ``flock``.

    A thread that does not own the hold waits on ``cond`` (never re-enters): while any thread of
    this process is inside, the ``flock`` stays held, so no other process can take the lock."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.owner: int | None = None  # threading.get_ident() of the thread inside
        self.depth = 0
        self.fd = -1
        self.action = ""
        self.since = ""


def _hold_for(key: str) -> _ProcessHold:
    with _holds_guard:
        hold = _holds.get(key)
        if hold is None:
            hold = _holds[key] = _ProcessHold()
        return hold


def lock_wait_seconds(wait: float | None = None) -> float:
    """``wait``, else ``$COMMONKEEP_LOCK_WAIT`` (seconds), else 5; a value that is not a number of
    seconds is refused with ``BadInput`` naming the variable."""
    if wait is not None:
        return max(0.0, float(wait))
    raw = os.environ.get("COMMONKEEP_LOCK_WAIT")
    if raw is None or not raw.strip():
        return DEFAULT_LOCK_WAIT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value < 0:
        raise BadInput(
            f"COMMONKEEP_LOCK_WAIT={raw!r} is not a number of seconds; nothing was done",
            hint="set it to seconds as a plain number (e.g. COMMONKEEP_LOCK_WAIT=5 or 0.5), or unset it for the default 5",
        )
    return value


@dataclass
class Acquired:
    """What acquiring the lock found: a recovered dead holder, if any."""

    recovered_from: LockInfo | None = None
    # applies an earlier writer left unfinished, finished on taking the lock (``ApplyResult``s)
    finished: list[Any] = field(default_factory=list)


def _busy(path: Path, wait: float, hold: _ProcessHold | None = None) -> LockHeld:
    if hold is not None:
        held = f"held by another thread of this process (pid {os.getpid()}, {hold.action}, since {hold.since})"
    else:
        info = read_lock_info(path)
        held = info.describe() if info else "held by another process"
    return LockHeld(
        f"the writer lock {path} is {held}; waited {wait:g}s",
        hint="wait for that process to finish (or raise --wait); a lock whose process died is recovered automatically",
    )


def _flock(path: Path, deadline: float, wait: float) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _busy(path, wait) from None
                time.sleep(0.05)
    except BaseException:
        os.close(fd)
        raise


def _finish_interrupted(root: Path | str) -> list[Any]:
    """Every writer first finishes an apply that was interrupted (its journal is still in
    ``runtime/journal/``), so nothing it decides sees a half-written apply."""
    folder = Layout(root).runtime_dir / "journal"
    try:
        if not any(folder.iterdir()):
            return []
    except FileNotFoundError:
        return []
    from commonkeep.patches.patch import finish_interrupted_applies
    from commonkeep.store.core import Store

    return list(finish_interrupted_applies(Store(root)))


@contextmanager
def writer_lock(root: Path | str, role: str, action: str, wait: float | None = None) -> Iterator[Acquired]:
    """Hold the writer lock of ``root``; waits up to ``wait`` seconds, then raises ``LockHeld``.

    Re-entrant for the thread that holds it; another thread of this process waits for it to
    leave (then takes the ``flock`` itself), exactly as another process does."""
    wait = lock_wait_seconds(wait)
    path = Layout(root).lock_dir / "writer.lock"
    key = os.path.realpath(path)  # the same key before and after the file exists
    me = threading.get_ident()
    hold = _hold_for(key)
    deadline = time.monotonic() + wait
    with hold.cond:
        if hold.owner == me:
            hold.depth += 1
            reentrant = True
        else:
            reentrant = False
            while hold.owner is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _busy(path, wait, hold)
                hold.cond.wait(left)
            hold.owner, hold.depth = me, 1  # claimed in this process; the flock comes next
    if reentrant:
        try:
            yield Acquired()
        finally:
            with hold.cond:
                hold.depth -= 1
        return
    try:
        fd = _flock(path, deadline, wait)
    except BaseException:
        with hold.cond:
            hold.owner, hold.depth = None, 0
            hold.cond.notify()
        raise
    previous = read_lock_info(path)
    recovered = previous if previous and previous.pid != os.getpid() and not pid_alive(previous.pid) else None
    since = now_iso()
    meta = json.dumps({"pid": os.getpid(), "role": role, "action": action, "since": since})
    with hold.cond:
        hold.fd, hold.action, hold.since = fd, action, since
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, meta.encode(), 0)
        yield Acquired(recovered, _finish_interrupted(root))
    finally:
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass  # a full disk cannot refuse a truncate to 0, but never let it keep the lock
        finally:
            os.close(fd)  # closing releases the flock
            with hold.cond:
                hold.owner, hold.depth, hold.fd = None, 0, -1
                hold.cond.notify()
