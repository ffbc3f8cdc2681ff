"""Issue 15 §3: a hand-edited patch is refused; an edit goes through a command that shows the diff
and records who did it; ``commonkeep audit`` (and ``doctor``) list record lines no patch explains."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.governance.conftest import INJECTION, WRITER, run_cli, write_candidate

BENIGN = "Run the database migrations inside a transaction."


def _proposed(root: Path, text: str = BENIGN) -> tuple[str, Path]:
    from commonkeep.patches.curate import curate

    write_candidate(root, text)
    prop = curate(root, role=WRITER)
    assert prop.path is not None
    return str(prop.patch["patch_id"]), prop.path


def _edit(path: Path, **changes: object) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    op = doc["ops"][0]
    if "statement" in changes:
        op["record"]["statement"] = changes.pop("statement")
    op.update(changes)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def test_a_hand_edited_patch_is_refused_and_nothing_reaches_memory(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid, path = _proposed(root)
    _edit(path, statement=INJECTION)
    code, out, err = run_cli(capsys, "apply", pid, "--root", str(root), "--role", WRITER)
    assert code != 0
    assert "differs from candidate" in out and "--apply-edited" in out
    l2 = root / "memory" / "L2.playbooks.jsonl"
    assert not l2.exists() or INJECTION not in l2.read_text(encoding="utf-8")
    rendered = root / "rendered" / "MEMORY.md"
    assert not rendered.exists() or INJECTION not in rendered.read_text(encoding="utf-8")
    assert "differs from candidate" in json.loads(path.read_text(encoding="utf-8"))["skip_reasons"]["op_001"]


def test_a_risk_lowered_by_hand_is_caught_by_rescoring(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid, path = _proposed(root, INJECTION)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["ops"][0]["risk"] == "high" and not doc["ops"][0]["default_selected"]
    _edit(path, risk="low", default_selected=True)
    code, out, err = run_cli(capsys, "apply", pid, "--root", str(root), "--role", WRITER)
    assert code != 0 and "re-scored" in out and "high" in out
    assert not (root / "memory" / "L2.playbooks.jsonl").exists() or INJECTION not in (
        root / "memory" / "L2.playbooks.jsonl").read_text(encoding="utf-8")


def test_review_text_edit_is_recorded_and_an_edited_patch_applies_through_apply_edited(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = write_candidate(root, "Use black for Python formatting.")
    code, out, err = run_cli(capsys, "review", "--approve", str(cand["id"]), "--text", "Use ruff format for Python formatting.",
                             "--root", str(root), "--role", WRITER)
    assert code == 0, err
    manual = [json.loads(p.read_text(encoding="utf-8")) for p in (root / "patches").glob("*.json")]
    edit = manual[0]["ops"][0]["edited"]
    assert edit["by"] == WRITER and edit["via"] == "review --text"
    pid, path = _proposed(root)
    _edit(path, statement="Run the database migrations inside one transaction per file.")
    code, out, err = run_cli(capsys, "audit", "--apply-edited", pid, "--yes", "--actor", "alice", "--root", str(root),
                             "--role", WRITER)
    assert code == 0, err
    assert "-Run the database migrations inside a transaction." in out and "+Run the database migrations inside one" in out
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["status"] == "applied" and doc["ops"][0]["edited"]["by"] == "alice"
    l2 = (root / "memory" / "L2.playbooks.jsonl").read_text(encoding="utf-8")
    assert "one transaction per file" in l2
    code, out, err = run_cli(capsys, "audit", "--root", str(root))
    assert code == 0 and "every line is explained" in out


def test_apply_edited_without_confirmation_applies_nothing(root: Path) -> None:
    from commonkeep.errors import BadInput
    from commonkeep.patches.audit import apply_edited

    pid, path = _proposed(root)
    _edit(path, statement="Run migrations without a transaction.")
    with pytest.raises(BadInput, match="not confirmed"):
        apply_edited(root, pid, role=WRITER, ask=lambda _q: "n", say=lambda _s: None)
    assert json.loads(path.read_text(encoding="utf-8"))["status"] == "proposed"


def test_audit_and_doctor_list_a_raw_append_to_l2(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.patches.curate import record_from_candidate
    from commonkeep.patches.patch import apply_patch

    pid, _ = _proposed(root)
    apply_patch(root, pid, role=WRITER)
    raw = record_from_candidate({"id": "cap_20261203000000_rawline1", "text": INJECTION, "evidence_refs": ["x"]})
    with (root / "memory" / "L2.playbooks.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(raw) + "\n")
    code, out, err = run_cli(capsys, "audit", "--root", str(root))
    assert code == 1
    assert f"memory/L2.playbooks.jsonl:2: {raw['id']}: no applied patch wrote this record" in out
    assert "1 not explained" in out
    code, out, err = run_cli(capsys, "doctor", "--root", str(root), "--json")
    findings = json.loads(out)["findings"] if isinstance(json.loads(out), dict) else json.loads(out)
    assert any(f.get("code") == "unexplained_record_lines" for f in findings), out


def test_audit_reads_ompkeeps_patches_too(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record OMP's curator wrote (its own patch id and ``generated_by``) is explained by that patch;
    a later hand change of its statement is not."""
    from commonkeep.patches.curate import record_from_candidate

    rec = record_from_candidate({"id": "cap_20261203000000_omp00001", "text": "Use uv to manage Python environments.",
                                 "evidence_refs": ["daily/2026-12-03.md", "pyproject.toml"]}, layer="L2")
    patch = {"patch_id": "patch_202612030000_001", "created_at": "2026-12-03T00:00:00.000Z", "generated_by": "curator",
             "mode": "propose", "summary": "1 add", "status": "applied", "applied_at": "2026-12-03T00:00:01.000Z",
             "applied_ops": ["op_001"], "skipped_ops": [],
             "ops": [{"op_id": "op_001", "op": "add", "target": "memory/L2.playbooks.jsonl", "record": rec, "risk": "low",
                      "default_selected": True, "candidate_id": "cap_20261203000000_omp00001"}]}
    (root / "patches" / "patch_202612030000_001.json").write_text(json.dumps(patch, indent=2) + "\n", encoding="utf-8")
    l2 = root / "memory" / "L2.playbooks.jsonl"
    l2.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "audit", "--root", str(root))
    assert code == 0 and "1 record line(s) checked against 1 patch(es)" in out
    l2.write_text(json.dumps({**rec, "statement": INJECTION}) + "\n", encoding="utf-8")
    code, out, _ = run_cli(capsys, "audit", "--root", str(root), "--json")
    got = json.loads(out)["unexplained"]
    assert code == 1 and got[0]["record_id"] == rec["id"] and "patch_202612030000_001" in got[0]["why"]


@pytest.mark.parametrize("applied_ops", [3, [{"op_id": "op_001"}], [["op_001"]]])
def test_audit_reads_around_a_patch_whose_applied_ops_are_not_op_ids(
    root: Path, capsys: pytest.CaptureFixture[str], applied_ops: object
) -> None:
    pid, path = _proposed(root)
    code, _, err = run_cli(capsys, "apply", pid, "--root", str(root), "--role", WRITER)
    assert code == 0, err
    (root / "patches" / "hand_edited.json").write_text(json.dumps(  # a hand edit, another machine's file
        {"status": "applied", "applied_ops": applied_ops, "ops": [{"op": "add", "op_id": "op_001"}]}), encoding="utf-8")
    code, out, err = run_cli(capsys, "audit", "--root", str(root))
    assert code == 0, err
    assert "1 record line(s) checked against 2 patch(es)" in out
