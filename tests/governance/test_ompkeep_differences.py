"""Issue 39: where commonkeep wrote the OmpKeep store differently from OmpKeep itself, with no
reason of its own (the deliberate differences are listed in docs/store.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.recall.profile import resolve_profile, resource_id
from commonkeep.store.jsonl import append_jsonl, read_jsonl
from tests.governance.conftest import WRITER
from tests.recall.conftest import make_record

L2 = "memory/L2.playbooks.jsonl"
NOW = "2026-12-04T09:30:00.000Z"


def _patch(pid: str, *ops: dict[str, Any]) -> dict[str, Any]:
    return {"patch_id": pid, "created_at": NOW, "generated_by": "manual", "mode": "supervised", "summary": "t",
            "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": [],
            "ops": [{"op_id": f"op_{i:03d}", "risk": "low", "default_selected": True, **o} for i, o in enumerate(ops, 1)]}


def _ompkeep_candidate(cid: str, text: str, **extra: Any) -> dict[str, Any]:
    """A candidate as OmpKeep's capture writes it (no commonkeep trust metadata)."""
    return {"id": cid, "created_at": "2026-12-02T10:00:00.000Z", "source": {"type": "conversation", "ref": "s1", **extra.pop("source", {})},
            "text": text, "tags": extra.pop("tags", ["ruff"]), "evidence_refs": ["a", "b"], "confidence": 0.9, "status": "new", **extra}


def test_a_purge_tombstone_names_the_records_resource_and_profile(root: Path) -> None:
    append_jsonl(root / L2, [make_record("mem_a", "The staging password rotates monthly.", resource_id="user:alice",
                                         profile_id="project:ompproj")])
    apply_patch(root, _patch("patch_202612040930_ck39aaa1", {"op": "delete", "target_id": "mem_a", "deletion_mode": "privacy_purge",
                                                             "deletion_reason": "privacy_sensitive"}), role=WRITER)
    [tomb] = read_jsonl(root / "memory" / "tombstones.jsonl").rows
    assert list(tomb)[:4] == ["id", "resource_id", "profile_id", "deleted_record_id"]  # OmpKeep's order
    assert (tomb["resource_id"], tomb["profile_id"], tomb["deletion_mode"]) == ("user:alice", "project:ompproj", "privacy_purge")


def test_a_purge_notes_on_the_evidence_why_it_was_emptied(root: Path) -> None:
    append_jsonl(root / L2, [make_record("mem_a", "The staging password rotates monthly.")])
    append_jsonl(root / "memory" / "evidence.jsonl", [{
        "id": "ev_1", "resource_id": "user:alice", "profile_id": "project:ompproj", "created_at": NOW, "source_kind": "conversation",
        "source_summary": "staging password rotates monthly", "source_excerpt": "it rotates monthly", "excerpt_hash": "x" * 32,
        "redaction_status": "none", "trust_class": "direct_user_instruction", "polarity": "supports",
        "related_memory_ids": ["mem_a"], "notes": "said twice: rotates monthly"}])
    apply_patch(root, _patch("patch_202612040930_ck39aaa2", {"op": "delete", "target_id": "mem_a", "deletion_mode": "privacy_purge"}),
                role=WRITER)
    [ev] = read_jsonl(root / "memory" / "evidence.jsonl").rows
    assert (ev["source_summary"], ev["redaction_status"], ev["notes"]) == ("[deleted]", "deleted", "Linked memory was privacy-purged.")
    assert "source_excerpt" not in ev and "excerpt_hash" not in ev and "rotates" not in json.dumps(ev)


def test_a_project_playbook_is_proposed_to_l2_and_lands_in_its_project_file(root: Path) -> None:
    append_jsonl(root / "inbox" / "captured.jsonl", [_ompkeep_candidate("cand_ruff", "Lint with ruff before each commit.",
                                                                          source={"cwd": "/work/ompproj"})])
    proposal = curate(root, role=WRITER, mode="propose")
    [add] = [op for op in proposal.patch["ops"] if op["op"] == "add"]
    assert add["target"] == L2 and add["record"]["scope"] == {"type": "project", "project": "ompproj"}
    res = apply_patch(root, proposal.patch["patch_id"], role=WRITER, op_ids=[add["op_id"]])  # the person picks the op
    assert add["op_id"] in res.to_json()["applied_ops"], res.to_json()
    assert [r["id"] for r in read_jsonl(root / "memory" / "projects" / "ompproj.jsonl").rows] == [add["record"]["id"]]
    assert read_jsonl(root / L2).rows == []


def test_a_conflict_found_at_capture_opens_a_high_priority_inquiry(root: Path) -> None:
    append_jsonl(root / L2, [make_record("mem_deploy", "Deploy with make release.")])
    # OmpKeep's capture matched it against a record; this run's matching finds nothing to conflict with
    append_jsonl(root / "inbox" / "captured.jsonl", [_ompkeep_candidate(
        "cand_nose", "Lint with ruff before each commit.", match_kind="potential_conflict", matched_memory_ids=["mem_deploy"],
        match_reasons=["contradiction cue with same normalized key"])])
    curate(root, role=WRITER, mode="propose")
    [inquiry] = read_jsonl(root / "memory" / "inquiries.jsonl").rows
    assert (inquiry["priority"], inquiry["status"], inquiry["related_memory_ids"]) == ("high", "open", ["mem_deploy"])
    assert inquiry["context"].startswith("Match kind: potential_conflict. Matched memories: mem_deploy.")


@pytest.mark.parametrize(("user", "expected"), [("alice", "user:alice"), ("Ré Mi", "user:r-mi"), (None, "user:unknown")])
def test_the_user_is_named_as_ompkeep_names_it_under_bun(monkeypatch: pytest.MonkeyPatch, user: str | None, expected: str) -> None:
    if user is None:
        monkeypatch.delenv("USER", raising=False)
    else:
        monkeypatch.setenv("USER", user)
    assert resource_id() == expected


def test_another_user_name_updates_the_profiles_line_and_never_adds_a_second(
        root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "ompproj"
    cwd.mkdir()
    monkeypatch.setenv("USER", "alice")
    resolve_profile(root, cwd, NOW)
    monkeypatch.setenv("USER", "root")  # sudo, a service, a shell without the same $USER
    later = resolve_profile(root, cwd, "2026-12-05T09:30:00.000Z")
    [line] = read_jsonl(root / "memory" / "profiles.jsonl").rows
    assert line == later and line["resource_id"] == "user:alice" and line["updated_at"] == "2026-12-05T09:30:00.000Z"
    assert line["created_at"] == NOW
