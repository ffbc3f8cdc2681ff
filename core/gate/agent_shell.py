"""Is this process run by an agent's tool? Then its word is not a person's.

Hermes' terminal tool and OMP's bash tool run commands as the user, with the user's environment:
when the person exported ``COMMONKEEP_ROLE=librarian`` in the shell they started the agent from,
a model told by a web page to run ``commonkeep review --approve …`` or ``commonkeep write --trust
direct_user_instruction …`` would decide, or vouch, as the librarian. So every function where a
person decides (``approve``, ``reject``, an edit, ``apply_patch``, ``ratify``, ``forget``, ``undo``,
``reinforce``, ``hermes install``'s import, ``serve`` started as the writer) calls
:func:`refuse_inside_agent` first, whoever calls it (the CLI, the web app, a Python script), and the
writer's own ``--trust`` stamp is never bound from inside an agent (``capture``).

Two signs, either is enough (:func:`inside_agent`):

1. **The mark.** The Hermes plugin and the OMP extension set ``COMMONKEEP_AGENT_HOST`` in their own
   process when they load (``hermes:<pid>:<start>`` / ``omp:<pid>:<start>``), so every tool they run
   inherits it, and so does whatever that tool detaches (``setsid -f``, ``nohup … &``, a double fork,
   ``tmux``/``screen``, ``unshare``): a process carrying the mark is inside an agent, unless it *is*
   the host process that set it (the Hermes dashboard deciding in its own process). A host started
   from inside another keeps the outer mark.
2. **The parent chain.** The ancestors are read from ``/proc`` (Linux; ``ps`` elsewhere): a process
   whose command is ``hermes`` or ``omp``, Hermes' ``hermes_cli`` / ``run_agent``, or OMP's
   ``pi-coding-agent``. An ancestor of this user that cannot be read counts as an agent; an
   ancestor of another user (``sshd``, ``login``; hidden by ``hidepid=2``) ends the walk.

3. **The kernel's mark** (Linux). The variable can be cleared and the parent chain cut (``env -u``
   then ``setsid -f``, ``nohup … &``, a double fork: the process is reparented to init). So the host
   plugins also lower their own process's *hard* limit of file locks (``RLIMIT_LOCKS``, which Linux has
   not enforced since 2.4.24: it limits nothing) to :data:`LOCKS_MARK`. Every descendant inherits a hard
   limit and no unprivileged process can raise one again: a finite hard ``RLIMIT_LOCKS`` is a mark
   nothing the agent runs can shed, however it detaches, whatever environment it clears, whichever
   interpreter it calls the decision functions from (:func:`kernel_marked`). The host process itself
   (its own dashboard) is told apart by the pid it recorded.

This stops what the agent starts, not what it asks another of the user's daemons to start: a
command handed to ``sshd`` (``ssh localhost``), ``atd``/``cron``, ``systemd --user`` or a terminal
multiplexer the person started before (``tmux``/``screen``) runs outside the agent's process tree,
as the person's own would; the host plugins refuse such commands when they see them, and the host's
own sandbox is what closes the rest (``docs/security.md``, "The remaining limit"). A person whose
system sets a finite hard limit of file locks (``ulimit -Hx``) reads as inside an agent.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: The environment mark the host plugins set (module doc).
MARK = "COMMONKEEP_AGENT_HOST"
#: The hard ``RLIMIT_LOCKS`` a host plugin sets in its own process (module doc, sign 3): any finite
#: value at or below it marks a descendant of an agent host.
LOCKS_MARK = 0x636B00
#: ``off`` in the environment a host starts with: the host sets no kernel's mark (the test suite; the
#: agent cannot set it, since it is read only by the host as it loads, before any tool runs).
KERNEL_MARK_SWITCH = "COMMONKEEP_KERNEL_MARK"
#: The pid of this process when it set the kernel's mark itself (the host; ``None`` otherwise).
_MARKED_BY: int | None = None
#: Where the process table is read (a test points it at a folder of the same shape).
PROC = Path("/proc")
_HERMES = ("hermes_cli", "run_agent", "acp_adapter")
_HERMES_NAMES = ("hermes", "hermes-agent", "hermes-acp")  # Hermes' console scripts
_OMP = ("pi-coding-agent",)
_MAX_DEPTH = 64
#: What the kernel's mark (sign 3) is reported as.
KERNEL = "an agent host (its mark on the process limits, which no descendant can shed)"
#: What an ancestor that cannot be read is reported as.
UNREADABLE = "an unreadable parent process (counted as an agent)"


def _host_of(argv: list[str]) -> str | None:
    """Which agent host a command line runs, if any."""
    for arg in argv[:4]:  # the program and its interpreter's first arguments (python -m hermes_cli.main)
        name = os.path.basename(arg)
        if name in _HERMES_NAMES or any(m in arg for m in _HERMES):
            return "hermes"
        if name == "omp" or any(m in arg for m in _OMP):
            return "omp"
    return None


class _Unreadable(Exception):
    pass


def _parent(pid: int, proc: Path) -> tuple[int, list[str]] | None:
    """``(ppid, argv)`` of ``pid``; ``None`` for a process of another user that cannot be read (the
    walk ends there); raises ``_Unreadable`` when a process of this user cannot be read."""
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
        cmdline = (proc / str(pid) / "cmdline").read_bytes()
    except OSError:
        try:
            owner = os.stat(proc / str(pid)).st_uid
        except OSError:
            if _hides_others(proc):  # hidepid=2: only another user's process is hidden (ours stay visible)
                return None
            raise _Unreadable from None
        if hasattr(os, "getuid") and owner != os.getuid():
            return None
        raise _Unreadable from None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) ": state, ppid, …
    if len(fields) < 2 or not fields[1].lstrip("-").isdigit():
        raise _Unreadable
    return int(fields[1]), [a.decode("utf-8", "replace") for a in cmdline.split(b"\0") if a]


def _hides_others(proc: Path) -> bool:
    """Whether ``proc`` is mounted with ``hidepid=2`` (``invisible``): other users' processes are not listed."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    for line in lines:
        fields = line.split()
        if len(fields) > 4 and fields[4] == str(proc):
            options = line.rsplit(" - ", 1)[-1]
            return any(o in options for o in ("hidepid=2", "hidepid=invisible"))
    return False


def _parent_ps(pid: int) -> tuple[int, list[str]] | None:
    """``(ppid, argv)`` from ``ps`` where there is no ``/proc`` (macOS, BSD)."""
    import subprocess  # here only: every decision imports this module, few read ``ps``

    try:
        out = subprocess.run(["ps", "-o", "ppid=", "-o", "args=", "-p", str(pid)], capture_output=True, text=True,
                             timeout=5, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        raise _Unreadable from None
    head, _, args = out.partition(" ") if out else ("", "", "")
    if not head.strip().isdigit():
        raise _Unreadable
    return int(head), args.split()


def _first_ancestor() -> int:
    return os.getppid()


def agent_host(pid: int | None = None, proc: Path | None = None) -> str | None:
    """The agent host (``"hermes"``, ``"omp"``) among the ancestors of ``pid`` (default: this
    process), :data:`UNREADABLE` when an ancestor of this user cannot be read, else ``None``."""
    pid = _first_ancestor() if pid is None else pid
    proc = PROC if proc is None else proc
    use_ps = not proc.is_dir()
    seen: set[int] = set()
    for _ in range(_MAX_DEPTH):
        if pid <= 0 or pid in seen:  # pid 1 is read too: in a container an agent can be the first process
            return None
        seen.add(pid)
        try:
            found = _parent_ps(pid) if use_ps else _parent(pid, proc)
        except _Unreadable:
            return UNREADABLE
        if found is None:
            return None
        ppid, argv = found
        host = _host_of(argv)
        if host is not None:
            return host
        pid = ppid
    return None


def start_time(pid: int | str = "self", proc: Path | None = None) -> str:
    """A process's start time (``/proc/<pid>/stat`` field 22, clock ticks since boot); "" when unknown."""
    proc = Path("/proc") if proc is None else proc  # this process's own entry: never a test's table
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else ""


def mark_value(host: str) -> str:
    """The mark a host plugin sets in its own process: ``<host>:<pid>:<start time>``."""
    return f"{host}:{os.getpid()}:{start_time()}"


def set_mark(host: str, environ: dict[str, str] | None = None) -> str:
    """Set the mark in this (host) process, unless it already carries one (a host started by another
    agent's tool stays inside that agent); returns the mark in force."""
    env = os.environ if environ is None else environ
    current = env.get(MARK, "").strip()
    if not current:
        env[MARK] = current = mark_value(host)
    return current


def _locks_resource() -> int | None:
    """``RLIMIT_LOCKS`` (10 on Linux: Python's ``resource`` does not name it); ``None`` elsewhere."""
    import sys

    return 10 if sys.platform.startswith("linux") else None


def _locks_limit() -> int | None:
    """This process's hard ``RLIMIT_LOCKS`` (``None``: unlimited, or no such limit on this system)."""
    which = _locks_resource()
    if which is None:  # macOS, BSD
        return None
    import resource

    try:
        hard = resource.getrlimit(which)[1]
    except (OSError, ValueError):
        return None
    return None if hard == resource.RLIM_INFINITY else int(hard)


def set_kernel_mark() -> bool:
    """Lower this (host) process's hard ``RLIMIT_LOCKS`` to :data:`LOCKS_MARK` (module doc, sign 3),
    unless it is lower already (started by another agent's tool); ``True`` when the mark is in force."""
    global _MARKED_BY
    if os.environ.get(KERNEL_MARK_SWITCH, "").strip().lower() == "off":
        return False  # the test suite, whose one process loads the Hermes plugin many times (never an agent's say)
    which = _locks_resource()
    if which is None:
        return False
    import resource

    current = _locks_limit()
    if current is not None and current <= LOCKS_MARK:
        return True  # an outer agent's mark (or a lower one): kept, and it is not this process's own
    try:
        resource.setrlimit(which, (LOCKS_MARK, LOCKS_MARK))
    except (OSError, ValueError):
        return False
    _MARKED_BY = os.getpid()
    return True


def kernel_marked() -> bool:
    """Whether this process descends from a host that set the kernel's mark (and is not that host)."""
    limit = _locks_limit()
    return limit is not None and limit <= LOCKS_MARK and os.getpid() != _MARKED_BY


def _is_me(mark: str, proc: Path | None = None) -> bool:
    """Whether ``mark`` was set by this very process (the host itself, deciding in its own process)."""
    parts = mark.split(":")
    if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) != os.getpid():
        return False
    mine = start_time("self", proc)
    return bool(mine) and mine == parts[2]  # a pid reused in another pid namespace has another start time


def inside_agent(environ: Mapping[str, str] | None = None, pid: int | None = None,
                 proc: Path | None = None) -> str | None:
    """What makes this process an agent's (the host named by the mark or found among the ancestors,
    or :data:`UNREADABLE`); ``None`` in a person's own terminal."""
    env = os.environ if environ is None else environ
    mark = str(env.get(MARK) or "").strip()
    if mark and not _is_me(mark):
        return mark.split(":", 1)[0] or "an agent"
    if environ is None and pid is None and kernel_marked():
        return KERNEL
    return agent_host(pid, proc)


def shell_tool(host: str) -> str:
    """The ``provenance.tool`` of a write an agent's tool ran: ``"omp shell"``, ``"hermes shell"``, ``"agent shell"``."""
    return f"{host if host in ('hermes', 'omp') else 'agent'} shell"


def refuse_inside_agent(action: str) -> None:
    """Raise ``RoleRefused`` when this process runs inside an agent: ``action`` is a person's decision."""
    host = inside_agent()
    if host is None:
        return
    from commonkeep.errors import RoleRefused

    where = host if host in (UNREADABLE, KERNEL) else f"{host} (an agent's tool)"
    hint = "decide in your own terminal (`commonkeep review`) or in the review app (`commonkeep serve`)"
    if host == KERNEL and _locks_limit() != LOCKS_MARK:  # a finite limit, not the hosts' own value
        hint += (f"; this process's hard limit of file locks (`ulimit -Hx`) is {_locks_limit()}, which commonkeep's agent "
                 f"hosts use as their mark (they set {LOCKS_MARK}): if this terminal is yours and your system sets that "
                 "limit, open one without it (the limit is not enforced by Linux)")
    raise RoleRefused(f"refused: {action} is a person's decision, and this command runs inside {where}; "
                      "nothing was changed", hint=hint)
