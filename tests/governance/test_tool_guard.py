"""The agent's own tools are kept out of what stamps rest on (issue 35 §4): the rules the Hermes
plugin applies before a model's tool runs (``commonkeep.gate.tool_guard``; the OMP extension holds
the same in TypeScript, driven by the real omp in ``tests/omp/test_tool_guard.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commonkeep.gate import stamps
from commonkeep.gate.tool_guard import protected, refusal


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    root = home / ".omp" / "agent" / "omp-memory"
    hermes = home / ".hermes"
    for d in (root / "inbox", hermes / "memories", home / "project"):
        d.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(stamps.ENV_DIR, str(home / ".local" / "state" / "commonkeep"))
    return {"home": home, "root": root, "hermes": hermes, "project": home / "project"}


def _prot(w: dict[str, Path]):  # type: ignore[no-untyped-def]
    return protected([w["root"]], [w["hermes"] / "memories", w["hermes"] / "config.yaml"])


@pytest.mark.parametrize("path", [
    "{root}/inbox/captured.jsonl", "{root}/config.json", "{root}/memory/L2.playbooks.jsonl", "{root}",
    "~/.omp/agent/omp-memory/patches/p.json", "../.omp/agent/omp-memory/inbox/captured.jsonl",
    "{home}/.local/state/commonkeep/stamps.jsonl", "~/.local/state/commonkeep/stamps.key",
    "{hermes}/memories/MEMORY.md", "{hermes}/config.yaml", "link/inbox/captured.jsonl",
])
def test_a_file_tool_that_writes_where_stamps_rest_is_refused(where: dict[str, Path], path: str) -> None:
    os.symlink(where["root"], where["project"] / "link")
    raw = path.format(**{k: str(v) for k, v in where.items()})
    for tool, args in (("write_file", {"path": raw, "content": "x"}), ("patch", {"path": raw, "old_string": "a"}),
                       ("patch", {"mode": "patch", "patch": f"*** Begin Patch\n*** Update File: {raw}\n@@\n-a\n+b\n*** End Patch"})):
        why = refusal(tool, args, _prot(where), str(where["project"]))
        assert why is not None and why.startswith("refused by commonkeep: ") and "Ask the person" in why, (tool, raw)


@pytest.mark.parametrize("path", ["notes.md", "{project}/src/app.py", "{home}/.omp/agent/omp-memory-notes.md",
                                  "{home}/.local/state/other/x"])
def test_a_file_tool_elsewhere_is_let_through(where: dict[str, Path], path: str) -> None:
    raw = path.format(**{k: str(v) for k, v in where.items()})
    assert refusal("write_file", {"path": raw, "content": "x"}, _prot(where), str(where["project"])) is None


def test_reading_the_key_or_the_journal_is_refused_reading_memory_is_not(where: dict[str, Path]) -> None:
    prot, cwd = _prot(where), str(where["project"])
    assert refusal("read_file", {"path": "~/.local/state/commonkeep/stamps.key"}, prot, cwd)
    assert refusal("search_files", {"path": str(where["home"] / ".local/state/commonkeep")}, prot, cwd)
    assert refusal("read_file", {"path": str(where["root"] / "inbox" / "captured.jsonl")}, prot, cwd) is None


@pytest.mark.parametrize("command", [
    "echo '{{}}' >> {root}/inbox/captured.jsonl",
    "cp /tmp/x ~/.omp/agent/omp-memory/config.json",
    "sed -i s/librarian/planner/ $HOME/.omp/agent/omp-memory/config.json",
    "cat ${{HOME}}/.local/state/commonkeep/stamps.key",
    "cd {root} && echo x >> inbox/captured.jsonl",
    "python3 -c \"open('stamps.jsonl','a').write('x')\"",
    "env -u COMMONKEEP_AGENT_HOST setsid -f commonkeep review --approve cap_x",
    "unset COMMONKEEP_AGENT_HOST; commonkeep write --trust direct_user_instruction x",
    "setsid -f env -i PATH=/usr/bin commonkeep review --approve cap_x",
    "echo x > {hermes}/memories/MEMORY.md",
])
def test_a_shell_command_naming_them_is_refused(where: dict[str, Path], command: str) -> None:
    text = command.format(**{k: str(v) for k, v in where.items()})
    for tool, key in (("terminal", "command"), ("execute_code", "code")):
        assert refusal(tool, {key: text}, _prot(where), str(where["project"])), (tool, text)


@pytest.mark.parametrize("command", [
    "commonkeep write --root {root} 'We deploy with make release.'",
    "commonkeep search pnpm", "pytest -q", "setsid -f commonkeep review --approve cap_x",
    "ls {home}/.omp/agent/omp-memory-old",
])
def test_an_ordinary_command_is_let_through(where: dict[str, Path], command: str) -> None:
    """``commonkeep`` itself refuses a decision from inside an agent (the mark): the guard lets it run."""
    text = command.format(**{k: str(v) for k, v in where.items()})
    assert refusal("terminal", {"command": text}, _prot(where), str(where["project"])) is None


def test_other_tools_are_not_the_guards(where: dict[str, Path]) -> None:
    assert refusal("memory", {"action": "add", "content": str(where["root"])}, _prot(where)) is None
    assert refusal("web_search", {"query": "stamps.key"}, _prot(where)) is None


def test_the_hermes_hook_blocks_with_the_message_and_fails_closed(where: dict[str, Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep_hermes import governance
    from commonkeep_hermes.settings import HermesProfile

    monkeypatch.setenv("OMP_MEMORY_ROOT", str(where["root"]))
    profile = HermesProfile(where["hermes"])
    hit = governance.guard_tool_call(profile, tool_name="write_file",
                                     args={"path": str(where["root"] / "inbox" / "captured.jsonl"), "content": "x"})
    assert hit is not None and hit["action"] == "block" and "memory root" in hit["message"]
    key = governance.guard_tool_call(profile, tool_name="read_file", args={"path": str(stamps.key_path())})
    assert key is not None and "stamp journal" in key["message"]
    assert governance.guard_tool_call(profile, tool_name="write_file", args={"path": "notes.md", "content": "x"}) is None
    assert governance.guard_tool_call(profile, tool_name="todo", args={}) is None
    monkeypatch.setattr(governance, "guarded_paths", lambda profile: 1 / 0)
    broken = governance.guard_tool_call(profile, tool_name="write_file", args={"path": "notes.md"})
    assert broken is not None and broken["action"] == "block" and "could not be checked" in broken["message"]
