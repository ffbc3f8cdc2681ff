"""Curate's selection, for every kind of op × every kind of stamp (issue 40): a candidate without a
bound stamp is never selected for an op that changes memory, whatever op curation gives it
(``add``, the ``update`` of a candidate that "strengthens existing" or "updates existing",
``supersede``, the ``add`` and ``contest`` of a conflict, an ambiguous ``add``, an L1 ``add``); the
``reject_candidate`` of a duplicate changes no record and stays selected. The bound stamp is the
control: without it this test could not tell a selection rule from no selection at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commonkeep.gate import stamps
from commonkeep.patches.auto import auto_select
from commonkeep.patches.curate import propose
from tests.governance.conftest import WRITER

ROOT = "/tmp/ck-root-of-the-selection-tests"  # the root stamps are bound for (only its name counts)
CHANGES = ("add", "update", "supersede", "contest", "add_exception")
KEY = "legacy|global|global|testing|memory"


def _record(rid: str, statement: str, tags: list[str], key: str | None = None) -> dict[str, Any]:
    rec = {"id": rid, "layer": "L2", "scope": {"type": "global"}, "tags": tags, "statement": statement,
           "evidence": [{"type": "artifact", "ref": "old.md", "note": "x"}], "confidence": 0.8, "stability": "semi-stable",
           "created_at": "2026-12-01", "updated_at": "2026-12-01", "status": "active", "supersedes": [], "superseded_by": [],
           "vault_ref": None}
    if key:
        rec["normalized_key"] = key
    return rec


RECORDS = [_record("mem_a", "Run the test suite with pytest -q before committing.", ["testing"], KEY),
           _record("mem_b", "Use tabs for indentation in Makefiles.", ["style"])]
AMBIGUOUS_RECORDS = [_record("mem_b", "Use tabs for indentation in Makefiles.", ["style"]),
                     _record("mem_c", "Use tabs for indentation in all Makefiles.", ["style"])]
#: kind -> (text, tags, records, the ops curation gives it, selected when its stamp is bound)
KINDS: dict[str, tuple[str, list[str], list[dict[str, Any]], list[str], bool]] = {
    "new": ("The staging database lives on host db2.", ["infra"], RECORDS, ["add"], True),
    "strengthens existing": ("Run the test suite before committing.", ["other"], RECORDS, ["update"], True),
    "updates existing": ("Run the test suite with pytest -q -x before committing code", ["other"], RECORDS, ["update"], False),
    "supersedes existing": ("Run tests with tox instead. supersedes mem_a", ["testing"], RECORDS, ["supersede"], False),
    "potential conflict": ("Do not use tabs for indentation in Makefiles.", ["lint"], RECORDS, ["add", "contest"], False),
    "ambiguous": ("Do not use tabs for indentation in Makefiles.", ["lint"], AMBIGUOUS_RECORDS, ["add"], False),
    "L1 identity": ("The person prefers British spelling in every document.", ["identity"], RECORDS, ["add"], False),
    "duplicate": ("Run the test suite with pytest -q before committing", ["testing"], RECORDS, ["reject_candidate"], True),
}
#: how a candidate came: (provenance, whether its stamp is bound in the journal)
STAMPS: dict[str, tuple[dict[str, Any], bool]] = {
    "an agent's tool": ({"agent": "planner", "role": "planner", "tool": "commonkeep_write"}, False),
    "an agent claiming the writer's stamp": ({"agent": "cli", "role": WRITER}, False),
    "the writer's stamp from an agent's shell": ({"agent": "cli", "role": WRITER, "tool": "omp shell"}, False),
    "a Hermes user_turn stamp not bound": ({"agent": "hermes", "stamped_by": "commonkeep_hermes", "origin": "user_turn"}, False),
    "an OMP user_turn stamp not bound": ({"agent": "omp", "stamped_by": "commonkeep_omp", "origin": "user_turn"}, False),
    "a Hermes import stamp not bound": ({"agent": "hermes", "stamped_by": "commonkeep_hermes", "origin": "import"}, False),
    "an external edit of Hermes' file": ({"agent": "hermes", "stamped_by": "commonkeep_hermes", "origin": "external_edit"}, True),
    "a stamp no adapter sets, bound": ({"agent": "x", "stamped_by": "commonkeep_mcp", "origin": "user_turn"}, True),
}


def _candidate(kind: str, prov: dict[str, Any], bound: bool) -> dict[str, Any]:
    text, tags = KINDS[kind][0], KINDS[kind][1]
    cand = {"id": f"cap_20261204_{abs(hash((kind, str(prov)))) % 10**8:08d}", "text": text, "tags": tags, "status": "new",
            "evidence_refs": ["a.md", "b.md"], "confidence": 0.95, "primary_trust_class": "direct_user_instruction",
            "durability_signal": "long_term", "promotion_eligibility": "auto_candidate", "source": {"type": "manual"},
            "provenance": prov, "created_at": "2026-12-04T10:00:00.000Z"}
    if kind == "L1 identity":
        cand["proposed_layer"] = "L1"
    if bound:
        by, origin = prov.get("stamped_by"), prov.get("origin")
        stamps.record_stamp(ROOT, cand, f"{by}/{origin}" if by else stamps.WRITER, "direct_user_instruction")
    return cand


def _proposal(kind: str, cand: dict[str, Any]) -> Any:
    records = KINDS[kind][2]
    return propose(records, [cand], tombstoned=set(), known_ids={r["id"] for r in records}, writer_role=WRITER,
                   mode="auto", root=ROOT)


@pytest.mark.parametrize("stamp", list(STAMPS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_candidate_without_a_bound_stamp_is_never_selected_to_change_memory(kind: str, stamp: str) -> None:
    prov, bound = STAMPS[stamp]
    cand = _candidate(kind, prov, bound)
    prop = _proposal(kind, cand)
    ops = [o for o in prop.ops if o.get("candidate_id") == cand["id"]]
    assert sorted(o["op"] for o in ops) == sorted(KINDS[kind][3]), (kind, [o["op"] for o in ops])  # the kind is reached
    for op in ops:
        if op["op"] in CHANGES:
            assert op["default_selected"] is False, (kind, stamp, op["op"])
    chosen = set(auto_select(prop, 0.0))  # at any confidence
    assert not [o for o in ops if o["op_id"] in chosen and o["op"] in CHANGES], (kind, stamp)


@pytest.mark.parametrize("kind", list(KINDS))
def test_with_a_bound_stamp_only_the_ops_that_add_or_strengthen_are_selected(kind: str) -> None:
    cand = _candidate(kind, {"agent": "cli", "role": WRITER}, True)
    prop = _proposal(kind, cand)
    ops = [o for o in prop.ops if o.get("candidate_id") == cand["id"]]
    want = KINDS[kind][4]
    assert [o["default_selected"] for o in ops] == [want] * len(ops), kind
    assert bool(set(auto_select(prop, 0.85)) & {o["op_id"] for o in ops}) is want


def test_a_duplicate_of_an_agent_is_rejected_by_default_and_changes_no_record() -> None:
    cand = _candidate("duplicate", STAMPS["an agent's tool"][0], False)
    [op] = [o for o in _proposal("duplicate", cand).ops if o.get("candidate_id") == cand["id"]]
    assert op["op"] == "reject_candidate" and op["default_selected"] is True


def test_curate_auto_applies_nothing_an_agent_wrote_that_strengthens_a_record(root: Path) -> None:
    """End to end on a real root: an agent's candidate that only strengthens a record would raise the
    record's confidence and add its evidence unseen, if its update were selected."""
    from commonkeep.patches.auto import auto_curate
    from commonkeep.store.core import Store
    from tests.governance.conftest import write_candidate

    write_candidate(root, KINDS["strengthens existing"][0].replace("before committing", "with pytest -q before committing"),
                    tags=["testing"])  # the writer's own, applied
    assert len(auto_curate(root, role=WRITER, policy="high-only", log=False).applied) == 1
    [before] = Store(root).records()
    write_candidate(root, KINDS["strengthens existing"][0], tags=["other"], confidence=0.95,
                    provenance={"agent": "planner", "role": "planner", "tool": "commonkeep_write"})
    done = auto_curate(root, role=WRITER, policy="high-only", log=False)
    assert done.applied == [] and [o["op"] for o in done.proposal.ops] == ["update"]
    assert Store(root).records() == [before]
