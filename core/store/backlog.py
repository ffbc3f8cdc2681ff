"""How many candidates wait for review, and since when: the queue that announces itself (issue 36).

``backlog(root)`` counts the inbox's candidates whose status is ``new`` and finds the oldest one's
``created_at``, without parsing the inbox: one regular-expression pass over each line's bytes
(a line with no status, or with more than one, is parsed as JSON instead). At 10,000 pending it
costs a few milliseconds, and the answer is remembered per file state in this process.

Every surface says it in the same words (``Backlog.line``): the Hermes and OMP session starts,
``commonkeep doctor``, the web app's title, the recall block's footer, and the digest file
``reports/review-digest.txt`` (``write_digest``), rewritten when the count changes or a new day
starts, for a notifier to watch.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from commonkeep.store.layout import Layout

_STATUS = re.compile(rb'"status"\s*:\s*"([^"\\]*)"')
_CREATED = re.compile(rb'"created_at"\s*:\s*"([^"\\]{10,40})"')
DIGEST = "review-digest.txt"
_memo: dict[str, tuple[tuple[int, int, int], Backlog]] = {}
_lock = threading.Lock()


def _when(iso: str) -> datetime | None:
    try:
        dt = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def age_words(iso: str | None, now: datetime | None = None) -> str:
    """How long ago ``iso`` was, in the largest unit that fits: ``just now``, ``12 min``, ``3 h``,
    ``2 days``, ``8 weeks``, ``5 months``, ``2 years`` (empty for no or an unreadable time)."""
    then = _when(iso) if iso else None
    if then is None:
        return ""
    if now is None:
        from commonkeep.util.timeutil import now as clock

        now = clock()
    secs = max(0, int((now - then).total_seconds()))
    mins, hours, days = secs // 60, secs // 3_600, secs // 86_400
    if secs < 60:
        return "just now"
    if hours < 1:
        return f"{mins} min"
    if hours < 48:
        return f"{hours} h"
    if days < 14:
        return f"{days} days"
    if days < 63:
        return f"{days // 7} weeks"
    if days < 365:
        return f"{days // 30} months"
    years = days // 365
    return f"{years} year{'s' if years > 1 else ''}"


def ago(iso: str | None, now: datetime | None = None) -> str:
    """``3 h ago`` (``just now`` stays as it is; empty for no time)."""
    words = age_words(iso, now)
    return words if words in ("", "just now") else words + " ago"


@dataclass(frozen=True)
class Backlog:
    """The candidates waiting for a person's decision."""

    count: int
    oldest: str | None  # the oldest waiting candidate's created_at (ISO), None when none waits

    def age(self, now: datetime | None = None) -> str:
        return age_words(self.oldest, now)

    def line(self, now: datetime | None = None) -> str:
        """``12 memories wait for review (oldest 8 weeks): run `commonkeep review``` (empty when none)."""
        if not self.count:
            return ""
        age = self.age(now)
        verb = "memory waits" if self.count == 1 else "memories wait"
        return f"{self.count} {verb} for review" + (f" (oldest {age})" if age else "") + ": run `commonkeep review`"


def _scan(data: bytes) -> Backlog:
    count, oldest = 0, None
    for line in data.split(b"\n"):
        found = _STATUS.findall(line)
        if not found:
            continue
        if len(found) == 1:
            if found[0] != b"new":
                continue
            m = _CREATED.search(line)
            created = m.group(1).decode("utf-8", "replace") if m else None
        else:  # a status key in a nested object too: read the line properly
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(row, dict) or row.get("status") != "new":
                continue
            created = row.get("created_at") if isinstance(row.get("created_at"), str) else None
        count += 1
        if created and _when(created) is not None and (oldest is None or _when(created) < _when(oldest)):  # type: ignore[operator]
            oldest = created
    return Backlog(count, oldest)


def backlog(root: Path | str) -> Backlog:
    """The count and the oldest waiting candidate of ``root``'s inbox (``Backlog(0, None)`` when
    there is no inbox or it cannot be read)."""
    inbox = Layout(Path(root)).inbox
    try:
        st = inbox.stat()
    except OSError:
        return Backlog(0, None)
    key = (st.st_ino, st.st_mtime_ns, st.st_size)
    with _lock:
        hit = _memo.get(str(inbox))
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        data = inbox.read_bytes()
    except OSError:
        return Backlog(0, None)
    found = _scan(data)
    with _lock:
        _memo[str(inbox)] = (key, found)
    return found


def digest_path(root: Path | str) -> Path:
    return Layout(Path(root)).root / "reports" / DIGEST


def digest_text(b: Backlog, now: datetime | None = None) -> str:
    from commonkeep.util.timeutil import now as clock

    when = now or clock()
    return "\n".join([
        b.line(when) or "No memory waits for review.",
        f"waiting: {b.count}",
        f"oldest: {b.oldest or '-'}",
        f"date: {when.strftime('%Y-%m-%d')}",
    ]) + "\n"


def write_digest(root: Path | str, b: Backlog | None = None) -> Path | None:
    """Rewrite ``reports/review-digest.txt`` when what it says changed (the count, the oldest
    candidate or the day); returns the path, or None when it could not be written (a read-only
    root: the digest is a convenience, never a reason to fail)."""
    from commonkeep.store.jsonl import atomic_write_bytes

    b = b if b is not None else backlog(root)
    path = digest_path(root)
    text = digest_text(b)
    try:
        if path.read_text(encoding="utf-8").split("\n", 1)[1:] == text.split("\n", 1)[1:]:
            return path  # same count, same oldest, same day: the file (and its mtime) stay
    except (OSError, UnicodeDecodeError):
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode("utf-8"))
    except OSError:
        return None
    return path
