"""Handoff snapshots: the contract's plain format and commonkeep's goal snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.recall.handoff import write_handoff
from tests.recall.conftest import make_record, seed

NOW = "2026-12-02T10:56:16.123Z"
SECRET = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3"


def test_plain_snapshot_files_and_json_shape(root: Path) -> None:
    seed(root, [make_record("mem_a", "Use pytest."), make_record("mem_c", "Disputed.", status="contested")])
    seed(
        root,
        [
            make_record("mem_l1", "Ada.", layer="L1"),
            make_record("mem_l1_old", "Old.", layer="L1", status="deprecated"),
        ],
        file="memory/L1.identity.jsonl",
    )
    path = write_handoff(root, now=NOW)
    assert path == root / "reports" / "handoff" / "2026-12-02T10-56-16.json"
    raw = path.read_text(encoding="utf-8")
    assert not raw.endswith("\n") and raw.startswith('{\n  "id": "handoff_')
    snap = json.loads(raw)
    assert list(snap) == [
        "id", "created_at", "profile_id", "active_l1_count", "active_l2_count", "selected_memory_brief", "open_inquiry_count",
        "open_inquiry_questions", "contested_record_ids", "recent_evidence_count", "pending_candidate_count",
        "reinforcement_summary_brief",
    ]  # fmt: skip
    assert snap["created_at"] == NOW
    assert snap["active_l1_count"] == 2  # upstream quirk: every L1 line counts
    assert snap["active_l2_count"] == 1 and snap["contested_record_ids"] == ["mem_c"]
    assert snap["reinforcement_summary_brief"] == "1 active L2 records in this profile."
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    assert md.startswith(
        "# Memory Handoff Snapshot\n\n> Generated: 2026-12-02T10:56:16.123Z\n> [HANDOFF REFERENCE"
    )
    assert "## Active State\n- L1 identity records: 2\n- L2 playbook records: 1\n" in md
    assert "## Contested Records\n\n- mem_c\n" in md


def test_goal_snapshot_selects_relevant_memory_within_max_chars_and_redacts(root: Path) -> None:
    seed(
        root,
        [
            make_record(
                f"mem_{i:02d}", f"Deploy step {i}: run the release script with care and check the logs."
            )
            for i in range(30)
        ],
    )
    seed(
        root,
        [
            make_record("mem_cat", "The office cat is called Tom."),
            make_record("mem_key", f"The staging deploy token is {SECRET}."),
        ],
    )
    path = write_handoff(root, goal=f"deploy the release (token {SECRET})", max_chars=900, now=NOW)
    assert path.name == "goal-2026-12-02T10-56-16.json"
    raw = path.read_text(encoding="utf-8")
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    assert SECRET not in raw and SECRET not in md and "[REDACTED:openai_key]" in raw
    assert len(md) <= 900 and not raw.endswith("\n")
    snap = json.loads(raw)
    assert snap["intent_id"].startswith("intent_") and snap["schema"] == "commonkeep.goal-handoff/1"
    assert snap["selected_memory_ids"] and "mem_cat" not in snap["selected_memory_ids"]
    assert snap["selected_memory_ids"] == [s["id"] for s in snap["selected_memory"]]
    assert len(snap["selected_memory_ids"]) < 30  # bounded by max_chars
    assert len(snap["recommended_next_actions"]) == 3
    assert snap["active_memory_ids"] == sorted(snap["active_memory_ids"])


def test_goal_snapshot_refuses_an_empty_goal_or_a_tiny_bound(root: Path) -> None:
    from commonkeep.errors import BadInput

    with pytest.raises(BadInput):
        write_handoff(root, goal="  ")
    with pytest.raises(BadInput):
        write_handoff(root, goal="x", max_chars=10)


def test_handoff_cli_prints_the_path(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.cli import main

    seed(root, [make_record("mem_a", "Use pytest for tests.")])
    assert main(["handoff", "--root", str(root), "--goal", "fix the tests"]) == 0
    out = capsys.readouterr().out.strip()
    assert Path(out).is_file() and Path(out).name.startswith("goal-")


def test_handoff_help_names_the_goal_argument_the_way_its_text_does(capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.cli import main

    with pytest.raises(SystemExit) as exited:
        main(["handoff", "--help"])
    assert exited.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--goal GOAL" in help_text and "relevant to GOAL" in help_text
    assert "TEXT" not in help_text
