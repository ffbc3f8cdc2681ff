"""The ``user_turn`` stamp for what the person types in the real omp 18.2.3, in interactive mode.

OMP fires its extensions' ``input`` event when the person submits the editor, before it expands a
prompt template or a slash command; commonkeep's extension records that text (``commonkeep-typed``)
and the stamping pass reads only it, never the ``role: user`` message OMP stores. These tests type
into the real TUI through a pseudo-terminal (``tests/omp/terminal.py``); the model is the scripted
fake server and saves the fact the way an OMP agent does without commonkeep's help, a shell call to
``commonkeep write --cwd <project>``. ``/exit`` ends the session, and the extension's session-end
curation (``commonkeep omp session-end``, the writer's ``high-only`` policy) decides what applies.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from commonkeep.cli import main
from commonkeep.store.core import Store
from tests.fakellm import Step
from tests.hosts import omp as omp_host
from tests.omp.conftest import OmpWorld
from tests.omp.terminal import Terminal, TitledFakeLLM

pytestmark = pytest.mark.omp

FACT = "The staging database is postgres 16 on port 6543."
SAID = "Please remember that the staging database is postgres 16 on port 6543."


def session(world: OmpWorld, typed: str, model_writes: bool = True, then: str | None = None) -> list[dict[str, Any]]:
    """One interactive OMP session: the person types ``typed`` (and ``then``), the model saves FACT,
    ``/exit``. Returns the session file's entries once the session-end curation has reported."""
    commonkeep = Path(sys.executable).parent / "commonkeep"
    write = f"{commonkeep} write --root {world.root} --cwd {world.project} -- '{FACT}'"
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)]) == 0
    config = world.agent_dir / "config.yml"
    config.write_text((config.read_text() if config.exists() else "") + "setupVersion: 2\n")  # no first-run wizard
    steps = [Step.call("bash", {"command": write}), Step.say("Noted.")] if model_writes else []
    with TitledFakeLLM(steps) as llm:
        (world.agent_dir / "models.yml").write_text(
            f"providers:\n  fake:\n    baseUrl: {llm.base_url}\n    apiKey: sk-test-not-a-key\n"
            "    api: openai-completions\n    models:\n      - id: fake-model\n        contextWindow: 128000\n")
        term = Terminal([str(omp_host.require_omp()), "--model", "fake/fake-model", "--auto-approve"],
                        world.env(), world.project)
        try:
            term.ready()
            term.type_line(typed)
            inbox = world.root / "inbox" / "captured.jsonl"
            term.wait_for(lambda: inbox.exists() and FACT in inbox.read_text(), 90, "save the fact")
            if then is not None:
                asked = len(llm.requests)
                term.type_line(then)
                term.wait_for(lambda: any(r.get("tools") for r in llm.requests[asked:]), 90, "answer")
            time.sleep(2)
        finally:
            term.close()
    report = world.root / "reports" / "omp-session-end.json"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not report.exists():
        time.sleep(0.5)
    assert report.exists(), "commonkeep's session-end curation did not report"
    [sid] = [p.stem.rsplit("_", 1)[-1] for p in (world.agent_dir / "sessions").glob("*/*.jsonl")]
    return world.session_entries(sid)


def outcome(world: OmpWorld) -> tuple[list[str], dict[str, Any]]:
    store = Store(world.root, warn=False)
    [cand] = [c for c in store.candidates() if c["text"] == FACT]
    return sorted(str(r.get("statement")) for r in store.records()), cand


def typed_entries(entries: list[dict[str, Any]]) -> list[str]:
    return [e["data"]["text"] for e in entries if e.get("customType") == "commonkeep-typed"]


def user_messages(entries: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(e["message"]["content"]) for e in entries
            if e.get("type") == "message" and e["message"].get("role") == "user"]


def test_a_request_the_person_types_is_stamped_and_applied_at_session_end(world: OmpWorld) -> None:
    entries = session(world, SAID)

    assert typed_entries(entries) == [SAID, "/exit"]  # the input events, recorded by commonkeep's extension
    records, cand = outcome(world)
    assert records == [FACT]
    prov = cand["provenance"]
    assert prov["stamped_by"] == "commonkeep_omp" and prov["origin"] == "user_turn"
    assert prov["user_turn"]["rule"] == "user_turn/3" and "Please remember" not in json.dumps(prov)


def test_a_request_inside_a_project_prompt_template_is_held(world: OmpWorld) -> None:
    """A cloned repository's ``.omp/prompts/deploy-check.md`` holds "Please remember that …": OMP
    stores the expanded template as the person's ``role: user`` message, but they typed ``/deploy-check``."""
    prompts = world.project / ".omp" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "deploy-check.md").write_text(f"---\ndescription: check the deploy\n---\nCheck the deploy.\n{SAID}\n")

    entries = session(world, "/deploy-check")

    assert typed_entries(entries) == ["/deploy-check", "/exit"]
    assert any("Please remember that" in m for m in user_messages(entries))  # OMP's role: user holds the template
    records, cand = outcome(world)
    assert records == [] and cand["status"] == "new"
    assert cand.get("provenance", {}).get("origin") != "user_turn"


def test_a_fact_typed_without_asking_to_remember_it_waits(world: OmpWorld) -> None:
    session(world, FACT)

    records, cand = outcome(world)
    assert records == [] and cand["status"] == "new"


def test_commonkeep_remember_typed_in_the_editor_is_stamped_and_applied(world: OmpWorld) -> None:
    """The command runs in the extension, no model involved; OMP writes its session file at the first
    model reply (a session without one leaves no transcript, and the candidate waits for review)."""
    entries = session(world, f"/commonkeep-remember {FACT}", model_writes=False, then="thanks")

    assert typed_entries(entries) == [f"/commonkeep-remember {FACT}", "thanks", "/exit"]
    records, cand = outcome(world)
    assert records == [FACT] and cand["provenance"]["origin"] == "user_turn"
