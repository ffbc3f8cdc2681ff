"""Durable JSONL files shared with OMP (contracts/ompkeep-store.md §3).

- **Append**: whole lines in one ``write()`` on an ``O_APPEND`` descriptor, under an advisory
  lock on a sidecar file (``.<name>.lock``), so our writers never interleave and OMP's plain
  appends interleave only at line boundaries. If the file ends in a torn line (a crash
  mid-append) the append starts on a fresh line, so the torn text never swallows a good line.
- **Rewrite**: under the same lock, re-read, transform, write a temp file in the same folder,
  fsync, ``os.replace``. Lines a non-locking writer (OMP) appended to the old file while we
  worked are carried over to the new one. Lines that cannot be parsed are copied to the
  quarantine file first; nothing is dropped unrecorded.
- **Read**: every parseable object line is returned; every bad line is reported with its file
  and line number (``BadLine``), never silently skipped.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.store.jsonjs import dumps_line, encode_line

Row = dict[str, Any]


@dataclass(frozen=True)
class BadLine:
    """A line that is not a JSON object: where it is, what is wrong, and its text."""

    path: Path
    line_no: int
    error: str
    text: str

    def describe(self) -> str:
        return f"{self.path}:{self.line_no}: {self.error}"


@dataclass
class JsonlRead:
    """The rows of a file, the 1-based line number of each, and the bad lines."""

    rows: list[Row] = field(default_factory=list)
    line_nos: list[int] = field(default_factory=list)
    bad: list[BadLine] = field(default_factory=list)
    size: int = 0


def refuse_symlink(path: Path) -> None:
    """Refuse to write through a symlinked store file: the write would land outside the root."""
    if path.is_symlink():
        raise BadInput(
            f"{path} is a symlink (to {os.readlink(path)}); commonkeep writes only regular files in the root",
            hint="replace the link with a copy of the file it points to, or point the root (not the file) elsewhere",
        )


def lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold the advisory lock that serialises commonkeep's writers of ``path``."""
    lp = lock_path(path)
    lp.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lp, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def parse_jsonl(data: bytes, path: Path) -> JsonlRead:
    """Parse file bytes; split on ``\\r?\\n``, skip blank lines, report the rest that fail."""
    out = JsonlRead(size=len(data))
    text = data.decode("utf-8", errors="surrogateescape")
    if text.startswith("\ufeff"):  # a byte-order mark from a Windows editor: not part of the first record
        text = text[1:]
    lines = text.split("\n")
    fast = _parse_all(lines)
    if fast is not None:
        for i, value in fast:
            out.rows.append(value)
            out.line_nos.append(i + 1)
        return out
    last = len(lines) - 1
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            torn = i == last and not text.endswith("\n")
            why = "torn final line (no newline: a crash mid-append?)" if torn else f"invalid JSON ({exc.msg} at column {exc.colno})"
            out.bad.append(BadLine(path, i + 1, why, raw))
            continue
        except RecursionError:  # valid or not, no record nests thousands of levels deep
            out.bad.append(BadLine(path, i + 1, "JSON nested too deeply to read (thousands of levels)", raw))
            continue
        if not isinstance(value, dict):
            out.bad.append(BadLine(path, i + 1, f"not a JSON object (a {type(value).__name__})", raw))
            continue
        out.rows.append(value)
        out.line_nos.append(i + 1)
    return out


def _parse_all(lines: list[str]) -> list[tuple[int, Any]] | None:
    """Parse every line in one ``json.loads`` call; ``None`` when any line needs the slow path."""
    idx = [i for i, raw in enumerate(lines) if raw.strip()]
    if not idx:
        return []
    try:
        values = json.loads("[" + ",".join(lines[i] for i in idx) + "]")
    except (ValueError, RecursionError):
        return None
    if len(values) != len(idx) or not all(isinstance(v, dict) for v in values):
        return None  # a line held two values ("1,2") or a non-object: let the slow path say where
    return list(zip(idx, values, strict=True))


def read_jsonl(path: Path) -> JsonlRead:
    """Read a JSONL file; a missing file reads as empty."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JsonlRead()
    return parse_jsonl(data, path)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def encode_rows(rows: list[Row]) -> bytes:
    """Rows as JSONL bytes (JSON.stringify parity, one ``\n`` after each)."""
    text = "".join(dumps_line(r) + "\n" for r in rows)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them line by line as JS does
        return b"".join(encode_line(r) + b"\n" for r in rows)


def append_jsonl(path: Path, rows: list[Row], *, fsync: bool | None = None) -> None:
    """Append whole lines in one write under the file's lock."""
    if not rows:
        return
    data = encode_rows(rows)
    if fsync is None:
        fsync = os.environ.get("COMMONKEEP_FSYNC") == "1"
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_symlink(path)
    with file_lock(path):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                data = b"\n" + data  # never glue our line onto a torn one
            _write_all(fd, data)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)


def quarantine_lines(quarantine: Path, bad: list[BadLine], rel: Callable[[Path], str], when: str) -> int:
    """Copy bad lines into the quarantine file (once each); returns how many were new."""
    if not bad:
        return 0
    seen = {r.get("key") for r in read_jsonl(quarantine).rows}
    fresh = []
    for b in bad:
        key = sha256(f"{rel(b.path)}\n{b.line_no}\n{b.text}".encode("utf-8", "surrogateescape")).hexdigest()[:24]
        if key in seen:
            continue
        seen.add(key)
        fresh.append({"key": key, "file": rel(b.path), "line": b.line_no, "error": b.error, "text": b.text, "quarantined_at": when})
    append_jsonl(quarantine, fresh, fsync=True)
    return len(fresh)


def _mode_for(path: Path) -> int:
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a whole file through a temp file in the same folder, fsync and rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        # mkstemp creates 0600; keep the file's mode (OMP and the user read these files too)
        os.fchmod(fd, _mode_for(path))
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with suppress(OSError):
            os.unlink(tmp)
        raise
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)




def rewrite_jsonl(
    path: Path,
    transform: Callable[[list[Row]], list[Row]],
    *,
    quarantine: Path,
    rel: Callable[[Path], str] = str,
    when: str = "",
) -> JsonlRead:
    """Re-read ``path`` under its lock, write ``transform(rows)`` atomically; returns what was read.

    Bad lines are copied to ``quarantine`` before the rewrite leaves them out, so the file is
    repaired for readers that cannot skip bad lines (OMP) and nothing is lost.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_symlink(path)
    with file_lock(path):
        try:
            old_fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            old_fd = -1
        try:
            data = b""
            if old_fd >= 0:
                chunks = []
                while chunk := os.read(old_fd, 1 << 20):
                    chunks.append(chunk)
                data = b"".join(chunks)
            read = parse_jsonl(data, path)
            quarantine_lines(quarantine, read.bad, rel, when)
            new_rows = transform(list(read.rows))
            atomic_write_bytes(path, encode_rows(new_rows))
            if old_fd >= 0:
                # An unlocked writer (OMP) may have appended to the old file after our read.
                grown = os.fstat(old_fd).st_size - len(data)
                late = os.pread(old_fd, grown, len(data)) if grown > 0 else b""
                if late.strip():
                    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
                    try:
                        _write_all(fd, late if late.endswith(b"\n") else late + b"\n")
                    finally:
                        os.close(fd)
        finally:
            if old_fd >= 0:
                os.close(old_fd)
    return read
