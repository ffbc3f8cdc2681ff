"""Agent tools: the core's tools (``agent``) and the MCP server that serves every tool (``mcp``).

``commonkeep.tools`` re-exports ``commonkeep.tools.agent`` lazily, so ``from commonkeep.tools
import core_tools`` (the old module path) keeps working.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module("commonkeep.tools.agent"), name)
