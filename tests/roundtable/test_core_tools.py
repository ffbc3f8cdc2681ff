"""The core's agent tools (``commonkeep.tools.agent``) that ``commonkeep mcp`` serves next to the
roundtable's: search, write a candidate, write a handoff snapshot, on a throwaway root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from commonkeep.tools.agent import core_tools


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("OMPKEEP_ROOT", "PI_MEMORY_ROOT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OMP_MEMORY_ROOT", str(tmp_path / "root"))
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00.000Z")
    ensure_layout(tmp_path / "root")
    return tmp_path / "root"


def tool(name: str) -> Any:
    return {t.name: t for t in core_tools()}[name]


def test_write_puts_a_redacted_candidate_with_the_role_in_the_inbox(root: Path) -> None:
    text = tool("commonkeep_write").call({"text": "Deploys go through the staging gate first.", "tags": ["deploy"]}, "planner")
    (candidate,) = Store(root).candidates()
    assert text.startswith(f"Wrote candidate {candidate['id']} to the shared inbox")
    assert candidate["text"] == "Deploys go through the staging gate first."
    assert candidate["tags"] == ["deploy"] and candidate["provenance"]["role"] == "planner"
    with pytest.raises(BadInput):
        tool("commonkeep_write").call({"text": "  "}, "planner")


def test_search_answers_in_quoted_form_and_refuses_bad_arguments(root: Path) -> None:
    assert tool("commonkeep_search").call({"query": "staging gate"}, None).startswith("No memory record matches 'staging gate'")
    with pytest.raises(BadInput, match="mode"):
        tool("commonkeep_search").call({"query": "x", "mode": "psychic"}, None)
    with pytest.raises(BadInput, match="limit"):
        tool("commonkeep_search").call({"query": "x", "limit": 0}, None)


def test_handoff_writes_the_snapshot_and_returns_its_markdown(root: Path) -> None:
    text = tool("commonkeep_handoff").call({"goal": "ship the rate limiter"}, "planner")
    first = text.splitlines()[0]
    assert first.startswith("Wrote handoff snapshot ") and first.endswith(".md:")
    written = sorted(p.name for p in (root / "reports" / "handoff").iterdir())
    assert any(n.startswith("goal-") and n.endswith(".json") for n in written)
    md = next(p for p in (root / "reports" / "handoff").iterdir() if p.suffix == ".md")
    assert text.endswith(md.read_text(encoding="utf-8"))
