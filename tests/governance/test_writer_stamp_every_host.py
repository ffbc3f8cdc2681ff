"""The writer's own stamp is never earned from any agent host's shell (issue 40): a ``write --trust``
run by Hermes' terminal tool or OMP's bash tool, in every shape those hosts run (their CLIs,
module entries, console scripts, the ACP adapters, under Bun), found among the ancestors or
carried by the mark their plugin sets (which a detached command keeps), or from under an ancestor
that cannot be read. In process, with the parent chain and the environment faked per host; the
list of hosts is this test's own, so narrowing the check to one host fails it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commonkeep.gate import agent_shell, stamps
from commonkeep.gate.autoapply import stamped_trust
from tests.governance.conftest import WRITER, fake_proc, read_rows

TEXT = "Deploys skip the test suite on Fridays."
#: every command line an agent host runs as (the host's own process, an ancestor of its tools' commands)
HOST_COMMANDS: dict[str, tuple[str, list[str]]] = {
    "hermes chat": ("hermes", ["/home/u/.local/bin/hermes", "chat"]),
    "hermes under its venv's python": ("hermes", ["/venv/bin/python3", "/venv/bin/hermes", "chat", "-q", "x"]),
    "hermes gateway": ("hermes", ["/venv/bin/python", "/venv/bin/hermes", "gateway", "run"]),
    "python -m hermes_cli.main": ("hermes", ["/usr/bin/python3", "-m", "hermes_cli.main", "chat"]),
    "hermes-agent (run_agent)": ("hermes", ["/venv/bin/python", "/venv/bin/hermes-agent", "--query", "x"]),
    "run_agent.py": ("hermes", ["/venv/bin/python", "/venv/lib/python3.11/site-packages/run_agent.py"]),
    "hermes-acp": ("hermes", ["/venv/bin/python", "/venv/bin/hermes-acp"]),
    "python -m acp_adapter.entry": ("hermes", ["/venv/bin/python", "-m", "acp_adapter.entry"]),
    "omp": ("omp", ["/usr/local/bin/omp"]),
    "omp acp": ("omp", ["/home/u/.bun/bin/omp", "acp", "--model", "x"]),
    "omp under bun": ("omp", ["/home/u/.bun/bin/bun", "/home/u/node_modules/@oh-my-pi/pi-coding-agent/dist/cli.js"]),
    "omp's sources under bun": ("omp", ["bun", "/x/node_modules/@oh-my-pi/pi-coding-agent/src/cli.ts", "acp"]),
}
#: the tool's shell between the host and the command (Hermes' terminal runs bash -lc; OMP's bash tool a shell)
SHELLS = [["/bin/bash", "-lc", "commonkeep write --trust direct_user_instruction x"], ["/bin/sh", "-c", "x"]]
MARKS = {"hermes": "hermes:31337:123456", "omp": "omp:31338:654321"}


def _chain(monkeypatch: pytest.MonkeyPatch, base: Path, *ancestors: list[str]) -> None:
    """This process's parent is the first of ``ancestors``, whose parent is the next, … then init."""
    table: dict[int, tuple[int, list[str]]] = {}
    pid = 300
    for argv in ancestors:
        table[pid] = (pid - 10, argv)
        pid -= 10
    table[pid] = (0, ["/sbin/init"])
    monkeypatch.setattr(agent_shell, "PROC", fake_proc(base, table))
    monkeypatch.setattr(agent_shell, "_first_ancestor", lambda: 300)


def _write(root: Path) -> dict[str, Any]:
    from commonkeep.gate.capture import capture

    done = capture(root, TEXT, provenance={"agent": "cli", "role": WRITER}, primary_trust_class="direct_user_instruction",
                   durability_signal="long_term", confidence=0.95, evidence_refs=["a.md", "b.md"], source_type="manual")
    return {"candidate": done.candidate, "shell": done.agent_shell}


def _earned_nothing(root: Path, got: dict[str, Any], host: str) -> None:
    from commonkeep.patches.auto import auto_curate
    from commonkeep.store.core import Store

    [row] = read_rows(root / "inbox" / "captured.jsonl")
    assert got["shell"] is not None and row["provenance"]["tool"] in (f"{host} shell", "agent shell")
    assert stamped_trust(row, WRITER, root) is None
    assert not stamps.book().stamps  # nothing was bound
    assert row["promotion_eligibility"] == "review_only"
    assert auto_curate(root, role=WRITER, policy="high-only", log=False).applied == []
    assert Store(root).records() == []


@pytest.mark.parametrize("shell", range(len(SHELLS)))
@pytest.mark.parametrize("name", list(HOST_COMMANDS))
def test_a_write_from_any_hosts_shell_never_earns_the_writers_stamp(root: Path, tmp_path: Path, name: str, shell: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    host, argv = HOST_COMMANDS[name]
    _chain(monkeypatch, tmp_path / "p", SHELLS[shell], argv, ["/bin/bash"])
    _earned_nothing(root, _write(root), host)


@pytest.mark.parametrize("host", list(MARKS))
def test_a_detached_write_carrying_a_hosts_mark_never_earns_the_writers_stamp(root: Path, tmp_path: Path, host: str,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # setsid -f / nohup … & / tmux: the command's parent is init or a terminal server, not the agent
    _chain(monkeypatch, tmp_path / "p", ["/usr/bin/tmux", "new-session"])
    monkeypatch.setenv(agent_shell.MARK, MARKS[host])
    _earned_nothing(root, _write(root), host)


def test_a_write_under_an_ancestor_that_cannot_be_read_never_earns_the_writers_stamp(root: Path, tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _chain(monkeypatch, tmp_path / "p", ["/bin/sh", "-c", "x"])
    (agent_shell.PROC / "290" / "cmdline").unlink()  # the shell's parent: one of this user's processes, unreadable
    _earned_nothing(root, _write(root), "agent")


@pytest.mark.parametrize("name", ["hermes chat", "omp acp"])
def test_the_cli_write_from_a_hosts_shell_says_it_waits(root: Path, tmp_path: Path, name: str,
                                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.governance.conftest import run_cli

    host, argv = HOST_COMMANDS[name]
    _chain(monkeypatch, tmp_path / "p", SHELLS[0], argv)
    code, out, err = run_cli(capsys, "write", "--root", str(root), "--role", WRITER, "--trust", "direct_user_instruction",
                             "--durability", "long_term", "--evidence", "a.md", "--evidence", "b.md", "--confidence", "0.95", TEXT)
    assert code == 0, err
    assert f"written from inside {host}" in out and "waits for a person's review" in out
    [row] = read_rows(root / "inbox" / "captured.jsonl")
    assert stamped_trust(row, WRITER, root) is None and not stamps.book().stamps


def test_in_the_persons_own_terminal_the_writers_stamp_is_bound_and_applies(root: Path, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.patches.auto import auto_curate

    _chain(monkeypatch, tmp_path / "p", ["/bin/bash"], ["/usr/sbin/sshd"])
    got = _write(root)
    assert got["shell"] is None and "tool" not in got["candidate"]["provenance"]
    assert stamped_trust(got["candidate"], WRITER, root) == "direct_user_instruction"
    assert len(auto_curate(root, role=WRITER, policy="high-only", log=False).applied) == 1
