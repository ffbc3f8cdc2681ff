"""``apply`` of thousands of ops shows a bar on a terminal (a real pty), none in a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from commonkeep.bench.curate import apply_patch_of
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


def test_curate_of_thousands_shows_a_bar_on_a_terminal_and_none_with_json(tmp_path: Path) -> None:
    from commonkeep.store.core import Store
    from commonkeep.store.layout import ensure_layout

    root = ensure_layout(tmp_path / "root").root
    Store(root).append_candidates([
        {"id": f"cap_20261203000000_{i:08d}", "text": f"Convention {i}: port {5000 + i} serves staging.", "status": "new",
         "created_at": "2026-12-03T00:00:00.000Z", "source": {"type": "manual", "ref": "daily/x.md"}, "evidence_refs": ["a", "b"],
         "confidence": 0.9, "tags": []}
        for i in range(1500)])
    code, out = _on_a_terminal("curate", "--root", str(root), "--role", WRITER, env=SHOW_AT_ONCE)
    assert code == 0, out
    assert "curate" in out and BAR in out
    code, out = _on_a_terminal("curate", "--root", str(root), "--role", WRITER, "--json", env=SHOW_AT_ONCE)
    assert code == 0 and BAR not in out
