"""``commonkeep mcp --as ROLE`` driven by the MCP SDK's own client over stdio (real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from commonkeep_roundtable.client import BrokerClient

DENIAL = 'Only the "librarian" role may export rooms for memory; this session is "planner". Ask the librarian to write.'


def server(role: str, agent_base: Path, *flags: str, **extra: str) -> StdioServerParameters:
    env = {
        "ORPHUS_CODING_AGENT_DIR": str(agent_base),
        "ORPHUS_MEMORY_DIR": str(agent_base / "memory"),
        "COMMONKEEP_BROKER_LINGER": "0.5",
        **extra,
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "commonkeep.cli", "mcp", "--as", role, *flags], env=env, cwd=os.getcwd()
    )


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def test_sdk_client_lists_and_calls_the_tools_over_stdio(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    outcomes: dict[str, Any] = {}
    ensure_layout(agent_base / "root")

    async def main() -> None:
        async with Client(server("planner", agent_base), read_timeout_seconds=60) as planner:
            listed = await planner.list_tools()
            outcomes["tools"] = {tool.name: tool for tool in listed.tools}
            outcomes["post"] = await planner.call_tool("roundtable_post", {"room": "mcp", "message": "Decision: ship it", "topic": "release"})
            outcomes["denied"] = await planner.call_tool("roundtable_export", {"room": "mcp", "path": "raw/mcp.md"})
            outcomes["digest"] = await planner.call_tool("roundtable_digest", {"room": "mcp"})
            outcomes["unknown"] = await planner.call_tool("no_such_tool", {})
        async with Client(
            server(
                "librarian",
                agent_base,
                "--root",
                str(agent_base / "root"),
                ORPHUS_MEMORY_COMMAND=str(agent_base / "missing-backend"),
            ),
            read_timeout_seconds=60,
        ) as librarian:
            outcomes["write"] = await librarian.call_tool("commonkeep_write", {"text": "Rate limits use GCRA per tenant."})
            outcomes["export"] = await librarian.call_tool("roundtable_export", {"room": "mcp", "path": "raw/mcp.md"})
            outcomes["bad_path"] = await librarian.call_tool("roundtable_export", {"room": "mcp", "path": "../escape.md"})
            outcomes["memory"] = await librarian.call_tool("roundtable_memory", {"action": "query", "question": "ship?"})

    # a member stays connected throughout, as in a live room: the broker and the room outlive
    # each MCP server (a broker exits once its last client is gone, and its rooms with it)
    with BrokerClient.connect("reviewer", base=agent_base, start=False) as reviewer:
        reviewer.join("mcp")
        anyio.run(main)
        assert reviewer.cursor("mcp") == 0
    tools = outcomes["tools"]
    assert {"roundtable_export", "roundtable_memory", "roundtable_post", "roundtable_digest"} <= set(tools)
    assert {"commonkeep_search", "commonkeep_write", "commonkeep_handoff"} <= set(tools)  # the core's own
    assert tools["roundtable_export"].input_schema["required"] == ["room", "path"]
    assert tools["roundtable_memory"].input_schema["properties"]["action"]["enum"] == ["query", "doctor", "ingest", "gardener"]

    assert not outcomes["post"].is_error and text_of(outcomes["post"]) == "Posted to #mcp as planner#1."
    assert outcomes["denied"].is_error and text_of(outcomes["denied"]) == DENIAL
    # posting moved the planner's own cursor past its message
    assert text_of(outcomes["digest"]) == "#mcp · 0 unread · showing 0 verbatim, 0 headline(s), 0 collapsed · 0 chars\nNo new messages."
    assert outcomes["unknown"].is_error and "Unknown tool 'no_such_tool'" in text_of(outcomes["unknown"])

    exported = text_of(outcomes["export"])
    assert not outcomes["export"].is_error, exported
    assert exported.startswith(f"Exported 1 retained message(s) from #mcp to {agent_base / 'memory' / 'raw' / 'mcp.md'} (")
    assert (agent_base / "memory" / "raw" / "mcp.md").read_text(encoding="utf-8").endswith("planner#1: Decision: ship it\n")
    assert outcomes["bad_path"].is_error and '".." may not appear' in text_of(outcomes["bad_path"])
    assert outcomes["memory"].is_error and text_of(outcomes["memory"]).startswith("Memory backend not reachable (")
    assert not outcomes["write"].is_error, text_of(outcomes["write"])
    (candidate,) = Store(agent_base / "root").candidates()
    assert candidate["text"] == "Rate limits use GCRA per tenant." and candidate["provenance"]["role"] == "librarian"
