"""Long operations show a progress bar on a terminal (a real pty), and nothing when the output
is a pipe or ``--json``; tqdm is not even imported then (CLI start-up stays as it was)."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

from commonkeep.bench.search import synthetic_records
from commonkeep.store.jsonl import append_jsonl

BAR = "%|"  # tqdm's bar: "reindex:  42%|████▏     | 1.2M/2.9M"


def _on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``commonkeep ARGS`` with stdout and stderr on a new pseudo-terminal; all it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal 100 columns wide
    proc = subprocess.Popen([sys.executable, "-m", "commonkeep.cli", *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env={**os.environ, **(env or {})})
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(60), out.decode("utf-8", "replace")


def _root(root: Path) -> Path:
    records, _ = synthetic_records(3000)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", records)
    return root


SHOW_AT_ONCE = {"COMMONKEEP_PROGRESS_DELAY": "0"}  # the bar appears after 0.5 s by default


def test_reindex_shows_a_bar_on_a_terminal(root: Path) -> None:
    code, out = _on_a_terminal("reindex", "--root", str(_root(root)), "--no-embed", env=SHOW_AT_ONCE)
    assert code == 0, out
    assert "reindex" in out and BAR in out
    assert "indexed 3000 active record(s)" in out


def test_no_bar_in_a_pipe_or_with_json(root: Path) -> None:
    _root(root)
    piped = subprocess.run([sys.executable, "-m", "commonkeep.cli", "reindex", "--root", str(root), "--no-embed"],
                           capture_output=True, text=True, env={**os.environ, **SHOW_AT_ONCE}, timeout=300)
    assert piped.returncode == 0 and BAR not in piped.stderr and BAR not in piped.stdout
    code, out = _on_a_terminal("reindex", "--root", str(root), "--no-embed", "--json", env=SHOW_AT_ONCE)
    assert code == 0 and BAR not in out and out.strip().startswith("{")


def test_a_short_command_never_imports_tqdm(root: Path) -> None:
    _root(root)
    probe = ("import sys\nfrom commonkeep.cli import main\n"
             f"code = main(['search', '--root', {str(root)!r}, 'anything'])\n"
             "print('tqdm loaded' if 'tqdm' in sys.modules else 'no tqdm')\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().endswith("no tqdm"), done.stdout + done.stderr


def test_the_first_notes_index_build_shows_a_bar_on_a_terminal(root: Path) -> None:
    """Issue 38: the first build over megabytes of daily logs took seconds with nothing shown."""
    for day in range(1, 6):
        (root / "daily" / f"2026-11-0{day}.md").write_text(f"## notes\n\nDeployed the staging port {day}.\n" * 50,
                                                             encoding="utf-8")
    code, out = _on_a_terminal("search", "--notes", "staging", "--root", str(root), env=SHOW_AT_ONCE)
    assert code == 0, out
    assert "notes index" in out and BAR in out
