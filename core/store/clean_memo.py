"""What one process found out about a store file's bytes, remembered for the next process.

``line_edit`` edits a few lines of a large JSONL file only when every line is a JSON object
(``clean``) and, for its byte search, when every line is in the usual layout (``plain``). Checking
that costs a parse of the whole file (about 20 ms for an inbox of 10,000 candidates): a process
remembers what it checked, but ``commonkeep review --approve`` is a new process each time. So the
leading bytes found clean or plain are kept in ``runtime/line-edit.json``, per file, as their
length and CRC-32; the next process checks only the bytes after them, once the file's
first bytes hash the same (what an appending writer added since, or nothing). ``record_lines``
keeps a third kind for the record files, ``records``: the leading bytes whose every line was found
to be a valid memory record (``isMemoryRecord``), which the next decision does not check again.

The memo is a cache: a missing, unreadable, torn or stale file, or a file whose bytes changed, is
simply checked whole again. It is written without fsync and shared by every file of a root, so two
processes may overwrite each other's entries; a lost entry costs one whole check, and an old entry
still describes bytes that were clean (it is used only when the file starts with exactly those).
``runtime/`` is machine-local and never shared.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

NAME = "line-edit.json"
KINDS = ("clean", "plain", "records")
Memo = dict[str, dict[str, list[int]]]  # file -> kind -> [length, crc32]


VERSION = 2  # version 1 kept an Adler-32 too: a second pass over a 56 MB record file, twice an apply


def digest(data: bytes | memoryview) -> list[int]:
    return [len(data), zlib.crc32(data)]


def load(memo: Path) -> Memo:
    """The remembered entries (empty when the file is missing or not ours)."""
    try:
        raw: Any = json.loads(memo.read_bytes())
    except (OSError, ValueError):
        return {}
    files = raw.get("files") if isinstance(raw, dict) and raw.get("version") == VERSION else None
    return files if isinstance(files, dict) else {}


def recalled(entries: Memo, path: Path, data: bytes, kinds: tuple[str, ...] = KINDS) -> dict[str, int]:
    """For each of ``kinds``, how many leading bytes of ``data`` an earlier process found to be of
    that kind (0 when none match; only the kinds asked for are hashed)."""
    entry = entries.get(str(path))
    out = dict.fromkeys(KINDS, 0)
    hashed: dict[int, list[int]] = {}  # the kinds mostly cover the same bytes: hashed once
    for kind in kinds:
        got = entry.get(kind) if isinstance(entry, dict) else None
        if not (isinstance(got, list) and len(got) == 2 and all(type(x) is int for x in got)):
            continue
        size = got[0]
        if not 0 < size <= len(data) or data[size - 1:size] != b"\n":
            continue
        if size not in hashed:
            hashed[size] = digest(memoryview(data)[:size])
        out[kind] = size if hashed[size] == got else 0
    return out


def remember(memo: Path, path: Path, found: dict[str, bytes | None]) -> None:
    """Keep, for ``path``, the bytes found of each kind in ``found`` (``None``: none known); the
    kinds ``found`` does not name and the other files' entries are kept. Best effort: a root that
    cannot take the file loses nothing."""
    entries = load(memo)
    hashed: dict[int, list[int]] = {}
    old = entries.get(str(path))
    entry: dict[str, list[int]] = {k: v for k, v in old.items() if k not in found} if isinstance(old, dict) else {}
    for kind, data in found.items():
        if data:
            entry[kind] = hashed.get(id(data)) or hashed.setdefault(id(data), digest(data))
    if entry:
        entries[str(path)] = entry
    else:
        entries.pop(str(path), None)
    tmp = memo.with_name(f".{memo.name}.{os.getpid()}.tmp")
    body = json.dumps({"version": VERSION, "files": entries}, sort_keys=True).encode("utf-8")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return  # a leftover of a killed process (or a planted link): try again next time
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
        os.replace(tmp, memo)
    except OSError:
        tmp.unlink(missing_ok=True)
