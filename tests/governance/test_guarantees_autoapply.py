"""Guarantees of the auto-apply policy that a deliberate bug once slipped past (issue 28).

Each test drives the real capture path and the real ``curate --auto`` on a real root, and asserts
what lands in memory: a tool write by the writer role is not the writer's own ``write --trust``;
``curator.autoCurateHighThreshold`` from ``config.json`` is the bar, and a confidence equal to it
passes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.governance.conftest import WRITER, run_cli

# addresses the agent ("When you ..."): only a host or writer stamp lets it through unseen
INSTRUCTION = "When you open a pull request, add the team label and request two reviewers."


def _capture(root: Path, text: str, **provenance: Any) -> str:
    from commonkeep.gate.capture import capture

    done = capture(root, text, source_type="manual", primary_trust_class="direct_user_instruction",
                   durability_signal="project", confidence=0.95, evidence_refs=["chat:1", "chat:2"],
                   provenance=provenance)
    return str(done.candidate["id"])


def _auto(capsys: pytest.CaptureFixture[str], root: Path) -> list[str]:
    code, out, err = run_cli(capsys, "curate", "--auto", "--root", str(root), "--role", WRITER, "--json")
    assert code == 0, err
    applied: list[str] = json.loads(out)["applied_ops"]
    return applied


def _l2(root: Path) -> str:
    path = root / "memory" / "L2.playbooks.jsonl"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_tool_write_by_the_writer_role_is_not_the_writers_own_stamp(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # an agent acting as the librarian, writing through its memory tool: the model chose the words
    _capture(root, INSTRUCTION, role=WRITER, tool="commonkeep_write")
    assert _auto(capsys, root) == []
    assert "request two reviewers" not in _l2(root)
    op = json.loads(next((root / "patches").glob("*.json")).read_text(encoding="utf-8"))["ops"][0]
    assert op["default_selected"] is False and "stamp" in op["reason"]


def test_the_same_write_without_a_tool_is_the_writers_stamp_and_applies(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _capture(root, INSTRUCTION.replace("two", "three"), role=WRITER)
    assert _auto(capsys, root) != []
    assert "request three reviewers" in _l2(root)


FACT = "The staging database is refreshed from production every Sunday night."


def _threshold(root: Path, value: float) -> None:
    (root / "config.json").write_text(json.dumps({"curator": {"autoCurateHighThreshold": value}}), encoding="utf-8")


def _fact(root: Path, confidence: float) -> None:
    from tests.governance.conftest import write_candidate

    write_candidate(root, FACT, confidence=confidence)


def _memory(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted((root / "memory").glob("L*.jsonl")))


def test_the_threshold_from_config_json_holds_back_what_the_default_would_apply(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _threshold(root, 0.95)
    _fact(root, 0.9)  # over the default 0.85, under the configured 0.95
    assert _auto(capsys, root) == []
    assert FACT not in _memory(root)


def test_a_lower_threshold_from_config_json_lets_through_what_the_default_holds(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _threshold(root, 0.78)
    _fact(root, 0.8)  # over the curation gate (0.75), under the default 0.85, over the configured 0.78
    assert _auto(capsys, root) != []
    assert FACT in _memory(root)


def test_a_confidence_equal_to_the_threshold_is_applied(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _threshold(root, 0.9)
    _fact(root, 0.9)  # "confidence ≥ autoCurateHighThreshold" (contract §6.6)
    assert _auto(capsys, root) != []
    assert FACT in _memory(root)
