"""Governance's doctor checks find what bypassed the gate, and name where, never the secret."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.governance.plugin import commonkeep_doctor_checks
from commonkeep.patches.curate import curate
from commonkeep.store.jsonl import append_jsonl
from tests.governance.conftest import WRITER, write_candidate


def test_a_secret_written_around_commonkeep_is_reported_by_file_and_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
    append_jsonl(root / "inbox" / "captured.jsonl", [{"id": "cap_omp_1", "created_at": "x", "source": {"type": "omp", "ref": "r"},
                                                      "text": f"token {token}", "tags": [], "evidence_refs": [], "status": "new"}])
    found = {f["code"]: f for f in commonkeep_doctor_checks(str(root))}
    leak = found["secret_like_content_detected"]
    assert leak["severity"] == "error" and leak["file"] == "inbox/captured.jsonl" and leak["line"] == 1
    assert "github_token" in leak["message"] and token not in leak["message"]
    assert main(["doctor", "--root", str(root), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert token not in json.dumps(report) and not report["ok"]


def test_pending_review_and_a_stale_lock_are_reported(root: Path) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    curate(root, role=WRITER)
    (root / "locks").mkdir(exist_ok=True)
    dead = 2**22 + 12345
    while True:
        try:
            os.kill(dead, 0)
            dead += 1
        except ProcessLookupError:
            break
    (root / "locks" / "writer.lock").write_text(json.dumps({"pid": dead, "role": "librarian", "action": "apply", "since": "T"}))
    found = {f["code"]: f for f in commonkeep_doctor_checks(str(root))}
    assert "1 candidate(s) wait" in found["review_pending"]["message"] and "1 patch(es) hold ops not applied" in found["review_pending"]["message"]
    assert f"pid {dead}" in found["writer_lock_stale"]["message"]
    assert "secret_like_content_detected" not in found


def test_a_partially_applied_patch_with_unselected_ops_is_still_pending(root: Path) -> None:
    from commonkeep.patches.patch import apply_patch

    write_candidate(root, "Use black for formatting Python code.")
    write_candidate(root, "Deploys to staging go through the blue-green switch.")
    prop = curate(root, role=WRITER)
    assert prop.path is not None and len(prop.ops) == 2
    apply_patch(root, str(prop.path), role=WRITER, op_ids=[prop.ops[0]["op_id"]])
    found = {f["code"]: f for f in commonkeep_doctor_checks(str(root))}
    assert "1 patch(es) hold ops not applied" in found["review_pending"]["message"]
    apply_patch(root, str(prop.path), role=WRITER, op_ids=[prop.ops[1]["op_id"]])
    assert "review_pending" not in {f["code"] for f in commonkeep_doctor_checks(str(root))}
