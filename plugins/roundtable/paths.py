"""Where the broker listens and where memory lives (contracts/roundtable.md §2 and §8.2).

The agent dir is the first set of ``ORPHUS_CODING_AGENT_DIR``, ``ATOMIC_CODING_AGENT_DIR``,
``PI_CODING_AGENT_DIR``, otherwise ``~/.orphus/agent``, so a Python host and the TypeScript
roundtable find the same broker socket and the same memory dir.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from commonkeep.errors import BadInput

AGENT_DIR_VARS = ("ORPHUS_CODING_AGENT_DIR", "ATOMIC_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR")
DEFAULT_WRITER_ROLE = "librarian"
# AF_UNIX paths are limited to 108 bytes on Linux (104 on macOS), terminating NUL included.
MAX_SOCKET_PATH_BYTES = 103


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _set(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """The agent dir: the first set agent-dir variable, else ``~/.orphus/agent``."""
    e = _env(env)
    for name in AGENT_DIR_VARS:
        value = _set(e, name)
        if value:
            return Path(value).expanduser()
    return Path.home() / ".orphus" / "agent"


def broker_dir(base: Path) -> Path:
    """``<agentDir>/roundtable``: the socket, the pid file and the start-up lock live here."""
    return base / "roundtable"


def rooms_in_use(base: Path) -> bool:
    """True once rooms have been used under ``base``: its broker dir exists.

    Every broker start and every client that auto-starts one creates ``<agentDir>/roundtable/``
    (socket, pid file, lock, log); rooms themselves live only in the broker's memory.
    """
    return broker_dir(base).is_dir()


def socket_path(base: Path) -> Path:
    """``<agentDir>/roundtable/broker.sock``; refuses a path too long for a Unix socket."""
    path = broker_dir(base) / "broker.sock"
    if len(os.fsencode(str(path))) > MAX_SOCKET_PATH_BYTES:
        raise BadInput(
            f"broker socket path {path} is {len(os.fsencode(str(path)))} bytes; Unix sockets allow "
            f"at most {MAX_SOCKET_PATH_BYTES}",
            hint="point ORPHUS_CODING_AGENT_DIR (or --agent-dir) at a shorter directory",
        )
    return path


@dataclass(frozen=True)
class MemoryConfig:
    """How the ``memory`` tool reaches its backend (``resolveMemoryConfig`` in the contract)."""

    command: tuple[str, ...]
    memory_dir: Path
    writer_role: str


def default_memory_command() -> tuple[str, ...]:
    """Our own wiki CLI, which speaks Dossier's argv (contracts/dossier.md §2)."""
    return (sys.executable, "-m", "commonkeep.dossier")


def resolve_memory_config(env: Mapping[str, str] | None = None, *, base: Path | None = None) -> MemoryConfig:
    """Read ``ORPHUS_MEMORY_COMMAND`` / ``ORPHUS_MEMORY_DIR`` / ``ORPHUS_MEMORY_WRITER_ROLE``.

    Blank counts as unset. The command is split on whitespace (operator-set, so no quoting
    rules); unset means our own CLI. The memory dir defaults to ``<agentDir>/memory`` so every
    worktree shares one wiki; ``base`` is the agent dir a caller was given (``--agent-dir``), which
    then wins over the environment's. Nothing is created here; callers create the dir when they use it.
    """
    e = _env(env)
    raw_command = _set(e, "ORPHUS_MEMORY_COMMAND")
    command = tuple(raw_command.split()) if raw_command else default_memory_command()
    raw_dir = _set(e, "ORPHUS_MEMORY_DIR")
    memory_dir = Path(raw_dir).expanduser() if raw_dir else (agent_dir(e) if base is None else Path(base)) / "memory"
    writer = _set(e, "ORPHUS_MEMORY_WRITER_ROLE") or DEFAULT_WRITER_ROLE
    return MemoryConfig(command=command, memory_dir=memory_dir.absolute(), writer_role=writer)
