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


_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")  # what our writers write: sorts as text


def _key(created: str | None) -> str | None:
    """A sort key for a created_at: itself when canonical, else its UTC canonical form."""
    if not created:
        return None
    if _CANONICAL.fullmatch(created):
        return created
    when = _when(created)
    if when is None:
        return None
    from commonkeep.util.timeutil import iso

    return iso(when)


_CANONICAL_RUN = re.compile(rb"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)*")
_CREATED_KEY = b'"created_at":"'


def _fast(data: bytes) -> Backlog | None:
    """The usual inbox in a few C-level passes: each line's compact ``"status":"new"`` and the
    24 characters after its ``"created_at":"``; None when any line is not plain (a spaced or a
    second status, a created_at not as our writers write it): ``_scan`` reads line by line then."""
    if data.count(b'"status"') != data.count(b'"status":"'):
        return None
    lines = data.split(b"\n")
    with_status = [ln for ln in lines if b'"status"' in ln]
    if len(with_status) != data.count(b'"status"'):
        return None  # a line with two
    new = [ln for ln in with_status if b'"status":"new"' in ln]
    starts = [ln.find(_CREATED_KEY) + 14 for ln in new]
    times = [ln[at: at + 24] if at >= 14 else b"" for ln, at in zip(new, starts, strict=True)]
    if not _CANONICAL_RUN.fullmatch(b"".join(times)) or any(len(t) != 24 for t in times):
        return None
    return Backlog(len(new), min(times).decode("ascii") if times else None)


def _scan(data: bytes) -> Backlog:
    fast = _fast(data)
    if fast is not None:
        return fast
    count, oldest, oldest_key = 0, None, None
    for line in data.split(b"\n"):
        n = line.count(b'"status"')
        if not n:
            continue
        created: str | None
        if n == 1 and b'"status":"' in line:  # the usual compact line: no regex, no parse
            if b'"status":"new"' not in line:
                continue
            at = line.find(b'"created_at":"')
            created = line[at + 14: line.find(b'"', at + 14)].decode("utf-8", "replace") if at >= 0 else None
        elif n == 1:  # spaced by another writer
            found = _STATUS.search(line)
            if not found or found.group(1) != b"new":
                continue
            m = _CREATED.search(line)
            created = m.group(1).decode("utf-8", "replace") if m else None
        else:  # a status key in a nested object too (or quoted in a text): read the line properly
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if not isinstance(row, dict) or row.get("status") != "new":
                continue
            created = row.get("created_at") if isinstance(row.get("created_at"), str) else None
        count += 1
        key = _key(created)
        if key is not None and (oldest_key is None or key < oldest_key):
            oldest, oldest_key = created, key
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
    candidate or the day); returns the path, or None when it was not written (an empty queue with
    no digest yet, or a read-only root: the digest is a convenience, never a reason to fail)."""
    from commonkeep.store.jsonl import atomic_write_bytes

    b = b if b is not None else backlog(root)
    path = digest_path(root)
    text = digest_text(b)
    try:
        if path.read_text(encoding="utf-8").split("\n", 1)[1:] == text.split("\n", 1)[1:]:
            return path  # same count, same oldest, same day: the file (and its mtime) stay
    except (OSError, UnicodeDecodeError):
        if not b.count:
            return None  # nothing waits and no digest yet: no file is made for an empty queue
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, text.encode("utf-8"))
    except OSError:
        return None
    return path
