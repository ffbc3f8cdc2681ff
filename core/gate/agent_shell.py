"""Is this command run by an agent's shell tool? Then its word is not a person's.

Hermes' terminal tool and OMP's bash tool run commands as the user, with the user's environment:
when the person exported ``COMMONKEEP_ROLE=librarian`` in the shell they started the agent from,
a model told by a web page to run ``commonkeep review --approve …`` or ``commonkeep write --trust
direct_user_instruction …`` would decide, or vouch, as the librarian. So the commands where a
person decides (approve, apply, ratify, undo) refuse when an agent host is among this process's
ancestors, and a ``write`` from there carries ``provenance.tool`` (``"omp shell"``): the writer's
own stamp is never earned from inside an agent.

The ancestors are read from ``/proc`` (Linux): a process whose command is ``hermes`` or ``omp``,
Hermes' ``hermes_cli`` / ``run_agent``, or OMP's ``pi-coding-agent``. Like the role gate this is a
guard against a misled agent, not a wall: a model with a shell that detaches its command from the
agent (``setsid``) and knows why could still get past it (``docs/security.md``).
"""

from __future__ import annotations

import os
from pathlib import Path

_HERMES = ("hermes_cli", "run_agent")
_OMP = ("pi-coding-agent",)
_MAX_DEPTH = 64


def _host_of(argv: list[str]) -> str | None:
    """Which agent host a command line runs, if any."""
    for arg in argv[:4]:  # the program and its interpreter's first arguments (python -m hermes_cli.main)
        name = os.path.basename(arg)
        if name == "hermes" or any(m in arg for m in _HERMES):
            return "hermes"
        if name == "omp" or any(m in arg for m in _OMP):
            return "omp"
    return None


def _parent(pid: int, proc: Path) -> tuple[int, list[str]] | None:
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
        cmdline = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state, ppid, …
    if len(fields) < 2 or not fields[1].isdigit():
        return None
    return int(fields[1]), [a.decode("utf-8", "replace") for a in cmdline.split(b"\0") if a]


def agent_host(pid: int | None = None, proc: Path = Path("/proc")) -> str | None:
    """The agent host (``"hermes"``, ``"omp"``) among the ancestors of ``pid`` (default: this
    process), or ``None`` (none found, or no ``/proc``)."""
    pid = os.getppid() if pid is None else pid
    seen: set[int] = set()
    for _ in range(_MAX_DEPTH):
        if pid <= 0 or pid in seen:  # pid 1 is read too: in a container an agent can be the first process
            return None
        seen.add(pid)
        found = _parent(pid, proc)
        if found is None:
            return None
        ppid, argv = found
        host = _host_of(argv)
        if host is not None:
            return host
        pid = ppid
    return None


def refuse_inside_agent(action: str) -> None:
    """Raise ``RoleRefused`` when an agent host runs this command: ``action`` is a person's decision."""
    host = agent_host()
    if host is None:
        return
    from commonkeep.errors import RoleRefused

    raise RoleRefused(f"refused: {action} is a person's decision, and this command runs inside {host} "
                      f"(an agent's shell tool); nothing was changed",
                      hint="decide in your own terminal (`commonkeep review`) or in the review app (`commonkeep serve`)")
