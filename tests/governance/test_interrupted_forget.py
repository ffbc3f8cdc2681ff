"""A deletion interrupted between its tombstone and the rewrite of the record's file.

``delete`` appends the tombstone first, then rewrites the canonical file with the record's line
marked ``status: "deleted"`` (or, for a privacy purge, without it). A failure in between (disk full, permission error, kill -9) leaves the tombstone and the record's
line. Re-running ``forget`` finishes it through a new audited patch (no second tombstone), and
``doctor`` names every such line until it is gone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.patches.forget import forget
from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl, read_jsonl
from tests.governance.conftest import WRITER, run_cli, write_candidate, writer_args

SECRET = "Alice's home address is 12 Elm Street."
L2 = "memory/L2.playbooks.jsonl"


def _promote(root: Path, capsys: pytest.CaptureFixture[str], text: str = SECRET) -> str:
    cand = write_candidate(root, text, tags=["personal"])
    code, out, _ = run_cli(capsys, "curate", *writer_args(root), "--json")
    assert code == 0
    assert run_cli(capsys, "apply", json.loads(out)["patch_id"], *writer_args(root))[0] == 0
    return "mem_" + cand["id"][4:]


def _line_of(root: Path, rid: str) -> tuple[str, int] | None:
    for path in sorted((root / "memory").rglob("*.jsonl")):
        if path.name in ("tombstones.jsonl", "evidence.jsonl"):
            continue
        read = read_jsonl(path)
        for row, no in zip(read.rows, read.line_nos, strict=True):
            if row.get("id") == rid:
                return str(path.relative_to(root)), no
    return None


def _kept_deleted(root: Path, rid: str) -> bool:
    """The record's one line is what an audit-preserving delete keeps: ``status: "deleted"`` (as OmpKeep)."""
    rows = [r for path in sorted((root / "memory").rglob("*.jsonl")) if path.name not in ("tombstones.jsonl", "evidence.jsonl")
            for r in read_jsonl(path).rows if r.get("id") == rid]
    return [r["status"] for r in rows] == ["deleted"]


def _tombstones(root: Path, rid: str) -> list[dict[str, Any]]:
    return [t for t in read_jsonl(root / "memory" / "tombstones.jsonl").rows if t.get("deleted_record_id") == rid]


def _interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rewrite of a canonical record file fails, as on a full disk."""

    def boom(self: Store, path: Path, transform: Any) -> Any:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(Store, "rewrite_records", boom)


def _interrupted_forget(root: Path, rid: str, monkeypatch: pytest.MonkeyPatch, *, purge: bool = False) -> BaseException:
    with monkeypatch.context() as m:
        _interrupt(m)
        with pytest.raises(Exception) as info:  # noqa: PT011 - the point is what it says, checked by the callers
            forget(root, rid, reason="privacy_sensitive" if purge else "user_requested", role=WRITER, purge=purge)
    return info.value


def _pending_patches(root: Path) -> list[Path]:
    """The patch files still ``proposed`` (an interrupted forget leaves its own behind)."""
    return [p for p in sorted((root / "patches").glob("*.json")) if json.loads(p.read_text())["status"] == "proposed"]


def _doctor(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, Any]]]:
    code, out, _ = run_cli(capsys, "doctor", "--root", str(root), "--json")
    return code, [f for f in json.loads(out)["findings"] if f["code"] == "tombstoned_in_active_store"]


def test_an_interrupted_forget_leaves_the_tombstone_and_the_line_and_says_how_to_finish(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    err = _interrupted_forget(root, rid, monkeypatch)
    assert len(_tombstones(root, rid)) == 1 and _line_of(root, rid) is not None  # the state this file is about
    assert "No space left on device" in str(err)
    assert f"commonkeep forget {rid} --reason user_requested" in str(err)
    assert "interrupted" in str(err) and L2 in str(err)
    assert "Elm Street" not in (root / "rendered" / "MEMORY.md").read_text()  # the projection no longer offers it


def test_re_running_forget_finishes_the_deletion_by_applying_the_interrupted_patch(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    _interrupted_forget(root, rid, monkeypatch)
    before = set((root / "patches").glob("*.json"))
    stuck = _pending_patches(root)
    assert len(stuck) == 1
    code, out, err = run_cli(capsys, "forget", rid, *writer_args(root), "--reason", "user_requested")
    assert code == 0, err
    assert f"finishing an interrupted deletion of {rid}" in err
    assert out.startswith(f"forgot {rid}: finished the interrupted deletion")
    assert _kept_deleted(root, rid)  # audit-preserving: the line stays, marked deleted
    assert len(_tombstones(root, rid)) == 1
    # no second patch: the interrupted one is applied, so nothing is left pending
    assert set((root / "patches").glob("*.json")) == before
    doc = json.loads(stuck[0].read_text())
    assert doc["status"] == "applied" and doc["ops"][0]["op"] == "delete" and doc["ops"][0]["target_id"] == rid
    assert doc["applied_ops"] == [doc["ops"][0]["op_id"]]
    # done now: a third run is the ordinary "already forgotten"
    with pytest.raises(BadInput, match="already forgotten"):
        forget(root, rid, reason="user_requested", role=WRITER)


def _indexed_ids(root: Path) -> set[str]:
    from commonkeep.recall.search import fts

    conn = fts.connect(root / "search" / "memory-fts.db", create=False)
    try:
        return {row[0] for _, row in fts.indexed_rows(conn)}
    finally:
        conn.close()


def test_finishing_syncs_the_search_index(root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rid = _promote(root, capsys)
    assert rid in _indexed_ids(root)
    _interrupted_forget(root, rid, monkeypatch)
    forget(root, rid, reason="user_requested", role=WRITER)
    assert rid not in _indexed_ids(root)


def test_doctor_names_the_file_line_and_finishing_command_until_it_is_finished(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _promote(root, capsys, "Run the test suite with pytest -q before committing.")
    rid = _promote(root, capsys)
    assert _doctor(root, capsys) == (0, [])
    _interrupted_forget(root, rid, monkeypatch)
    where = _line_of(root, rid)
    assert where is not None and where[0] == L2
    code, found = _doctor(root, capsys)
    assert code == 1 and len(found) == 1
    f = found[0]
    assert f["severity"] == "warning" and f["file"] == L2 and f["line"] == where[1] and f["record_id"] == rid
    assert f"commonkeep forget {rid} --reason user_requested" in f["message"]
    code, out, _ = run_cli(capsys, "doctor", "--root", str(root))
    assert code == 1 and f"{L2}:{where[1]}: {rid} is tombstoned" in out
    forget(root, rid, reason="user_requested", role=WRITER)
    assert _doctor(root, capsys) == (0, [])
    assert _line_of(root, other) is not None  # the other record is untouched


def test_doctor_reports_a_leftover_line_written_around_commonkeep_too(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A line with content under a privacy-purge tombstone (written around commonkeep) is reported
    and finished by purging again; the line an audit-preserving delete keeps is not a leftover."""
    rid = _promote(root, capsys)
    row = next(r for r in read_jsonl(root / L2).rows if r["id"] == rid)
    forget(root, rid, reason="invalid", role=WRITER)
    assert _kept_deleted(root, rid) and _doctor(root, capsys) == (0, [])
    forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert _line_of(root, rid) is None
    append_jsonl(root / L2, [{**row, "status": "deleted"}])
    code, found = _doctor(root, capsys)
    assert code == 1 and [(f["record_id"], f["line"]) for f in found] == [(rid, 1)]
    assert f"commonkeep forget {rid} --reason privacy_sensitive --purge" in found[0]["message"]
    forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert _line_of(root, rid) is None and len(_tombstones(root, rid)) == 1


def test_an_interrupted_purge_is_finished_with_its_scrub(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    append_jsonl(root / "memory" / "evidence.jsonl", [{
        "id": "e" * 32, "created_at": "2026-12-02", "source_kind": "conversation", "source_summary": "address mentioned",
        "source_excerpt": SECRET, "excerpt_hash": "f" * 32, "redaction_status": "none", "trust_class": "direct_user_instruction",
        "polarity": "supports", "related_memory_ids": [rid]}])
    Store(root).append_daily(f"user said: {SECRET}")
    err = _interrupted_forget(root, rid, monkeypatch, purge=True)
    assert f"commonkeep forget {rid} --reason privacy_sensitive --purge" in str(err)
    assert [t["deletion_mode"] for t in _tombstones(root, rid)] == ["privacy_purge"]
    code, found = _doctor(root, capsys)
    assert code == 1 and "--purge" in found[0]["message"]
    code, out, err_text = run_cli(capsys, "forget", rid, *writer_args(root), "--reason", "privacy_sensitive", "--purge")
    assert code == 0, err_text
    assert f"finishing an interrupted deletion of {rid}" in err_text
    assert len(_tombstones(root, rid)) == 1
    ev = read_jsonl(root / "memory" / "evidence.jsonl").rows[0]
    assert ev["redaction_status"] == "deleted" and "source_excerpt" not in ev
    _assert_nowhere(root, "Elm Street")
    assert _doctor(root, capsys) == (0, [])
    code, _, err_text = run_cli(capsys, "forget", rid, *writer_args(root), "--reason", "privacy_sensitive")
    assert code == 2 and "already forgotten and purged" in err_text


def test_without_the_interrupted_patch_a_new_patch_finishes_the_deletion(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    _interrupted_forget(root, rid, monkeypatch)
    for path in [*_pending_patches(root), *(root / "runtime" / "journal").iterdir()]:
        path.unlink()  # lost with its apply journal (e.g. a restore from an older backup)
    before = set((root / "patches").glob("*.json"))
    forget(root, rid, reason="user_requested", role=WRITER)
    assert _kept_deleted(root, rid) and len(_tombstones(root, rid)) == 1
    new = set((root / "patches").glob("*.json")) - before
    assert len(new) == 1
    doc = json.loads(new.pop().read_text())
    assert doc["status"] == "applied" and doc["summary"] == f"finish the interrupted deletion of {rid}"


def _assert_nowhere(root: Path, text: str) -> None:
    """No file of the root holds ``text`` any more."""
    for path in root.rglob("*"):
        if path.is_file():
            assert text not in path.read_text(errors="replace"), path


def test_finishing_an_interrupted_purge_without_purge_still_scrubs(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tombstone already records ``privacy_purge``: finishing it must make that true."""
    rid = _promote(root, capsys)
    Store(root).append_daily(f"user said: {SECRET}")
    _interrupted_forget(root, rid, monkeypatch, purge=True)
    forget(root, rid, reason="other", role=WRITER)
    assert [t["deletion_mode"] for t in _tombstones(root, rid)] == ["privacy_purge"]
    _assert_nowhere(root, "Elm Street")


def test_an_interrupted_forget_then_purge_finishes_and_upgrades_the_one_tombstone(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    _interrupted_forget(root, rid, monkeypatch)
    forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert [(t["deletion_mode"], t["deletion_reason"]) for t in _tombstones(root, rid)] == [("privacy_purge", "privacy_sensitive")]
    assert _line_of(root, rid) is None
    assert _pending_patches(root) == []  # the interrupted patch was applied, then the purge's own
    _assert_nowhere(root, "Elm Street")


def test_reapplying_the_interrupted_patch_also_finishes_it(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    _interrupted_forget(root, rid, monkeypatch)
    stuck = _pending_patches(root)
    assert len(stuck) == 1
    code, _, err = run_cli(capsys, "apply", stuck[0].stem, *writer_args(root))
    assert code == 0, err
    assert _kept_deleted(root, rid) and len(_tombstones(root, rid)) == 1
    assert json.loads(stuck[0].read_text())["status"] == "applied"


def test_an_unrelated_patch_that_rewrites_the_file_leaves_the_interrupted_line_alone(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rewrite never drops the line of a record its patch did not delete: the interrupted purge
    stays on the record (doctor names it) until ``forget --purge`` finishes it with its scrub."""
    rid = _promote(root, capsys)
    Store(root).append_daily(f"user said: {SECRET}")
    _interrupted_forget(root, rid, monkeypatch, purge=True)
    for path in (root / "runtime" / "journal").iterdir():
        path.unlink()  # left by a writer without the apply journal (an older version, OMP's own delete)
    where = _line_of(root, rid)
    write_candidate(root, "Run the test suite with pytest -q before committing.")
    code, out, _ = run_cli(capsys, "curate", *writer_args(root), "--json")
    pid = json.loads(out)["patch_id"]
    assert run_cli(capsys, "apply", pid, *writer_args(root))[0] == 0
    assert "finished_deletions" not in json.loads((root / "patches" / f"{pid}.json").read_text())
    assert _line_of(root, rid) == where
    code, found = _doctor(root, capsys)
    assert code == 1 and [f["record_id"] for f in found] == [rid]
    forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert _line_of(root, rid) is None and len(_tombstones(root, rid)) == 1
    _assert_nowhere(root, "Elm Street")
    assert _doctor(root, capsys) == (0, [])


@pytest.mark.parametrize("cut", ["scrub_derived", "scrub_patches"])
def test_a_purge_cut_off_in_its_scrub_is_finished_by_purging_again(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cut: str
) -> None:
    """The record's line is gone and the tombstone says privacy_purge, but copies are left:
    ``forget --purge`` again runs the scrub to the end."""
    import commonkeep.patches.purge as purge_module

    rid = _promote(root, capsys)
    Store(root).append_daily(f"user said: {SECRET}")
    with monkeypatch.context() as m:

        def boom(*args: Any, **kwargs: Any) -> None:
            raise OSError(28, "No space left on device")

        m.setattr(purge_module, cut, boom)
        with pytest.raises(OSError):
            forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert _line_of(root, rid) is None
    assert [t["deletion_mode"] for t in _tombstones(root, rid)] == ["privacy_purge"]
    left = [p for p in root.rglob("*") if p.is_file() and "Elm Street" in p.read_text(errors="replace")]
    assert left  # the cut-off scrub left copies behind
    code, out, err = run_cli(capsys, "forget", rid, *writer_args(root), "--reason", "privacy_sensitive", "--purge")
    assert code == 0, err
    assert f"purged {rid} again" in out
    assert len(_tombstones(root, rid)) == 1
    _assert_nowhere(root, "Elm Street")



def test_a_patch_file_of_another_shape_does_not_stop_finishing_the_deletion(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _promote(root, capsys)
    _interrupted_forget(root, rid, monkeypatch)
    odd = {  # read before the interrupted patch (newest name first): a hand edit, another machine's file
        "zz_ops_not_a_list.json": {"status": "proposed", "ops": 5},
        "zz_applied_not_a_list.json": {"status": "partially_applied", "applied_ops": 3,
                                       "ops": [{"op": "add", "op_id": "op_001"}]},
        "zz_applied_unhashable.json": {"status": "partially_applied", "applied_ops": [{}],
                                       "ops": [{"op": "add", "op_id": "op_001"}]},
        "zz_too_deep.json": None,
    }
    for name, doc in odd.items():
        body = "[" * 100_000 if doc is None else json.dumps(doc)
        (root / "patches" / name).write_text(body, encoding="utf-8")
    code, out, err = run_cli(capsys, "forget", rid, *writer_args(root), "--reason", "user_requested")
    assert code == 0, err
    assert out.startswith(f"forgot {rid}: finished the interrupted deletion")
    assert _kept_deleted(root, rid) and len(_tombstones(root, rid)) == 1
