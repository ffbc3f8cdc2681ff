"""The ``memory`` tool (contracts/roundtable.md §8) against a real stub backend process.

The stub is a small Python script run through ``ORPHUS_MEMORY_COMMAND``, as an operator would
point Orphus at any Dossier-compatible CLI: it logs its argv and cwd, then behaves as
``$STUB_MODE`` says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from commonkeep.errors import BadInput, RoleRefused
from commonkeep_roundtable.memory import BackendFailed, BackendUnreachable, build_argv, memory_call
from commonkeep_roundtable.paths import resolve_memory_config

STUB = r'''
import json, os, signal, sys, time
with open(os.environ["STUB_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "role": os.environ.get("COMMONKEEP_ROLE"),
                          "writer": os.environ.get("COMMONKEEP_WRITER_ROLE")}) + "\n")
mode = os.environ.get("STUB_MODE", "")
out = sys.stdout.buffer
if mode == "echo":
    print("question: " + sys.argv[-1])
elif mode == "silent":
    pass
elif mode == "stderr":
    sys.stderr.write("wiki is locked\n"); sys.exit(2)
elif mode == "stdout":
    print("half done"); sys.exit(3)
elif mode == "exit":
    sys.exit(4)
elif mode == "multibyte":
    out.write("café ".encode()[:-2]); out.flush(); time.sleep(0.05)
    out.write("café ".encode()[-2:] + "☃ 日本\n".encode()); out.flush()
elif mode == "flood":
    for _ in range(200):
        out.write(b"x" * 65536); out.flush()
elif mode == "signal":
    print("before", flush=True); os.kill(os.getpid(), signal.SIGKILL)
'''


@pytest.fixture
def stub(agent_base: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ORPHUS_MEMORY_COMMAND at the stub; returns its log file."""
    script = agent_base / "stub.py"
    script.write_text(STUB, encoding="utf-8")
    log = agent_base / "calls.jsonl"
    monkeypatch.setenv("ORPHUS_MEMORY_COMMAND", f"{sys.executable} {script}")
    monkeypatch.setenv("STUB_LOG", str(log))
    monkeypatch.setenv("STUB_MODE", "echo")
    return log


def calls(log: Path) -> list[dict[str, object]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_query_passes_the_question_as_one_argv_element_never_through_a_shell(stub: Path, agent_base: Path) -> None:
    question = '  what did we decide; rm -rf / && echo "$HOME" `id`  '
    text = memory_call("query", role=None, question=question)
    assert text == "question: " + question.strip()
    (call,) = calls(stub)
    assert call["argv"] == ["query", question.strip()]
    assert call["cwd"] == str(agent_base / "memory")  # no --project: the backend runs in the memory dir


def test_every_action_builds_the_contract_argv() -> None:
    assert build_argv("query", question=" q ") == ["query", "q"]
    assert build_argv("ingest", source=" raw/design.md ") == ["ingest", "raw/design.md"]
    assert build_argv("gardener") == ["gardener"]
    assert build_argv("doctor") == ["doctor"]


def test_missing_arguments_and_unknown_actions_are_clear_errors(stub: Path) -> None:
    with pytest.raises(BadInput, match="^memory query requires a 'question'$"):
        memory_call("query", role=None, question="  ")
    with pytest.raises(BadInput, match="^memory ingest requires a 'source' path$"):
        memory_call("ingest", role="librarian")
    with pytest.raises(BadInput, match="NUL character"):
        memory_call("query", role=None, question="a\x00b")
    with pytest.raises(BadInput, match="^Unknown memory action: forget"):
        memory_call("forget", role="librarian")
    assert calls(stub) == []


@pytest.mark.parametrize("action", ["ingest", "gardener"])
def test_gate_refuses_before_any_subprocess_runs(stub: Path, action: str) -> None:
    with pytest.raises(RoleRefused) as err:
        memory_call(action, role="planner", source="raw/design.md")
    assert str(err.value) == (
        f'Only the "librarian" role may {action} into memory; this session is "planner". Ask the librarian to write.'
    )
    with pytest.raises(RoleRefused, match="this session has no role name"):
        memory_call(action, role=None, source="raw/design.md")
    assert calls(stub) == []  # the backend was never invoked


def test_writer_runs_ingest_and_gardener(stub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_MODE", "silent")
    assert memory_call("ingest", role="librarian", source="raw/design.md") == "memory ingest completed."
    assert memory_call("gardener", role="librarian") == "memory gardener completed."
    assert [c["argv"] for c in calls(stub)] == [["ingest", "raw/design.md"], ["gardener"]]


def test_backend_sees_the_acting_role_not_the_hosts_environment(stub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_MODE", "silent")
    monkeypatch.setenv("COMMONKEEP_ROLE", "planner")
    monkeypatch.setenv("ORPHUS_MEMORY_WRITER_ROLE", "archivist")
    memory_call("gardener", role="archivist")
    memory_call("doctor", role=None)
    assert [(c["role"], c["writer"]) for c in calls(stub)] == [("archivist", "archivist"), (None, "archivist")]


def test_reads_are_open_to_unnamed_sessions(stub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_MODE", "silent")
    assert memory_call("doctor", role=None) == "memory doctor completed."


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("stderr", "memory doctor failed: wiki is locked"),
        ("stdout", "memory doctor failed: half done"),
        ("exit", "memory doctor failed: exited 4"),
    ],
)
def test_non_zero_exit_reports_stderr_then_stdout_then_the_code(
    stub: Path, monkeypatch: pytest.MonkeyPatch, mode: str, message: str
) -> None:
    monkeypatch.setenv("STUB_MODE", mode)
    with pytest.raises(BackendFailed) as err:
        memory_call("doctor", role=None)
    assert str(err.value) == message


def test_missing_backend_is_the_contract_notice_not_a_crash(agent_base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORPHUS_MEMORY_COMMAND", str(agent_base / "no-such-dossier") + " --flag")
    with pytest.raises(BackendUnreachable) as err:
        memory_call("query", role=None, question="anything")
    text = str(err.value)
    assert text.startswith("Memory backend not reachable (")
    assert "no-such-dossier" in text
    assert text.endswith("Configure it with ORPHUS_MEMORY_COMMAND / ORPHUS_MEMORY_DIR — see docs/memory.md.")


def test_multibyte_characters_split_across_reads_survive(stub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_MODE", "multibyte")
    assert memory_call("doctor", role=None) == "café ☃ 日本"


def test_output_over_the_cap_kills_the_run(stub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_MODE", "flood")
    with pytest.raises(BackendFailed, match="memory doctor failed: captured output exceeded 100000 bytes"):
        memory_call("doctor", role=None, max_bytes=100_000)


def test_death_by_signal_is_code_1_with_the_signal_named(stub: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_MODE", "signal")
    with pytest.raises(BackendFailed) as err:
        memory_call("doctor", role=None)
    assert str(err.value) == "memory doctor failed: process terminated by signal SIGKILL"


def test_configuration_defaults_and_blank_values(tmp_path: Path) -> None:
    home_default = resolve_memory_config({})
    assert home_default.command == (sys.executable, "-m", "commonkeep.dossier")
    assert home_default.memory_dir == Path.home() / ".orphus" / "agent" / "memory"
    assert home_default.writer_role == "librarian"
    env = {
        "PI_CODING_AGENT_DIR": str(tmp_path / "pi"),
        "ATOMIC_CODING_AGENT_DIR": str(tmp_path / "atomic"),
        "ORPHUS_MEMORY_COMMAND": "  ",
        "ORPHUS_MEMORY_DIR": "",
        "ORPHUS_MEMORY_WRITER_ROLE": " ",
    }
    blank = resolve_memory_config(env)
    assert blank.command == (sys.executable, "-m", "commonkeep.dossier")
    assert blank.memory_dir == tmp_path / "atomic" / "memory"  # ATOMIC_ before PI_
    assert blank.writer_role == "librarian"
    custom = resolve_memory_config({"ORPHUS_MEMORY_COMMAND": "uv  run dossier", "ORPHUS_MEMORY_WRITER_ROLE": "archivist"})
    assert custom.command == ("uv", "run", "dossier")
    assert custom.writer_role == "archivist"
