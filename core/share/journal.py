"""The sync journal: the work a ``share sync`` owes, on disk before it starts (ids, never text).

``<git dir>/commonkeep-sync.json`` is written before the first step that changes anything and
removed when the sync has finished: ``stage`` (``commit``, ``merge``, ``settle``, ``publish``),
the process id, ``ours`` and ``theirs`` (the two commits being merged), and the ids the merge
must treat as deleted (``tombstoned``) and purged for privacy (``purged``). A sync that dies
anywhere leaves it behind; the next sync (and ``commonkeep doctor``) reads it, recovers what the
dead sync left (its stale ``.git/index.lock``, git's ``.merge_file_*`` temp files, a merge cut
off part-way) and finishes the scrub. The texts to scrub are found again in the commits the
journal names, which git never changes, so nothing secret is written here.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.share.merge import JOURNAL_NAME
from commonkeep.util.timeutil import now_iso

STAGES = ("commit", "merge", "settle", "publish")


@dataclass
class Journal:
    stage: str = "commit"
    pid: int = 0
    started_at: str = ""
    ours: str | None = None
    theirs: str | None = None
    tombstoned: list[str] = field(default_factory=list)
    purged: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def path_in(gitdir: Path) -> Path:
    return gitdir / JOURNAL_NAME


def load(gitdir: Path) -> Journal | None:
    """The journal a sync left, or ``None``; a journal that does not parse is treated as one
    from a sync that died before its first step (nothing to resume, recovery still runs)."""
    path = path_in(gitdir)
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        return Journal(stage="commit")
    if not isinstance(raw, dict):
        return Journal(stage="commit")
    j = Journal()
    stage, pid = raw.get("stage"), raw.get("pid")
    j.stage = stage if isinstance(stage, str) and stage in STAGES else "commit"
    j.pid = pid if isinstance(pid, int) else 0
    j.started_at = str(raw.get("started_at") or "")
    for key in ("ours", "theirs"):
        value = raw.get(key)
        setattr(j, key, value if isinstance(value, str) and value else None)
    for key in ("tombstoned", "purged"):
        value = raw.get(key)
        setattr(j, key, sorted({x for x in value if isinstance(x, str)}) if isinstance(value, list) else [])
    return j


def save(gitdir: Path, j: Journal) -> None:
    if not j.pid:
        j.pid = os.getpid()
    if not j.started_at:
        j.started_at = now_iso()
    path = path_in(gitdir)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (json.dumps(j.as_dict(), sort_keys=True) + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def clear(gitdir: Path) -> None:
    path_in(gitdir).unlink(missing_ok=True)


def wait_for_lock_release(lock: Path, seconds: float = 2.0) -> bool:
    """A git child of a killed sync may still be finishing: give it ``seconds`` to let go."""
    deadline = time.monotonic() + seconds
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not lock.exists()
