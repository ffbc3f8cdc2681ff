"""The store's fingerprint a page polls, and the tail of the inbox it compares: cheap reads of what changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

from commonkeep.store.layout import Layout

TAIL_BYTES = 256


def stamp(root: Path | str, layout: Layout | None = None, *, inbox: bool = True) -> str:
    """A cheap fingerprint of the store: changes when a candidate, record, patch or tombstone is written.

    Patches are fingerprinted by their folder, not file by file: every patch write is a new file
    renamed into ``patches/`` (``atomic_write_bytes``), which changes the folder's mtime, and
    stat-ing each of 10,000 patch files took ~70 ms on every poll and page.
    """
    lay = layout or Layout(root)
    parts: list[str] = []
    for p in ((lay.inbox,) if inbox else ()) + (lay.tombstones, *lay.canonical_files(), lay.patches_dir):
        try:
            st = p.stat()
        except OSError:
            continue
        parts.append(f"{p.name}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}")
    # A digest, not ``hash()``: str hashes differ per process, so a page stamped before a restart
    # of ``serve`` (or by a second server on the same root) would always look stale.
    return hashlib.blake2b("|".join(parts).encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def _tail(path: Path, size: int) -> bytes:
    """The last :data:`TAIL_BYTES` bytes of the file's first ``size`` bytes."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, size - TAIL_BYTES))
            return fh.read(min(size, TAIL_BYTES))
    except OSError:
        return b""
