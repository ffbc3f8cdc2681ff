"""Fixtures for the recall tests: contract-shaped records written into real JSONL files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def make_record(rid: str, statement: str, **extra: Any) -> dict[str, Any]:
    """A valid MemoryRecord (contract §4.1) in upstream field order; ``extra`` overrides fields."""
    rec: dict[str, Any] = {
        "id": rid,
        "layer": "L2",
        "scope": {"type": "global"},
        "tags": ["test"],
        "statement": statement,
        "evidence": [
            {"type": "artifact", "ref": "daily/2026-12-02.md", "note": "Captured evidence reference"}
        ],
        "confidence": 0.8,
        "stability": "semi-stable",
        "created_at": "2026-12-02",
        "updated_at": "2026-12-02",
        "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "When it changes."},
        "status": "active",
        "supersedes": [],
        "superseded_by": [],
        "vault_ref": None,
    }
    rec.update(extra)
    return rec


def seed(root: Path, records: list[dict[str, Any]], file: str = "memory/L2.playbooks.jsonl") -> None:
    """Append records to a canonical file of the root (as OMP's curator would)."""
    from commonkeep.store.jsonl import append_jsonl

    path = root / file
    path.parent.mkdir(parents=True, exist_ok=True)
    append_jsonl(path, records)


@pytest.fixture
def seeded(root: Path) -> Callable[..., Path]:
    def _seed(records: list[dict[str, Any]], file: str = "memory/L2.playbooks.jsonl") -> Path:
        seed(root, records, file)
        return root

    return _seed
