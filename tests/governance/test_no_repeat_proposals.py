"""Curate never proposes twice what a still-pending patch already proposes (no repeated patches,
no double add when every patch is applied)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.reviews.review import approve
from commonkeep.store.core import Store
from tests.governance.conftest import INJECTION, WRITER, run_cli, write_candidate, writer_args

_run = run_cli
_r = writer_args


def _patch_files(root: Path) -> list[Path]:
    return sorted((root / "patches").glob("*.json"))


def _patch(root: Path, pid: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((root / "patches" / f"{pid}.json").read_text())
    return doc


def _record_ids(root: Path) -> list[str]:
    return [str(r["id"]) for r in Store(root).records(active_only=False)]


def test_curating_twice_with_nothing_new_writes_no_second_patch(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_candidate(root, "Use black for formatting Python code.")
    bad = write_candidate(root, INJECTION)
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    first = json.loads(out)
    assert code == 0 and [o["candidate_id"] for o in first["ops"]] == [good["id"], bad["id"]]
    for _ in range(2):
        code, out, _ = _run(capsys, "curate", *_r(root))
        assert code == 0
        assert out.startswith("nothing to propose: nothing new, everything curation found already waits in a patch; no patch written")
        pid = first["patch_id"]
        assert f"already proposed: candidate {good['id']} (add mem_{good['id'][4:]}) in patch {pid}" in out
        # op_002 is not default-selected: a plain apply would not apply it, so the hint names it
        assert f"(apply it: commonkeep apply {pid} --ops op_001,op_002)" in out
    assert [p.stem for p in _patch_files(root)] == [first["patch_id"]]
    again = curate(root, role=WRITER)
    assert again.ops == [] and again.path is None and sorted(o["candidate_id"] for o in again.held) == sorted([good["id"], bad["id"]])


def test_a_new_candidate_gets_a_patch_of_its_own_and_applying_both_adds_each_record_once(root: Path) -> None:
    a = write_candidate(root, "Use black for formatting Python code.", tags=["format"])
    first = curate(root, role=WRITER)
    b = write_candidate(root, "Name branches after the ticket number.", tags=["branches"])
    second = curate(root, role=WRITER)
    assert second.path is not None and len(_patch_files(root)) == 2
    assert [(o["op"], o["candidate_id"]) for o in second.ops] == [("add", b["id"])]
    assert second.already_proposed == {f"candidate {a['id']} (add mem_{a['id'][4:]})": first.patch["patch_id"]}
    one = apply_patch(root, first.patch["patch_id"], role=WRITER)
    two = apply_patch(root, second.patch["patch_id"], role=WRITER)
    assert (one.applied, one.skipped, two.applied, two.skipped) == (["op_001"], {}, ["op_001"], {})
    ids = _record_ids(root)
    assert sorted(ids) == sorted(["mem_" + a["id"][4:], "mem_" + b["id"][4:]])  # each exactly once
    assert {c["status"] for c in Store(root).candidates()} == {"patched"}
    # both patches are applied: nothing waits, nothing is new, curate writes nothing
    third = curate(root, role=WRITER)
    assert third.ops == [] and third.already_proposed == {} and len(_patch_files(root)) == 2


def test_review_shows_a_waiting_candidate_as_before_and_approving_it_adds_it_once(root: Path,
                                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    a = write_candidate(root, "Use black for formatting Python code.", tags=["format"])
    write_candidate(root, INJECTION)
    write_candidate(root, "Prefer small pull requests.", confidence=0.5)  # below the gate
    code, before, _ = _run(capsys, "review", *_r(root), "--list", "--json")
    assert code == 0 and len(json.loads(before)) == 3
    pid = curate(root, role=WRITER).patch["patch_id"]
    assert curate(root, role=WRITER).path is None and len(_patch_files(root)) == 1
    code, after, _ = _run(capsys, "review", *_r(root), "--list", "--json")
    assert code == 0 and after == before  # the same queue, with the same ops and before/after
    code, text, _ = _run(capsys, "review", *_r(root), "--list")
    assert code == 0 and f"== {a['id']}" in text and "-> add  (risk low)" in text
    approve(root, [a["id"]], role=WRITER)
    # the older patch's add of the approved candidate is refused when that patch is applied
    res = apply_patch(root, pid, role=WRITER)
    assert res.applied == [] and res.skipped == {"op_001": f"its candidate {a['id']} was already promoted by another patch"}
    assert _record_ids(root) == ["mem_" + a["id"][4:]]


def test_a_candidate_rejected_while_its_patch_waits_is_not_proposed_again(root: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    a = write_candidate(root, "Use black for formatting Python code.", tags=["format"])
    b = write_candidate(root, "Name branches after the ticket number.", tags=["branches"])
    pid = curate(root, role=WRITER).patch["patch_id"]
    code, _, _ = _run(capsys, "review", *_r(root), "--reject", a["id"], "--reason", "not durable")
    assert code == 0
    # a is rejected (never resurrected), b still waits in the patch: nothing new to propose
    again = curate(root, role=WRITER)
    assert again.ops == [] and again.path is None and len(_patch_files(root)) == 2  # the patch + review's reject patch
    assert list(again.already_proposed) == [f"candidate {b['id']} (add mem_{b['id'][4:]})"]
    res = apply_patch(root, pid, role=WRITER)
    assert res.applied == ["op_002"] and res.skipped == {"op_001": f"its candidate {a['id']} was rejected"}
    assert _record_ids(root) == ["mem_" + b["id"][4:]]


def test_ops_left_unselected_in_a_partially_applied_patch_still_wait_there(root: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    bad = write_candidate(root, INJECTION)
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    pid = json.loads(out)["patch_id"]
    assert _run(capsys, "apply", pid, *_r(root))[0] == 0
    assert _patch(root, pid)["status"] == "partially_applied"
    code, out, _ = _run(capsys, "curate", *_r(root))
    assert code == 0 and out.startswith("nothing to propose: nothing new")
    assert f"already proposed: candidate {bad['id']} (add mem_{bad['id'][4:]}) in patch {pid} (apply it: commonkeep apply {pid} --ops op_002)" in out
    assert len(_patch_files(root)) == 1
    # once the waiting op is applied (or refused) nothing holds the candidate back any more
    res = apply_patch(root, pid, role=WRITER, op_ids=["op_002"])
    assert res.applied == ["op_002"] and curate(root, role=WRITER).already_proposed == {}


def test_the_same_update_in_two_patches_is_applied_once(root: Path) -> None:
    write_candidate(root, "Run the test suite with pytest -q before committing.", tags=["tests"])
    apply_patch(root, curate(root, role=WRITER).patch["patch_id"], role=WRITER)
    cand = write_candidate(root, "Run the test suite with pytest -q before every commit.", tags=["tests"],
                           evidence_refs=["ci.yml", "Makefile"])
    first = curate(root, role=WRITER)
    # a changed statement is never selected by default (issue 22): the person names the op
    assert [(o["op"], o["candidate_id"], o["default_selected"]) for o in first.ops] == [("update", cand["id"], False)]
    assert curate(root, role=WRITER).path is None
    # a second patch holding the same update, as curate wrote before it stopped repeating itself
    legacy = {**_patch(root, first.patch["patch_id"]), "patch_id": "patch_202612021200_ckdup001"}
    (root / "patches" / "patch_202612021200_ckdup001.json").write_text(json.dumps(legacy, indent=2) + "\n")
    assert apply_patch(root, first.patch["patch_id"], role=WRITER, op_ids=["op_001"]).applied == ["op_001"]
    after_first = Store(root).records()
    res = apply_patch(root, "patch_202612021200_ckdup001", role=WRITER, op_ids=["op_001"])
    assert res.applied == [] and res.skipped == {"op_001": f"its candidate {cand['id']} was already promoted by another patch"}
    assert Store(root).records() == after_first


def test_a_patch_whose_applied_ops_are_not_op_ids_does_not_stop_curate(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (root / "patches").mkdir(exist_ok=True)
    (root / "patches" / "hand_edited.json").write_text(json.dumps(  # a hand edit, another machine's file
        {"status": "partially_applied", "applied_ops": [{"op_id": "op_001"}], "ops": [{"op": "add", "op_id": "op_001"}]}
    ), encoding="utf-8")
    write_candidate(root, "Run the database migrations inside a transaction.")
    code, out, err = _run(capsys, "curate", *_r(root), "--json")
    assert code == 0, err
    assert json.loads(out)["patch_id"]
