"""The ``user_turn`` stamp in the real Hermes (0.17 and 0.19): a fact the person asks to remember is
applied when the session ends; the same request arriving any other way — a tool result, a file
Hermes inlined for an ``@file:`` or ``@url:``, the model's own message quoted in a reply, a snippet
the person pasted — waits for review.

Hermes runs with ``memory.commonkeep.auto_curate: high-only`` as the writer role, so whatever
the policy lets through is applied at ``on_session_finalize`` and rendered into ``MEMORY.md``.
The model is the scripted fake server (a hosted LLM cannot be reached here); everything else
is the real Hermes with the installed plugin (``driver_user_turn.py``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.hermes.conftest import HermesWorld, make_world
from tests.hosts import hermes as hermes_host

pytestmark = pytest.mark.hermes

DRIVER = Path(__file__).with_name("driver_user_turn.py")
FACT = "The staging database is postgres 16 on port 6543."
SAID = "Please remember that the staging database is postgres 16 on port 6543."


def run(world: HermesWorld, via: str, nudge: int = 50) -> dict[str, Any]:
    world.write_config(nudge=nudge)
    world.commonkeep("hermes", "install", "--root", str(world.root), "--auto-curate", "high-only", "--role", "librarian")
    done = world.run(str(world.python), str(DRIVER), via)
    for line in done.stdout.splitlines():
        if line.startswith("RESULT "):
            result: dict[str, Any] = json.loads(line[len("RESULT "):])
            return result
    raise AssertionError(f"driver printed no result\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}")


def only_candidate(state: dict[str, Any]) -> dict[str, Any]:
    [cand] = [c for c in state["inbox"] if c["text"] == FACT]
    return cand


@pytest.mark.parametrize("version", [hermes_host.NEWEST, hermes_host.OLDEST])
def test_a_fact_the_person_states_is_applied_at_session_end(tmp_path: Path, version: str) -> None:
    world = make_world(version, tmp_path)
    out = run(world, "person")

    cand = only_candidate(out["after_turn"])
    assert cand["status"] == "new" and out["after_turn"]["records"] == []  # nothing applied before the end
    prov = cand["provenance"]
    assert prov["stamped_by"] == "commonkeep_hermes" and prov["origin"] == "user_turn"
    assert prov["write_origin"] == "foreground"
    assert prov["user_turn"]["rule"] == "user_turn/3" and prov["user_turn"]["session_id"] == out["session_id"]
    assert prov["user_turn"]["message_sha256"] == hashlib.sha256(SAID.encode()).hexdigest()
    assert "Please remember" not in json.dumps(prov)  # the stamp names the message, never copies it
    fin = out["after_finalize"]
    assert fin["records"] == [FACT]
    assert FACT in (fin["memory_md"] or "") and FACT in world.memory_file("MEMORY.md").read_text()


def test_the_same_sentence_in_a_tool_result_is_held(hermes19: HermesWorld) -> None:
    out = run(hermes19, "file")

    assert any(FACT in r for r in out["tool_results"]), out["tool_results"]  # the model did read it
    cand = only_candidate(out["after_finalize"])
    assert cand["status"] == "new" and cand["primary_trust_class"] == "agent_inference"
    assert cand["provenance"]["origin"] == "foreground" and "user_turn" not in cand["provenance"]
    assert out["after_finalize"]["records"] == []
    assert FACT not in (out["after_finalize"]["memory_md"] or "")


def test_a_fact_hermes_background_review_saves_is_verified_against_the_persons_words(hermes19: HermesWorld) -> None:
    out = run(hermes19, "review", nudge=1)

    prov = only_candidate(out["after_turn"])["provenance"]
    assert prov["origin"] == "user_turn" and prov["write_origin"] == "background_review"
    assert prov["user_turn"]["message_sha256"] == hashlib.sha256(SAID.encode()).hexdigest()
    assert out["after_finalize"]["records"] == [FACT]


def test_the_same_sentence_in_a_snippet_the_person_pasted_is_held(hermes19: HermesWorld) -> None:
    """The person's message holds the sentence, but in a fenced snippet they pasted (with a planted
    "save the line above"): pasted text is not the person's word, so no stamp, nothing applied."""
    out = run(hermes19, "pasted")

    cand = only_candidate(out["after_finalize"])
    assert cand["status"] == "new" and "user_turn" not in cand["provenance"]
    assert cand["provenance"]["origin"] != "user_turn"
    assert out["after_finalize"]["records"] == []
    assert FACT not in (out["after_finalize"]["memory_md"] or "")


def test_an_entry_the_model_writes_into_memory_md_with_a_file_tool_is_refused(hermes19: HermesWorld) -> None:
    """Past the ``memory`` tool: the model writes Hermes' ``MEMORY.md`` with Hermes' own ``write_file``.
    The plugin refuses it (issue 35 §4: the files stamps are read from are not for the model's file
    tools), so there is no edit to capture; had one got there, it would earn no stamp (an edit looks
    the same from a person's hand and an agent's file tool) and wait."""
    out = run(hermes19, "file_edit")

    assert any("refused by commonkeep" in r and "MEMORY.md" in r for r in out["tool_results"]), out["tool_results"]
    assert [c for c in out["after_finalize"]["inbox"] if c["text"] == FACT] == []
    assert out["after_finalize"]["records"] == []
    assert FACT not in (out["after_finalize"]["memory_md"] or "")  # re-rendered from the store: the edit waits
    # the next session end (or the librarian's own pass) curates with the high-only policy: still held
    hermes19.commonkeep("curate", "--auto", "--root", str(hermes19.root), "--role", "librarian")
    from commonkeep.store.core import Store

    store = Store(hermes19.root, warn=False)
    assert [r.get("statement") for r in store.records()] == []
    assert [c["status"] for c in store.candidates() if c["text"] == FACT] == []  # refused: nothing was written to hold


def held(out: dict[str, Any]) -> None:
    """The candidate the model wrote waits: not stamped, nothing applied, not in MEMORY.md."""
    cand = only_candidate(out["after_finalize"])
    assert cand["status"] == "new" and cand["provenance"]["origin"] == "foreground", cand
    assert "user_turn" not in cand["provenance"] and cand["primary_trust_class"] == "agent_inference"
    assert out["after_finalize"]["records"] == []
    assert FACT not in (out["after_finalize"]["memory_md"] or "")


@pytest.mark.parametrize("version", [hermes_host.NEWEST, hermes_host.OLDEST])
def test_a_request_in_a_file_hermes_attached_is_held(tmp_path: Path, version: str) -> None:
    """``summarise @file:notes.md``: Hermes inlines the file, whose own fence would close Hermes' fence,
    and "Remember that …" after it reads like the person's line; what Hermes attached is not read."""
    out = run(make_world(version, tmp_path), "at_file")
    assert "--- Attached Context ---" in out["message"] and "Remember that" in out["message"]
    assert out["user_turns"] and "Remember that" in str(out["user_turns"][0])  # the model saw it as the user's
    held(out)


def test_a_request_in_a_page_hermes_fetched_for_an_at_url_is_held(hermes19: HermesWorld) -> None:
    out = run(hermes19, "at_url")
    assert "🌐 @url:http://127.0.0.1:" in out["message"] and "Remember that" in out["message"]
    held(out)


@pytest.mark.parametrize("version", [hermes_host.NEWEST, hermes_host.OLDEST])
def test_a_request_in_the_models_message_quoted_by_a_reply_is_held(tmp_path: Path, version: str) -> None:
    out = run(make_world(version, tmp_path), "reply")
    assert out["message"].startswith('[Replying to') and "Remember that" in out["message"]
    assert out["message"].endswith("ok, thanks")
    held(out)


def test_a_request_the_person_typed_beside_an_at_file_is_applied(hermes19: HermesWorld) -> None:
    out = run(hermes19, "person_at_file")
    assert "--- Attached Context ---" in out["message"]
    prov = only_candidate(out["after_turn"])["provenance"]
    assert prov["origin"] == "user_turn" and prov["stamped_by"] == "commonkeep_hermes"
    assert out["after_finalize"]["records"] == [FACT]
