"""Apply is resumable: a disk that fills, or a kill -9, between any two writes of an apply is
finished by the next ``apply`` exactly as an uninterrupted run would have ended (same records,
same candidate statuses, same applied ops and skip reasons; nothing rejected whose record is
live), from the journal the apply wrote before its first canonical byte."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.store.jsonl import read_jsonl
from tests.governance.conftest import WRITER, rebind_copy, run_cli, write_candidate, writer_args

NEW = [
    ("Run the test suite with pytest -q before committing.", True),
    ("Format Python code with black before review.", False),
    ("Deploys go through the staging host first.", True),
    ("Use ruff for linting in CI.", False),
]


def _scenario(root: Path) -> str:
    """A root with three records and a proposed patch that adds four (two files), updates one,
    deletes one (a tombstone) and rejects one candidate: every kind of write an apply makes."""
    old = [write_candidate(root, t) for t in ("Never push to main directly.", "Tag releases with semver.",
                                              "Keep the changelog in CHANGELOG.md.")]
    apply_patch(root, curate(root, role=WRITER).patch["patch_id"], role=WRITER, fire_hooks=False)
    ids = ["mem_" + c["id"][4:] for c in old]
    for text, in_project in NEW:
        write_candidate(root, text, **({"cwd": str(root)} if in_project else {}))
    spam = write_candidate(root, "A one-off note nobody needs to keep.")
    prop = curate(root, role=WRITER)
    ops = [o for o in prop.patch["ops"] if o["op"] == "add" and o.get("candidate_id") != spam["id"]]
    assert len(ops) == 4
    ops += [
        {"op": "update", "target_id": ids[0], "updates": {"confidence": 0.97, "tags": ["testing", "git"]},
         "risk": "low", "default_selected": True},
        {"op": "delete", "target_id": ids[1], "deletion_mode": "audit_preserving", "deletion_reason": "user_requested",
         "risk": "medium", "default_selected": True},
        {"op": "reject_candidate", "candidate_id": spam["id"], "risk": "low", "default_selected": True},
    ]
    for i, op in enumerate(ops, 1):
        op["op_id"] = f"op_{i:03d}"
    doc = {**prop.patch, "ops": ops}
    (root / "patches" / f"{doc['patch_id']}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return str(doc["patch_id"])


def _snapshot(root: Path, pid: str) -> dict[str, Any]:
    """What a user depends on after the apply, without timestamps."""
    lines: list[tuple[str, str, str, str, float, tuple[str, ...]]] = []
    for path in sorted((root / "memory").rglob("*.jsonl")):
        if path.name in ("tombstones.jsonl", "evidence.jsonl"):
            continue
        lines += [(path.name, r["id"], r["statement"], r["status"], r["confidence"], tuple(r["tags"]))
                  for r in read_jsonl(path).rows]
    doc = json.loads((root / "patches" / f"{pid}.json").read_text())
    return {
        "record_lines": sorted(lines),
        "tombstoned": sorted(t["deleted_record_id"] for t in read_jsonl(root / "memory" / "tombstones.jsonl").rows),
        "candidates": {c["id"]: c["status"] for c in read_jsonl(root / "inbox" / "captured.jsonl").rows},
        "patch": {k: doc.get(k) for k in ("status", "applied_ops", "skipped_ops", "skip_reasons", "ops")},
        "journals": sorted(p.name for p in (root / "runtime" / "journal").glob("*")) if (root / "runtime" / "journal").is_dir() else [],
    }


@pytest.fixture
def prepared(tmp_path: Path, root: Path) -> tuple[Path, str, dict[str, Any]]:
    pid = _scenario(root)
    pristine = tmp_path / "pristine"
    shutil.copytree(root, pristine)
    apply_patch(root, pid, role=WRITER, fire_hooks=False)
    expected = _snapshot(root, pid)
    assert expected["patch"]["status"] == "applied" and len(expected["patch"]["applied_ops"]) == 7
    assert expected["journals"] == []
    return pristine, pid, expected


def _fail_at(monkeypatch: pytest.MonkeyPatch, root: Path, n: int) -> list[str]:
    """The ``n``-th ``os.write`` to a file of ``root`` raises ENOSPC (and every later one: the disk
    stays full). Returns the files written, in order."""
    real = os.write
    seen: list[str] = []

    def write(fd: int, data: Any) -> int:
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            where = ""
        if where.startswith(str(root)):
            seen.append(where)
            if len(seen) >= n:
                raise OSError(errno.ENOSPC, "No space left on device", where)
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return seen


def test_a_full_disk_at_any_write_is_finished_exactly_by_the_next_apply(
    prepared: tuple[Path, str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    pristine, pid, expected = prepared
    points = 0
    for n in range(1, 60):
        root = tmp_path / f"n{n}"
        shutil.copytree(pristine, root)
        rebind_copy(root)
        with monkeypatch.context() as m:
            seen = _fail_at(m, root, n)
            try:
                apply_patch(root, pid, role=WRITER, fire_hooks=False)
            except OSError as exc:
                assert "No space left on device" in str(exc)  # the real cause, named
                failed = True
            else:
                failed = False
        if not failed and len(seen) < n:
            break  # every write point has been cut once
        points += 1
        code, _, err = run_cli(capsys, "apply", pid, *writer_args(root))
        if failed and len(seen) >= n and code != 0:
            assert "already applied" in err, err  # cut after the patch file said so: nothing left to do
        assert _snapshot(root, pid) == expected, f"cut at write {n} ({seen[-1] if seen else '-'})"
    assert points >= 8  # journal, tombstone, 3 record files, inbox, patch, render …


KILLER = """
import os, signal, sys
from commonkeep.patches.patch import apply_patch
root, pid, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
real, count = os.write, [0]
def write(fd, data):
    try:
        where = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        where = ""
    if where.startswith(root):
        count[0] += 1
        if count[0] == n:
            os.kill(os.getpid(), signal.SIGKILL)
    return real(fd, data)
os.write = write
apply_patch(root, pid, role="librarian", fire_hooks=False)
print("finished")
"""


def test_a_kill_9_at_any_write_is_finished_exactly_by_the_next_apply(
    prepared: tuple[Path, str, dict[str, Any]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pristine, pid, expected = prepared
    killed = 0
    for n in range(1, 60):
        root = tmp_path / f"k{n}"
        shutil.copytree(pristine, root)
        rebind_copy(root)
        proc = subprocess.run([sys.executable, "-c", KILLER, str(root), pid, str(n)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "COMMONKEEP_ROLE": WRITER})
        if proc.returncode == 0:
            assert "finished" in proc.stdout
            break
        assert proc.returncode == -9, proc.stderr
        killed += 1
        code, _, err = run_cli(capsys, "apply", pid, *writer_args(root))
        assert code == 0 or "already applied" in err, err
        assert _snapshot(root, pid) == expected, f"killed at write {n}"
    assert killed >= 8


def test_an_interrupted_apply_is_finished_before_another_patch_is_decided(
    prepared: tuple[Path, str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    """The next writer (here ``curate``) finishes the interrupted apply before it reads anything:
    the candidates that apply promoted are ``patched``, not proposed again."""
    pristine, pid, expected = prepared
    root = tmp_path / "other"
    shutil.copytree(pristine, root)
    rebind_copy(root)
    with monkeypatch.context() as m:
        seen = _fail_at(m, root, 4)  # journal, tombstone, first record file, then the disk is full
        with pytest.raises(OSError, match="No space left on device"):
            apply_patch(root, pid, role=WRITER, fire_hooks=False)
    assert len(seen) >= 4
    new = write_candidate(root, "Container images are built with buildah.")
    prop = curate(root, role=WRITER)
    assert [o["op"] for o in prop.patch["ops"]] == ["add"]  # only the new one: nothing proposed twice
    snap = _snapshot(root, pid)
    assert snap["candidates"].pop(new["id"]) == "new"
    assert snap == expected
    code, out, err = run_cli(capsys, "apply", prop.patch["patch_id"], *writer_args(root), "--json")
    assert code == 0 and json.loads(out)["applied_ops"] == ["op_001"], err


def test_re_running_the_interrupted_apply_reports_it_finished(
    prepared: tuple[Path, str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    pristine, pid, expected = prepared
    root = tmp_path / "again"
    shutil.copytree(pristine, root)
    rebind_copy(root)
    with monkeypatch.context() as m:
        _fail_at(m, root, 5)
        with pytest.raises(OSError):
            apply_patch(root, pid, role=WRITER, fire_hooks=False)
    code, out, _ = run_cli(capsys, "doctor", "--root", str(root), "--json")  # read only: says so, finishes nothing
    unfinished = [f for f in json.loads(out)["findings"] if f["code"] == "apply_unfinished"]
    assert code == 1 and len(unfinished) == 1 and f"commonkeep apply {pid}" in unfinished[0]["message"]
    assert (root / "runtime" / "journal" / f"{pid}.apply").exists()
    code, out, err = run_cli(capsys, "apply", pid, *writer_args(root), "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["resumed"] is True and res["applied_ops"] == expected["patch"]["applied_ops"] and res["skipped"] == {}
    assert _snapshot(root, pid) == expected


def test_the_error_names_the_cause_and_the_command_that_finishes(
    prepared: tuple[Path, str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    pristine, pid, _ = prepared
    root = tmp_path / "msg"
    shutil.copytree(pristine, root)
    rebind_copy(root)
    with monkeypatch.context() as m:
        _fail_at(m, root, 6)
        code, _, err = run_cli(capsys, "apply", pid, *writer_args(root))
    assert code != 0 and "Traceback" not in err
    assert "No space left on device" in err and f"commonkeep apply {pid}" in err
    assert f"runtime/journal/{pid}.apply" in err
    journal = root / "runtime" / "journal" / f"{pid}.apply"
    assert journal.stat().st_mode & 0o777 == 0o600  # it holds record text: the owner's only
