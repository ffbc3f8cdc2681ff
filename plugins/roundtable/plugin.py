"""The roundtable part's pluggy hooks: its CLI commands and agent tools.

Registered through the entry point group ``commonkeep`` (``roundtable``), so the core CLI only
imports this module for the full ``--help`` listing or when ``roundtable``/``memory`` is run.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from commonkeep.hookspecs import hookimpl


@hookimpl
def commonkeep_cli_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    from commonkeep_roundtable.cli import configure_memory, configure_roundtable

    return {
        "roundtable": (configure_roundtable, "roundtable rooms: local broker, export a room to raw/, post, digest"),
        "memory": (configure_memory, "alias of `dossier` for roundtable rooms: the same actions through "
                   "$ORPHUS_MEMORY_COMMAND in the rooms' memory dir ($ORPHUS_MEMORY_DIR)"),
    }


@hookimpl
def commonkeep_agent_tools() -> list[Any]:
    from commonkeep_roundtable.tools import roundtable_tools

    return list(roundtable_tools())


@hookimpl
def commonkeep_doctor_checks(root: str) -> list[dict[str, Any]]:
    from commonkeep_roundtable.doctor import roundtable_checks

    return roundtable_checks()
