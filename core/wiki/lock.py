"""The writer lock: two ingests or gardener passes on one project never interleave."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from commonkeep.errors import LockHeld


@contextmanager
def writer_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive, non-blocking ``flock`` on ``path`` for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LockHeld(f"another ingest or gardener pass holds {path}",
                           hint="wait for it to finish and run the command again") from None
        yield
    finally:
        os.close(fd)
