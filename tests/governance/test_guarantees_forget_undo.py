"""What a person relies on when memory is removed or a decision reversed (the ``forget-undo``
module of ``scripts/mutation``: ``commonkeep.patches.forget`` and ``commonkeep.reviews.undo``).

Forgetting removes exactly the record asked for, keeps its audit line and one tombstone that names
the reason, refuses clearly what it cannot do, and scrubs copies only for a purge. Undo puts the
records back as they were before the decision, through an audited patch, puts the candidate back
in the queue, and refuses before writing anything what it cannot reverse. Real roots, real files.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput, CommonkeepError
from commonkeep.patches.forget import forget
from commonkeep.patches.patch import apply_patch
from commonkeep.reviews.outcome import outcome
from commonkeep.reviews.review import approve, reject
from commonkeep.reviews.undo import undo
from commonkeep.store.core import Store
from commonkeep.store.ids import memory_id_for
from commonkeep.store.jsonl import read_jsonl
from commonkeep.util.timeutil import now_iso
from tests.governance.conftest import WRITER, adapter_candidate, run_cli, write_candidate, writer_args
from tests.share.helpers import manual_patch
from tests.store.test_share import add, record

L2 = "memory/L2.playbooks.jsonl"
TABS = "Use tabs for indentation in Python code."
NO_TABS = "Never use tabs for indentation in Python code."
A = "mem_20261202000030_aaaaaaaa"
B = "mem_20261202000031_bbbbbbbb"


def _patch(root: Path, pid: str) -> dict[str, Any]:
    return json.loads((root / "patches" / f"{pid}.json").read_text(encoding="utf-8"))


def _records(root: Path) -> dict[str, dict[str, Any]]:
    """Every record line of the root, a deleted one too (the store's reads skip those)."""
    return {str(r["id"]): r for path in sorted((root / "memory").rglob("*.jsonl"))
            if path.name not in ("tombstones.jsonl", "evidence.jsonl") for r in read_jsonl(path).rows}


def _tombstones(root: Path) -> list[dict[str, Any]]:
    return read_jsonl(root / "memory" / "tombstones.jsonl").rows


def _snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the root but the lock folder: what a refusal must leave as it was."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and "locks" not in p.parts}


def _two(root: Path) -> None:
    add(root, record(A, "The nightly build publishes to the staging bucket."))
    add(root, record(B, "The nightly build runs at two in the morning."))


# --- forget -------------------------------------------------------------------------------------


def test_forget_marks_only_that_record_deleted_and_its_patch_and_tombstone_name_the_reason(root: Path) -> None:
    _two(root)
    b_line = next(line for line in (root / L2).read_text(encoding="utf-8").splitlines() if B in line)
    res = forget(root, A, reason="user_requested", role=WRITER)
    recs = _records(root)
    assert recs[A]["status"] == "deleted" and recs[B]["status"] == "active"  # the audit line stays
    assert b_line in (root / L2).read_text(encoding="utf-8").splitlines()  # the other record untouched
    [tomb] = _tombstones(root)
    assert tomb["deleted_record_id"] == A and tomb["deletion_reason"] == "user_requested"
    assert tomb["deletion_mode"] == "audit_preserving" and "staging bucket" not in json.dumps(tomb)
    doc = _patch(root, str(res.patch["patch_id"]))
    assert doc["status"] == "applied" and doc["applied_ops"] == ["op_001"] and doc["summary"] == f"forget {A}"
    [op] = doc["ops"]
    assert {k: op[k] for k in ("op", "target_id", "reason", "risk", "default_selected", "deletion_mode",
                               "deletion_reason")} == {
        "op": "delete", "target_id": A, "reason": "user_requested", "risk": "medium", "default_selected": True,
        "deletion_mode": "audit_preserving", "deletion_reason": "user_requested"}
    assert "candidate_id" not in op


def test_a_free_text_reason_is_kept_in_the_patch_and_counted_as_other(root: Path) -> None:
    _two(root)
    res = forget(root, A, reason="the bucket was renamed last week", role=WRITER)
    [op] = _patch(root, str(res.patch["patch_id"]))["ops"]
    assert op["reason"] == "the bucket was renamed last week" and op["deletion_reason"] == "other"
    assert _tombstones(root)[0]["deletion_reason"] == "other"


def test_a_purge_is_high_risk_and_says_so_in_its_summary(root: Path) -> None:
    _two(root)
    res = forget(root, A, reason="privacy_sensitive", role=WRITER, purge=True)
    doc = _patch(root, str(res.patch["patch_id"]))
    assert doc["summary"] == f"forget {A} (privacy purge)"
    assert (doc["ops"][0]["risk"], doc["ops"][0]["deletion_mode"]) == ("high", "privacy_purge")
    assert A not in _records(root) and B in _records(root)  # the line is gone, the other kept


@pytest.mark.parametrize("reason", ["", "   \n"])
def test_forget_without_a_reason_is_refused_and_changes_nothing(root: Path, reason: str) -> None:
    _two(root)
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        forget(root, A, reason=reason, role=WRITER)
    assert info.value.message == "forget needs --reason"
    assert info.value.hint == "one of user_requested, privacy_sensitive, poisoned, invalid, other, or a short free-text reason"
    assert _snapshot(root) == before


def test_a_reason_of_500_characters_is_taken_and_one_more_refused(root: Path) -> None:
    _two(root)
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        forget(root, A, reason="x" * 501, role=WRITER)
    assert info.value.message == "--reason is 501 characters; the limit is 500; nothing was forgotten"
    assert info.value.hint == "one of user_requested, privacy_sensitive, poisoned, invalid, other, or a short free-text reason"
    assert _snapshot(root) == before
    forget(root, A, reason="x" * 500, role=WRITER)
    assert _records(root)[A]["status"] == "deleted"


def test_forget_asks_the_roots_own_writer_role_and_names_the_action(root: Path) -> None:
    (root / "config.json").write_text(json.dumps({"commonkeep": {"writerRole": "archivist"}}), encoding="utf-8")
    _two(root)
    with pytest.raises(CommonkeepError, match="'forget' changes the shared memory and only the writer role 'archivist'"):
        forget(root, A, reason="other", role=WRITER)
    forget(root, A, reason="other", role="archivist")  # the root's writer, not the default one
    assert _records(root)[A]["status"] == "deleted"


def test_forgetting_twice_names_the_tombstone_and_the_way_to_purge(root: Path) -> None:
    _two(root)
    forget(root, A, reason="other", role=WRITER)
    [tomb] = _tombstones(root)
    where = f"tombstone {tomb['id']} at {tomb['deleted_at']}"
    with pytest.raises(BadInput) as info:
        forget(root, A, reason="other", role=WRITER)
    assert info.value.message == f"{A} is already forgotten ({where})"
    forget(root, A, reason="privacy_sensitive", role=WRITER, purge=True)
    with pytest.raises(BadInput) as again:
        forget(root, A, reason="other", role=WRITER)
    assert again.value.message == f"{A} is already forgotten and purged ({where})"
    assert len(_tombstones(root)) == 1


def test_an_unknown_id_is_refused_with_where_to_find_ids(root: Path) -> None:
    _two(root)
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        forget(root, "mem_20261202000099_zzzzzzzz", reason="other", role=WRITER)
    assert info.value.message == f"no record mem_20261202000099_zzzzzzzz in {root / 'memory'}"
    assert info.value.hint == ("find record ids with `commonkeep search WORDS`, or run `commonkeep render` and read "
                               "rendered/MEMORY.md (unpromoted candidates: `commonkeep review --list`)")
    with pytest.raises(BadInput) as cap:
        forget(root, "cap_20261202000099_zzzzzzzz", reason="other", role=WRITER)
    assert cap.value.message == ("no record mem_20261202000099_zzzzzzzz and no candidate cap_20261202000099_zzzzzzzz "
                                 "in this root")
    assert _snapshot(root) == before


def test_the_record_id_of_an_unpromoted_candidate_forgets_the_candidate(root: Path) -> None:
    cand = write_candidate(root, TABS, provenance={"agent": "planner", "role": "planner"})
    rid = memory_id_for(str(cand["id"]))
    res = forget(root, rid, reason="user_requested", role=WRITER)
    [op] = _patch(root, str(res.patch["patch_id"]))["ops"]
    assert (op["target_id"], op["candidate_id"]) == (rid, cand["id"])
    assert [c["status"] for c in Store(root).candidates()] == ["rejected"]
    assert [t["deleted_record_id"] for t in _tombstones(root)] == [rid]


def test_a_deprecated_record_can_still_be_forgotten(root: Path) -> None:
    _two(root)
    apply_patch(root, manual_patch("dep001", {"op": "deprecate", "target": L2, "target_id": A, "reason": "moved"}), role=WRITER)
    forget(root, A, reason="invalid", role=WRITER)
    assert _records(root)[A]["status"] == "deleted" and [t["deleted_record_id"] for t in _tombstones(root)] == [A]


def test_forget_drops_the_record_from_the_last_selection_and_keeps_the_rest(root: Path) -> None:
    _two(root)
    sel = root / "runtime" / "selected_memory.json"
    sel.parent.mkdir(exist_ok=True)
    rows = [{"id": A, "statement": "x"}, {"id": B, "statement": "y"}, "odd row"]
    sel.write_text(json.dumps(rows), encoding="utf-8")
    forget(root, A, reason="other", role=WRITER)
    assert json.loads(sel.read_text(encoding="utf-8")) == rows[1:]
    kept = sel.read_bytes()
    add(root, record("mem_20261202000032_cccccccc", "A third record."))
    forget(root, "mem_20261202000032_cccccccc", reason="other", role=WRITER)
    assert sel.read_bytes() == kept  # not listed: the file is not rewritten
    sel.write_text(json.dumps({"id": B}), encoding="utf-8")  # not a list: left alone
    forget(root, B, reason="other", role=WRITER)
    assert json.loads(sel.read_text(encoding="utf-8")) == {"id": B}


def test_a_plain_forget_leaves_the_logs_and_a_purge_scrubs_every_version(root: Path) -> None:
    """Audit-preserving means the daily log keeps what was said; a purge scrubs the statement's
    versions (three here: the first two only in the patches that changed it)."""
    v1, v2, v3 = ("Alice lives at 12 Elm Street near the mill.", "Alice lives at 14 Elm Street near the mill.",
                  "Alice lives at 16 Elm Street near the mill.")
    cand = write_candidate(root, v1)
    approve(root, [cand["id"]], role=WRITER)  # the inbox and the approving patch hold the first version
    rid = memory_id_for(str(cand["id"]))
    add(root, record(B, "Bob lives at 3 Oak Road by the school."))
    for n, text in enumerate((v2, v3), 1):
        apply_patch(root, manual_patch(f"upd00{n}", {"op": "update", "target": L2, "target_id": rid,
                                                     "updates": {"statement": text}}), role=WRITER)
    daily = root / "daily" / "2026-12-02.md"
    daily.parent.mkdir(exist_ok=True)
    daily.write_text(f"- {v1}\n- {v2}\n- {v3}\n- Bob lives at 3 Oak Road by the school.\n", encoding="utf-8")
    forget(root, B, reason="other", role=WRITER)
    assert "Bob lives at 3 Oak Road" in daily.read_text(encoding="utf-8")
    apply_patch(root, manual_patch("upd003", {"op": "update", "target": L2, "target_id": rid,
                                              "updates": {"confidence": 0.7}}), role=WRITER)
    res = forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    text = daily.read_text(encoding="utf-8")
    assert "Elm Street" not in text and "Bob lives at 3 Oak Road" in text
    from commonkeep.patches.purge import line_hash

    hashes = set(_patch(root, str(res.patch["patch_id"]))["scrubbed_lines"])
    assert {line_hash(f"- {v}") for v in (v1, v2, v3)} <= hashes  # each scrubbed line, by hash


def test_a_purge_in_a_git_root_says_the_history_still_holds_it(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _two(root)
    (root / ".git").mkdir()
    forget(root, B, reason="other", role=WRITER)
    assert "purge-history" not in capsys.readouterr().err  # nothing was purged
    forget(root, A, reason="privacy_sensitive", role=WRITER, purge=True)
    out, err = capsys.readouterr()
    assert "purge-history" not in out
    assert ("commonkeep forget: this root is a git repository: its history (and its remote's, once synced) still "
            "holds the purged text. Run `commonkeep share sync`, then `commonkeep share purge-history` to rewrite "
            "the history without it; it prints what every other clone must do") in err


# --- an interrupted deletion --------------------------------------------------------------------


def _interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(self: Store, path: Path, transform: Any) -> Any:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(Store, "rewrite_records", boom)


def test_finishing_an_interrupted_deletion_touches_no_other_pending_op(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A patch deleting A and lowering B's confidence, of which the person selected only the delete,
    was cut off; a newer pending patch would delete B. Finishing A applies A's delete and nothing else."""
    _two(root)
    mixed = manual_patch("mix001", {"op": "delete", "target": L2, "target_id": A, "reason": "other",
                                    "deletion_mode": "audit_preserving", "deletion_reason": "other"},
                         {"op": "update", "target": L2, "target_id": B, "updates": {"confidence": 0.1}})
    with monkeypatch.context() as m:
        _interrupt(m)
        with pytest.raises(OSError):
            apply_patch(root, mixed, role=WRITER, op_ids=["op_001"])
    other = manual_patch("zzz001", {"op": "delete", "target": L2, "target_id": B, "reason": "other"},
                         {"op": "update", "target": L2, "target_id": A, "updates": {"confidence": 0.1}})
    other["patch_id"] = "patch_209901010000_ckzzz001"  # newer than the interrupted one
    (root / "patches" / f"{other['patch_id']}.json").write_text(json.dumps(other), encoding="utf-8")
    capsys.readouterr()
    forget(root, A, reason="other", role=WRITER)
    err = capsys.readouterr().err
    [tomb] = _tombstones(root)
    assert (f"commonkeep forget: finishing an interrupted deletion of {A} (tombstone {tomb['id']} at "
            f"{tomb['deleted_at']}; its line is still in {L2}:1)") in err
    recs = _records(root)
    assert recs[A]["status"] == "deleted" and (recs[B]["status"], recs[B]["confidence"]) == ("active", 0.8)
    doc = _patch(root, "patch_202612020000_ckmix001")
    assert doc["applied_ops"] == ["op_001"]


def test_an_interrupted_purge_is_finished_as_a_purge_even_without_its_patch(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _two(root)
    with monkeypatch.context() as m:
        _interrupt(m)
        with pytest.raises(OSError):
            forget(root, A, reason="privacy_sensitive", role=WRITER, purge=True)
    for path in (root / "patches").glob("*.json"):  # the cut-off patch is gone (another machine, a hand)
        path.unlink()
    res = forget(root, A, reason="other", role=WRITER)  # no --purge: the tombstone already claims one
    assert A not in _records(root) and "staging bucket" not in (root / L2).read_text(encoding="utf-8")
    doc = _patch(root, str(res.patch["patch_id"]))
    assert doc["summary"] == f"finish the interrupted deletion of {A} (privacy purge)"
    assert len(_tombstones(root)) == 1


def test_finishing_an_interrupted_purge_applies_that_purge_not_an_older_proposal(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older pending proposal would delete A keeping its line; the purge cut off after it must be
    the one finished (the line removed, the purge's patch applied)."""
    _two(root)
    proposal = manual_patch("old001", {"op": "delete", "target": L2, "target_id": A, "reason": "other",
                                       "deletion_mode": "audit_preserving", "deletion_reason": "other"})
    (root / "patches" / f"{proposal['patch_id']}.json").write_text(json.dumps(proposal), encoding="utf-8")
    with monkeypatch.context() as m:
        _interrupt(m)
        with pytest.raises(OSError):
            forget(root, A, reason="privacy_sensitive", role=WRITER, purge=True)
    [cut] = [p for p in (root / "patches").glob("*.json") if "old001" not in p.name]
    forget(root, A, reason="other", role=WRITER)
    assert A not in _records(root) and "staging bucket" not in (root / L2).read_text(encoding="utf-8")
    assert json.loads(cut.read_text(encoding="utf-8"))["status"] == "applied"


def test_an_interrupted_forget_then_purge_writes_a_purge_patch_of_its_own(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two(root)
    with monkeypatch.context() as m:
        _interrupt(m)
        with pytest.raises(OSError):
            forget(root, A, reason="user_requested", role=WRITER)
    res = forget(root, A, reason="privacy_sensitive", role=WRITER, purge=True)
    assert _patch(root, str(res.patch["patch_id"]))["summary"] == f"forget {A} (privacy purge)"
    assert A not in _records(root) and [t["deletion_mode"] for t in _tombstones(root)] == ["privacy_purge"]


# --- undo ---------------------------------------------------------------------------------------


def test_undo_of_an_add_is_an_audited_patch_and_requeues_the_candidate_for_a_person(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00Z")
    cand = adapter_candidate(root, TABS, {"agent": "hermes", "role": "planner", "stamped_by": "hermes"},
                             tags=["style"], evidence_refs=["daily/2026-12-02.md"])
    approve(root, [cand["id"]], role=WRITER)
    decided = outcome(root, str(cand["id"]))
    rid = memory_id_for(str(cand["id"]))
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-03T11:00:00Z")
    done = undo(root, [str(cand["id"])], role=WRITER, reason="   ")
    doc = _patch(root, done.patch_id)
    why = f"undo of the decision on {cand['id']} (patch {decided.patch_id})"
    assert doc["ops"] == [{"op": "deprecate", "target": L2, "target_id": rid, "risk": "low", "reason": why,
                           "op_id": "op_001", "default_selected": True}]
    assert doc["status"] == "applied" and doc["applied_ops"] == ["op_001"] and doc["decided_by"] == WRITER
    assert doc["summary"] == f"undo approved of {cand['id']}" and "undo_reason" not in doc
    assert doc["undoes"] == [decided.patch_id] and doc["undoes_candidates"] == [cand["id"]]
    assert _records(root)[rid]["status"] == "deprecated"
    [back] = Store(root).candidates(status="new")  # the candidate itself, under its own id and time (issue 36)
    assert done.requeued == {cand["id"]: cand["id"]} and done.applied == ["op_001"]
    assert back["id"] == cand["id"] and back["created_at"] == "2026-12-02T10:00:00.000Z" and back["text"] == TABS
    assert back["provenance"] == {**cand["provenance"], "requeued_by": done.patch_id, "requeued_at": "2026-12-03T11:00:00.000Z"}
    assert back["record_id"] == rid + "_u1"  # approving it again makes a new record; the deprecated one keeps its id
    assert {k: v for k, v in back.items() if k not in ("status", "provenance", "record_id")} == \
        {k: v for k, v in cand.items() if k not in ("status", "provenance")}
    assert done.to_json() == {"patch_id": done.patch_id, "undid": [outcome_json(decided)],
                              "requeued": {cand["id"]: cand["id"]}, "applied_ops": ["op_001"]}
    assert done.sentence() == (f"undid approved {cand['id']} (patch {decided.patch_id}): reversed by patch "
                               f"{done.patch_id} (1 op(s) applied); back in the queue: {cand['id']}")
    with pytest.raises(BadInput) as info:
        undo(root, [str(cand["id"])], role=WRITER)
    assert info.value.message == (f"the decision on {cand['id']} was already undone by patch {done.patch_id}; "
                                  "the candidate is back in the queue, waiting for a decision")


def outcome_json(o: Any) -> dict[str, Any]:
    return dict(o.to_json())


def test_undo_of_a_reinforce_restores_the_record_exactly(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00Z")
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    rid = memory_id_for(str(first["id"]))
    was = _records(root)[rid]
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-03T10:00:00Z")
    dup = write_candidate(root, TABS, evidence_refs=["ci.log"])
    approve(root, [dup["id"]], role=WRITER)
    changed = _records(root)[rid]
    done = undo(root, [str(dup["id"])], role=WRITER, reason="  wrong record  ")
    [op] = _patch(root, done.patch_id)["ops"]
    assert op["op"] == "update" and op["target"] == L2 and op["target_id"] == rid
    assert op["reason"].startswith(f"undo of the decision on {dup['id']}")
    assert op["before"] == {k: changed[k] for k in op["updates"]}  # what the undo replaced, kept for its own undo
    assert _patch(root, done.patch_id)["undo_reason"] == "wrong record"
    back = _records(root)[rid]
    assert {k: back[k] for k in op["updates"]} == {k: was[k] for k in op["updates"]}
    assert back["evidence"] == was["evidence"] and back["confidence"] == was["confidence"]


def test_undo_of_an_add_and_its_later_reinforce_together_puts_both_back(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug this file found: the add was reversed first (deprecate), the update back was then
    refused by apply, half the patch stayed applied and neither candidate went back to the queue."""
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00Z")
    a = write_candidate(root, TABS)
    approve(root, [a["id"]], role=WRITER)
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:05:00Z")
    b = write_candidate(root, TABS, evidence_refs=["ci.log"])
    approve(root, [b["id"]], role=WRITER)
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:10:00Z")
    done = undo(root, [str(a["id"]), str(b["id"])], role=WRITER)
    assert len(done.applied) == 2 and set(done.requeued) == {a["id"], b["id"]}
    assert [r["status"] for r in _records(root).values()] == ["deprecated"]
    assert sorted(c["id"] for c in Store(root).candidates(status="new")) == sorted([a["id"], b["id"]])
    assert _patch(root, done.patch_id)["summary"] == f"undo approved of {a['id']}, approved of {b['id']}"


def test_undo_of_two_reinforces_together_restores_the_values_before_the_first(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The later reinforce is reversed first; the earlier one is then checked against the values
    that reversal puts back, not refused as "changed again since"."""
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00Z")
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    rid = memory_id_for(str(first["id"]))
    was = _records(root)[rid]
    ids = []
    for n, ref in enumerate(("ci.log", "docs/style.md"), 1):
        monkeypatch.setenv("COMMONKEEP_NOW", f"2026-12-0{2 + n}T10:00:00Z")
        dup = write_candidate(root, TABS, evidence_refs=[ref])
        approve(root, [dup["id"]], role=WRITER)
        ids.append(str(dup["id"]))
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-05T10:00:00Z")
    done = undo(root, ids, role=WRITER)
    assert len(done.applied) == 2
    back = _records(root)[rid]
    assert back["evidence"] == was["evidence"] and back["confidence"] == was["confidence"] and back["status"] == "active"


def test_undo_of_two_adds_deprecates_both(root: Path) -> None:
    a = write_candidate(root, TABS)
    b = write_candidate(root, "Run the linter before every commit.")
    approve(root, [a["id"]], role=WRITER)
    approve(root, [b["id"]], role=WRITER)
    done = undo(root, [str(a["id"]), str(b["id"]), str(a["id"])], role=WRITER)
    assert [r["status"] for r in _records(root).values()] == ["deprecated", "deprecated"]
    assert len(done.applied) == 2 and len(Store(root).candidates(status="new")) == 2
    pa, pb = (str(o.patch_id) for o in done.undid)
    assert done.sentence() == (f"undid approved {a['id']} (patch {pa}); undid approved {b['id']} (patch {pb}): "
                               f"reversed by patch {done.patch_id} (2 op(s) applied); back in the queue: "
                               f"{a['id']}, {b['id']}")


def test_undo_of_a_replace_restores_a_copy_under_a_fresh_id_never_a_forgotten_one(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00Z")
    old = write_candidate(root, TABS)
    approve(root, [old["id"]], role=WRITER)
    oid = memory_id_for(str(old["id"]))
    taken = record(f"{oid}_r1", "A record that once held this id.")  # forgotten and purged: its id never comes back
    apply_patch(root, manual_patch("add001", {"op": "add", "target": L2, "record": taken}), role=WRITER)
    forget(root, f"{oid}_r1", reason="other", role=WRITER, purge=True)
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="replace")
    nid = memory_id_for(str(con["id"]))
    was = _records(root)[oid]
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-03T10:00:00Z")
    done = undo(root, [str(con["id"])], role=WRITER)
    ops = _patch(root, done.patch_id)["ops"]
    assert [(o["op"], o["target"], o.get("target_id", o.get("record", {}).get("id"))) for o in ops] == [
        ("deprecate", L2, nid), ("add", L2, f"{oid}_r2")]
    assert all(o["reason"].startswith(f"undo of the decision on {con['id']}") for o in ops)
    recs = _records(root)
    copy = recs[f"{oid}_r2"]
    assert (copy["status"], copy["superseded_by"], copy["restored_from"], recs[nid]["status"]) == (
        "active", [], oid, "deprecated")
    assert was["updated_at"] == "2026-12-02" and copy["updated_at"] == "2026-12-03" and recs[oid]["status"] == "superseded"
    assert {k: v for k, v in copy.items() if k not in ("id", "status", "superseded_by", "updated_at", "restored_from")} \
        == {k: v for k, v in was.items() if k not in ("id", "status", "superseded_by", "updated_at")}


def test_undo_of_keep_both_uncontests_and_refuses_once_settled(root: Path) -> None:
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="keep_both")
    oid = memory_id_for(str(first["id"]))
    settled = manual_patch("unc001", {"op": "uncontest", "target": L2, "target_id": oid})
    apply_patch(root, settled, role=WRITER)  # settled by someone since
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        undo(root, [str(con["id"])], role=WRITER)
    assert info.value.message == (f"cannot undo the decision on {con['id']}: record {oid} is active now; "
                                  "nothing was applied")
    assert info.value.hint == "change the record with its own patch (commonkeep forget, or a new candidate)"
    assert _snapshot(root) == before


def test_undo_of_keep_both_puts_the_record_back_to_active(root: Path) -> None:
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="keep_both")
    oid = memory_id_for(str(first["id"]))
    done = undo(root, [str(con["id"])], role=WRITER)
    ops = _patch(root, done.patch_id)["ops"]
    assert [(o["op"], o["target"], o["target_id"]) for o in ops if o["op"] == "uncontest"] == [("uncontest", L2, oid)]
    assert all(o["reason"].startswith(f"undo of the decision on {con['id']}") for o in ops)
    assert _records(root)[oid]["status"] == "active"


def test_undo_of_an_add_and_its_later_keep_both_together_deprecates_both_records(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keep-both is reversed first (its record deprecated, the first one back to active), then
    the add, on the record as that reversal leaves it."""
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00Z")
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:05:00Z")
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="keep_both")
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:10:00Z")
    done = undo(root, [str(first["id"]), str(con["id"])], role=WRITER)
    assert {r["statement"]: r["status"] for r in _records(root).values()} == {TABS: "deprecated", NO_TABS: "deprecated"}
    assert len(done.requeued) == 2 and done.applied == [op["op_id"] for op in _patch(root, done.patch_id)["ops"]]


@pytest.mark.parametrize("purge", [False, True])
def test_undo_of_an_add_whose_record_was_forgotten_is_refused_and_writes_nothing(root: Path, purge: bool) -> None:
    cand = write_candidate(root, TABS)
    approve(root, [cand["id"]], role=WRITER)
    rid = memory_id_for(str(cand["id"]))
    forget(root, rid, reason="other", role=WRITER, purge=purge)
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        undo(root, [str(cand["id"])], role=WRITER)
    assert info.value.message == f"cannot undo the decision on {cand['id']}: record {rid} is gone now; nothing was applied"
    assert _snapshot(root) == before


def test_undo_of_a_reinforce_changed_again_since_is_refused(root: Path) -> None:
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    rid = memory_id_for(str(first["id"]))
    dup = write_candidate(root, TABS, evidence_refs=["ci.log"])
    approve(root, [dup["id"]], role=WRITER)
    changed = _records(root)[rid]
    apply_patch(root, manual_patch("upd009", {"op": "update", "target": L2, "target_id": rid,
                                              "updates": {"confidence": 0.31, "evidence": changed["evidence"][:1]}}),
                role=WRITER)
    [op] = [o for o in outcome(root, str(dup["id"])).ops if o["op"] == "update"]
    again = [k for k in op["updates"] if k in ("confidence", "evidence")]
    assert len(again) == 2
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        undo(root, [str(dup["id"])], role=WRITER)
    assert info.value.message == (f"cannot undo the decision on {dup['id']}: {rid} was changed again since "
                                  f"({', '.join(again)}); nothing was applied")
    assert _snapshot(root) == before


@pytest.mark.parametrize("kept", [None, {}])
def test_undo_of_an_update_that_kept_no_old_values_is_refused(root: Path, kept: dict[str, Any] | None) -> None:
    """A patch written by an older version, or by hand, without ``before``."""
    first = write_candidate(root, TABS)
    approve(root, [first["id"]], role=WRITER)
    dup = write_candidate(root, TABS, evidence_refs=["ci.log"])
    approve(root, [dup["id"]], role=WRITER)
    pid = str(outcome(root, str(dup["id"])).patch_id)
    path = root / "patches" / f"{pid}.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    for op in doc["ops"]:
        if op["op"] == "update":
            op.pop("before", None)
            if kept is not None:
                op["before"] = kept
    path.write_text(json.dumps(doc), encoding="utf-8")
    before = _snapshot(root)
    with pytest.raises(BadInput) as info:
        undo(root, [str(dup["id"])], role=WRITER)
    assert info.value.message == (f"cannot undo the decision on {dup['id']}: its patch {pid} did not keep the values "
                                  "it replaced; nothing was applied")
    assert info.value.hint == f"see them with `commonkeep patches --show {pid}`"
    assert _snapshot(root) == before


def test_undo_of_a_rejection_writes_an_applied_patch_that_explains_the_requeue(root: Path) -> None:
    cand = write_candidate(root, TABS)
    reject(root, [cand["id"]], reason="not durable", role=WRITER)
    done = undo(root, [str(cand["id"])], role=WRITER)
    doc = _patch(root, done.patch_id)
    assert doc["ops"] == [] and doc["status"] == "applied" and doc["applied_at"]
    assert doc["summary"] == f"undo rejected of {cand['id']}" and doc["undoes_candidates"] == [cand["id"]]
    assert [c["id"] for c in Store(root).candidates(status="new")] == [cand["id"]]


def test_undo_of_a_rejection_waits_for_the_writer_lock(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.patches.lock import writer_lock

    cand = write_candidate(root, TABS)
    reject(root, [cand["id"]], reason="not durable", role=WRITER)
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with writer_lock(root, WRITER, "test-hold", wait=0):
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert taken.wait(30)
        monkeypatch.setenv("COMMONKEEP_LOCK_WAIT", "0")
        before = _snapshot(root)
        with pytest.raises(CommonkeepError, match="test-hold"):
            undo(root, [str(cand["id"])], role=WRITER)
        assert _snapshot(root) == before
    finally:
        release.set()
        holder.join()


def test_undo_of_an_unknown_or_pending_candidate_says_which(root: Path) -> None:
    cand = write_candidate(root, TABS)
    with pytest.raises(BadInput) as pending:
        undo(root, [str(cand["id"])], role=WRITER)
    assert pending.value.message == f"nothing to undo for {cand['id']}: it is still pending"
    with pytest.raises(BadInput) as unknown:
        undo(root, ["cap_20261202000099_zzzzzzzz"], role=WRITER)
    assert unknown.value.message == "nothing to undo for cap_20261202000099_zzzzzzzz: it is not decided by any patch"


def test_undo_asks_the_roots_own_writer_role_and_names_the_action(root: Path) -> None:
    cand = write_candidate(root, TABS)
    reject(root, [cand["id"]], reason="not durable", role=WRITER)
    (root / "config.json").write_text(json.dumps({"commonkeep": {"writerRole": "archivist"}}), encoding="utf-8")
    with pytest.raises(CommonkeepError, match="'review' changes the shared memory and only the writer role 'archivist'"):
        undo(root, [str(cand["id"])], role=WRITER)
    assert undo(root, [str(cand["id"])], role="archivist").requeued


def test_the_cli_prints_what_undo_did(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = write_candidate(root, TABS)
    approve(root, [cand["id"]], role=WRITER)
    code, out, err = run_cli(capsys, "review", *writer_args(root), "--undo", str(cand["id"]), "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert set(shown) >= {"patch_id", "undid", "requeued", "applied_ops"} and shown["applied_ops"] == ["op_001"]


def test_undo_of_a_replace_restores_the_old_record_as_its_first_copy(root: Path) -> None:
    old = write_candidate(root, TABS)
    approve(root, [old["id"]], role=WRITER)
    con = write_candidate(root, NO_TABS)
    approve(root, [con["id"]], role=WRITER, choice="replace")
    oid = memory_id_for(str(old["id"]))
    undo(root, [str(con["id"])], role=WRITER)
    active = [r for r in _records(root).values() if r["status"] == "active"]
    assert [(r["id"], r["restored_from"], r["statement"]) for r in active] == [(f"{oid}_r1", oid, TABS)]


def test_an_undo_that_put_nothing_back_in_the_queue_is_named_without_a_copy(root: Path) -> None:
    """The state the batch-undo bug left (an undo patch, no requeued copy): a second undo names the
    patch and claims no copy in the queue."""
    cand = write_candidate(root, TABS)
    reject(root, [cand["id"]], reason="not durable", role=WRITER)
    lost = manual_patch("und001")
    lost.update({"ops": [], "status": "applied", "applied_at": now_iso(),  # after the rejection it undoes
                 "undoes_candidates": [cand["id"]]})
    (root / "patches" / f"{lost['patch_id']}.json").write_text(json.dumps(lost), encoding="utf-8")
    with pytest.raises(BadInput) as info:
        undo(root, [str(cand["id"])], role=WRITER)
    assert info.value.message == f"the decision on {cand['id']} was already undone by patch {lost['patch_id']}"
