"""The core agent tools take what they advertise: ``commonkeep_write`` keeps ``evidence_refs`` and
``confidence`` and refuses unknown arguments by name; ``commonkeep_handoff`` honours ``max_chars``.
Through the tool objects the plugin manager serves, and over a real MCP stdio server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.store.core import Store
from tests.recall.conftest import make_record, seed


@pytest.fixture
def tools(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    from commonkeep.plugins import plugin_manager

    monkeypatch.setenv("OMP_MEMORY_ROOT", str(root))
    return {t.name: t for t in plugin_manager().agent_tools()}


def test_write_keeps_the_evidence_refs_and_confidence_the_agent_gave(tools: dict[str, Any], root: Path) -> None:
    said = tools["commonkeep_write"].call(
        {
            "text": "Deploys go through the staging gate first.",
            "tags": ["deploy"],
            "evidence_refs": ["docs/deploy.md", "https://ci.example/run/42"],
            "confidence": 0.7,
        },
        "planner",
    )
    (candidate,) = Store(root).candidates()
    assert said.startswith(f"Wrote candidate {candidate['id']}")
    assert candidate["evidence_refs"] == ["docs/deploy.md", "https://ci.example/run/42"]
    assert candidate["confidence"] == 0.7
    assert candidate["tags"] == ["deploy"]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (
            {"text": "A fact.", "priority": "high", "source": "me"},
            "commonkeep_write does not take 'priority', 'source'; its arguments are text, tags, evidence_refs, confidence",
        ),
        ({"text": "A fact.", "confidence": 1.5}, "confidence must be a number from 0 to 1, got 1.5"),
        ({"text": "A fact.", "confidence": "high"}, "confidence must be a number from 0 to 1, got 'high'"),
        ({"text": "A fact.", "confidence": True}, "confidence must be a number from 0 to 1, got True"),
        ({"text": "A fact.", "evidence_refs": "docs/deploy.md"}, "evidence_refs must be a list of non-empty strings"),
        ({"text": "A fact.", "evidence_refs": ["ok", 3]}, "evidence_refs must be a list of non-empty strings"),
    ],
)
def test_write_refuses_unknown_or_malformed_arguments_by_name_and_writes_nothing(
    tools: dict[str, Any], root: Path, arguments: dict[str, Any], said: str
) -> None:
    with pytest.raises(BadInput) as refused:
        tools["commonkeep_write"].call(arguments, "planner")
    assert said in str(refused.value)
    assert Store(root).candidates() == []


def test_search_and_handoff_refuse_unknown_arguments_by_name(tools: dict[str, Any]) -> None:
    with pytest.raises(BadInput, match="commonkeep_search does not take 'k'"):
        tools["commonkeep_search"].call({"query": "deploy", "k": 3}, None)
    with pytest.raises(BadInput, match="commonkeep_handoff does not take 'budget'"):
        tools["commonkeep_handoff"].call({"goal": "ship it", "budget": 500}, None)


def _many_records(root: Path) -> None:
    seed(
        root,
        [make_record(f"mem_deploy{i}", f"Deploy step {i}: run the deploy checks for service {i}.") for i in range(30)],
    )


def test_handoff_tool_keeps_the_goal_snapshot_within_max_chars(tools: dict[str, Any], root: Path) -> None:
    _many_records(root)
    said = tools["commonkeep_handoff"].call({"goal": "run the deploy checks", "max_chars": 1200}, "planner")
    md_path = Path(said.splitlines()[0].split(" and ")[1].rstrip(":"))
    markdown = md_path.read_text(encoding="utf-8")
    assert len(markdown) <= 1200 and said.endswith(markdown)
    snapshot = json.loads(md_path.with_suffix(".json").read_text(encoding="utf-8"))
    assert snapshot["max_chars"] == 1200 and 0 < len(snapshot["selected_memory_ids"]) < 30
    # without max_chars the default bound (4000) lets more records in
    roomy = tools["commonkeep_handoff"].call({"goal": "run the deploy checks now"}, "planner")
    assert len(roomy) > len(said)


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"goal": "ship it", "max_chars": 50}, "max_chars must be an integer from 200 to 100000, got 50"),
        ({"goal": "ship it", "max_chars": "600"}, "max_chars must be an integer from 200 to 100000, got '600'"),
        ({"max_chars": 600}, "max_chars bounds a goal snapshot; give a goal as well"),
    ],
)
def test_handoff_tool_refuses_a_bad_max_chars(tools: dict[str, Any], arguments: dict[str, Any], said: str) -> None:
    with pytest.raises(BadInput) as refused:
        tools["commonkeep_handoff"].call(arguments, None)
    assert said in str(refused.value)


def test_tool_schemas_advertise_the_arguments_and_nothing_else(tools: dict[str, Any]) -> None:
    write = tools["commonkeep_write"].input_schema
    assert set(write["properties"]) == {"text", "tags", "evidence_refs", "confidence"}
    assert write["additionalProperties"] is False
    handoff = tools["commonkeep_handoff"].input_schema
    assert set(handoff["properties"]) == {"goal", "max_chars"} and handoff["additionalProperties"] is False


def test_write_and_handoff_arguments_over_the_mcp_server(root: Path, tmp_path: Path) -> None:
    import anyio
    from mcp import Client, StdioServerParameters

    _many_records(root)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "commonkeep.cli", "mcp", "--as", "planner", "--root", str(root)],
        env={"ORPHUS_CODING_AGENT_DIR": str(tmp_path / "agent"), "PATH": os.environ.get("PATH", "")},
        cwd=os.getcwd(),
    )
    out: dict[str, Any] = {}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            out["write"] = await client.call_tool(
                "commonkeep_write",
                {"text": "Deploys need a green CI run.", "evidence_refs": ["ci/run/7"], "confidence": 0.6},
            )
            out["unknown"] = await client.call_tool("commonkeep_write", {"text": "A fact.", "priority": "high"})
            out["handoff"] = await client.call_tool(
                "commonkeep_handoff", {"goal": "run the deploy checks", "max_chars": 1200}
            )

    anyio.run(main)

    def text_of(result: Any) -> str:
        return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")

    assert not out["write"].is_error, text_of(out["write"])
    (candidate,) = Store(root).candidates()
    assert candidate["evidence_refs"] == ["ci/run/7"] and candidate["confidence"] == 0.6
    assert out["unknown"].is_error and "priority" in text_of(out["unknown"])
    assert not out["handoff"].is_error, text_of(out["handoff"])
    md = sorted((root / "reports" / "handoff").glob("goal-*.md"))[-1]
    markdown = md.read_text(encoding="utf-8")
    assert len(markdown) <= 1200 and "mem_deploy" in markdown
