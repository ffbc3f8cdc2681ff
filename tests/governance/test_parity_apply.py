"""Applying OmpKeep's own ops: every field applied as OmpKeep applies it, or refused by name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.patches.patch import apply_patch
from commonkeep.store.jsonl import append_jsonl, read_jsonl
from tests.governance.conftest import WRITER
from tests.recall.conftest import make_record

L2 = "memory/L2.playbooks.jsonl"


def _patch(pid: str, *ops: dict[str, Any]) -> dict[str, Any]:
    return {"patch_id": pid, "created_at": "2026-12-04T09:30:00.000Z", "generated_by": "manual", "mode": "supervised",
            "summary": "t", "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": [],
            "ops": [{"op_id": f"op_{i:03d}", "risk": "low", "default_selected": True, **o} for i, o in enumerate(ops, 1)]}


def test_add_exception_refuses_a_field_it_does_not_merge_by_name(root: Path) -> None:
    append_jsonl(root / L2, [make_record("mem_a", "Squash before merging.")])
    res = apply_patch(root, _patch("patch_202612040930_ckaaaaa1", {"op": "add_exception", "target_id": "mem_a",
                                                                   "updates": {"applies_when": ["main"], "statement": "x"}}), role=WRITER)
    assert res.applied == [] and "cannot change statement" in res.skipped["op_001"]
    assert read_jsonl(root / L2).rows[0]["statement"] == "Squash before merging."


def test_an_unknown_deletion_mode_is_refused_and_nothing_is_tombstoned(root: Path) -> None:
    append_jsonl(root / L2, [make_record("mem_a", "Squash before merging.")])
    with pytest.raises(BadInput, match="deletion_mode"):
        apply_patch(root, _patch("patch_202612040930_ckaaaaa2", {"op": "delete", "target_id": "mem_a", "deletion_mode": "hard"}),
                    role=WRITER)
    assert read_jsonl(root / L2).rows[0]["status"] == "active"
    assert (root / "memory" / "tombstones.jsonl").read_text() == ""


def test_an_audit_delete_keeps_the_line_and_a_purge_of_it_later_removes_it(root: Path) -> None:
    append_jsonl(root / L2, [make_record("mem_a", "The staging password rotates monthly."), make_record("mem_b", "Keep me.")])
    apply_patch(root, _patch("patch_202612040930_ckaaaaa3", {"op": "delete", "target_id": "mem_a"}), role=WRITER)
    rows = read_jsonl(root / L2).rows
    assert [(r["id"], r["status"]) for r in rows] == [("mem_a", "deleted"), ("mem_b", "active")]
    res = apply_patch(root, _patch("patch_202612040930_ckaaaaa4", {"op": "delete", "target_id": "mem_a",
                                                                   "deletion_mode": "privacy_purge"}), role=WRITER)
    assert res.applied == ["op_001"]
    assert [r["id"] for r in read_jsonl(root / L2).rows] == ["mem_b"]
    assert "rotates monthly" not in json.dumps([p.read_text() for p in (root / "patches").glob("*.json")])
    [tomb] = read_jsonl(root / "memory" / "tombstones.jsonl").rows
    assert tomb["deletion_mode"] == "privacy_purge"
