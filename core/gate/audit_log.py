"""The audit log: ``audit/log.jsonl``, changes to who may write, one JSON line each.

Who may change the shared memory is ``config.json`` → ``"commonkeep": {"writerRole": ...}``. A
hand edit of that value changes the gate without any patch, so the gate itself notes it: every
gated action (``writer.require_writer``) compares the configured value with the last one this log
recorded and, when they differ, appends::

    {"event": "writer_role_changed", "from": "librarian", "to": "curator", "source": "config.json",
     "noticed_at": "...", "noticed_by": {"pid": 123, "role": "curator", "action": "apply"}}

``from``/``to`` are ``null`` when ``writerRole`` is not set (the default ``librarian`` applies).
The log records *when the change was first acted on*, not who edited the file (a file does not
say). ``$COMMONKEEP_WRITER_ROLE`` overrides the file for one process and is not a change of the
configuration, so it is not logged. The log is local to the root (``share`` does not sync it: a
clone notes a change when it first acts after receiving the new ``config.json``). Appending is
one ``write`` of one line to a file opened with ``O_APPEND``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from commonkeep.store.audit_lines import append_event
from commonkeep.store.layout import Layout
from commonkeep.util.timeutil import now_iso

EVENT = "writer_role_changed"


def log_path(root: Path | str) -> Path:
    return Path(root) / "audit" / "log.jsonl"


_READ: dict[str, tuple[tuple[int, int, int], str | None]] = {}  # config.json path -> (its stat, the value)
_CONFIG_PATHS: dict[str, str] = {}  # root -> its config.json


def configured_value(root: Path | str) -> str | None:
    """``config.json``'s ``commonkeep.writerRole`` as written (``None`` when unset or unreadable).

    Asked at every capture (the writer stamp), so the value is kept per file state (inode, mtime,
    size): an unchanged ``config.json`` is not read and parsed again."""
    key = os.fspath(root)
    path = _CONFIG_PATHS.get(key)
    if path is None:  # os.path, not pathlib (~5 µs less on every capture), and joined once a root
        path = _CONFIG_PATHS[key] = os.path.join(key, "config.json")
    try:
        st = os.stat(path)
    except OSError:
        return None
    state = (st.st_ino, st.st_mtime_ns, st.st_size)
    hit = _READ.get(path)
    if hit is not None and hit[0] == state:
        return hit[1]
    value = _configured_value(root)
    _READ[path] = (state, value)
    return value


def _configured_value(root: Path | str) -> str | None:
    try:
        data = json.loads(Layout(root).config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    section = data.get("commonkeep") if isinstance(data, dict) else None
    role = section.get("writerRole") if isinstance(section, dict) else None
    return role if isinstance(role, str) and role.strip() else None


def events(root: Path | str) -> list[dict[str, Any]]:
    """The log's events, oldest first (unreadable lines are skipped: a stray byte or a broken line
    costs that line only, never the gate)."""
    from commonkeep.store.audit_lines import read_events

    return read_events(log_path(root))


def last_recorded(root: Path | str) -> str | None:
    """The writer role the log last recorded (``None``: never set, the default applies)."""
    rows = [r for r in events(root) if r.get("event") == EVENT]
    value = rows[-1].get("to") if rows else None
    return value if isinstance(value, str) else None


def note_writer_role(root: Path | str, role: str | None, action: str) -> dict[str, Any] | None:
    """Append a ``writer_role_changed`` event when ``config.json``'s writer role differs from the
    last one recorded; returns the event (``None`` when nothing changed). An unwritable log is a
    warning on stderr, not a refusal: the gate's answer does not depend on it."""
    now = configured_value(root)
    before = last_recorded(root)
    if now == before:
        return None
    event = {"event": EVENT, "from": before, "to": now, "source": "config.json", "noticed_at": now_iso(),
             "noticed_by": {"pid": os.getpid(), "role": role, "action": action}}
    if not append_event(log_path(root), event, 0o644,
                        unwritten=f"the writer role changed from {before!r} to {now!r}"):
        return None
    return event
