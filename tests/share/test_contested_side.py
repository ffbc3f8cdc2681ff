"""The merge driver's side file becomes contested candidates once, even when a sync died after
making them and before clearing the side file (real files, the real inbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.share.contested import candidates_from_side
from commonkeep.share.merge import BOTH_CHANGED
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from tests.share.helpers import L2, WRITER

X = "mem_20261202000020_xxxxxxxx"


@pytest.mark.parametrize(
    "statement",
    [
        "  Deploys go through the staging cluster first.  ",  # spaces capture strips
        "Deploy with token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 on staging",  # a secret capture redacts
    ],
)
def test_a_side_entry_made_a_candidate_by_a_sync_that_died_makes_no_second_one(tmp_path: Path, statement: str) -> None:
    root = ensure_layout(tmp_path / "r").root
    side = tmp_path / "commonkeep-contested.jsonl"
    line = json.dumps({"id": X, "layer": "L2", "statement": statement, "status": "active"})
    entry = json.dumps({"path": L2, "id": X, "kind": BOTH_CHANGED, "line": line}) + "\n"
    side.write_text(entry, encoding="utf-8")
    first = candidates_from_side(root, side, "origin", "abc123", WRITER, set())
    assert len(first.created) == 1
    side.write_text(entry, encoding="utf-8")  # the sync died before clearing the side file; the next one reads it again
    second = candidates_from_side(root, side, "origin", "abc123", WRITER, set())
    assert second.created == []
    assert len([c for c in Store(root).candidates() if "contested" in (c.get("tags") or [])]) == 1
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in (root / "inbox" / "captured.jsonl").read_text(encoding="utf-8")
