"""The OmpKeep directory layout of a memory root (contracts/ompkeep-store.md §2).

``ensure_layout`` creates exactly what upstream's ``ensureMemoryDirs`` creates, plus two
commonkeep folders: ``quarantine/`` (bad lines kept aside) and ``locks/`` (writer and file locks).
"""

from __future__ import annotations

import re
from pathlib import Path

_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    """Project slug: lowercase, runs outside ``[a-z0-9]`` become ``-``, trimmed; empty -> ``project``."""
    return _SLUG.sub("-", text.lower()).strip("-") or "project"


class Layout:
    """Paths of one memory root. Creating a ``Layout`` touches nothing on disk."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        r = self.root
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
    """Create the layout (idempotent; existing files are never touched)."""
    lay = Layout(root)
    if lay.root.exists() and not lay.root.is_dir():
        from commonkeep.errors import BadInput

        raise BadInput(f"the memory root {lay.root} is a file, not a folder",
                       hint="point --root (or $OMP_MEMORY_ROOT) at a folder; `commonkeep init` creates it")
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
        d.mkdir(parents=True, exist_ok=True)
    for f in (lay.l1, lay.l2, lay.profiles, lay.evidence, lay.tombstones, lay.reinforcement, lay.inquiries, lay.inbox):
        if not f.exists():
            f.touch()
    if not lay.scratchpad.exists():
        lay.scratchpad.write_text("# Scratchpad\n\n", encoding="utf-8")
    return lay
