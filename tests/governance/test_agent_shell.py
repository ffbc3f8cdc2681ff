"""Which agent host runs this command, read from the process tree (``agent_shell.py``). Real
processes: a command started by a program named ``omp`` or ``hermes`` (a script of that name, as
an installed launcher is) finds it among its ancestors; one started by an ordinary shell does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.governance.agent_shell import _host_of, agent_host

PROBE = "from commonkeep.governance.agent_shell import agent_host; print(agent_host())"


@pytest.mark.parametrize(("argv", "host"), [
    (["/home/u/.local/bin/hermes", "chat"], "hermes"),
    (["/venv/bin/python3", "-m", "hermes_cli.main", "chat"], "hermes"),
    (["/venv/bin/python", "/venv/lib/python3.11/site-packages/run_agent.py"], "hermes"),
    (["/usr/local/bin/omp", "acp"], "omp"),
    (["/root/.bun/bin/bun", "/x/node_modules/@oh-my-pi/pi-coding-agent/src/cli.ts"], "omp"),
    (["bash", "-c", "commonkeep review"], None),
    (["vim", "notes", "x", "y", "/home/u/hermes"], None),  # a later argument named so is not the program
])
def test_the_host_of_a_command_line(argv: list[str], host: str | None) -> None:
    assert _host_of(argv) == host


def _launcher(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text('#!/bin/sh\n"$@"\n')  # the command runs as its child, as an agent's tool does
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("name", ["omp", "hermes"])
def test_a_command_an_agent_started_finds_it_two_levels_up(tmp_path: Path, name: str) -> None:
    launcher = _launcher(tmp_path, name)
    # the launcher runs a shell (the agent's bash tool), which runs commonkeep
    out = subprocess.run([str(launcher), "/bin/sh", "-c", f"{sys.executable} -c '{PROBE}'"],
                         capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == name


def test_a_command_of_an_ordinary_shell_finds_none(tmp_path: Path) -> None:
    out = subprocess.run(["/bin/sh", "-c", f"{sys.executable} -c '{PROBE}'"], capture_output=True, text=True, timeout=60,
                         check=True)
    assert out.stdout.strip() == "None"
    assert agent_host(os.getpid()) is None  # this test process


def test_a_decision_from_inside_an_agent_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    ck = [sys.executable, "-m", "commonkeep.cli"]
    env = {**os.environ, "COMMONKEEP_ROLE": "librarian"}
    subprocess.run([*ck, "write", "--init", "--root", str(root), "Prefer short commit messages."], env=env, check=True,
                   capture_output=True, timeout=60)
    before = {p: p.read_bytes() for p in root.rglob("*.jsonl")}
    launcher = _launcher(tmp_path, "omp")
    for argv in (["review", "--approve", "cap_x"], ["review", "--reject", "cap_x", "--reason", "no"], ["apply", "--latest"],
                 ["ratify", "cap_x"], ["forget", "mem_x", "--reason", "x"], ["review", "--undo", "cap_x"]):
        out = subprocess.run([str(launcher), *ck, *argv, "--root", str(root)], env=env, capture_output=True, text=True,
                             timeout=60)
        assert out.returncode == 3, (argv, out.stderr)
        assert "is a person's decision, and this command runs inside omp" in out.stderr
        assert "Traceback" not in out.stderr
    assert {p: p.read_bytes() for p in root.rglob("*.jsonl")} == before
    # reading the queue is still fine from there
    listed = subprocess.run([str(launcher), *ck, "review", "--list", "--root", str(root)], env=env, capture_output=True,
                            text=True, timeout=60)
    assert listed.returncode == 0 and "Prefer short commit messages." in listed.stdout
