"""One line appended to the root's audit log (``audit/log.jsonl``): what commonkeep noticed, never a value."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any


def append_event(path: Path, event: dict[str, Any], mode: int, *, unwritten: str) -> bool:
    """Append ``event`` as one JSON line to ``path`` (created with ``mode``); on an OS error, say so on
    stderr with ``unwritten`` (what the line would have said) and return False."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
        try:
            os.write(fd, (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        print(f"commonkeep: warning: could not append to {path}: {exc.strerror or exc}; {unwritten}", file=sys.stderr)
        return False
    return True


def read_events(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of the audit log at ``path``, oldest first; an unreadable line (a stray
    byte, a broken line) costs that line only, a missing or unreadable file gives none."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(row, dict):
            out.append(row)
    return out
