"""The roundtable step of ``commonkeep demo`` runs the loop and reports what happened."""

from __future__ import annotations

from pathlib import Path

from commonkeep_roundtable.broker import socket_answers
from commonkeep_roundtable.demo import DECISION, roundtable_step
from commonkeep_roundtable.paths import socket_path


def test_demo_step_brings_the_collapsed_decision_back_from_the_wiki(agent_base: Path) -> None:
    lines: list[str] = []
    out = roundtable_step(agent_base, say=lines.append)
    assert "failed" not in out, out
    assert out["digest"]["consumedSeq"] == 7
    assert out["denied"].startswith('Only the "librarian" role may export rooms for memory; this session is "planner".')
    assert out["export"]["messages"] == 7 and out["export"]["truncated"] is False
    assert DECISION in (agent_base / "wiki" / "raw" / "ratelimit.md").read_text(encoding="utf-8")
    assert DECISION in out["answer"]
    assert any("collapsed" in line for line in lines)
    assert any("reviewer's cursor stayed at 7" in line for line in lines)
    assert not socket_answers(socket_path(agent_base / "agent"))  # the demo's broker is gone


def test_demo_step_copes_with_a_workdir_too_deep_for_a_socket(agent_base: Path) -> None:
    deep = agent_base / ("d" * 110)
    out = roundtable_step(deep, say=lambda line: None)
    assert "failed" not in out and out["export"]["messages"] == 7
    assert (deep / "wiki" / "raw" / "ratelimit.md").exists()
