"""``patch_shape.plainly_valid``: a patch checked without pydantic says ``True`` only for what the
pydantic model accepts, and the schema it reads is the models' own."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.errors import BadInput
from commonkeep.store.models import validate_as
from commonkeep.store.patch_shape import SCHEMA, from_models, plainly_valid

RECORD: dict[str, Any] = {
    "id": "mem_20261202000000_aaaa", "layer": "L2", "scope": {"type": "global"}, "tags": ["python"],
    "statement": "Use ruff for linting.", "evidence": [{"type": "artifact", "ref": "ci.log", "note": "seen"}],
    "confidence": 0.9, "stability": "semi-stable", "created_at": "2026-12-02", "updated_at": "2026-12-02",
    "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "when it changes"},
    "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None,
}
PATCH: dict[str, Any] = {
    "patch_id": "patch_202612021200_ckabcd", "created_at": "2026-12-02T12:00:00.000Z", "generated_by": "manual",
    "mode": "supervised", "summary": "approve cap_x", "status": "proposed", "applied_at": None, "applied_ops": [],
    "skipped_ops": [], "decided_by": "librarian",
    "ops": [
        {"op_id": "op_001", "op": "add", "target": "memory/L2.playbooks.jsonl", "record": RECORD, "risk": "low",
         "default_selected": True, "candidate_id": "cap_x", "reason": "add it", "choice": "add"},
        {"op_id": "op_002", "op": "update", "target_id": "mem_y", "updates": {"confidence": 0.95}, "risk": "medium",
         "default_selected": True},
        {"op_id": "op_003", "op": "delete", "target_id": "mem_z", "deletion_mode": "privacy_purge",
         "deletion_reason": "privacy_sensitive", "risk": "low", "default_selected": False},
    ],
}


def _pydantic_accepts(patch: Any) -> bool:
    try:
        validate_as("patch", patch)
    except BadInput:
        return False
    return True


def test_the_schema_is_the_models_own() -> None:
    assert from_models() == SCHEMA


def test_a_patch_as_commonkeep_writes_it_is_plainly_valid() -> None:
    assert plainly_valid(PATCH) and _pydantic_accepts(PATCH)


@pytest.mark.parametrize(("path", "value"), [
    (("ops", 0, "record", "statement"), ""), (("ops", 0, "record", "confidence"), 1.5), (("ops", 0, "record", "confidence"), -0.1), (("ops", 0, "risk"), "urgent"),
    (("ops", 1, "default_selected"), "maybe"), (("status",), None), (("ops", 0, "record", "evidence"), []),
    (("ops", 0, "record", "review", "cadence_days"), "monthly"), (("applied_ops",), ["op_001", 2]),
])
def test_what_pydantic_refuses_is_never_plainly_valid(path: tuple[Any, ...], value: Any) -> None:
    patch = copy.deepcopy(PATCH)
    node = patch
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert not _pydantic_accepts(patch)
    assert not plainly_valid(patch)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [at] if at else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*at, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*at, i))
    return out


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3),
                   st.sampled_from(["add", "low", "L2", "manual", "proposed", "from", "global"]),
                   st.lists(st.text(max_size=2), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_plainly_valid_only_when_pydantic_accepts(data: st.DataObject) -> None:
    patch = json.loads(json.dumps(PATCH))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(patch)))
        node = patch
        for key in path[:-1]:
            node = node[key]
        if data.draw(st.booleans()) and isinstance(node, dict):
            del node[path[-1]]
        else:
            node[path[-1]] = data.draw(VALUES)
        if not _paths(patch):
            break
    if plainly_valid(patch):
        assert _pydantic_accepts(patch)


def test_validate_patch_names_what_is_wrong_and_passes_what_pydantic_coerces() -> None:
    from commonkeep.store.patch_shape import validate_patch

    validate_patch(PATCH)
    bad = copy.deepcopy(PATCH)
    bad["ops"][0]["risk"] = "urgent"
    with pytest.raises(BadInput, match=r"invalid patch in patch p: ops\.0\.risk"):
        validate_patch(bad, where="patch p")
    coerced = copy.deepcopy(PATCH)
    coerced["ops"][0]["record"]["review"]["cadence_days"] = "30"  # not plainly valid; pydantic reads it as 30.0
    assert not plainly_valid(coerced)
    validate_patch(coerced)
