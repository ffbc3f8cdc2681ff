"""Which agent host runs this command, read from the process tree (``agent_shell.py``). Real
processes: a command started by a program named ``omp`` or ``hermes`` (a script of that name, as
an installed launcher is) finds it among its ancestors; one started by an ordinary shell does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.gate.agent_shell import UNREADABLE, _host_of, agent_host
from tests.governance.conftest import fake_proc

PROBE = "from commonkeep.gate.agent_shell import agent_host; print(agent_host())"


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


def test_the_walk_up_the_process_tree(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, {300: (200, ["bash", "-c", "commonkeep review"]), 200: (100, ["/bin/sh"]),
                            100: (1, ["/usr/local/bin/omp", "acp"]), 1: (0, ["/sbin/init"])})
    assert agent_host(300, proc) == "omp"
    assert agent_host(200, proc) == "omp"
    assert agent_host(1, proc) is None


def test_an_agent_that_is_the_first_process_of_a_container_counts(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, {50: (1, ["bash"]), 1: (0, ["/usr/bin/python3", "-m", "hermes_cli.main", "gateway"])})
    assert agent_host(50, proc) == "hermes"


def test_a_process_name_with_brackets_and_spaces_is_read_from_its_last_bracket(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, {30: (20, ["worker"]), 20: (1, ["/usr/local/bin/omp"])}, comm="a) (b c")
    assert agent_host(30, proc) == "omp"


@pytest.mark.parametrize("broken", ["missing", "no parent", "not a number", "no cmdline"])
def test_an_ancestor_of_this_user_that_cannot_be_read_counts_as_an_agent(tmp_path: Path, broken: str) -> None:
    proc = fake_proc(tmp_path, {30: (20, ["worker"]), 20: (1, ["/usr/local/bin/omp"])})
    stat = proc / "30" / "stat"
    if broken == "missing":
        stat.unlink()
    elif broken == "no parent":
        stat.write_text("30 (worker) S\n")
    elif broken == "not a number":
        stat.write_text("30 (worker) S x1 30 30\n")
    else:
        (proc / "30" / "cmdline").unlink()
    assert agent_host(30, proc) == UNREADABLE


def test_a_loop_or_an_endless_chain_ends_the_walk(tmp_path: Path) -> None:
    loop = fake_proc(tmp_path / "a", {30: (20, ["worker"]), 20: (30, ["sh"])})
    assert agent_host(30, loop) is None
    chain = {pid: (pid - 1, ["sh"]) for pid in range(2, 100)}
    chain[1] = (0, ["/usr/local/bin/omp"])
    assert agent_host(99, fake_proc(tmp_path / "b", chain)) is None  # 64 levels at most: never reaches pid 1
    assert agent_host(40, fake_proc(tmp_path / "c", chain)) == "omp"


def test_the_refusal_names_the_host_and_where_to_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.errors import RoleRefused
    from commonkeep.gate import agent_shell

    agent_shell.refuse_inside_agent("`apply`")  # no agent among this test's parents: nothing happens
    monkeypatch.setattr(agent_shell, "inside_agent", lambda: "hermes")
    with pytest.raises(RoleRefused) as info:
        agent_shell.refuse_inside_agent("`apply`")
    assert info.value.message == ("refused: `apply` is a person's decision, and this command runs inside hermes "
                                  "(an agent's tool); nothing was changed")
    assert info.value.hint == "decide in your own terminal (`commonkeep review`) or in the review app (`commonkeep serve`)"
    assert info.value.exit_code == 3


def test_bytes_that_are_not_utf8_in_a_name_or_an_argument_are_read_not_a_traceback(tmp_path: Path) -> None:
    """A process's name and arguments are bytes; one that is not UTF-8 among a command's parents
    must not end the command with a decoding error."""
    proc = fake_proc(tmp_path, {30: (20, ["worker"]), 20: (1, ["/usr/local/bin/omp"])})
    (proc / "30" / "stat").write_bytes(b"30 (w\xff\xfe) S 20 30 30 0\n")
    (proc / "30" / "cmdline").write_bytes(b"/tmp/\xff\xfetool\0--flag\0")
    assert agent_host(30, proc) == "omp"


def test_a_stat_line_of_just_the_state_and_the_parent_is_enough(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, {30: (20, ["worker"]), 20: (1, ["/usr/local/bin/omp"])})
    (proc / "30" / "stat").write_text("30 (worker) S 20")
    assert agent_host(30, proc) == "omp"


@pytest.mark.parametrize(("hidden", "found"), [(True, None), (False, UNREADABLE)])
def test_a_parent_that_is_gone_counts_as_an_agent_unless_proc_hides_other_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hidden: bool, found: str | None) -> None:
    """With ``hidepid=2`` another user's process (``sshd``) is not listed at all, while this user's
    always are: a parent missing from ``/proc`` is then another user's, and ends the walk."""
    from commonkeep.gate import agent_shell

    proc = fake_proc(tmp_path, {30: (20, ["bash"])})  # 20 is not there
    monkeypatch.setattr(agent_shell, "_hides_others", lambda proc: hidden)
    assert agent_host(30, proc) == found


def test_a_finite_lock_limit_the_hosts_did_not_set_is_named_in_the_refusal() -> None:
    """A person whose system sets a finite hard ``RLIMIT_LOCKS`` reads as inside an agent (the
    kernel's mark): the refusal says which limit, and that the hosts set another value. In a child
    process: a hard limit lowered cannot be raised again."""
    import textwrap

    from commonkeep.gate import agent_shell

    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_LOCKS is Linux's")
    code = textwrap.dedent("""
        import resource
        from commonkeep.errors import RoleRefused
        from commonkeep.gate import agent_shell
        resource.setrlimit(10, (100, 100))
        try:
            agent_shell.refuse_inside_agent("`review`")
        except RoleRefused as exc:
            print("ulimit -Hx" in (exc.hint or ""), "is 100" in (exc.hint or ""), str(agent_shell.LOCKS_MARK) in (exc.hint or ""))
    """)
    env = {k: v for k, v in os.environ.items() if k not in (agent_shell.MARK, agent_shell.KERNEL_MARK_SWITCH)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"], done.stdout
