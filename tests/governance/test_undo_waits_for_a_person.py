"""Undo puts the candidate back under its own id, and what a person undid waits for a person
(issue 36's undo item, issue 40's first defect), whatever stamp the candidate carried."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.gate.autoapply import HOST_STAMPS
from commonkeep.gate.scoring import auto_apply_blockers
from commonkeep.store.core import Store
from tests.governance.conftest import WRITER, bind_stamp, write_candidate


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


def _records(root: Path) -> dict[str, str]:
    return {str(r["id"]): str(r["status"]) for r in Store(root, warn=False).records(active_only=False)}


def test_issue_40_an_undone_auto_applied_candidate_is_not_applied_again(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The exact reproduction of issue 40: a writer-stamped candidate, auto-applied, undone, then
    `curate --auto` again (on e82304b it applied op_001 a second time)."""
    r = str(root)
    out = _cli(capsys, "write", "--root", r, "--role", WRITER, "--trust", "direct_user_instruction", "--durability",
               "long_term", "--confidence", "0.95", "--evidence", "a.md", "--evidence", "b.md", "--json",
               "The staging database runs postgres 16 on port 5433.")
    cid = json.loads(out)["candidate"]
    first = json.loads(_cli(capsys, "curate", "--auto", "--root", r, "--role", WRITER, "--json"))
    assert first["applied_ops"] == ["op_001"]
    _cli(capsys, "review", "--undo", cid, "--root", r, "--role", WRITER)
    again = json.loads(_cli(capsys, "curate", "--auto", "--root", r, "--role", WRITER, "--json"))
    assert again["applied_ops"] == [] and again["held"] == {"a person undid its decision: it waits for a person": 1}
    assert list(_records(root).values()) == ["deprecated"]
    [back] = Store(root).candidates(status="new")
    assert back["id"] == cid  # under its own id, waiting
    _cli(capsys, "review", "--approve", cid, "--root", r, "--role", WRITER)  # a person approves it again: a new record
    assert sorted(_records(root).values()) == ["active", "deprecated"]


STAMPS = [{"stamped_by": host, "origin": origin} for host, origins in HOST_STAMPS.items() for origin in origins]


@pytest.mark.parametrize("stamp", [None, *STAMPS], ids=["writer", *(f"{s['stamped_by']}:{s['origin']}" for s in STAMPS)])
def test_every_stamp_an_undone_candidate_carried_waits_for_a_person(root: Path, stamp: dict[str, str] | None) -> None:
    """Each stamp that lets a candidate auto-apply (the writer's, every host's) stops counting once a
    person undid the candidate's decision."""
    cand = write_candidate(root, "Use tabs for indentation in Makefiles.")
    if stamp is not None:
        cand = {**cand, "provenance": {"agent": "planner", "role": "planner", **stamp}}
    bind_stamp(root, cand)  # as the adapter (or capture, for the writer's) binds it when it sets it
    assert auto_apply_blockers(cand, writer_role=WRITER, root=root) == []
    undone = {**cand, "provenance": {**cand["provenance"], "requeued_by": "patch_202612021000_ckabcdef"}}
    assert "a person undid its decision: it waits for a person" in auto_apply_blockers(undone, writer_role=WRITER, root=root)
