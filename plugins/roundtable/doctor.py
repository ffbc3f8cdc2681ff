"""``commonkeep doctor`` findings for the roundtable part: the broker and the memory backend.

Read-only and fast: nothing is started, created or spawned (the backend's own ``doctor`` is
``commonkeep memory doctor``).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Mapping
from typing import Any

from commonkeep.errors import CommonkeepError
from commonkeep_roundtable.broker import socket_answers
from commonkeep_roundtable.paths import (
    agent_dir,
    broker_dir,
    default_memory_command,
    resolve_memory_config,
    rooms_in_use,
    socket_path,
)


def _finding(code: str, severity: str, message: str) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message}


# setting any of these says "I use Orphus rooms or its memory tool here"
CONFIG_VARS = ("ORPHUS_CODING_AGENT_DIR", "ORPHUS_MEMORY_COMMAND", "ORPHUS_MEMORY_DIR", "ORPHUS_MEMORY_WRITER_ROLE")


def in_use(env: Mapping[str, str] | None = None) -> bool:
    """Rooms or the memory tool are configured (an ``ORPHUS_*`` variable) or in use (the broker
    dir or the memory dir exists under the agent dir)."""
    e = os.environ if env is None else env
    if any(e.get(name, "").strip() for name in CONFIG_VARS):
        return True
    return rooms_in_use(agent_dir(env)) or resolve_memory_config(env).memory_dir.is_dir()


def roundtable_checks(env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Where the broker socket is and whether a broker answers; whether the backend can start.

    Nothing at all for people who never use rooms (see :func:`in_use`): their doctor stays about
    their memory.

    A socket path too long for a Unix socket is an error only when rooms are in use under the
    agent dir (``paths.rooms_in_use``); otherwise it is an ``info`` line that says what would
    fail and how to fix it, so people who never use rooms keep a clean doctor.
    """
    if not in_use(env):
        return []
    findings: list[dict[str, Any]] = []
    base = agent_dir(env)
    try:
        sock = socket_path(base)
    except CommonkeepError as exc:
        fix = f" To fix: {exc.hint}." if exc.hint else ""
        if rooms_in_use(base):
            findings.append(_finding("roundtable_broker", "error",
                                     f"roundtable rooms cannot work here: {exc.message}.{fix}"))
        else:
            findings.append(_finding(
                "roundtable_broker", "info",
                f"roundtable rooms are not in use here ({broker_dir(base)} does not exist), but they would fail "
                f"if started: {exc.message}.{fix}"))
    else:
        if socket_answers(sock):
            findings.append(_finding("roundtable_broker", "ok", f"a roundtable broker answers on {sock}"))
        else:
            findings.append(
                _finding("roundtable_broker", "info", f"no roundtable broker runs on {sock}; clients start one on demand")
            )
    config = resolve_memory_config(env)
    program = config.command[0]
    if config.command == default_memory_command():
        if importlib.util.find_spec("commonkeep.dossier") is None:
            findings.append(_finding("roundtable_memory_backend", "warning", "the wiki CLI commonkeep.dossier is not installed"))
        else:
            findings.append(_finding("roundtable_memory_backend", "ok", f"memory backend: {' '.join(config.command)} (ours)"))
    elif (os.sep in program and os.access(program, os.X_OK)) or shutil.which(program):
        findings.append(_finding("roundtable_memory_backend", "ok", f"memory backend: {' '.join(config.command)}"))
    else:
        findings.append(
            _finding(
                "roundtable_memory_backend",
                "warning",
                f"ORPHUS_MEMORY_COMMAND starts with {program!r}, which is not an executable on PATH; "
                "unset it to use commonkeep's own wiki CLI",
            )
        )
    where = config.memory_dir
    state = "exists" if where.is_dir() else "will be created on first use"
    findings.append(_finding("roundtable_memory_dir", "ok", f"memory dir {where} ({state}); writer role {config.writer_role!r}"))
    return findings
