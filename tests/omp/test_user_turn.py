"""The ``user_turn`` stamp for what an OMP session writes, with the real omp 18.2.3 over ACP.

The model is the scripted fake server (``tests/fakellm.py``: a hosted LLM cannot be reached
here), configured as an OMP provider in ``models.yml``; OMP runs its real tools (``read``,
``bash``) with ``--auto-approve``. The model saves the fact the way an OMP agent does without
commonkeep's help: a shell call to ``commonkeep write --cwd <project>`` (OmpKeep's ``memory_write``
writes the same shape: text, time and folder, no session). When the session has ended, the
writer curates (``curate --auto``), which first verifies unstamped candidates against what
commonkeep's extension recorded the person typing. Over ACP OMP fires no ``input`` event, so a
prompt is never read as typed (OMP may have expanded it from a template): only
``/commonkeep-remember`` stamps there. What the person types in the editor is in
``test_user_turn_typed.py``. These runs do not use ``unshare -n``: the fake model listens on this
namespace's loopback.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from commonkeep.cli import main
from commonkeep.store.core import Store
from commonkeep_omp.acp import AcpClient
from tests.fakellm import FakeLLM, Step
from tests.hosts import omp as omp_host
from tests.omp.conftest import OmpWorld

pytestmark = pytest.mark.omp

FACT = "The staging database is postgres 16 on port 6543."
SAID = "Please remember that the staging database is postgres 16 on port 6543."


def session(world: OmpWorld, prompt: str, steps: list[Step]) -> tuple[str, list[str]]:
    """One OMP session: the person's prompt, the scripted model's tool calls, then exit."""
    commonkeep = Path(sys.executable).parent / "commonkeep"
    write = f"{commonkeep} write --root {world.root} --cwd {world.project} -- '{FACT}'"
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)]) == 0
    with FakeLLM([*steps, Step.call("bash", {"command": write}), Step.say("Noted.")]) as llm:
        (world.agent_dir / "models.yml").write_text(
            f"providers:\n  fake:\n    baseUrl: {llm.base_url}\n    apiKey: sk-test-not-a-key\n"
            "    api: openai-completions\n    models:\n      - id: fake-model\n        contextWindow: 128000\n")
        cmd = [str(omp_host.require_omp()), "acp", "--model", "fake/fake-model", "--auto-approve"]
        with AcpClient(cmd, env=world.env(), cwd=world.project, timeout=90) as client:
            client.initialize()
            sid = client.new_session()
            assert client.prompt(sid, prompt) == "end_turn"
        tool_results = [str(m.get("content")) for r in llm.requests for m in r.get("messages", []) if m.get("role") == "tool"]
    assert any("Wrote candidate" in t or "cap_" in t for t in tool_results), tool_results  # the write ran
    return sid, tool_results


def curate_at_session_end(world: OmpWorld) -> tuple[list[str], dict[str, Any]]:
    assert main(["curate", "--auto", "--root", str(world.root), "--role", "librarian"]) == 0
    store = Store(world.root, warn=False)
    [cand] = [c for c in store.candidates() if c["text"] == FACT]
    return sorted(str(r.get("statement")) for r in store.records()), cand


def test_a_prompt_sent_over_acp_is_not_read_as_typed_and_waits(world: OmpWorld) -> None:
    sid, _ = session(world, SAID, [])

    records, cand = curate_at_session_end(world)

    assert records == []
    assert cand["status"] == "new" and cand.get("provenance", {}).get("origin") != "user_turn"
    entries = world.session_entries(sid)
    assert any(e.get("type") == "message" and e["message"].get("role") == "user" for e in entries)  # OMP stored it
    assert not [e for e in entries if e.get("customType") == "commonkeep-typed"]  # no input event over ACP


def test_the_same_sentence_read_from_a_file_is_held(world: OmpWorld) -> None:
    notes = world.project / "ops-notes.md"
    notes.write_text(f"# Ops notes\n\n{FACT}\n")

    _, tool_results = session(world, "Read ops-notes.md and remember what matters.", [Step.call("read", {"path": str(notes)})])
    assert any(FACT in t for t in tool_results), tool_results  # OMP's read tool gave the model the sentence

    records, cand = curate_at_session_end(world)
    assert records == []
    assert cand["status"] == "new" and "stamped_by" not in cand.get("provenance", {})


def test_a_fact_typed_after_commonkeep_remember_is_stamped_and_applied(world: OmpWorld, omp_acp_cmd: list[str]) -> None:
    # No model at all: OMP runs the extension's command locally (so this run may use unshare -n).
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)]) == 0
    with AcpClient(omp_acp_cmd, env=world.env(), cwd=world.project) as client:
        client.initialize()
        sid = client.new_session()
        assert client.prompt(sid, f"/commonkeep-remember {FACT}") == "end_turn"

    records, cand = curate_at_session_end(world)

    assert records == [FACT]
    assert cand["provenance"]["origin"] == "user_turn" and cand["provenance"]["user_turn"]["session_id"] == sid
    assert cand["provenance"]["user_turn"]["rule"] == "user_turn/3"
