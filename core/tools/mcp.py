"""``commonkeep mcp --as ROLE``: every agent tool over MCP on stdio (the official ``mcp`` SDK).

The tools are whatever the plugins contribute through ``commonkeep_agent_tools`` (the core's
search / write / handoff tools, the roundtable's export and memory tools, ...). The role is
pinned for the server's life by ``--as`` (or ``--role`` / ``$COMMONKEEP_ROLE``), like Orphus's
MCP bridge: a client cannot change who it is per call. Results carry text and ``isError`` only.
A tool raising ``CommonkeepError`` becomes an error result with its message; any other
exception too, prefixed ``internal error``, so one bad tool never takes the server down.

Nothing written through this server carries the ``user_turn`` stamp (issue 22): MCP gives a
server the model's tool arguments and no user message of the host out of band, so there is
nothing the person said to verify against; ``capture()`` drops any stamp in what is passed.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from commonkeep import __version__
from commonkeep.errors import CommonkeepError
from commonkeep.util.extras import install_hint

if TYPE_CHECKING:
    import mcp_types


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``commonkeep mcp``."""
    parser.add_argument(
        "--as", dest="as_role", metavar="ROLE", help="the role every tool call acts as (default: --role or $COMMONKEEP_ROLE)"
    )
    parser.set_defaults(run=run)


def resolve_role(as_role: str | None, role: str | None, env: dict[str, str] | None = None) -> str | None:
    """``--as`` first, then ``--role``, then ``$COMMONKEEP_ROLE``; blank means no role."""
    environ = os.environ if env is None else env
    for value in (as_role, role, environ.get("COMMONKEEP_ROLE")):
        if value and value.strip():
            return value  # as given: the role gate compares names exactly
    return None


def call_tool_text(tool: Any, arguments: dict[str, Any], role: str | None) -> tuple[str, bool]:
    """Call one tool; returns ``(text, is_error)`` and never raises for a tool's own failure."""
    try:
        return str(tool.call(arguments, role)), False
    except CommonkeepError as exc:
        return str(exc), True
    except Exception as exc:  # a broken tool must not take the server down
        return f"internal error in {tool.name}: {type(exc).__name__}: {exc}", True


def build_server(tools: Sequence[Any], role: str | None) -> Any:
    """The low-level MCP server listing and calling ``tools`` as ``role``."""
    import anyio.to_thread
    import mcp_types as types
    from mcp.server.lowlevel import Server

    by_name = {tool.name: tool for tool in tools}

    async def list_tools(ctx: Any, params: mcp_types.PaginatedRequestParams | None) -> mcp_types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=dict(t.input_schema)) for t in tools
            ]
        )

    async def call_tool(ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        tool = by_name.get(params.name)
        if tool is None:
            text, is_error = f"Unknown tool {params.name!r}; list the tools to see what this server offers.", True
        else:
            arguments = dict(params.arguments or {})
            # tools block on sockets and subprocesses: keep them off the event loop
            text, is_error = await anyio.to_thread.run_sync(call_tool_text, tool, arguments, role)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    who = f" as {role}" if role else ""
    return Server(
        "commonkeep",
        version=__version__,
        instructions=f"commonkeep's shared memory and roundtable tools{who}.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(tools: Sequence[Any], role: str | None) -> None:
    """Serve ``tools`` over this process's stdin/stdout until the client closes it."""
    from mcp.server.stdio import stdio_server

    server = build_server(tools, role)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(args: argparse.Namespace) -> int:
    """Entry point of ``commonkeep mcp``."""
    try:
        import anyio
        import mcp  # noqa: F401 - only to report a missing SDK clearly
    except ImportError:
        raise CommonkeepError(
            "the MCP server needs the official `mcp` SDK, which is not installed",
            hint=install_hint("mcp"),
        ) from None
    from commonkeep.plugins import plugin_manager

    role = resolve_role(getattr(args, "as_role", None), getattr(args, "role", None))
    if getattr(args, "root", None):
        # tools resolve the root themselves (``resolve_root``); the flag outranks every rule there
        os.environ["OMP_MEMORY_ROOT"] = str(Path(args.root).expanduser().absolute())
    tools = plugin_manager().agent_tools()
    # open broker sessions and sockets close with the process
    anyio.run(serve_stdio, tools, role)
    return 0

