"""Issue 16: where the Python roundtable differed from Orphus, against a real broker process and
the real ``commonkeep`` / ``python -m commonkeep.dossier`` command lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep_roundtable.client import BrokerClient, BrokerError
from commonkeep_roundtable.memory import memory_call
from commonkeep_roundtable.paths import resolve_memory_config
from commonkeep_roundtable.tools import close_sessions, roundtable_tools


def run(*argv: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def test_a_second_register_on_one_connection_is_refused(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with BrokerClient.connect("planner", base=agent_base, start=False) as planner:
        planner.join("design")
        planner._send({"type": "register", "name": "critic", "pid": os.getpid(), "cwd": "/"})
        reply = planner._receive(lambda m: m.get("type") in ("registered", "error"))
        assert reply == {"type": "error", "error": "This connection is already registered"}
        posted = planner.post("design", "still me")
        assert posted["from"]["name"] == "planner"
        assert [m["name"] for m in planner.rooms()[0]["members"]] == ["planner"]


@pytest.fixture
def tools(agent_base: Path) -> Any:
    yield {tool.name: tool for tool in roundtable_tools()}
    close_sessions()


@pytest.mark.parametrize("tool", ["roundtable_digest", "roundtable_peek"])
def test_digest_and_peek_of_a_missing_room_answer_does_not_exist_and_create_nothing(tools: Any, tool: str) -> None:
    with pytest.raises(BrokerError) as err:
        tools[tool].call({"room": "ghost"}, "planner")
    assert str(err.value) == 'Room "ghost" does not exist'
    assert tools["roundtable_rooms"].call({}, "planner") == "No active rooms. Use join to create one."


def test_cli_digest_of_a_missing_room_answers_does_not_exist_and_creates_nothing(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with BrokerClient.connect("watcher", base=agent_base, start=False) as watcher:  # keeps the broker up
        for extra in ([], ["--peek"]):
            out = run("-m", "commonkeep.cli", "roundtable", "digest", "ghost", "--role", "planner", *extra)
            assert out.returncode != 0 and 'Room "ghost" does not exist' in out.stderr and "Traceback" not in out.stderr
        assert watcher.rooms() == []


def _orphus_style_query(question: str, memory_dir: Path) -> subprocess.CompletedProcess[str]:
    """What Orphus runs: ``<ORPHUS_MEMORY_COMMAND> query <question>``, no ``--``, cwd = memory dir."""
    return run("-m", "commonkeep.dossier", "query", question, cwd=memory_dir)


@pytest.mark.parametrize("question", ["--help", "-v"])
def test_dossier_cli_reads_a_question_starting_with_a_dash_as_text(tmp_path: Path, question: str) -> None:
    out = _orphus_style_query(question, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"question: {question}\n") and "usage:" not in out.stdout


def test_dossier_cli_reads_a_source_starting_with_a_dash_as_a_path(tmp_path: Path) -> None:
    out = run("-m", "commonkeep.dossier", "ingest", "--json", cwd=tmp_path,
              env={"ORPHUS_MEMORY_COMMAND": f"{sys.executable} -m commonkeep.dossier"})  # as Orphus runs it
    assert out.returncode == 2 and "source path --json is outside raw/" in out.stderr


def test_commonkeep_memory_as_its_own_backend_is_refused(agent_base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORPHUS_MEMORY_COMMAND", "commonkeep memory")
    with pytest.raises(BadInput, match="is `commonkeep memory` itself"):
        memory_call("query", role="planner", config=resolve_memory_config())
    # under another name (a wrapper script), the child sees it was started as the backend
    wrapper = agent_base / "my-memory"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -m commonkeep.cli memory \"$@\"\n", encoding="utf-8")
    wrapper.chmod(0o755)
    out = run("-m", "commonkeep.cli", "memory", "query", "what?", env={"ORPHUS_MEMORY_COMMAND": str(wrapper)})
    assert out.returncode == 2, out.stderr
    assert "which is `commonkeep memory` itself (this process was started as the backend of pid" in out.stderr


def test_dossier_backend_honours_orphus_memory_writer_role(tmp_path: Path) -> None:
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "note.md").write_text("# Note\n\nDecision: GCRA per tenant.\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"COMMONKEEP_ROLE": "scribe", "ORPHUS_MEMORY_WRITER_ROLE": "scribe"}
    env_without = {k: v for k, v in os.environ.items() if k not in ("COMMONKEEP_WRITER_ROLE", "ORPHUS_MEMORY_WRITER_ROLE")}
    refused = subprocess.run([sys.executable, "-m", "commonkeep.dossier", "ingest", "raw/note.md"], cwd=tmp_path, text=True,
                             capture_output=True, env={**env_without, "COMMONKEEP_ROLE": "scribe"}, timeout=60)
    assert refused.returncode == 3 and "only the writer role 'librarian'" in refused.stderr
    done = subprocess.run([sys.executable, "-m", "commonkeep.dossier", "ingest", "raw/note.md"], cwd=tmp_path, text=True,
                          capture_output=True, env={**env_without, **env}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "routed: ingest_document" in done.stdout
    # and the librarian is now refused, as Orphus's gate would refuse it
    other = subprocess.run([sys.executable, "-m", "commonkeep.dossier", "gardener"], cwd=tmp_path, text=True,
                           capture_output=True, env={**env_without, **env, "COMMONKEEP_ROLE": "librarian"}, timeout=60)
    assert other.returncode == 3 and "only the writer role 'scribe'" in other.stderr
