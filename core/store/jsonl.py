"""Durable JSONL files shared with OMP (contracts/ompkeep-store.md §3).

- **Append**: whole lines in one ``write()`` on an ``O_APPEND`` descriptor, under an advisory
  lock on a sidecar file (``.<name>.lock``), so our writers never interleave and OMP's plain
  appends interleave only at line boundaries. After the write we look at the byte before our
  line: if another program left a partial line there (it died between two ``write()`` calls),
  our line was glued onto it, so we write it again on a fresh line. Race-free: the check reads
  bytes that can no longer change, and both lines survive (the glued one is reported and
  quarantined as a bad line).
- **Rewrite**: see ``commonkeep.store.generations``: no line OMP appends while we rewrite is lost,
  whatever the delay between its ``open`` and its ``write``.
- **Read**: every parseable object line is returned; every bad line (invalid JSON, a number too
  long for Python, nesting too deep, a line over ``MAX_LINE_BYTES``) is reported with its file
  and line number (``BadLine``), never silently skipped and never a traceback. A line over the
  limit is never parsed nor copied whole: it is kept aside in a file of its own.
- **Modes**: a new file is created ``0600`` (owner only); an existing file keeps its mode across
  rewrites. The process umask is never read or changed.
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
from commonkeep.store.jsonfast import fast_rows
from commonkeep.store.jsonjs import dumps_line, encode_line

Row = dict[str, Any]

# The longest line any reader parses (2 MiB). Our own writers stay far below it (a candidate's
# text is at most 4,000 characters); a longer line is another program's mistake or an attack.
MAX_LINE_BYTES = 2 << 20
NEW_FILE_MODE = 0o600
_PREVIEW = 200


@dataclass(frozen=True)
class BadLine:
    """A line that is not a JSON object: where it is, what is wrong, and its text.

    For a line over ``MAX_LINE_BYTES`` ``text`` is only a preview and ``raw`` holds a view of the
    bytes (not a copy), so the quarantine can keep the whole line without loading it twice.
    """

    path: Path
    line_no: int
    error: str
    text: str
    raw: bytes | memoryview | None = field(default=None, compare=False, repr=False)

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
    """Refuse to write through a symlinked store file, or through a folder of the root that is a
    symlink leading outside it: the write would land outside the root."""
    if path.is_symlink():
        raise BadInput(
            f"{path} is a symlink (to {os.readlink(path)}); commonkeep writes only regular files in the root",
            hint="replace the link with a copy of the file it points to, or point the root (not the file) elsewhere",
        )
    from commonkeep.store.layout import guard_path

    guard_path(path)


def _open_making_folder(path: Path, flags: int) -> int:
    """``os.open`` that makes the folder first when it is missing (asked after, not before: a
    folder that exists, the common case, costs no ``mkdir`` and its exception on every append)."""
    try:
        return os.open(path, flags, NEW_FILE_MODE)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, NEW_FILE_MODE)


def lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold the advisory lock that serialises commonkeep's writers of ``path``."""
    lp = lock_path(path)
    fd = _open_making_folder(lp, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _why_unreadable(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON ({exc.msg} at column {exc.colno})"
    if isinstance(exc, RecursionError):  # valid or not, no record nests thousands of levels deep
        return "JSON nested too deeply to read (thousands of levels)"
    if isinstance(exc, MemoryError):
        return "too large to read into memory"
    first = str(exc).split(";")[0].split(":")[0].strip()
    if "integer string conversion" in str(exc):
        return "a number too long to read (over 4,300 digits)"
    return f"unreadable JSON value ({first[:120]})"


def _lines(data: bytes) -> Iterator[tuple[int, bytes | None, int, int]]:
    """``(index, line bytes or None when over the limit, start, end)`` for each line."""
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0  # a byte-order mark is not part of the first record
    if len(data) - start <= MAX_LINE_BYTES:
        pos = start
        for i, line in enumerate(data[start:].split(b"\n")):
            yield i, line, pos, pos + len(line)
            pos += len(line) + 1
        return
    i = 0
    n = len(data)
    while start <= n:
        end = data.find(b"\n", start)
        if end < 0:
            end = n
        yield i, (data[start:end] if end - start <= MAX_LINE_BYTES else None), start, end
        i += 1
        start = end + 1


def parse_jsonl(data: bytes, path: Path) -> JsonlRead:
    """Parse file bytes; split on ``\\r?\\n``, skip blank lines, report the rest that fail."""
    out = JsonlRead(size=len(data))
    lines = list(_lines(data))
    if all(line is not None for _, line, _, _ in lines):
        fast = _parse_all([line.decode("utf-8", "surrogateescape") for _, line, _, _ in lines if line is not None])
        if fast is not None:
            for i, value in fast:
                out.rows.append(value)
                out.line_nos.append(i + 1)
            return out
    last = len(lines) - 1
    torn_tail = bool(data) and not data.endswith(b"\n")
    view = memoryview(data)
    for i, line, start, end in lines:
        if line is None:
            preview = bytes(view[start:start + _PREVIEW]).decode("utf-8", "replace")
            out.bad.append(BadLine(path, i + 1, f"line of {end - start:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit (not read)",
                                   preview + "…", raw=view[start:end]))
            continue
        raw = line.decode("utf-8", "surrogateescape")
        text = raw.strip()
        if not text:
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError, MemoryError) as exc:
            torn = i == last and torn_tail and isinstance(exc, json.JSONDecodeError)
            why = "torn final line (no newline: a crash mid-append?)" if torn else _why_unreadable(exc)
            out.bad.append(BadLine(path, i + 1, why, raw))
            continue
        if not isinstance(value, dict):
            out.bad.append(BadLine(path, i + 1, f"not a JSON object (a {type(value).__name__})", raw))
            continue
        out.rows.append(value)
        out.line_nos.append(i + 1)
    return out


# Every ASCII digit to "0", every other byte to " ": a run of 19 digits is then found by a plain
# substring search (a regex ``[0-9]{19}`` tries every position: 12 ms per MB against 1 ms).
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_DIGIT_RUN = b"0" * 19


def long_digit_run(data: bytes) -> bool:
    """Whether ``data`` holds 19 ASCII digits in a row (where orjson may lose an integer)."""
    return _DIGIT_RUN in data.translate(_DIGITS_ONLY)


def fast_loads(text: str | bytes) -> Any:
    """``orjson.loads`` where it gives exactly what ``json.loads`` gives (twice as fast): it refuses
    NaN, lone surrogates and deep nesting (a ``ValueError``: the caller reads with ``json``), but
    turns an integer beyond 64 bits into a float without a word, so a text with a run of 19
    digits or more is refused here too; ``ImportError`` without orjson."""
    import orjson

    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if long_digit_run(data):
        raise ValueError("a long run of digits: read with json, which keeps big integers exact")
    return orjson.loads(text)


def _parse_all(lines: list[str]) -> list[tuple[int, Any]] | None:
    """Parse every line in one ``json.loads`` call; ``None`` when any line needs the slow path."""
    idx = [i for i, raw in enumerate(lines) if raw.strip()]
    if not idx:
        return []
    text = "[" + ",".join(lines[i] for i in idx) + "]"
    try:
        values = fast_loads(text)
    except (ImportError, ValueError, RecursionError, MemoryError):
        try:
            values = json.loads(text)
        except (ValueError, RecursionError, MemoryError):
            return None
    if len(values) != len(idx) or not all(isinstance(v, dict) for v in values):
        return None  # a line held two values ("1,2") or a non-object: let the slow path say where
    return list(zip(idx, values, strict=True))


def read_bytes(path: Path) -> bytes:
    """A store file's bytes (empty when missing), after carrying over what another program
    appended to a previous generation of it (it opened the file before our last rewrite and
    wrote after it; see ``generations``). For JSONL and for appended text (daily logs) alike."""
    if os.path.lexists(path.with_name(f".{path.name}.tmp-gens")):  # generations.state_path
        from commonkeep.store.generations import settle

        late = settle(path)
        if late is not None:  # the root is read-only: read the late lines without carrying them
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                data = b""
            return joined(data, late)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def read_jsonl(path: Path) -> JsonlRead:
    """Read a JSONL file; a missing file reads as empty. Late lines are carried over first."""
    data = read_bytes(path)
    return parse_jsonl(data, path) if data else JsonlRead()


def joined(data: bytes, more: bytes) -> bytes:
    """``data`` then ``more``, with a newline between them when ``data`` ends in a partial line."""
    if not more:
        return data
    return data + (b"\n" if data and not data.endswith(b"\n") else b"") + more


def write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def encode_rows(rows: list[Row]) -> bytes:
    """Rows as JSONL bytes (JSON.stringify parity, one ``\n`` after each)."""
    fast = fast_rows(rows)  # orjson, where it writes the same bytes (``jsonfast``)
    if fast is not None:
        return fast
    return _encode_rows(rows)


def _encode_rows(rows: list[Row]) -> bytes:
    """``encode_rows`` by ``dumps_line``: any row."""
    text = "".join(dumps_line(r) + "\n" for r in rows)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escape them line by line as JS does
        return b"".join(encode_line(r) + b"\n" for r in rows)


def _glued(fd: int, start: int) -> bool:
    """Whether the bytes before ``start`` (where our write began) are an unfinished line."""
    if start <= 0:
        return False
    window = os.pread(fd, min(start, 4096), max(0, start - 4096))
    if window.endswith(b"\n"):
        return False
    cut = window.rfind(b"\n")
    if cut < 0 and start > len(window):
        return True  # a partial line longer than the window: certainly not just blanks
    return bool(window[cut + 1:].strip())


def append_bytes(fd: int, data: bytes) -> None:
    """Append whole lines on an ``O_APPEND`` descriptor; never leave them glued to a partial line."""
    write_all(fd, data)
    end = os.lseek(fd, 0, os.SEEK_CUR)  # O_APPEND: the offset is the end of our own write
    if _glued(fd, end - len(data)):
        # Someone's partial line sat at the end of the file when our write landed: the glued
        # line is a bad line now (reported and quarantined on the next read); write ours again.
        write_all(fd, b"\n" + data)


def append_jsonl(path: Path, rows: list[Row], *, fsync: bool | None = None) -> None:
    """Append whole lines in one write under the file's lock."""
    if not rows:
        return
    data = encode_rows(rows)
    if fsync is None:
        fsync = os.environ.get("COMMONKEEP_FSYNC") == "1"
    refuse_symlink(path)
    with file_lock(path):  # makes the folder when it is missing
        append_locked(path, data, fsync)


def append_locked(path: Path | str, data: bytes, fsync: bool) -> None:
    """Append ``data`` (whole lines) to ``path`` in one ``O_APPEND`` write, synced when ``fsync``; the
    caller holds the file's lock and has refused a symlink (``append_jsonl``, ``appender.Appender``)."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, NEW_FILE_MODE)
    try:
        append_bytes(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def _spill(quarantine: Path, key: str, raw: bytes | memoryview) -> str:
    """Keep a line too long for ``lines.jsonl`` in a file of its own; returns its name."""
    from commonkeep.secrets import redact

    dest = quarantine.with_name(f"line-{key}.txt")
    if not dest.exists():  # the line as it was, its secrets redacted (bytes that are not UTF-8 kept)
        clean = redact(bytes(raw).decode("utf-8", "surrogateescape")).text
        atomic_write_bytes(dest, clean.encode("utf-8", "surrogateescape"))
    return dest.name


def quarantine_lines(quarantine: Path, bad: list[BadLine], rel: Callable[[Path], str], when: str) -> int:
    """Copy bad lines into the quarantine file (once each, secrets redacted); returns how many were new."""
    if not bad:
        return 0
    from commonkeep.secrets import redact

    seen = {r.get("key") for r in read_jsonl(quarantine).rows}
    fresh = []
    for b in bad:
        digest = sha256(f"{rel(b.path)}\n{b.line_no}\n".encode())
        if b.raw is not None:
            digest.update(b.raw)
        else:
            digest.update(b.text.encode("utf-8", "surrogateescape"))
        key = digest.hexdigest()[:24]
        if key in seen:
            continue
        seen.add(key)
        # the text as it was, but never a secret: a bad line a rewrite leaves out lives on only here
        entry: Row = {"key": key, "file": rel(b.path), "line": b.line_no, "error": b.error, "text": redact(b.text).text,
                      "quarantined_at": when}
        if b.raw is not None:
            entry["saved_to"] = rel(quarantine.with_name(_spill(quarantine, key, b.raw)))
            entry["bytes"] = len(b.raw)
        fresh.append(entry)
    append_jsonl(quarantine, fresh, fsync=True)
    return len(fresh)


def mode_for(path: Path) -> int:
    """The mode a rewrite of ``path`` keeps: the file's own, or owner-only for a new file."""
    try:
        return os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return NEW_FILE_MODE


def fsync_dir(folder: Path) -> None:
    dfd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def write_temp(path: Path, data: bytes | memoryview, mode: int) -> tuple[str, int]:
    """Write ``data`` to a new temp file next to ``path`` (fsynced); returns its path and inode."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        if mode != NEW_FILE_MODE:
            os.fchmod(fd, mode)  # mkstemp creates 0600; keep the mode the user gave the file
        write_all(fd, data)
        os.fsync(fd)
        ino = os.fstat(fd).st_ino
    except BaseException:
        os.close(fd)
        with suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp, ino


def atomic_write_bytes(path: Path, data: bytes | memoryview) -> None:
    """Write a whole file through a temp file in the same folder, fsync and rename.

    For files no other program appends to (patches, reports, rendered pages). Files OMP appends
    to are rewritten with ``rewrite_jsonl``, which keeps what lands in the old file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_symlink(path)
    tmp, _ = write_temp(path, data, mode_for(path))
    try:
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def rewrite_bytes(path: Path, build: Callable[[bytes], bytes]) -> None:
    """Rewrite any file another program may append to (a daily log, ``runtime/events.jsonl``):
    ``build`` gets its whole lines and returns the new content; nothing appended meanwhile is lost."""
    from commonkeep.store.generations import replace

    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_symlink(path)
    with file_lock(path):
        replace(path, build)


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
    repaired for readers that cannot skip bad lines (OMP) and nothing is lost. Lines another
    program appends while we work are never lost (``generations``).
    """
    from commonkeep.store.generations import replace

    path.parent.mkdir(parents=True, exist_ok=True)
    refuse_symlink(path)
    seen: list[JsonlRead] = []

    def build(data: bytes) -> bytes:
        read = parse_jsonl(data, path)
        quarantine_lines(quarantine, read.bad, rel, when)
        seen.append(read)
        return encode_rows(transform(list(read.rows)))

    with file_lock(path):
        replace(path, build)
    return seen[-1] if seen else JsonlRead()
