"""``memory_record_problem``: what a record file may hold and still load as a record."""

from __future__ import annotations

from typing import Any

import pytest

from commonkeep.store.records import memory_record_problem


def _record(**extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": "mem_20261202105616_k3x9", "layer": "L2", "scope": {"type": "project", "project": "ompproj"},
        "tags": ["tooling"], "statement": "Run the test suite with pytest -q.",
        "evidence": [{"type": "artifact", "ref": "pyproject.toml", "note": "Captured evidence reference"}],
        "confidence": 0.88, "stability": "semi-stable", "created_at": "2026-12-02", "updated_at": "2026-12-02",
        "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "a new tool"},
        "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None,
    }
    rec.update(extra)
    return rec


@pytest.mark.parametrize("key", ["ruleType", "memory_kind", "normalized_key"])
@pytest.mark.parametrize("bad", [5, 1.5, True, ["testing"], {"k": "v"}])
def test_an_optional_string_field_of_another_type_makes_the_record_invalid(key: str, bad: Any) -> None:
    problem = memory_record_problem(_record(**{key: bad}))
    assert problem == f"field {key!r} must be a string when present (got {type(bad).__name__})"


@pytest.mark.parametrize("extra", [{}, {"ruleType": "testing"}, {"memory_kind": "fact"}, {"normalized_key": "pytest-q"},
                                   {"ruleType": None, "memory_kind": None, "normalized_key": None},
                                   {"ruleType": "not_an_upstream_enum"}])
def test_absent_null_or_string_optional_fields_pass(extra: dict[str, Any]) -> None:
    assert memory_record_problem(_record(**extra)) is None
