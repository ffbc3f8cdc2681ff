"""``cli.run_as_process``: a decision command in a process of its own ends at once once its output
is flushed (no interpreter teardown), with its own exit code; anything that still needs the
interpreter (an ``atexit`` handler, another thread) gets Python's own exit; other commands
collect their cycles as ever."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_RUN = (
    "import gc, os, sys\n"
    "real = os._exit\n"
    "def fast(code):\n"
    "    sys.stderr.write(f'FAST {code}\\n'); sys.stderr.flush(); real(code)\n"
    "os._exit = fast\n"
    "{before}\n"
    "sys.argv = ['commonkeep', *sys.argv[1:]]\n"
    "from commonkeep.cli import run_as_process\n"
    "code = run_as_process()\n"
    "sys.stderr.write(f'RETURNED {code} gc={gc.isenabled()}\\n')\n"
    "raise SystemExit(code)\n"
)


def _run(*args: str, before: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _RUN.replace("{before}", before), *args], capture_output=True,
                          text=True, timeout=120, check=False)


def _decidable(root: Path) -> str:
    from tests.governance.conftest import write_candidate

    return str(write_candidate(root, "Deploy the docs site from the main branch only.")["id"])


def test_an_approve_flushes_its_output_and_exits_without_teardown(root: Path) -> None:
    cid = _decidable(root)
    done = _run("review", "--root", str(root), "--role", "librarian", "--approve", cid)
    assert done.returncode == 0, done.stderr
    assert f"candidate {cid} -> patched" in done.stdout  # the whole output, flushed before the exit
    assert "FAST 0" in done.stderr and "RETURNED" not in done.stderr


def test_a_refused_decision_keeps_its_exit_code(root: Path) -> None:
    done = _run("review", "--root", str(root), "--role", "librarian", "--approve", "cap_nosuch")
    assert done.returncode == 2 and "FAST 2" in done.stderr
    assert "cap_nosuch" in done.stderr  # the error was written before the exit


@pytest.mark.parametrize("before", [
    "import atexit; atexit.register(lambda: sys.stderr.write('HANDLER\\n'))",
    "import threading, time; threading.Thread(target=time.sleep, args=(60,), daemon=True).start()",
])
def test_what_still_needs_the_interpreter_gets_pythons_own_exit(root: Path, before: str) -> None:
    cid = _decidable(root)
    done = _run("review", "--root", str(root), "--role", "librarian", "--approve", cid, before=before)
    assert done.returncode == 0, done.stderr
    assert "FAST" not in done.stderr and "RETURNED 0 gc=False" in done.stderr
    assert ("HANDLER" in done.stderr) == ("atexit" in before)


def test_another_command_collects_cycles_and_exits_as_ever(root: Path) -> None:
    done = _run("inbox", "--root", str(root))
    assert done.returncode == 0, done.stderr
    assert "FAST" not in done.stderr and "RETURNED 0 gc=True" in done.stderr


def test_an_interactive_review_collects_cycles_as_ever(root: Path) -> None:
    """``review --interactive`` is a session, not one decision: the collector runs and Python exits as ever."""
    done = subprocess.run([sys.executable, "-c", _RUN.replace("{before}", ""), "review", "--root", str(root), "--role",
                           "librarian", "--interactive"], input="q\n", capture_output=True, text=True, timeout=120, check=False)
    assert "FAST" not in done.stderr and "gc=True" in done.stderr, done.stderr
