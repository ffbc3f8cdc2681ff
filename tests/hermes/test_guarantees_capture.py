"""Hermes memory writes become governed candidates (``commonkeep_hermes.capture``), in the fast
suite: what the model may ask, what each write becomes (layer, trust, review gate, references),
and that imports and harvested writes are captured once (issue 28's mutation testing).
Real roots, real files; no Hermes needed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep_hermes.capture import (
    MemoryOp,
    Provenance,
    candidate_for,
    capture_entries,
    captured_keys,
    entry_key,
    harvest_pending,
    parse_memory_args,
    stage_memory_call,
)


@pytest.mark.parametrize(("args", "words"), [
    ({"action": "add", "target": "soul", "content": "x"}, "target must be one of memory, user, not 'soul'"),
    ({"action": "rewrite", "content": "x"}, "operation 0: action must be one of add, replace, remove, not 'rewrite'"),
    ({"content": "x"}, "operation 0: action must be one of add, replace, remove, not ''"),
    ({"action": "add", "content": "   "}, "operation 0: add needs a non-empty content"),
    ({"action": "replace", "old_text": "a"}, "operation 0: replace needs a non-empty content"),
    ({"action": "replace", "content": "b"}, "operation 0: replace needs old_text (a substring of the entry)"),
    ({"action": "remove", "old_text": "  "}, "operation 0: remove needs old_text"),
    ({"operations": [{"action": "add", "content": "ok"}, "nope"]}, "operation 1 is not an object"),
    ({"operations": []}, "no operations given"),
])
def test_a_memory_call_the_gate_cannot_read_is_refused_with_the_reason(args: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError) as bad:
        parse_memory_args(args)
    assert words in str(bad.value)


def test_a_memory_call_is_read_as_its_ops() -> None:
    assert parse_memory_args({"action": "add", "content": "  a fact  "}) == [MemoryOp("add", "memory", "a fact")]
    batch = {"target": "user", "operations": [
        {"action": "add", "content": "likes tea"},
        {"action": "replace", "target": "memory", "content": "new", "old_text": " old "},
        {"action": "remove", "old_text": "gone"},
    ]}
    assert parse_memory_args(batch) == [MemoryOp("add", "user", "likes tea"), MemoryOp("replace", "memory", "new", "old"),
                                        MemoryOp("remove", "user", "", "gone")]


def test_entry_keys_are_stable_per_target_and_text() -> None:
    assert entry_key("memory", " a fact \n") == entry_key("memory", "a fact") != entry_key("user", "a fact")
    assert len(entry_key("memory", "a fact")) == 24


def test_a_memory_write_is_an_l2_agent_inference_for_review() -> None:
    prov = Provenance(origin="foreground", session_id="s1", turn_id="t1", tool_call_id="c1", platform="cli")
    cand = candidate_for(MemoryOp("add", "memory", "The CI runs on every push."), prov)
    assert cand["text"] == "The CI runs on every push."
    assert (cand["primary_trust_class"], cand["promotion_eligibility"], cand["proposed_layer"]) == (
        "agent_inference", "review_only", "L2")
    assert cand["durability_signal"] == "long_term" and cand["verification_status"] == "review_required"
    assert cand["source"]["type"] == "hermes" and cand["tags"] == [] and cand["thread_id"] == "s1"
    assert cand["source"]["ref"] == "hermes:session/s1/turn/t1/call/c1" and cand["memory_kind"] == "fact"
    assert cand["evidence_refs"] == ["hermes:session/s1/turn/t1/call/c1"]
    p = cand["provenance"]
    assert (p["agent"], p["stamped_by"], p["origin"], p["file"], p["action"], p["target"]) == (
        "hermes", "commonkeep_hermes", "foreground", "MEMORY.md", "add", "memory")
    assert p["background_review"] is False and p["platform"] == "cli" and "task_id" not in p
    assert p["entry_key"] == entry_key("memory", "The CI runs on every push.")


def test_a_user_write_is_an_l1_candidate_only_a_person_can_ratify() -> None:
    cand = candidate_for(MemoryOp("add", "user", "Prefers short answers."), Provenance(origin="background_review"))
    assert (cand["proposed_layer"], cand["promotion_eligibility"], cand["durability_signal"]) == (
        "L1", "l1_review_only", "user_global")
    assert cand["provenance"]["file"] == "USER.md" and cand["provenance"]["background_review"] is True
    assert cand["evidence_refs"] == ["hermes:session/unknown"]


def test_an_imported_entry_is_a_stamped_person_instruction_referenced_by_its_key() -> None:
    text = "Deploys go through staging first."
    cand = candidate_for(MemoryOp("add", "memory", text), Provenance(origin="import"))
    assert cand["primary_trust_class"] == "direct_user_instruction"
    assert cand["promotion_eligibility"] == "auto_candidate"
    assert cand["evidence_refs"] == [f"hermes:MEMORY.md#{entry_key('memory', text)}"]
    user = candidate_for(MemoryOp("add", "user", "Name: Sam."), Provenance(origin="external_edit"))
    assert user["evidence_refs"] == [f"hermes:USER.md#{entry_key('user', 'Name: Sam.')}"]
    assert user["promotion_eligibility"] == "l1_review_only" and user["primary_trust_class"] == "direct_user_instruction"


def test_replace_and_remove_point_at_the_rendered_records_they_match() -> None:
    rendered = {"Deploys go through staging first.": "mem_1", "Staging is refreshed weekly.": "mem_2",
                "Unrelated.": "mem_3", "Orphan staging line.": ""}
    prov = Provenance(origin="foreground")
    rep = candidate_for(MemoryOp("replace", "memory", "Deploys go through canary first.", "staging"), prov, rendered)
    assert rep["match_kind"] == "updates_existing" and rep["matched_memory_ids"] == ["mem_1"]
    assert rep["provenance"]["old_text"] == "staging"
    gone = candidate_for(MemoryOp("remove", "user", "", "Staging"), prov, rendered)
    assert gone["text"] == "Forget this user profile entry: Staging"
    assert gone["match_kind"] == "supersedes_existing" and gone["matched_memory_ids"] == ["mem_2"]
    none = candidate_for(MemoryOp("remove", "memory", "", "nothing like it"), prov, rendered)
    assert none["text"] == "Forget this memory entry: nothing like it" and "matched_memory_ids" not in none
    add = candidate_for(MemoryOp("add", "memory", "staging"), prov, rendered)
    assert "match_kind" not in add and "old_text" not in add["provenance"]


def test_staging_appends_one_candidate_per_op_and_answers_the_model(root: Path) -> None:
    from commonkeep.store.core import Store

    out = stage_memory_call(root, {"target": "user", "operations": [{"action": "add", "content": "Likes tea."},
                                                                   {"action": "add", "content": "Lives in Oslo."}]},
                            Provenance(origin="foreground"))
    ids = [c["id"] for c in Store(root).candidates()]
    assert out["candidate_ids"] == ids and out["pending_id"] == ids[0] and len(ids) == 2
    assert out["success"] is True and out["staged"] is True and out["done"] is True and out["target"] == "user"
    assert "do not retry" in out["message"] and ids[1] in out["message"]


def test_entries_are_captured_once_whatever_the_origin(root: Path) -> None:
    from commonkeep.store.core import Store

    first = capture_entries(root, {"memory": ["A fact.", "  ", "A fact."], "user": ["Sam."]}, "import", extra={"n": 1})
    assert len(first) == 2
    assert capture_entries(root, {"memory": ["A fact.", "Another."]}, "external_edit") != []
    assert capture_entries(root, {"memory": ["A fact.", "Another."], "user": ["Sam."]}, "external_edit") == []
    assert capture_entries(root, {"memory": ["Known."]}, "import", known={entry_key("memory", "Known.")}) == []
    cands = Store(root).candidates()
    assert [c["text"] for c in cands] == ["A fact.", "Sam.", "Another."]
    assert cands[0]["provenance"]["n"] == 1 and cands[0]["provenance"]["origin"] == "import"
    assert captured_keys(root) >= {entry_key("memory", "A fact."), entry_key("user", "Sam."), entry_key("memory", "Another.")}


def test_captured_keys_are_those_of_hermes_candidates_only(root: Path) -> None:
    from commonkeep.gate.capture import capture

    capture(root, "Not from Hermes.", provenance={"entry_key": "k_other"})
    assert captured_keys(root) == set()
    capture_entries(root, {"memory": ["From Hermes."]}, "import")
    assert captured_keys(root) == {entry_key("memory", "From Hermes.")}


def test_writes_hermes_parked_are_harvested_once_and_odd_files_left_alone(tmp_path: Path, root: Path) -> None:
    from commonkeep.store.core import Store

    pending, done = tmp_path / "pending", tmp_path / "done"
    assert harvest_pending(pending, done, root) == []  # no folder: nothing
    pending.mkdir()
    (pending / "a.json").write_text(json.dumps({"id": "pending-7", "origin": "foreground",
                                                "payload": {"action": "add", "target": "memory", "content": "One."}}))
    (pending / "b.json").write_text(json.dumps({"id": "b", "origin": "background_review", "payload": {
        "action": "batch", "target": "user", "operations": [{"action": "add", "content": "Two."},
                                                            {"action": "add", "content": "Three."}]}}))
    (pending / "c.json").write_text("{not json")
    (pending / "d.json").write_text(json.dumps({"id": "d", "payload": {"action": "explode"}}))
    (pending / "e.txt").write_text("not a write")
    (pending / "f.json").write_text(json.dumps({"payload": {"action": "add", "content": "Café au lait."}}),
                                    encoding="utf-8")  # after the odd ones, and without an id
    ids = harvest_pending(pending, done, root)
    cands = {c["id"]: c for c in Store(root).candidates()}
    assert list(cands) == ids and len(ids) == 4
    texts = {c["text"]: c["provenance"] for c in cands.values()}
    assert texts["One."]["origin"] == "write_approval" and texts["One."]["hermes_pending_id"] == "pending-7"
    assert texts["Two."]["origin"] == "background_review" and texts["Two."]["file"] == "USER.md"
    assert sorted(p.name for p in pending.iterdir()) == ["c.json", "d.json", "e.txt"]
    assert sorted(p.name for p in done.iterdir()) == ["a.json", "b.json", "f.json"]
    assert texts["Café au lait."]["hermes_pending_id"] == "f"  # the file's name stands in for a missing id
    assert "Café au lait." in (done / "f.json").read_text(encoding="utf-8")  # kept readable, not \u-escaped
    assert json.loads((done / "a.json").read_text())["payload"]["content"] == "One."
    assert harvest_pending(pending, done, root) == []


def test_a_replace_staged_through_the_gate_points_at_the_rendered_record(root: Path) -> None:
    from commonkeep.store.core import Store

    out = stage_memory_call(root, {"action": "replace", "content": "Deploys go through canary.", "old_text": "staging"},
                            Provenance(origin="foreground"), {"Deploys go through staging first.": "mem_1"})
    (cand,) = Store(root).candidates()
    assert cand["matched_memory_ids"] == ["mem_1"] and cand["match_kind"] == "updates_existing"
    assert out["message"] == (f"Staged for review: recorded as a governed memory candidate ({cand['id']}). "
                              "It will appear in memory after review; do not retry.")


def test_the_answer_lists_every_staged_candidate(root: Path) -> None:
    out = stage_memory_call(root, {"operations": [{"action": "add", "content": "One."}, {"action": "add", "content": "Two."}]},
                            Provenance(origin="foreground"))
    assert f"({out['candidate_ids'][0]}, {out['candidate_ids'][1]})." in out["message"]
    with pytest.raises(ValueError) as bad:
        parse_memory_args({"operations": []})
    assert str(bad.value) == "no operations given"


def test_imported_entries_are_adds_and_their_ids_are_returned(root: Path) -> None:
    from commonkeep.store.core import Store

    ids = capture_entries(root, {"memory": ["A fact."]}, "import")
    (cand,) = Store(root).candidates()
    assert ids == [cand["id"]] and cand["provenance"]["action"] == "add"


def test_an_entry_key_the_secret_scanner_redacted_is_still_known_by_its_source_reference(root: Path) -> None:
    from tests.governance.conftest import (
        adapter_candidate,  # as the plugin writes them (capture drops stamps)
    )

    key = entry_key("memory", "Known entry.")
    adapter_candidate(root, "Known entry.", {"stamped_by": "commonkeep_hermes", "entry_key": "[REDACTED]"},
                      source_type="hermes", source_ref=f"hermes:MEMORY.md#{key}")
    adapter_candidate(root, "Other.", {"stamped_by": "commonkeep_hermes", "entry_key": "k2"},
                      source_type="hermes", source_ref="hermes:session/s1")
    assert captured_keys(root) == {"[REDACTED]", key, "k2"}
    assert capture_entries(root, {"memory": ["Known entry."]}, "external_edit") == []
