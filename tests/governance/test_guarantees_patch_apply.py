"""Guarantees of applying a patch's ops to canonical memory (the ``patch-apply`` mutation module).

Each test applies a real patch to a real root (files on disk, under the writer lock) and asserts
what a user depends on: a record added once and never duplicated, an update or a supersede applied
exactly as decided and nothing else changed, a refused op skipped with its reason and nothing
half-applied, a stale op of a candidate decided since left alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.store.jsonl import append_jsonl, read_jsonl
from tests.governance.conftest import WRITER, write_candidate
from tests.recall.conftest import make_record

L1 = "memory/L1.identity.jsonl"
L2 = "memory/L2.playbooks.jsonl"
NOW = "2026-12-04T09:30:00.000Z"
DAY = "2026-12-04"
_N = iter(range(1, 10_000))


@pytest.fixture(autouse=True)
def _clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_NOW", NOW)


def _patch(*ops: dict[str, Any], pid: str | None = None) -> dict[str, Any]:
    pid = pid or f"patch_202612040930_ckg{next(_N):04d}"
    return {"patch_id": pid, "created_at": NOW, "generated_by": "manual", "mode": "supervised", "summary": "t",
            "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": [],
            "ops": [{"op_id": f"op_{i:03d}", "risk": "low", "default_selected": True, **o} for i, o in enumerate(ops, 1)]}


def _bind_edit(root: Path, patch: dict[str, Any], statement: str) -> None:
    """What ``audit --apply-edited`` records when a person confirms an edited op (the stamp journal)."""
    from commonkeep.gate import stamps
    from commonkeep.patches.verify import sha256

    stamps.record_edit(root, patch["patch_id"], "op_001", sha256(statement))


def _apply(root: Path, *ops: dict[str, Any], ratify: bool = False) -> Any:
    return apply_patch(root, _patch(*ops), role=WRITER, ratify=ratify)


def _rows(root: Path, rel: str = L2) -> list[dict[str, Any]]:
    path = root / rel
    return read_jsonl(path).rows if path.exists() else []


def _by_id(root: Path, rel: str = L2) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _rows(root, rel)}


def _seed(root: Path, *recs: dict[str, Any], rel: str = L2) -> None:
    append_jsonl(root / rel, list(recs))


def _saved(root: Path, res: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(res.path.read_text(encoding="utf-8"))
    return doc


# --- adds: once, never twice, never over a tombstone -------------------------------------------


def test_an_add_lands_once_and_an_add_of_the_same_id_is_refused_by_name(root: Path) -> None:
    rec = make_record("mem_a", "Squash before merging.")
    res = _apply(root, {"op": "add", "record": rec}, {"op": "add", "record": {**rec, "statement": "Rebase before merging."}})
    assert res.applied == ["op_001"]
    assert res.skipped == {"op_002": "mem_a already exists"}
    assert _rows(root) == [rec]  # exactly the record as proposed, once
    again = _apply(root, {"op": "add", "record": rec})
    assert again.applied == [] and again.skipped == {"op_001": "mem_a already exists"}
    assert _rows(root) == [rec]


def test_an_add_of_a_tombstoned_id_never_brings_it_back(root: Path) -> None:
    rec = make_record("mem_a", "Squash before merging.")
    _seed(root, rec)
    _apply(root, {"op": "delete", "target_id": "mem_a", "deletion_mode": "privacy_purge"})
    res = _apply(root, {"op": "add", "record": rec})
    assert res.skipped == {"op_001": "mem_a is tombstoned and can never come back"}
    assert _rows(root) == []


def test_l1_and_l3_adds_are_refused_with_the_reason_and_ratify_adds_l1(root: Path) -> None:
    l1 = make_record("mem_who", "The user is Alice, a backend engineer.", layer="L1")
    l3 = make_record("mem_day", "Today we paired on the parser.", layer="L3")
    res = _apply(root, {"op": "add", "record": l1}, {"op": "add", "record": l3})
    assert res.skipped == {"op_001": "L1 records are never auto-applied: ratify with `commonkeep ratify`",
                           "op_002": "L3 lives in the daily log, never in canonical files"}
    assert _rows(root, L1) == [] and _rows(root) == []
    done = _apply(root, {"op": "add", "record": l1}, {"op": "add", "record": l3}, ratify=True)
    assert done.applied == ["op_001"] and "daily log" in done.skipped["op_002"]
    assert _rows(root, L1) == [l1] and _rows(root) == []


def test_an_add_citing_redacted_evidence_is_refused_naming_only_that_evidence(root: Path) -> None:
    append_jsonl(root / "memory" / "evidence.jsonl", [
        {"id": "ev_bad", "redaction_status": "redacted"}, {"id": "ev_gone", "redaction_status": "deleted"},
        {"id": "ev_ok", "redaction_status": "none"}])
    ok = {"type": "artifact", "ref": "ev_ok", "note": "fine"}
    cites = make_record("mem_a", "Squash before merging.",
                        evidence=[ok, {"type": "artifact", "ref": "ev_bad", "note": "x"}, {"type": "artifact", "ref": "ev_gone", "note": "y"}])
    clean = make_record("mem_b", "Rebase before merging.", evidence=[ok])
    res = _apply(root, {"op": "add", "record": cites}, {"op": "add", "record": clean})
    assert res.skipped == {"op_001": "cites redacted or deleted evidence ev_bad, ev_gone"}
    assert res.applied == ["op_002"] and list(_by_id(root)) == ["mem_b"]


def test_an_add_of_an_invalid_record_is_refused_with_the_problem(root: Path) -> None:
    res = _apply(root, {"op": "add", "record": make_record("mem_a", "   ")})
    assert res.skipped["op_001"].startswith("record is not a valid memory record: ")
    assert _rows(root) == []


# --- updates: exactly the fields asked, the day stamped, nothing else --------------------------


def test_an_update_changes_exactly_its_fields_and_stamps_the_day(root: Path) -> None:
    a, b = make_record("mem_a", "Squash before merging."), make_record("mem_b", "Keep functions short.")
    _seed(root, a, b)
    res = _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"tags": ["git"], "confidence": 0.9}})
    assert res.applied == ["op_001"]
    assert _rows(root) == [{**a, "tags": ["git"], "confidence": 0.9, "updated_at": DAY}, b]


def test_an_updated_at_the_update_carries_wins_over_the_day(root: Path) -> None:
    _seed(root, make_record("mem_a", "Squash before merging."))
    _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"updated_at": "2026-11-30", "tags": ["git"]}})
    assert _by_id(root)["mem_a"]["updated_at"] == "2026-11-30"


def test_update_refusals_name_the_reason_and_change_nothing(root: Path) -> None:
    a = make_record("mem_a", "Squash before merging.")
    _seed(root, a)
    res = _apply(root,
                 {"op": "update", "target_id": "mem_a", "updates": {}},
                 {"op": "update", "target_id": "mem_a", "updates": {"id": "mem_z"}},
                 {"op": "update_stability", "target_id": "mem_a", "updates": {"stability": "stable", "statement": "x"}},
                 {"op": "update", "target_id": "mem_a", "updates": {"layer": "L1"}},
                 {"op": "update", "target_id": "mem_a", "updates": {"confidence": "very"}},
                 {"op": "update", "target_id": "mem_nope", "updates": {"tags": ["x"]}},
                 {"op": "update", "updates": {"tags": ["x"]}})
    assert res.applied == []
    assert res.skipped["op_001"] == "op has no updates"
    assert res.skipped["op_002"] == "an update cannot change a record's id"
    assert res.skipped["op_003"] == "update_stability may only change stability"
    assert res.skipped["op_004"] == "moving a record to L1 needs `commonkeep ratify`"
    assert res.skipped["op_005"].startswith("the result would not be a valid memory record: ")
    assert res.skipped["op_006"] == "target mem_nope not found"
    assert res.skipped["op_007"] == "target (none) not found"
    assert _rows(root) == [a] and _rows(root, L1) == []


def test_an_update_that_keeps_the_id_and_an_update_stability_with_its_day_apply(root: Path) -> None:
    _seed(root, make_record("mem_a", "Squash before merging."))
    res = _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"id": "mem_a", "tags": ["git"]}},
                 {"op": "update_stability", "target_id": "mem_a", "updates": {"stability": "stable", "updated_at": "2026-12-01"}})
    assert res.applied == ["op_001", "op_002"]
    rec = _by_id(root)["mem_a"]
    assert (rec["tags"], rec["stability"], rec["updated_at"]) == (["git"], "stable", "2026-12-01")


def test_a_ratified_move_to_l1_moves_the_line_and_leaves_no_copy_behind(root: Path) -> None:
    a, b = make_record("mem_a", "The user is Alice."), make_record("mem_b", "Keep functions short.")
    _seed(root, a, b)
    res = _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"layer": "L1"}}, ratify=True)
    assert res.applied == ["op_001"]
    assert _rows(root) == [b]
    assert _rows(root, L1) == [{**a, "layer": "L1", "updated_at": DAY}]


def test_a_record_moved_to_a_project_leaves_the_shared_file(root: Path) -> None:
    a = make_record("mem_a", "Run make lint first.")
    _seed(root, a)
    _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"scope": {"type": "project", "project": "web"}}})
    assert _rows(root) == []
    assert [r["id"] for r in _rows(root, "memory/projects/web.jsonl")] == ["mem_a"]


def test_an_op_on_an_l1_record_needs_ratify_except_contest(root: Path) -> None:
    who = make_record("mem_who", "The user is Alice.", layer="L1")
    _seed(root, who, rel=L1)
    res = _apply(root, {"op": "update", "target_id": "mem_who", "updates": {"tags": ["x"]}},
                 {"op": "deprecate", "target_id": "mem_who"})
    assert res.skipped == {"op_001": "mem_who is an L1 record: update needs `commonkeep ratify`",
                           "op_002": "mem_who is an L1 record: deprecate needs `commonkeep ratify`"}
    assert _rows(root, L1) == [who]
    done = _apply(root, {"op": "contest", "target_id": "mem_who"})
    assert done.applied == ["op_001"] and _by_id(root, L1)["mem_who"]["status"] == "contested"
    ratified = _apply(root, {"op": "update", "target_id": "mem_who", "updates": {"tags": ["x"]}}, ratify=True)
    assert ratified.applied == ["op_001"] and _by_id(root, L1)["mem_who"]["tags"] == ["x"]


def test_an_op_on_a_record_of_the_wrong_status_says_which_it_needs(root: Path) -> None:
    _seed(root, make_record("mem_old", "Use tabs.", status="deprecated"), make_record("mem_a", "Use spaces."))
    res = _apply(root, {"op": "update", "target_id": "mem_old", "updates": {"tags": ["x"]}},
                 {"op": "uncontest", "target_id": "mem_a"},
                 {"op": "contest", "target_id": "mem_a"}, {"op": "contest", "target_id": "mem_a"})
    assert res.skipped == {"op_001": "target mem_old is deprecated; update needs active or contested",
                           "op_002": "target mem_a is active; uncontest needs contested",
                           "op_004": "target mem_a is contested; contest needs active"}
    assert res.applied == ["op_003"]
    assert _by_id(root)["mem_old"] == make_record("mem_old", "Use tabs.", status="deprecated")


def test_an_update_of_a_tombstoned_target_is_refused(root: Path) -> None:
    _seed(root, make_record("mem_a", "Squash before merging."))
    _apply(root, {"op": "delete", "target_id": "mem_a"})
    res = _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"tags": ["x"]}})
    assert res.skipped == {"op_001": "target mem_a is tombstoned"}
    assert _by_id(root)["mem_a"]["status"] == "deleted" and _by_id(root)["mem_a"]["tags"] == ["test"]


# --- the other ops: what each changes, exactly ---------------------------------------------------


def test_flag_decay_deprecate_contest_uncontest_change_exactly_what_they_say(root: Path) -> None:
    review = {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "When it changes."}
    recs = [make_record("mem_f", "Flag me."), make_record("mem_s", "Stable.", stability="stable", confidence=0.8),
            make_record("mem_m", "Semi.", confidence=0.8), make_record("mem_l", "Low.", stability="low", confidence=0.2),
            make_record("mem_d", "Deprecate me."), make_record("mem_c", "Contest me."),
            make_record("mem_u", "Was contested.", status="contested"), make_record("mem_r", "Reviewed again.")]
    _seed(root, *recs)
    res = _apply(root, {"op": "flag_for_review", "target_id": "mem_f"},
                 {"op": "decay", "target_id": "mem_s"}, {"op": "decay", "target_id": "mem_m"},
                 {"op": "decay", "target_id": "mem_l"}, {"op": "deprecate", "target_id": "mem_d"},
                 {"op": "contest", "target_id": "mem_c", "reason": "the team moved to rebase"},
                 {"op": "uncontest", "target_id": "mem_u"},
                 {"op": "flag_for_review", "target_id": "mem_r", "updates": {"review": {**review, "next_review": "2027-02-02"}}})
    assert res.skipped == {}
    got = _by_id(root)
    base = {r["id"]: r for r in recs}
    assert got["mem_f"] == {**base["mem_f"], "review": {**review, "next_review": DAY}, "updated_at": DAY}
    assert got["mem_s"] == {**base["mem_s"], "confidence": 0.75, "updated_at": DAY}
    assert got["mem_m"] == {**base["mem_m"], "confidence": 0.65, "updated_at": DAY}
    assert got["mem_l"] == {**base["mem_l"], "confidence": 0.1, "updated_at": DAY}  # never below 0.1
    assert got["mem_d"] == {**base["mem_d"], "status": "deprecated", "updated_at": DAY}
    assert got["mem_c"] == {**base["mem_c"], "status": "contested", "updated_at": DAY, "evidence": [
        *base["mem_c"]["evidence"], {"type": "manual", "ref": res.patch["patch_id"], "note": "the team moved to rebase"}]}
    assert got["mem_u"] == {**base["mem_u"], "status": "active", "updated_at": DAY}
    assert got["mem_r"] == {**base["mem_r"], "review": {**review, "next_review": "2027-02-02"}, "updated_at": DAY}


def test_decay_takes_the_updates_it_is_given_and_rounds_its_own(root: Path) -> None:
    _seed(root, make_record("mem_a", "A.", confidence=0.33333), make_record("mem_b", "B.", confidence=0.9))
    _apply(root, {"op": "decay", "target_id": "mem_a"}, {"op": "decay", "target_id": "mem_b", "updates": {"confidence": 0.5}})
    got = _by_id(root)
    assert got["mem_a"]["confidence"] == 0.1833 and got["mem_b"]["confidence"] == 0.5


def test_a_contest_without_a_reason_adds_no_evidence(root: Path) -> None:
    a = make_record("mem_a", "Squash before merging.")
    _seed(root, a)
    _apply(root, {"op": "contest", "target_id": "mem_a"})
    assert _rows(root) == [{**a, "status": "contested", "updated_at": DAY}]


def test_an_uncontest_with_a_reason_records_it_as_evidence(root: Path) -> None:
    u = make_record("mem_u", "Was contested.", status="contested")
    _seed(root, u)
    res = _apply(root, {"op": "uncontest", "target_id": "mem_u", "reason": "checked with the team"})
    assert _rows(root) == [{**u, "status": "active", "updated_at": DAY, "evidence": [
        *u["evidence"], {"type": "manual", "ref": res.patch["patch_id"], "note": "checked with the team"}]}]


def test_an_add_or_supersede_without_a_record_is_refused(root: Path) -> None:
    a = make_record("mem_a", "Use black.")
    _seed(root, a)
    res = _apply(root, {"op": "add"}, {"op": "supersede", "target_id": "mem_a"})
    assert res.skipped == {"op_001": "op carries no record", "op_002": "op carries no record"}
    assert _rows(root) == [a]


def test_each_op_sees_the_ones_before_it_in_the_patch(root: Path) -> None:
    a = make_record("mem_a", "Squash before merging.")
    res = _apply(root, {"op": "add", "record": a},
                 {"op": "update", "target_id": "mem_a", "updates": {"tags": ["git"]}},
                 {"op": "update", "target_id": "mem_a", "updates": {"confidence": 0.95}},
                 {"op": "deprecate", "target_id": "mem_a"},
                 {"op": "update", "target_id": "mem_a", "updates": {"tags": ["late"]}})
    assert res.applied == ["op_001", "op_002", "op_003", "op_004"]
    assert res.skipped == {"op_005": "target mem_a is deprecated; update needs active or contested"}
    assert _rows(root) == [{**a, "tags": ["git"], "confidence": 0.95, "status": "deprecated", "updated_at": DAY}]


def test_a_record_moved_away_and_back_in_one_patch_is_in_one_file_once(root: Path) -> None:
    a, b = make_record("mem_a", "Run make lint first."), make_record("mem_b", "Keep functions short.")
    _seed(root, a, b)
    res = _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"scope": {"type": "project", "project": "web"}}},
                 {"op": "update", "target_id": "mem_a", "updates": {"scope": {"type": "global"}, "tags": ["lint"]}})
    assert res.applied == ["op_001", "op_002"]
    assert _rows(root, "memory/projects/web.jsonl") == []
    assert _rows(root) == [{**a, "tags": ["lint"], "updated_at": DAY}, b]


def test_an_exception_given_only_as_a_reason_is_recorded_as_one(root: Path) -> None:
    a = make_record("mem_a", "Squash before merging.")
    _seed(root, a)
    res = _apply(root, {"op": "add_exception", "target_id": "mem_a", "reason": "release branches keep their history"},
                 {"op": "add_exception", "target_id": "mem_a"})
    assert res.applied == ["op_001"] and res.skipped["op_002"].startswith("add_exception needs updates with ")
    assert _rows(root) == [{**a, "known_exceptions": ["release branches keep their history"], "updated_at": DAY}]


def test_the_vault_op_is_refused_and_changes_nothing(root: Path) -> None:
    a = make_record("mem_a", "Squash before merging.")
    _seed(root, a)
    res = _apply(root, {"op": "promote_to_vault_candidate", "target_id": "mem_a"})
    assert res.skipped == {"op_001": "the vault is not enabled (config.json vault.enabled); nothing to promote to"}
    assert _rows(root) == [a]


# --- supersede: the old record points at the new one, both dated by the apply -------------------


def test_a_supersede_links_both_records_once_and_dates_them_by_the_apply(root: Path) -> None:
    a = make_record("mem_a", "Use black.", superseded_by=["mem_x"])
    _seed(root, a)
    new = make_record("mem_b", "Use ruff format.", supersedes=["mem_q", "mem_a"], updated_at="2026-12-01")
    res = _apply(root, {"op": "supersede", "target_id": "mem_a", "to_record": new})
    assert res.applied == ["op_001"]
    assert _rows(root) == [{**a, "status": "superseded", "superseded_by": ["mem_x", "mem_b"], "updated_at": DAY},
                           {**new, "supersedes": ["mem_q", "mem_a"], "updated_at": DAY}]
    _seed(root, make_record("mem_c", "Use yapf."))
    newer = make_record("mem_d", "Use ruff.")
    _apply(root, {"op": "supersede", "target_id": "mem_c", "to_record": newer})
    assert _by_id(root)["mem_d"]["supersedes"] == ["mem_c"] and _by_id(root)["mem_c"]["superseded_by"] == ["mem_d"]


def test_supersede_refusals_leave_both_records_as_they_were(root: Path) -> None:
    a, b = make_record("mem_a", "Use black."), make_record("mem_b", "Use yapf.")
    _seed(root, a, b)
    res = _apply(root,
                 {"op": "supersede", "target_id": "mem_a", "to_record": make_record("mem_a", "Use ruff.")},
                 {"op": "supersede", "target_id": "mem_a", "to_record": make_record("mem_b", "Use ruff.")},
                 {"op": "supersede", "target_id": "mem_a", "to_record": make_record("mem_l1", "Use ruff.", layer="L1")})
    assert res.applied == []
    assert res.skipped == {"op_001": "mem_a already exists", "op_002": "mem_b already exists",
                           "op_003": "L1 records are never auto-applied: ratify with `commonkeep ratify`"}
    assert _rows(root) == [a, b] and _rows(root, L1) == []


def test_a_record_cannot_supersede_itself(root: Path) -> None:
    a = make_record("mem_a", "Use black.")
    _seed(root, a)
    res = _apply(root, {"op": "supersede", "target_id": "mem_a", "to_record": make_record("mem_b", "Use ruff.")},
                 {"op": "supersede", "target_id": "mem_b", "to_record": make_record("mem_b", "Use ruff.")})
    assert res.applied == ["op_001"] and res.skipped == {"op_002": "mem_b already exists"}
    assert [r["id"] for r in _rows(root)] == ["mem_a", "mem_b"]


# --- candidates: decided once, stale ops left alone ----------------------------------------------


def _proposal(root: Path, text: str) -> tuple[str, str]:
    cand = write_candidate(root, text)
    prop = curate(root, role=WRITER)
    return str(cand["id"]), str(prop.patch["patch_id"])


def _inbox(root: Path) -> dict[str, str]:
    return {r["id"]: r["status"] for r in read_jsonl(root / "inbox" / "captured.jsonl").rows}


def test_an_applied_add_marks_its_candidate_patched_and_a_reject_rejects_it(root: Path) -> None:
    kept, pid = _proposal(root, "Run the linters before every push.")
    res = apply_patch(root, pid, role=WRITER)
    assert res.applied == ["op_001"] and res.candidates == {kept: "patched"}
    assert _inbox(root)[kept] == "patched"
    dropped = str(write_candidate(root, "Deploy on Fridays after lunch.")["id"])
    rej = _apply(root, {"op": "reject_candidate", "candidate_id": dropped})
    assert rej.applied == ["op_001"] and _inbox(root) == {kept: "patched", dropped: "rejected"}
    again = _apply(root, {"op": "reject_candidate", "candidate_id": kept})
    assert again.skipped == {"op_001": f"candidate {kept} was already patched"} and _inbox(root)[kept] == "patched"


def test_a_stale_add_of_a_candidate_approved_since_adds_no_second_record(root: Path) -> None:
    cid, first = _proposal(root, "Run the linters before every push.")
    copy = json.loads((root / "patches" / f"{first}.json").read_text(encoding="utf-8"))
    copy["patch_id"] = "patch_202612040930_ckstale1"
    apply_patch(root, first, role=WRITER)
    res = apply_patch(root, copy, role=WRITER)
    assert res.applied == []
    assert res.skipped == {"op_001": f"its candidate {cid} was already promoted by another patch"}
    assert len(_rows(root)) == 1 and _inbox(root)[cid] == "patched"


def _cand(root: Path, text: str) -> tuple[str, dict[str, Any]]:
    """A new candidate, and a record of its text (its own id, as ``curate`` names it)."""
    cid = str(write_candidate(root, text)["id"])
    return cid, make_record("mem_" + cid[4:], text)


def test_a_reject_after_the_add_of_the_same_candidate_leaves_it_patched(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    res = _apply(root, {"op": "add", "record": rec, "candidate_id": cid}, {"op": "reject_candidate", "candidate_id": cid})
    assert res.applied == ["op_001"] and res.skipped == {"op_002": f"candidate {cid} was already patched"}
    assert _inbox(root) == {cid: "patched"} and _rows(root) == [rec]


def test_an_add_after_the_reject_of_its_candidate_is_refused(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    res = _apply(root, {"op": "reject_candidate", "candidate_id": cid}, {"op": "add", "record": rec, "candidate_id": cid})
    assert res.applied == ["op_001"] and res.skipped == {"op_002": f"its candidate {cid} was rejected"}
    assert _inbox(root) == {cid: "rejected"} and _rows(root) == []


def test_a_delete_still_applies_after_the_reject_of_its_candidate(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    _seed(root, rec)
    res = _apply(root, {"op": "reject_candidate", "candidate_id": cid},
                 {"op": "delete", "target_id": rec["id"], "candidate_id": cid})
    assert res.applied == ["op_001", "op_002"]
    assert _inbox(root) == {cid: "rejected"} and _by_id(root)[rec["id"]]["status"] == "deleted"


def test_a_delete_of_a_new_candidates_record_rejects_the_candidate_not_patches_it(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    _seed(root, rec)
    res = _apply(root, {"op": "delete", "target_id": rec["id"], "candidate_id": cid})
    assert res.applied == ["op_001"] and res.candidates == {cid: "rejected"} and _inbox(root) == {cid: "rejected"}


def test_a_reject_of_a_candidate_not_in_the_inbox_is_refused_by_name(root: Path) -> None:
    res = _apply(root, {"op": "reject_candidate", "candidate_id": "cap_20261204093000_nothere1"})
    assert res.skipped == {"op_001": "candidate cap_20261204093000_nothere1 not found in the inbox"}


def test_an_add_refused_because_its_id_exists_rejects_its_new_candidate(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    _seed(root, rec)
    res = _apply(root, {"op": "add", "record": rec, "candidate_id": cid})
    assert res.skipped == {"op_001": f"{rec['id']} already exists"}
    assert _inbox(root) == {cid: "rejected"} and _rows(root) == [rec]


def test_a_supersede_refused_because_its_id_is_tombstoned_rejects_its_new_candidate(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    _seed(root, make_record("mem_old", "Lint when you remember."), rec)
    _apply(root, {"op": "delete", "target_id": rec["id"]})
    assert _inbox(root) == {cid: "new"}
    res = _apply(root, {"op": "supersede", "target_id": "mem_old", "to_record": rec, "candidate_id": cid})
    assert res.skipped == {"op_001": f"{rec['id']} is tombstoned and can never come back"}
    assert _inbox(root) == {cid: "rejected"} and _by_id(root)["mem_old"]["status"] == "active"


def test_an_add_refused_for_another_reason_leaves_its_candidate_waiting(root: Path) -> None:
    cid, rec = _cand(root, "The user is Alice, a backend engineer.")
    res = _apply(root, {"op": "add", "record": {**rec, "layer": "L1"}, "candidate_id": cid})
    assert "ratify" in res.skipped["op_001"]
    assert _inbox(root) == {cid: "new"} and res.candidates == {}


def test_an_update_refused_on_a_tombstoned_target_leaves_its_candidate_waiting(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    _seed(root, rec)
    _apply(root, {"op": "delete", "target_id": rec["id"]})
    res = _apply(root, {"op": "update", "target_id": rec["id"], "updates": {"tags": ["x"]}, "candidate_id": cid})
    assert res.skipped == {"op_001": f"target {rec['id']} is tombstoned"} and _inbox(root) == {cid: "new"}


def test_a_second_add_of_a_patched_candidate_keeps_it_patched(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    res = _apply(root, {"op": "add", "record": rec, "candidate_id": cid}, {"op": "add", "record": rec, "candidate_id": cid})
    assert res.applied == ["op_001"] and res.skipped == {"op_002": f"{rec['id']} already exists"}
    assert _inbox(root) == {cid: "patched"} and _rows(root) == [rec]


def test_an_add_and_the_contest_that_goes_with_it_apply_in_two_runs(root: Path) -> None:
    cid, rec = _cand(root, "Rebase feature branches, never merge main into them.")
    _seed(root, make_record("mem_old", "Merge main into feature branches."))
    patch = _patch({"op": "add", "record": rec, "candidate_id": cid},
                   {"op": "contest", "target_id": "mem_old", "candidate_id": cid, "default_selected": False})
    first = apply_patch(root, patch, role=WRITER)
    assert first.applied == ["op_001"] and first.not_selected == ["op_002"] and _inbox(root) == {cid: "patched"}
    second = apply_patch(root, patch["patch_id"], role=WRITER, op_ids=["op_002"])
    assert second.applied == ["op_002"] and second.skipped == {}
    assert _by_id(root)["mem_old"]["status"] == "contested" and len(_rows(root)) == 2


def test_an_update_of_a_candidate_another_patch_promoted_is_stale(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    _apply(root, {"op": "add", "record": rec, "candidate_id": cid})
    res = _apply(root, {"op": "update", "target_id": rec["id"], "updates": {"tags": ["x"]}, "candidate_id": cid})
    assert res.skipped == {"op_001": f"its candidate {cid} was already promoted by another patch"}
    assert _rows(root) == [rec]


# --- the same statement twice, in one patch or across patches --------------------------------------


def test_an_add_of_a_statement_an_active_record_says_is_refused(root: Path) -> None:
    _seed(root, make_record("mem_a", "Squash before merging."))
    res = _apply(root, {"op": "add", "record": make_record("mem_b", "squash  before   merging")})
    assert res.skipped == {"op_001": "an active record (mem_a) already says this; a second copy is not added"}
    assert list(_by_id(root)) == ["mem_a"]


def test_two_adds_of_one_statement_in_one_patch_add_it_once(root: Path) -> None:
    res = _apply(root, {"op": "add", "record": make_record("mem_a", "Squash before merging.")},
                 {"op": "add", "record": make_record("mem_b", "Squash before merging.")})
    assert res.applied == ["op_001"] and "(mem_a) already says this" in res.skipped["op_002"]
    assert list(_by_id(root)) == ["mem_a"]


# --- which ops run, and the errors that say why none does ---------------------------------------------


def test_only_the_selected_ops_apply_and_the_rest_wait_named(root: Path) -> None:
    from commonkeep.errors import BadInput

    patch = _patch({"op": "add", "record": make_record("mem_a", "Squash before merging.")},
                   {"op": "contest", "target_id": "mem_a", "default_selected": False})
    pid = patch["patch_id"]
    first = apply_patch(root, patch, role=WRITER)
    assert (first.applied, first.not_selected, first.already_applied) == (["op_001"], ["op_002"], [])
    assert list(_by_id(root)) == ["mem_a"]
    with pytest.raises(BadInput) as default:
        apply_patch(root, pid, role=WRITER)
    assert default.value.message == (f"nothing to apply in patch {pid}: op_001 already applied by an earlier run; "
                                  "op_002 not selected by default")
    assert default.value.hint == f"select ops: commonkeep apply {pid} --ops op_002"
    with pytest.raises(BadInput) as explicit:
        apply_patch(root, pid, role=WRITER, op_ids=["op_001"])
    assert explicit.value.message == f"nothing to apply in patch {pid}: op_001 already applied by an earlier run; op_002 not selected"
    with pytest.raises(BadInput) as unknown:
        apply_patch(root, pid, role=WRITER, op_ids=["op_002", "op_007"])
    assert unknown.value.message == f"patch {pid} has no op op_007; its ops are op_001, op_002"
    second = apply_patch(root, pid, role=WRITER, op_ids=["op_002", "op_001"])
    assert (second.applied, second.already_applied, second.not_selected) == (["op_002"], ["op_001"], [])
    assert second.skipped == {}  # an op applied earlier is not tried again
    assert _by_id(root)["mem_a"]["status"] == "contested"
    saved = json.loads((root / "patches" / f"{pid}.json").read_text(encoding="utf-8"))
    assert (saved["status"], saved["applied_ops"], saved["skipped_ops"]) == ("applied", ["op_001", "op_002"], [])
    with pytest.raises(BadInput) as done:
        apply_patch(root, pid, role=WRITER)
    assert done.value.message == f"patch {pid} was already applied at {NOW}; nothing to do"


def test_a_patch_with_nothing_selected_says_so_and_changes_nothing(root: Path) -> None:
    from commonkeep.errors import BadInput

    patch = _patch({"op": "add", "record": make_record("mem_a", "Squash before merging."), "default_selected": False})
    with pytest.raises(BadInput) as err:
        apply_patch(root, patch, role=WRITER)
    assert err.value.message == f"nothing to apply in patch {patch['patch_id']}: op_001 not selected by default"
    assert _rows(root) == []
    empty = _patch()
    with pytest.raises(BadInput) as none:
        apply_patch(root, empty, role=WRITER)
    assert none.value.message == f"nothing to apply in patch {empty['patch_id']}: the patch has no ops"
    assert none.value.hint == f"see the patch with `commonkeep patches --show {empty['patch_id']}`"


def test_a_patch_whose_every_op_is_refused_stays_proposed_with_the_reasons(root: Path) -> None:
    res = _apply(root, {"op": "update", "target_id": "mem_nope", "updates": {"tags": ["x"]}})
    saved = _saved(root, res)
    assert (saved["status"], saved["applied_at"], saved["applied_ops"], saved["skipped_ops"]) == ("proposed", None, [], ["op_001"])
    assert saved["skip_reasons"] == {"op_001": "target mem_nope not found"}


def test_a_secret_in_a_patch_never_reaches_memory(root: Path) -> None:
    from commonkeep.patches.verify import sha256

    token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    handed = _apply(root, {"op": "add", "record": make_record("mem_a", f"The deploy token is {token} for staging.")})
    statement = f"The registry token is {token} for builds."
    stored = _patch({"op": "add", "record": make_record("mem_b", statement),
                     "edited": {"by": WRITER, "via": "apply --edited", "sha256": sha256(statement)}})
    path = root / "patches" / f"{stored['patch_id']}.json"
    path.write_text(json.dumps(stored, indent=2), encoding="utf-8")
    _bind_edit(root, stored, statement)  # as `audit --apply-edited` records it
    res = apply_patch(root, stored["patch_id"], role=WRITER)
    assert handed.applied == res.applied == ["op_001"]
    assert token not in (root / L2).read_text(encoding="utf-8")
    assert all("[REDACTED:" in r["statement"] for r in _rows(root)) and len(_rows(root)) == 2
    assert token not in path.read_text(encoding="utf-8") and token not in handed.path.read_text(encoding="utf-8")


def _disk_full_under(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Every ``os.write`` to a file under ``folder`` fails as a full disk does (the real cause of
    a real interruption; the rest of the root is written as usual)."""
    import errno
    import os

    real = os.write

    def write(fd: int, data: Any) -> int:
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = ""
        if where.startswith(str(folder)):
            raise OSError(errno.ENOSPC, "No space left on device", where)
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)


def test_the_patch_that_explains_a_change_is_written_before_memory_is(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    from commonkeep.patches.patch import ApplyInterrupted
    from commonkeep.patches.verify import sha256

    token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    handed = _patch({"op": "add", "record": make_record("mem_a", "Squash before merging.")})
    statement = f"The registry token is {token} for builds."
    stored = _patch({"op": "add", "record": make_record("mem_b", statement),
                     "edited": {"by": WRITER, "via": "apply --edited", "sha256": sha256(statement)}})
    stored_path = root / "patches" / f"{stored['patch_id']}.json"
    stored_path.write_text(json.dumps(stored, indent=2), encoding="utf-8")
    _bind_edit(root, stored, statement)
    outside = tmp_path / "elsewhere.json"
    outside_patch = _patch({"op": "contest", "target_id": "mem_a"})
    outside.write_text(json.dumps(outside_patch, indent=2), encoding="utf-8")
    def interrupted(ref: Any) -> None:
        with monkeypatch.context() as m:
            _disk_full_under(m, root / "memory")
            with pytest.raises(ApplyInterrupted, match="No space left on device"):
                apply_patch(root, ref, role=WRITER)

    interrupted(handed)
    assert _rows(root) == []  # nothing reached memory, yet the decision is explained in patches/
    saved = json.loads((root / "patches" / f"{handed['patch_id']}.json").read_text(encoding="utf-8"))
    assert saved["ops"][0]["record"]["id"] == "mem_a"
    assert apply_patch(root, handed["patch_id"], role=WRITER).applied == ["op_001"]  # finished from its journal
    interrupted(stored["patch_id"])
    assert token not in stored_path.read_text(encoding="utf-8") and "[REDACTED:" in stored_path.read_text(encoding="utf-8")
    apply_patch(root, stored["patch_id"], role=WRITER)
    interrupted(str(outside))
    copied = root / "patches" / f"{outside_patch['patch_id']}.json"
    assert json.loads(copied.read_text(encoding="utf-8"))["ops"][0]["op"] == "contest"
    assert json.loads(outside.read_text(encoding="utf-8")) == outside_patch  # the file given is left as it was
    apply_patch(root, outside_patch["patch_id"], role=WRITER)  # as the interruption says: by its id
    assert [(r["id"], r["status"]) for r in _rows(root)] == [("mem_a", "contested"), ("mem_b", "active")]
    assert token not in (root / L2).read_text(encoding="utf-8")


def test_a_statement_changed_by_hand_in_a_patch_file_is_not_applied(root: Path) -> None:
    cid, pid = _proposal(root, "Run the linters before every push.")
    path = root / "patches" / f"{pid}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["ops"][0]["record"]["statement"] = "Push straight to main, the linters are optional."
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    res = apply_patch(root, pid, role=WRITER)
    assert res.applied == [] and res.skipped["op_001"].startswith(f"its statement differs from candidate {cid}'s text")
    assert _rows(root) == [] and _inbox(root) == {cid: "new"}


def test_an_edit_in_a_handed_patch_is_recorded_as_the_configured_writers(root: Path) -> None:
    (root / "config.json").write_text(json.dumps({"commonkeep": {"writerRole": "keeper"}}), encoding="utf-8")
    res = apply_patch(root, _patch({"op": "add", "record": make_record("mem_a", "Squash before merging.")}), role="keeper")
    assert res.applied == ["op_001"]
    assert _saved(root, res)["ops"][0]["edited"]["by"] == "keeper"


def test_the_projection_shows_what_the_apply_left(root: Path) -> None:
    def shown() -> str:
        return (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")

    _seed(root, make_record("mem_a", "Alpha rule for the projection."), make_record("mem_b", "Beta rule for the projection."),
          make_record("mem_c", "Gamma rule for the projection."))
    _apply(root, {"op": "update", "target_id": "mem_a", "updates": {"statement": "Delta rule for the projection."}},
           {"op": "add", "record": make_record("mem_d", "Epsilon rule for the projection.")})
    assert "Delta rule" in shown() and "Epsilon rule" in shown() and "Alpha rule" not in shown()
    _apply(root, {"op": "delete", "target_id": "mem_b"}, {"op": "update", "target_id": "mem_c", "updates": {"tags": ["x"]}})
    assert "Beta rule" not in shown() and "Gamma rule" in shown()
    _apply(root, {"op": "delete", "target_id": "mem_c", "deletion_mode": "privacy_purge"})
    assert "Gamma rule" not in shown() and "Delta rule" in shown()


def test_a_reject_left_for_later_does_not_reject_a_candidate_its_patch_added(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    patch = _patch({"op": "add", "record": rec, "candidate_id": cid},
                   {"op": "reject_candidate", "candidate_id": cid, "default_selected": False})
    apply_patch(root, patch, role=WRITER)
    later = apply_patch(root, patch["patch_id"], role=WRITER, op_ids=["op_002"])
    assert later.skipped == {"op_002": f"candidate {cid} was already patched"}
    assert _inbox(root) == {cid: "patched"} and _rows(root) == [rec]


def test_an_add_left_for_later_is_refused_once_its_patch_rejected_the_candidate(root: Path) -> None:
    cid, rec = _cand(root, "Run the linters before every push.")
    patch = _patch({"op": "reject_candidate", "candidate_id": cid},
                   {"op": "add", "record": rec, "candidate_id": cid, "default_selected": False})
    apply_patch(root, patch, role=WRITER)
    later = apply_patch(root, patch["patch_id"], role=WRITER, op_ids=["op_002"])
    assert later.skipped == {"op_002": f"its candidate {cid} was rejected"}
    assert _inbox(root) == {cid: "rejected"} and _rows(root) == []


def test_a_ratified_supersede_may_replace_an_l1_record_with_an_l1_record(root: Path) -> None:
    who = make_record("mem_who", "The user is Alice.", layer="L1")
    _seed(root, who, rel=L1)
    new = make_record("mem_who2", "The user is Alice, a backend engineer.", layer="L1")
    res = _apply(root, {"op": "supersede", "target_id": "mem_who", "to_record": new}, ratify=True)
    assert res.applied == ["op_001"]
    assert [(r["id"], r["status"]) for r in _rows(root, L1)] == [("mem_who", "superseded"), ("mem_who2", "active")]


def test_unknown_op_ids_are_all_named(root: Path) -> None:
    from commonkeep.errors import BadInput

    patch = _patch({"op": "add", "record": make_record("mem_a", "Squash before merging.")})
    with pytest.raises(BadInput) as two:
        apply_patch(root, patch, role=WRITER, op_ids=["op_008", "op_009"])
    assert two.value.message == f"patch {patch['patch_id']} has no op op_008, op_009; its ops are op_001"
    empty = _patch()
    with pytest.raises(BadInput) as none:
        apply_patch(root, empty, role=WRITER, op_ids=["op_001"])
    assert none.value.message == f"patch {empty['patch_id']} has no op op_001; its ops are (none)"
    assert _rows(root) == []


def test_apply_says_which_secrets_it_redacted_from_the_patch(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A patch that held a secret is applied redacted, and apply says so (it once said nothing:
    the findings were taken from a second pass over the patch already redacted)."""
    from commonkeep.patches.verify import sha256
    from tests.governance.conftest import run_cli, writer_args

    token = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    handed = _apply(root, {"op": "add", "record": make_record("mem_a", f"The deploy token is {token} for staging.")})
    assert handed.redacted == ["github_token"]
    statement = f"The registry token is {token} for builds."
    stored = _patch({"op": "add", "record": make_record("mem_b", statement),
                     "edited": {"by": WRITER, "via": "apply --edited", "sha256": sha256(statement)}})
    (root / "patches" / f"{stored['patch_id']}.json").write_text(json.dumps(stored, indent=2), encoding="utf-8")
    _bind_edit(root, stored, statement)
    code, out, err = run_cli(capsys, "apply", stored["patch_id"], *writer_args(root))
    assert code == 0, err
    assert "redacted secrets: " in out and "github_token" in out and token not in out
    clean = _apply(root, {"op": "add", "record": make_record("mem_c", "Nothing secret here at all.")})
    assert clean.redacted == []
