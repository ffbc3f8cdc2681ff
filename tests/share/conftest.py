"""Fixtures of the multi-machine tests: a bare remote and two or three clones (real git)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.share.helpers import clone
from tests.store import test_share

_git_env = test_share._git_env  # git identity and an isolated HOME for every test here


@pytest.fixture
def remote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A bare remote that machine A created and pushed to."""
    from commonkeep.share.setup import init
    from commonkeep.share.sync import sync
    from commonkeep.store.layout import ensure_layout

    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    a = ensure_layout(tmp_path / "a").root
    init(a, remote_url=str(bare))
    sync(a, role=test_share.WRITER)
    return bare


@pytest.fixture
def three(remote: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Machines A (created the remote), B and C (clones)."""
    return tmp_path / "a", clone(remote, tmp_path / "b"), clone(remote, tmp_path / "c")
