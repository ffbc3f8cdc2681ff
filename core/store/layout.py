"""The OmpKeep directory layout of a memory root (contracts/ompkeep-store.md §2).

``ensure_layout`` creates exactly what upstream's ``ensureMemoryDirs`` creates, plus two
commonkeep folders: ``quarantine/`` (bad lines kept aside) and ``locks/`` (writer and file locks).

Who can read it: a new root and its folders are created ``0700`` and new files ``0600`` (owner
only); folders and files that exist keep the modes the user gave them.

Linked folders: a folder of the root (``inbox/``, ``memory/``, ``search/`` …) that is a symlink
leading outside the root is refused: every command that uses the root stops with an error
naming the folder (``commonkeep doctor`` still runs and lists every such link). A link that
stays inside the root is allowed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

_SLUG = re.compile(r"[^a-z0-9]+")
DIR_MODE = 0o700
FILE_MODE = 0o600
# Every folder of a root, relative to it (what ``ensure_layout`` creates, plus quarantine and locks).
FOLDERS = (
    "schemas", "memory", "memory/projects", "daily", "inbox", "patches", "rendered", "rendered/projects",
    "runtime", "runtime/compaction-artifacts", "reports", "reports/handoff", "reports/diagnostics",
    "search", "sessions", "sessions/summaries", "quarantine", "locks",
)
_ROOTS: set[str] = set()  # roots this process has opened: their folders are checked on every write


def escaping_links(root: Path | str) -> list[tuple[str, str]]:
    """``(folder, target)`` for each folder of ``root`` that is a symlink leading outside it."""
    base = os.fspath(root)
    found = []
    real = None
    for rel in FOLDERS:
        p = os.path.join(base, rel)
        if os.path.islink(p):
            real = real or os.path.realpath(base)
            target = os.path.realpath(p)
            if target != real and not target.startswith(real + os.sep):
                found.append((rel, target))
    return found


def linked_folder_error(root: Path | str, rel: str, target: str) -> Exception:
    from commonkeep.errors import BadInput

    return BadInput(
        f"{rel}/ in the memory root {root} is a symlink to {target}, outside the root; "
        "commonkeep writes nothing through it",
        hint=f"move the folder's content back into {os.path.join(os.fspath(root), rel)} (a real folder, "
             "or a link that stays inside the root); `commonkeep doctor` lists every such link",
    )


def check_links(root: Path | str) -> None:
    """Raise ``BadInput`` naming the first folder of ``root`` that links outside it."""
    for rel, target in escaping_links(root):
        raise linked_folder_error(root, rel, target)


def guard_path(path: Path | str) -> None:
    """Refuse a write to ``path`` when a folder between its root and it links outside the root."""
    p = os.fspath(path)
    for root in _ROOTS:
        if p.startswith(root + os.sep):
            parts = p[len(root) + 1:].split(os.sep)[:-1]
            cur = root
            for i, part in enumerate(parts):
                cur = os.path.join(cur, part)
                if os.path.islink(cur):
                    target = os.path.realpath(cur)
                    real = os.path.realpath(root)
                    if target != real and not target.startswith(real + os.sep):
                        raise linked_folder_error(root, "/".join(parts[: i + 1]), target)
            return


def slug(text: str) -> str:
    """Project slug: lowercase, runs outside ``[a-z0-9]`` become ``-``, trimmed; empty -> ``project``."""
    return _SLUG.sub("-", text.lower()).strip("-") or "project"


def record_file(record: dict[str, Any]) -> str:
    """The canonical file (relative to the root) a record lives in (contract §2.2)."""
    scope = record.get("scope") or {}
    if scope.get("type") == "project":
        return f"memory/projects/{slug(str(scope.get('project') or ''))}.jsonl"
    return "memory/L1.identity.jsonl" if record.get("layer") == "L1" else "memory/L2.playbooks.jsonl"


class Layout:
    """Paths of one memory root. Creating a ``Layout`` writes nothing; it refuses a root with a
    folder that links outside it (``check=False``: doctor, which reports them)."""

    def __init__(self, root: Path | str, *, check: bool = True) -> None:
        self.root = Path(root)
        r = self.root
        if check:
            check_links(r)
            _ROOTS.add(os.fspath(r))
        self.config = r / "config.json"
        self.schemas_dir = r / "schemas"
        self.scratchpad = r / "scratchpad.md"
        self.memory_dir = r / "memory"
        self.l1 = self.memory_dir / "L1.identity.jsonl"
        self.l2 = self.memory_dir / "L2.playbooks.jsonl"
        self.profiles = self.memory_dir / "profiles.jsonl"
        self.evidence = self.memory_dir / "evidence.jsonl"
        self.tombstones = self.memory_dir / "tombstones.jsonl"
        self.reinforcement = self.memory_dir / "reinforcement.jsonl"
        self.inquiries = self.memory_dir / "inquiries.jsonl"
        self.projects_dir = self.memory_dir / "projects"
        self.daily_dir = r / "daily"
        self.inbox = r / "inbox" / "captured.jsonl"
        self.patches_dir = r / "patches"
        self.rendered_dir = r / "rendered"
        self.rendered_memory = self.rendered_dir / "MEMORY.md"
        self.rendered_projects_dir = self.rendered_dir / "projects"
        self.runtime_dir = r / "runtime"
        self.events = self.runtime_dir / "events.jsonl"
        self.reports_dir = r / "reports"
        self.handoff_dir = self.reports_dir / "handoff"
        self.diagnostics_dir = self.reports_dir / "diagnostics"
        self.search_dir = r / "search"
        self.search_db = self.search_dir / "memory-fts.db"
        self.sessions_dir = r / "sessions"
        self.quarantine_dir = r / "quarantine"
        self.quarantine = self.quarantine_dir / "lines.jsonl"
        self.lock_dir = r / "locks"

    def project_file(self, project: str) -> Path:
        return self.projects_dir / f"{slug(project)}.jsonl"

    def daily_file(self, date: str) -> Path:
        return self.daily_dir / f"{date}.md"

    def canonical_files(self) -> list[Path]:
        """The record files in render order: L1, L2, then project files sorted by name.

        Upstream reads project files in directory-listing order, which differs across
        filesystems (§14.7); commonkeep sorts them so renders are stable everywhere.
        """
        projects = sorted(self.projects_dir.glob("*.jsonl")) if self.projects_dir.is_dir() else []
        return [self.l1, self.l2, *projects]

    def jsonl_files(self) -> list[Path]:
        """Every JSONL file of the store (for doctor and quarantine checks)."""
        return [
            *self.canonical_files(),
            self.profiles,
            self.evidence,
            self.tombstones,
            self.reinforcement,
            self.inquiries,
            self.inbox,
        ]

    def rel(self, path: Path) -> str:
        """``path`` relative to the root, for messages and quarantine entries."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)


def ensure_layout(root: Path | str) -> Layout:
    """Create the layout (idempotent; existing files and their modes are never touched)."""
    lay = Layout(root)
    if lay.root.exists() and not lay.root.is_dir():
        from commonkeep.errors import BadInput

        raise BadInput(f"the memory root {lay.root} is a file, not a folder",
                       hint="point --root (or $OMP_MEMORY_ROOT) at a folder; `commonkeep init` creates it")
    if not lay.root.is_dir():
        # owner only (issue 18); the umask can only narrow it; parents get the usual mode
        lay.root.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    for d in (
        lay.root,
        lay.schemas_dir,
        lay.memory_dir,
        lay.projects_dir,
        lay.daily_dir,
        lay.inbox.parent,
        lay.patches_dir,
        lay.rendered_dir,
        lay.rendered_projects_dir,
        lay.runtime_dir,
        lay.runtime_dir / "compaction-artifacts",
        lay.reports_dir,
        lay.handoff_dir,
        lay.diagnostics_dir,
        lay.search_dir,
        lay.sessions_dir,
        lay.sessions_dir / "summaries",
    ):
        if not d.is_dir():
            d.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    for f in (lay.l1, lay.l2, lay.profiles, lay.evidence, lay.tombstones, lay.reinforcement, lay.inquiries, lay.inbox):
        if not f.exists():
            _create(f, b"")
    if not lay.scratchpad.exists():
        _create(lay.scratchpad, b"# Scratchpad\n\n")
    return lay


def _create(path: Path, data: bytes) -> None:
    """Create ``path`` owner-only with ``data``; a file another process created first is kept."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return
    try:
        if data:
            os.write(fd, data)
    finally:
        os.close(fd)


def is_record_file(path: str) -> bool:
    """A canonical record file (L1, L2, a project file): only their lines are memory statements."""
    return path in ("memory/L1.identity.jsonl", "memory/L2.playbooks.jsonl") or (
        path.startswith("memory/projects/") and path.endswith(".jsonl") and "/" not in path[len("memory/projects/"):]
    )
