"""Review decisions that mean one thing: named choices, no contradiction added as agreement, no
second copy of a statement, stale ops skipped, undo as an audited reversing patch, outcomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.patches.waiting import record_key, waiting_in
from commonkeep.reviews.decide import load_context, plan
from commonkeep.reviews.outcome import outcome
from commonkeep.reviews.review import approve, reject
from commonkeep.reviews.undo import undo
from commonkeep.store.core import Store
from tests.governance.conftest import WRITER, run_cli, write_candidate, writer_args

TABS = "Use tabs for indentation in Python code."
NO_TABS = "Never use tabs for indentation in Python code."


def _records(root: Path, status: str | None = None) -> list[dict[str, Any]]:
    rows = Store(root, warn=False).records(active_only=False)
    return [r for r in rows if status is None or r.get("status") == status]


def _one_active_per_statement(root: Path) -> None:
    keys = [record_key(r) for r in _records(root, "active")]
    assert len(keys) == len(set(keys)), keys


def _record(root: Path, text: str, **kw: Any) -> dict[str, Any]:
    cand = write_candidate(root, text, **kw)
    approve(root, [cand["id"]], role=WRITER)
    return next(r for r in _records(root) if r["statement"] == text)


def test_a_duplicate_is_reinforced_by_default_never_added_twice(root: Path) -> None:
    rec = _record(root, TABS)
    dup = write_candidate(root, TABS, evidence_refs=["daily/2026-12-03.md", "ci.log"])
    p = plan(load_context(root), Store(root).candidates(status="new")[0])
    assert p.kind == "duplicate" and p.choices == ["reinforce", "replace"] and p.default == "reinforce"
    with pytest.raises(BadInput, match="'add' .*does not apply to a duplicate candidate; its choices are 'reinforce'"):
        approve(root, [dup["id"]], role=WRITER, choice="add")
    approve(root, [dup["id"]], role=WRITER)
    after = _records(root)
    assert len(after) == 1 and after[0]["id"] == rec["id"]
    assert {e["ref"] for e in after[0]["evidence"]} >= {"daily/2026-12-03.md", "ci.log"}
    assert after[0]["confidence"] > rec["confidence"]
    assert Store(root).candidates(status="patched")[-1]["id"] == dup["id"]


def test_replacing_a_duplicate_keeps_one_active_record(root: Path) -> None:
    old = _record(root, TABS)
    dup = write_candidate(root, TABS + " ")
    approve(root, [dup["id"]], role=WRITER, choice="replace")
    statuses = {r["id"]: r["status"] for r in _records(root)}
    assert statuses[old["id"]] == "superseded" and list(statuses.values()).count("active") == 1


def test_a_conflict_is_never_approved_as_agreement(root: Path) -> None:
    old = _record(root, TABS)
    con = write_candidate(root, NO_TABS)
    with pytest.raises(BadInput, match=rf"it contradicts {old['id']} \(\"{TABS}\"\): approving needs an explicit choice, 'replace'.* or 'keep_both'"):
        approve(root, [con["id"]], role=WRITER)
    assert [r["id"] for r in _records(root)] == [old["id"]]  # nothing applied
    approve(root, [con["id"]], role=WRITER, choice="contest")  # the page's word for keep both
    statuses = {r["statement"]: r["status"] for r in _records(root)}
    assert statuses == {TABS: "contested", NO_TABS: "contested"}


def test_a_conflict_replaced_supersedes_the_old_record(root: Path) -> None:
    old = _record(root, TABS)
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="replace")
    statuses = {r["statement"]: r["status"] for r in _records(root)}
    assert statuses == {TABS: "superseded", NO_TABS: "active"} and old["id"] in _records(root, "active")[0]["supersedes"]


def test_a_batch_of_two_identical_candidates_adds_one_record(root: Path) -> None:
    a = write_candidate(root, TABS)
    b = write_candidate(root, TABS)
    approve(root, [a["id"], b["id"]], role=WRITER)
    assert len(_records(root)) == 1 and len(Store(root).candidates(status="patched")) == 2


def test_a_stale_op_of_an_older_patch_is_skipped_with_its_reason(root: Path) -> None:
    a = write_candidate(root, TABS)
    pid = curate(root, role=WRITER).patch["patch_id"]  # proposes: add a
    _record(root, TABS)  # another candidate with the same text is approved first: a is now a duplicate
    approve(root, [a["id"]], role=WRITER)  # reinforces that record
    doc = json.loads((root / "patches" / f"{pid}.json").read_text())
    statuses = {str(c["id"]): c["status"] for c in Store(root).candidates()}
    assert waiting_in(doc) and waiting_in(doc, statuses) == []  # doctor does not count it as waiting
    res = apply_patch(root, pid, role=WRITER, op_ids=["op_001"])
    assert res.applied == [] and res.skipped == {"op_001": f"its candidate {a['id']} was already promoted by another patch"}
    _one_active_per_statement(root)
    assert len(_records(root)) == 1


def test_a_rejected_candidates_op_is_skipped_too(root: Path) -> None:
    a = write_candidate(root, TABS)
    pid = curate(root, role=WRITER).patch["patch_id"]
    reject(root, [a["id"]], reason="not durable", role=WRITER)
    res = apply_patch(root, pid, role=WRITER, op_ids=["op_001"])
    assert res.skipped == {"op_001": f"its candidate {a['id']} was rejected"} and _records(root) == []


def test_undo_of_an_add_deprecates_the_record_and_requeues_the_candidate(root: Path) -> None:
    cand = write_candidate(root, TABS)
    approve(root, [cand["id"]], role=WRITER)
    o = outcome(root, cand["id"])
    assert o.decision == "approved" and o.who == WRITER and o.choice == "add" and o.records == [f"mem_{cand['id'][4:]}"]
    done = undo(root, [cand["id"]], role=WRITER, reason="approved by mistake")
    assert [r["status"] for r in _records(root)] == ["deprecated"]
    back = next(c for c in Store(root).candidates(status="new"))
    assert (back["id"], back["created_at"], back["text"]) == (cand["id"], cand["created_at"], TABS)  # its own id and time
    assert back["provenance"]["requeued_by"] == done.patch_id  # a person decides it again, never the auto-apply
    patch = json.loads((root / "patches" / f"{done.patch_id}.json").read_text())
    assert patch["undoes"] == [o.patch_id] and patch["undo_reason"] == "approved by mistake"
    with pytest.raises(BadInput, match="already undone"):
        undo(root, [cand["id"]], role=WRITER)
    approve(root, [cand["id"]], role=WRITER)  # decided again: one active record, under a new record id
    _one_active_per_statement(root)
    assert [r["id"] for r in _records(root, "active")] == [f"mem_{cand['id'][4:]}_u1"]
    again = outcome(root, cand["id"])
    assert again.decision == "approved" and again.undone_by is None and again.records == [f"mem_{cand['id'][4:]}_u1"]
    assert undo(root, [cand["id"]], role=WRITER).requeued == {cand["id"]: cand["id"]}  # and undone again


def test_undo_of_a_reinforce_puts_the_old_values_back(root: Path) -> None:
    rec = _record(root, TABS)
    dup = write_candidate(root, TABS, evidence_refs=["daily/2026-12-03.md", "ci.log"])
    approve(root, [dup["id"]], role=WRITER)
    undo(root, [dup["id"]], role=WRITER)
    back = _records(root)[0]
    assert back["evidence"] == rec["evidence"] and back["confidence"] == rec["confidence"] and back["status"] == "active"


def test_undo_of_a_replace_brings_the_old_statement_back(root: Path) -> None:
    _record(root, TABS)
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="replace")
    undo(root, [con["id"]], role=WRITER)
    active = _records(root, "active")
    assert [r["statement"] for r in active] == [TABS] and active[0]["restored_from"]
    assert {r["statement"]: r["status"] for r in _records(root) if r["status"] != "active"} == {TABS: "superseded", NO_TABS: "deprecated"}


def test_undo_of_a_reject_requeues_and_leaves_an_explaining_patch(root: Path) -> None:
    cand = write_candidate(root, TABS)
    reject(root, [cand["id"]], reason="not durable", role=WRITER)
    o = outcome(root, cand["id"])
    assert (o.decision, o.reason, o.who) == ("rejected", "not durable", WRITER)
    done = undo(root, [cand["id"]], role=WRITER)
    assert done.applied == [] and (root / "patches" / f"{done.patch_id}.json").is_file()
    assert [c["id"] for c in Store(root).candidates(status="new")] == [cand["id"]]


def test_undo_of_a_pending_candidate_is_refused(root: Path) -> None:
    cand = write_candidate(root, TABS)
    with pytest.raises(BadInput, match="nothing to undo .* still pending"):
        undo(root, [cand["id"]], role=WRITER)


def test_the_cli_approves_with_a_choice_and_undoes(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _record(root, TABS)
    con = write_candidate(root, NO_TABS)
    code, _, err = run_cli(capsys, "review", *writer_args(root), "--approve", con["id"])
    assert code != 0 and "explicit choice" in err and "Traceback" not in err
    code, out, _ = run_cli(capsys, "review", *writer_args(root), "--approve", con["id"], "--choice", "keep_both")
    assert code == 0 and sorted(r["status"] for r in _records(root)) == ["contested", "contested"]
    code, out, _ = run_cli(capsys, "review", *writer_args(root), "--undo", con["id"])
    assert code == 0 and f"undid approved {con['id']}" in out and "back in the queue" in out
    assert [r["status"] for r in _records(root, "active")] == ["active"]


def test_a_different_number_is_a_conflict_not_agreement(root: Path) -> None:
    old = _record(root, "The maximum line length is 110 characters in this project.")
    other = write_candidate(root, "The maximum line length is 120 characters in this project.")
    p = plan(load_context(root), Store(root).candidates(status="new")[0])
    assert p.kind == "potential_conflict" and p.default is None and p.ops == []
    with pytest.raises(BadInput, match=f"contradicts {old['id']}"):
        approve(root, [other["id"]], role=WRITER)
    assert len(_records(root)) == 1


def test_reasons_read_as_plain_words(root: Path) -> None:
    from commonkeep.reviews.words import plain_reason

    a = write_candidate(root, TABS)
    pid = curate(root, role=WRITER).patch["patch_id"]
    reject(root, [a["id"]], reason="not durable", role=WRITER)
    skipped = apply_patch(root, pid, role=WRITER, op_ids=["op_001"]).skipped["op_001"]
    assert plain_reason(skipped) == f"already decided: candidate {a['id']} was rejected, so this older op was skipped"
    assert plain_reason("low_trust_class:repository_text") == "comes from a low-trust source (text found in a repository)"
    assert plain_reason("potential_conflict") == "contradicts a record in memory"
    assert plain_reason("some_new_code") == "some new code"  # never dropped


def test_one_rule_may_hold_in_two_projects(root: Path) -> None:
    a = write_candidate(root, TABS, cwd="/nonexistent/project-a")
    b = write_candidate(root, TABS, cwd="/nonexistent/project-b")
    approve(root, [a["id"]], role=WRITER)
    approve(root, [b["id"]], role=WRITER, choice="add")
    scopes = sorted(r["scope"]["project"] for r in _records(root, "active"))
    assert scopes == ["project-a", "project-b"]
