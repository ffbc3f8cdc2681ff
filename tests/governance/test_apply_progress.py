"""``apply`` of thousands of ops shows a bar on a terminal (a real pty), none in a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from commonkeep.governance.bench import apply_patch_of
from tests.governance.conftest import WRITER
from tests.recall.test_index_progress import BAR, SHOW_AT_ONCE, _on_a_terminal


def test_apply_of_thousands_shows_a_bar_on_a_terminal_and_none_in_a_pipe(tmp_path: Path) -> None:
    roots = []
    for name in ("tty", "pipe"):
        root = tmp_path / name
        roots.append((root, apply_patch_of(root, 3000)))
    (tty, pid), (pipe, pid2) = roots
    code, out = _on_a_terminal("apply", pid, "--root", str(tty), "--role", WRITER, env=SHOW_AT_ONCE)
    assert code == 0, out
    assert f"apply {pid}" in out and BAR in out
    done = subprocess.run([sys.executable, "-m", "commonkeep.cli", "apply", pid2, "--root", str(pipe), "--role", WRITER],
                          capture_output=True, text=True, env={**os.environ, **SHOW_AT_ONCE}, timeout=300)
    assert done.returncode == 0 and BAR not in done.stderr, done.stderr
