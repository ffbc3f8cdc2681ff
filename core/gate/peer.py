"""Who is asking over HTTP: the process on the other end of a loopback connection, and whether it runs
inside an agent (Linux).

A decision made in the review app (``commonkeep serve``) runs in the app's process, which a person
started: ``agent_shell.refuse_inside_agent`` finds no agent there. The request itself may come from an
agent's shell (``curl`` with a token the model read off the person's terminal, or off a page it was
shown). So before the app runs a request that changes anything, it finds the process holding the
other end of the connection (``/proc/net/tcp``, ``tcp6``: the socket whose address pair is the
reverse of the app's, then the process of this user with that socket open) and asks of it what
``agent_shell.inside_agent`` asks of this one: the agent mark in its environment, the kernel's mark
on its limits, an agent host among its parents (:func:`agent_of`).

A peer that cannot be placed (no ``/proc``, a process of another user, a connection already gone)
is not refused here: another user's browser is kept out by the token, and this reads only the
process tree the agent runs in. What it asks another daemon of the person's to send (``ssh``, a
``tmux`` the person started) is the documented limit (``docs/security.md``).
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

PROC = Path("/proc")


def _address(field: str) -> tuple[str, int] | None:
    """``/proc/net/tcp``'s ``0100007F:1F90`` (each 32-bit word little-endian) as ``("127.0.0.1", 8080)``."""
    raw, _, port = field.partition(":")
    try:
        data = bytes.fromhex(raw)
        words = b"".join(data[i:i + 4][::-1] for i in range(0, len(data), 4))
        ip = ipaddress.ip_address(words)
        return _plain(str(ip)), int(port, 16)
    except ValueError:
        return None


def _plain(host: str) -> str:
    ip = ipaddress.ip_address(host.strip("[]"))
    mapped = getattr(ip, "ipv4_mapped", None)
    return str(mapped or ip)


def socket_inode(client: tuple[str, int], server: tuple[str, int], proc: Path = PROC) -> str | None:
    """The inode of the client's end of the connection ``client`` -> ``server``."""
    try:
        want = ((_plain(client[0]), int(client[1])), (_plain(server[0]), int(server[1])))
    except ValueError:
        return None
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text(encoding="ascii", errors="replace").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and (_address(fields[1]), _address(fields[2])) == want:
                return fields[9]
    return None


def holders(inode: str, proc: Path = PROC) -> list[int]:
    """The processes of this user that hold socket ``inode`` open."""
    target, out = f"socket:[{inode}]", []
    for entry in proc.iterdir() if proc.is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            fds = list((entry / "fd").iterdir())
        except OSError:  # another user's process, or gone
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    out.append(int(entry.name))
                    break
            except OSError:
                continue
    return out


def _locks_hard(pid: int, proc: Path) -> int | None:
    try:
        lines = (proc / str(pid) / "limits").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("Max file locks"):
            hard = line[len("Max file locks"):].split()[1:2]
            return int(hard[0]) if hard and hard[0].isdigit() else None
    return None


def agent_of(pid: int, proc: Path = PROC) -> str | None:
    """What makes process ``pid`` an agent's (``agent_shell.inside_agent``'s three signs, read from
    ``/proc``); ``None`` for a person's process."""
    from commonkeep.gate import agent_shell

    try:
        env = (proc / str(pid) / "environ").read_bytes().split(b"\0")
    except OSError:
        env = []
    for item in env:
        key, _, value = item.decode("utf-8", "replace").partition("=")
        if key == agent_shell.MARK and value.strip():
            parts = value.split(":")
            own = len(parts) == 3 and parts[1] == str(pid) and parts[2] == agent_shell.start_time(pid, proc)
            if not own:
                return parts[0] or "an agent"
    hard = _locks_hard(pid, proc)
    if hard is not None and hard <= agent_shell.LOCKS_MARK:
        return agent_shell.KERNEL
    return agent_shell.agent_host(pid, proc)


def requester_agent(client: tuple[str, int] | None, server: tuple[str, int] | None, proc: Path = PROC) -> str | None:
    """The agent the process at the other end of ``client`` -> ``server`` runs inside, if any."""
    if client is None or server is None:
        return None
    inode = socket_inode(client, server, proc)
    if inode is None or inode == "0":
        return None
    for pid in holders(inode, proc):
        if pid != os.getpid() and (found := agent_of(pid, proc)) is not None:
            return found
    return None


def refusal(method: str, client: object, server: object, proc: Path = PROC) -> str | None:
    """Why a request (``method``, the ASGI scope's ``client`` and ``server``) must not change anything:
    it changes something and the process that sent it runs inside an agent; ``None`` when it may."""
    if method in ("GET", "HEAD") or not isinstance(client, list | tuple) or not isinstance(server, list | tuple):
        return None
    if len(client) != 2 or len(server) != 2:
        return None
    agent = requester_agent((str(client[0]), int(client[1])), (str(server[0]), int(server[1])), proc)
    if agent is None:
        return None
    return (f"refused: this request comes from a process inside {agent}; a decision is a person's: make it in your "
            "own browser or terminal. Nothing was changed")
