"""Helpers of the multi-machine tests: a bare remote and clones, real git, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.store.test_share import L2, WRITER, cli, git, record

__all__ = ["L2", "WRITER", "cli", "git", "record", "clone", "holders", "remote_holders", "manual_patch", "sync_killed"]


def clone(remote: Path, where: Path) -> Path:
    from commonkeep.store.layout import ensure_layout

    subprocess.run(["git", "clone", "-q", str(remote), str(where)], check=True)
    ensure_layout(where)
    from commonkeep.share.setup import init

    init(where)
    return where


def holders(root: Path, *texts: str) -> list[str]:
    """Every file of ``root``'s working tree (``.git`` aside) that holds one of ``texts``, with the
    SQLite search databases read as bytes."""
    found = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or ".git" in path.relative_to(root).parts:
            continue
        data = path.read_bytes()
        for t in texts:
            if t.encode("utf-8") in data or json.dumps(t)[1:-1].encode("utf-8") in data:
                found.append(f"{path.relative_to(root)}: {t[:40]}")
    return found


def remote_holders(remote: Path, *texts: str) -> list[str]:
    """Files of the remote's HEAD that hold one of ``texts``."""
    found = []
    for t in texts:
        res = subprocess.run(["git", "grep", "-l", "-F", "-e", t, "HEAD"], cwd=remote, capture_output=True, text=True)
        found += [f"{line}: {t[:40]}" for line in res.stdout.splitlines()]
    return found


def manual_patch(suffix: str, *ops: dict[str, Any]) -> dict[str, Any]:
    return {"patch_id": f"patch_202612020000_ck{suffix}", "created_at": "2026-12-02T00:00:00.000Z",
            "generated_by": "manual", "applied_at": None, "applied_ops": [], "skipped_ops": [], "mode": "supervised",
            "status": "proposed", "summary": "test", "ops": [{"op_id": f"op_{i:03d}", "risk": "low", "default_selected": True, **o}
                                                            for i, o in enumerate(ops, 1)]}


_KILLER = """
import os, signal, sys
import commonkeep.share.sync as s
step = sys.argv[2]
def checkpoint(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)
s.checkpoint = checkpoint
s.sync(sys.argv[1], role=sys.argv[3])
"""


def sync_killed(root: Path, step: str) -> int:
    """Run a sync in its own process and SIGKILL it at ``step`` (a checkpoint); returns its exit code."""
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(root), step, WRITER], capture_output=True, text=True,
                          timeout=120, start_new_session=True)
    return proc.returncode


def kill_group_hook(root: Path, hook: str, only_merges: bool = False) -> None:
    """A git hook that SIGKILLs the whole process group (the sync and its git) when it runs."""
    path = root / ".git" / "hooks" / hook
    cond = 'git rev-parse -q --verify HEAD^2 >/dev/null || exit 0\n' if only_merges else ""
    path.write_text(f"#!/bin/sh\n{cond}rm -f \"$0\"\nkill -9 0\n", encoding="utf-8")
    path.chmod(0o755)


def run_sync_process(root: Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from commonkeep.cli import main; raise SystemExit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, "share", "sync", "--root", str(root), "--role", WRITER],
                          capture_output=True, text=True, timeout=120, start_new_session=True)

