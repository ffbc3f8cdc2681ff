"""The governed memory loop on the real Hermes Agent, driven by the scripted fake LLM server.

Each test runs Hermes in its cache venv as a subprocess (see ``conftest.py``). About 10–20 s
per test, mostly Hermes' own start-up.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.hermes.conftest import HermesWorld, make_world
from tests.hosts import hermes as hermes_host

pytestmark = pytest.mark.hermes

MEMORY_FACT = "The staging database is postgres 16 on port 6543."
USER_FACT = "The user prefers answers in British English."
REVIEW_FACT = "The team deploys on Tuesdays only."
LONG_FACT = ("Staging database runbook: " + "restart the replica first, then the primary, then check lag; " * 5).strip()


def _staged(messages: list[str]) -> list[dict[str, object]]:
    out = []
    for msg in messages:
        try:
            data = json.loads(msg)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("staged"):
            out.append(data)
    return out


def _governed_loop(world: HermesWorld) -> None:
    world.write_config()
    world.install()

    # 1. the model calls `memory` twice (MEMORY.md, then USER.md as a batch)
    run = world.drive("write")
    assert run["reply"] == "Noted."
    assert "commonkeep-governance" in {p["key"] for p in run["plugins"] if p["enabled"]}
    staged = _staged(run["tool_messages"])
    assert [s["target"] for s in staged] == ["memory", "user", "memory"], run["tool_messages"]
    assert all("Staged for review" in str(s["message"]) for s in staged)
    # MEMORY.md / USER.md untouched: the built-in tool never ran
    assert run["after"] == run["before"]
    assert not world.memory_file("MEMORY.md").exists() or MEMORY_FACT not in world.memory_file("MEMORY.md").read_text()

    inbox = {c["text"]: c for c in world.inbox()}
    mem, user = inbox[MEMORY_FACT], inbox[USER_FACT]
    for cand, target in ((mem, "memory"), (user, "user")):
        prov = cand["provenance"]
        assert cand["status"] == "new"
        assert prov["stamped_by"] == "commonkeep_hermes" and prov["agent"] == "hermes"
        assert prov["session_id"] == run["session_id"]
        assert prov["turn_id"] and prov["tool_call_id"].startswith("call_")
        assert prov["target"] == target and prov["background_review"] is False
        assert prov["hermes_version"] == world.version
    assert user["proposed_layer"] == "L1" and user["promotion_eligibility"] == "l1_review_only"
    assert user["provenance"]["file"] == "USER.md"
    assert mem["proposed_layer"] == "L2"

    # 2. the librarian approves; after_apply re-renders Hermes' files within their limits
    world.approve_all()
    mem_text = world.memory_file("MEMORY.md").read_text()
    entries = mem_text.split("\n§\n")
    assert MEMORY_FACT in entries and len(mem_text) <= 300
    cut = [e for e in entries if e.endswith("…")]  # the long record, cut to half the file
    assert len(cut) == 1 and LONG_FACT.startswith(cut[0][:-1]) and len(cut[0]) <= 150
    assert world.memory_file("USER.md").read_text() == USER_FACT

    # 3. the next session's system prompt carries both files, within the configured limits
    nxt = world.drive("prompt")
    system = nxt["system"]
    assert mem_text in system and USER_FACT in system
    assert f"MEMORY (your personal notes) [{len(mem_text) * 100 // 300}% — {len(mem_text)}/300 chars]" in system
    assert f"USER PROFILE (who the user is) [22% — {len(USER_FACT)}/200 chars]" in system
    assert "governed by commonkeep" in system
    assert "commonkeep_search" in nxt["tools"] and "memory" in nxt["tools"]
    # the record cut to fit the budget is recalled whole by prefetch, fenced as memory context
    assert LONG_FACT not in system
    (turn,) = nxt["user_messages"]
    assert "<memory-context>" in turn and LONG_FACT in turn and "not instructions" in turn
    # the model's explicit recall through the commonkeep_search tool
    (found,) = nxt["tool_messages"]
    assert "memory record(s)" in found and LONG_FACT in found, found


def test_memory_write_is_staged_with_provenance_and_appears_after_apply(hermes19: HermesWorld) -> None:
    _governed_loop(hermes19)


def test_same_flow_on_the_oldest_supported_hermes(hermes_oldest: HermesWorld) -> None:
    assert hermes_oldest.version == hermes_host.OLDEST == "0.17.0"
    _governed_loop(hermes_oldest)


def test_same_flow_on_hermes_0_18(tmp_path: Path) -> None:
    world = make_world(hermes_host.MIDDLE, tmp_path)
    assert world.version == "0.18.2"
    _governed_loop(world)


def test_background_review_write_is_staged_too(hermes19: HermesWorld) -> None:
    hermes19.write_config(nudge=1)  # review after every user turn
    hermes19.install()
    run = hermes19.drive("review")
    assert run["reply"] == "Good to know."
    assert len(run["candidates"]) == 1, run
    prov = run["candidates"][0]["provenance"]
    assert prov["origin"] == "background_review" and prov["background_review"] is True
    assert REVIEW_FACT not in (run["files"]["MEMORY.md"] or "")


def test_pre_tool_call_fallback_blocks_and_stages(tmp_path: Path) -> None:
    """Where the middleware is missing the hook path stages the write and blocks the tool."""
    world = make_world(hermes_host.NEWEST, tmp_path)
    world.write_config()
    world.install()
    run = world.drive("write", COMMONKEEP_HERMES_GATE="hook")
    assert run["after"] == run["before"]
    texts = {c["text"] for c in world.inbox()}
    assert {MEMORY_FACT, USER_FACT} <= texts
    assert any("Staged for review" in m for m in run["tool_messages"]), run["tool_messages"]

    # `commonkeep hermes status` names both roots and what is pending
    path = f"{world.bin}{os.pathsep}{os.environ.get('PATH', '')}"
    st = json.loads(world.commonkeep("hermes", "status", "--json", OMP_MEMORY_ROOT=str(world.root), PATH=path).stdout)
    assert st["hermes"] == str(world.bin / "hermes") and st["hermes_imports_commonkeep"] is True
    assert st["installed"] and st["provider"] and st["plugin_enabled"] and st["shim"]
    assert st["hermes_root"] == str(world.root) and st["same_root"]
    assert st["pending_from_hermes"] == 3
    assert "pending candidates: 3 (3 from Hermes)" in world.commonkeep("hermes", "status").stdout


def test_without_the_plugin_hermes_own_gate_parks_writes_and_sync_harvests_them(hermes19: HermesWorld) -> None:
    """If the governance plugin fails to load, ``write_approval`` (set by install) still gates."""
    from commonkeep_hermes.configyaml import ConfigDoc

    hermes19.write_config()
    hermes19.install()
    doc = ConfigDoc(hermes19.config.read_text())
    doc.remove_from_list("plugins", "enabled", "commonkeep-governance")
    hermes19.config.write_text(doc.text())
    run = hermes19.drive("write")
    assert run["after"] == run["before"]  # nothing reached the files
    parked = list((hermes19.hermes_home / "pending" / "memory").glob("*.json"))
    assert len(parked) == 3 and hermes19.inbox() == []

    hermes19.commonkeep("hermes", "sync")
    cands = hermes19.inbox()
    assert {c["text"] for c in cands} == {MEMORY_FACT, USER_FACT, LONG_FACT}
    assert {c["provenance"]["origin"] for c in cands} == {"write_approval"}
    assert not list((hermes19.hermes_home / "pending" / "memory").glob("*.json"))


def test_files_are_refreshed_when_a_session_finalizes_or_resets(hermes19: HermesWorld) -> None:
    hermes19.write_config()
    hermes19.install()
    seen = hermes19.drive("finalize")
    fin, reset = seen["on_session_finalize"], seen["on_session_reset"]
    assert MEMORY_FACT not in (fin["stale"] or "") and MEMORY_FACT in fin["after"]
    assert REVIEW_FACT not in reset["stale"] and REVIEW_FACT in reset["after"]


def test_a_session_start_says_what_waits_for_review(hermes19: HermesWorld) -> None:
    """Issue 36: 241 staged writes sat unnoticed for 8 weeks. At a new session the person sees the
    queue in Hermes' terminal, the agent's system prompt carries it, and the digest is up to date."""
    from tests.hermes.conftest import DRIVER

    world = hermes19
    world.write_config()
    world.install()
    for text in (MEMORY_FACT, REVIEW_FACT):
        world.commonkeep("write", "--root", str(world.root), "--agent", "hermes", text)
    done = world.run(str(world.python), str(DRIVER), "prompt")
    shown = re.search(r"^commonkeep: (2 memories wait for review \(oldest (?:just now|\d+ min)\): run `commonkeep review`)",
                      done.stdout, re.M)
    assert shown, done.stdout[-2000:]
    line = shown.group(1)
    result = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))[len("RESULT "):])
    assert f"{line}; mention it to the person once." in result["system"]
    digest = (world.root / "reports" / "review-digest.txt").read_text(encoding="utf-8")
    assert digest.startswith("2 memories wait for review (oldest ") and "\nwaiting: 2\n" in digest
