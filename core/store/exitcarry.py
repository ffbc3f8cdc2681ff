"""A file the exit gate knew clean stays known clean when commonkeep itself rewrites it.

The exit gate (``exitgate``) remembers each outside-written file it found clean by its inode,
size and mtime, so an unchanged file is not read again. commonkeep's own rewrites of those files
(a patch applied to ``memory/*.jsonl``, a decision marked in the inbox) changed all three, so the
next ``share sync``, ``reindex`` or ``doctor`` read and redacted the whole file again: at
100,000 records, seconds per command after every one-op apply.

An edit by id (``Store.edit``: the lines of the changed records rewritten, every other line kept
byte for byte) is checked instead: when the old bytes were known clean in whole (the memo's stat
is the file's, and the bytes read are all of them) and the rows the edit wrote hold nothing the
redactor would remove, the new file is clean, and the memo takes its stat. When anything else
happened (another program appended while we worked, the file was not known clean, the edit fell
back to a full rewrite, a written row holds a secret, the file is not one other programs write),
nothing is remembered and the next sweep reads the file, as before.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

Row = dict[str, Any]

SMALL = 8 << 20  # a file up to this size also gets its checksums remembered (appends then cost their lines only)


class Carry:
    """``Carry(root, path)`` before an edit of ``path``; ``wrote(rows)`` with each row the edit
    writes, ``built(old, new)`` from inside its build (``whole()`` when it took the full rewrite);
    ``done()`` after it."""

    def __init__(self, root: Path | str, path: Path) -> None:
        self.root, self.path = Path(root), path
        self.pairs: list[tuple[int, int, bytes | None]] = []  # (bytes read, bytes written, those bytes if known)
        self.rows: list[Row] = []
        self.size = -1  # the size the memo knows clean in whole; -1: not known clean
        if not _outside(self.root, path):
            return
        from commonkeep.store.exitgate import _load, _stat_of

        try:
            st = os.stat(path)
        except OSError:
            return
        entry = _load(self.root).get(str(path))
        if isinstance(entry, dict) and entry.get("stat") == _stat_of(st):
            self.size = st.st_size

    def wrote(self, rows: list[Row]) -> list[Row]:
        self.rows.extend(rows)
        return rows

    def built(self, old: bytes, new: bytes) -> None:
        if self.size >= 0:
            self.pairs.append((len(old), len(new), new))

    def built_sizes(self, old: int, new: int) -> None:
        """``built`` for an edit that never held the bytes (``range_edit``): the sizes only, so
        the memo keeps the stat and no checksum."""
        if self.size >= 0:
            self.pairs.append((old, new, None))

    def whole(self) -> None:
        """The edit rewrote every row: which are new is not known; nothing is carried."""
        self.size = -1

    def done(self) -> None:
        """Remember the file clean when the rewrite read all of it and wrote only its own bytes."""
        if self.size < 0 or not self.pairs:
            return
        read, length, new = self.pairs[-1]  # the build that was written (a retried build replaces the first)
        if read != self.size:
            return  # bytes another program appended were read with it: the next sweep reads them
        from commonkeep.store.exitgate import _digest, _load, _save, _stat_of

        try:
            st = os.stat(self.path)
        except OSError:
            return
        if st.st_size != length:  # lines appended meanwhile were carried into the file: not ours
            return
        from commonkeep.secrets import redact_obj

        found: list[str] = []
        redact_obj(self.rows, found)
        if found:  # a written row holds what the gate removes: the next sweep redacts the file
            return
        entries = _load(self.root)
        entry: dict[str, list[int]] = {"stat": _stat_of(st)}
        if new is not None and len(new) <= SMALL and new.endswith(b"\n"):
            entry["clean"] = _digest(new)
        entries[str(self.path)] = entry
        _save(self.root, entries)


def _outside(root: Path, path: Path) -> bool:
    from commonkeep.store.exitgate import OUTSIDE

    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        return False
    return any(fnmatch.fnmatchcase(rel, pattern) for pattern, _ in OUTSIDE)
