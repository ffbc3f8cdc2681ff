"""Start and stop the web app: uvicorn on a socket this module binds (so port 0 works and the
printed URL names the real port), in the foreground for ``serve`` or in a thread for tests and
the benchmark."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from commonkeep.errors import BadInput
from commonkeep.web.app import Settings, Web, build
from commonkeep.web.security import Keys, check_bind


@dataclass
class Running:
    """A server started by :func:`start`: its base URL, the URL with the token, and how to stop it."""

    url: str
    token_url: str
    web: Web
    _server: object
    _thread: threading.Thread | None

    def stop(self) -> None:
        self._server.should_exit = True  # type: ignore[attr-defined]
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.web.queue.settle(timeout=10)  # the projection and search index owed after the last decisions


def _socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto given explicitly: asyncio sets TCP_NODELAY on accepted connections only when the listening
    # socket says IPPROTO_TCP; with proto 0 every response waits ~40 ms for a delayed ACK (measured)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:  # OverflowError: a port outside 0-65535
        sock.close()
        reason = str(getattr(exc, "strerror", None) or exc).rstrip(".")
        raise BadInput(f"cannot listen on {host}:{port}: {reason}; nothing was started",
                       hint="pick another --port (0 picks a free one)") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def prepare(root: Path, role: str | None, *, host: str = "127.0.0.1", port: int = 0, allow_remote: bool = False,
            wiki: Path | None = None, keys: Keys | None = None) -> tuple[Running, socket.socket]:
    """Check the bind, bind the socket and build the app (nothing is served yet). Started as the writer
    role, the app decides: refused inside an agent (a model could read the token it prints)."""
    import uvicorn

    from commonkeep.gate.writer import configured_writer_role

    if role and role == configured_writer_role(root):
        from commonkeep.gate.agent_shell import refuse_inside_agent

        refuse_inside_agent("starting the review app as the writer (it decides)")

    check_bind(host, allow_remote)
    sock = _socket(host, port)
    real_port = sock.getsockname()[1]
    settings = Settings(root=root, role=role, keys=keys or Keys(), wiki=wiki, host=host, port=real_port)
    guard, web = build(settings)
    config = uvicorn.Config(guard, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{real_port}"
    web.queue.refresh()  # start computing the review queue now, not on the first page
    if web.writer.can_write and role:  # a projection a server that died owed (``after_apply.catch_up``), in the background
        web.queue.owe(role, search=False)
    return Running(url, f"{url}/inbox?token={settings.keys.token}", web, server, None), sock


def start(root: Path, role: str | None, **kwargs: object) -> Running:
    """Serve in a background thread; returns once the server accepts connections."""
    running, sock = prepare(root, role, **kwargs)  # type: ignore[arg-type]
    server = running._server
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="ck-web")  # type: ignore[attr-defined]
    thread.start()
    running._thread = thread
    deadline = time.monotonic() + 10
    while not getattr(server, "started", False) and time.monotonic() < deadline:
        time.sleep(0.01)
    return running
