"""A blocking client for the roundtable broker's wire protocol (contracts/roundtable.md §2.4).

``BrokerClient.connect(role)`` registers under the role name (cursors are keyed by it), matches
replies by ``requestId`` and sets unsolicited ``activity`` pushes aside. When no broker answers
it can start one (``commonkeep_roundtable.broker`` in a detached process), the way Orphus's MCP
bridge does.
"""

from __future__ import annotations

import itertools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from commonkeep.errors import EXIT_LOCKED, CommonkeepError
from commonkeep_roundtable.broker import socket_answers
from commonkeep_roundtable.framing import FrameDecoder, FrameError, encode_frame
from commonkeep_roundtable.paths import agent_dir, broker_dir, socket_path

START_TIMEOUT_SECONDS = 10.0
REPLY_TIMEOUT_SECONDS = 30.0


class BrokerError(CommonkeepError):
    """The broker answered with an error, or could not be reached."""


class BrokerConnectionLost(BrokerError):
    """The connection to the broker broke (the broker exited or restarted)."""


def _broker_pid(base: Path) -> int | None:
    try:
        return int((broker_dir(base) / "broker.pid").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def start_broker_process(base: Path) -> subprocess.Popen[bytes]:
    """Spawn a detached broker for ``base`` and wait until its socket answers.

    The broker outlives this process if clients remain, and exits by itself once idle; its
    output goes to ``<agentDir>/roundtable/broker.log``. A broker that loses the start-up race
    to another exits at once with code 4, which is fine: the winner's socket answers.
    """
    sock = socket_path(base)
    broker_dir(base).mkdir(parents=True, exist_ok=True)
    log = open(broker_dir(base) / "broker.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "commonkeep_roundtable.broker", "--agent-dir", str(base)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if socket_answers(sock):
            # another client's broker may have won while ours is still starting: let ours see the
            # lock and exit, so no straggler outlives this call (the pid file names the winner)
            while proc.poll() is None and _broker_pid(base) != proc.pid and time.monotonic() < deadline:
                time.sleep(0.02)
            return proc
        code = proc.poll()
        # exit 4 (lock held) means another client's broker won the start-up race: wait for it
        if code is not None and code != EXIT_LOCKED:
            raise BrokerError(
                f"the roundtable broker exited with code {code} before listening on {sock}",
                hint=f"see {broker_dir(base) / 'broker.log'}",
            )
        time.sleep(0.02)
    raise BrokerError(f"the roundtable broker did not start listening on {sock} within {START_TIMEOUT_SECONDS:.0f}s")


class BrokerClient:
    """One registered session. Use as a context manager; :meth:`close` disconnects."""

    def __init__(self, sock: socket.socket, name: str) -> None:
        self._sock = sock
        self._decoder = FrameDecoder()
        self._inbox: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.name = name
        self.activity: list[dict[str, Any]] = []
        self.session_id = ""

    @classmethod
    def connect(
        cls, name: str, *, base: Path | None = None, start: bool = True, timeout: float = REPLY_TIMEOUT_SECONDS
    ) -> BrokerClient:
        """Connect to the broker under ``base`` (default: the agent dir) and register as ``name``.

        With ``start`` (the default) a missing broker is started first.
        """
        base = agent_dir() if base is None else base
        path = socket_path(base)
        if start and not socket_answers(path):
            start_broker_process(base)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError as exc:
            sock.close()
            raise BrokerError(
                f"no roundtable broker answers on {path} ({exc.strerror or exc})",
                hint="start one with `commonkeep roundtable broker` or set ORPHUS_CODING_AGENT_DIR to the agent dir in use",
            ) from None
        client = cls(sock, name)
        client._send({"type": "register", "name": name, "pid": os.getpid(), "cwd": os.getcwd()})
        reply = client._receive(lambda m: m.get("type") in ("registered", "error") and "requestId" not in m)
        if reply["type"] == "error":
            client.close()
            raise BrokerError(f"the broker refused to register {name!r}: {reply.get('error')}")
        client.session_id = str(reply["sessionId"])
        return client

    # -- plumbing -----------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        try:
            self._sock.sendall(encode_frame(message))
        except OSError as exc:
            raise BrokerConnectionLost(f"lost the roundtable broker connection while sending: {exc}") from None

    def _receive(self, wanted: Any) -> dict[str, Any]:
        while True:
            # pushes are kept for callers that care, never mistaken for replies; set them aside
            # before returning a reply, or a push that arrived in the same read stays hidden
            self.activity.extend(m for m in self._inbox if m.get("type") == "activity")
            self._inbox = [m for m in self._inbox if m.get("type") != "activity"]
            for i, message in enumerate(self._inbox):
                if wanted(message):
                    return self._inbox.pop(i)
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                raise BrokerError("the roundtable broker did not answer in time") from None
            except OSError as exc:
                raise BrokerConnectionLost(f"lost the roundtable broker connection: {exc}") from None
            if not data:
                raise BrokerConnectionLost("the roundtable broker closed the connection")
            try:
                self._inbox.extend(self._decoder.feed(data))
            except FrameError as exc:
                raise BrokerError(f"the roundtable broker sent a bad frame: {exc}") from None

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request with a fresh ``requestId``; return its reply or raise :class:`BrokerError`."""
        request_id = f"{self.session_id or 'c'}-{next(self._ids)}"
        self._send({**message, "requestId": request_id})
        reply = self._receive(lambda m: m.get("requestId") == request_id)
        if reply.get("type") == "error":
            raise BrokerError(str(reply.get("error")))
        return reply

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> BrokerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the requests -------------------------------------------------------------------------
    def rooms(self) -> list[dict[str, Any]]:
        return list(self.request({"type": "rooms"})["rooms"])

    def join(self, room: str, topic: str | None = None) -> dict[str, Any]:
        """Join (creating the room if needed); the reply has ``room`` (RoomInfo) and ``cursor``."""
        message: dict[str, Any] = {"type": "join", "room": room}
        if topic:
            message["topic"] = topic
        return self.request(message)

    def leave(self, room: str) -> None:
        self.request({"type": "leave", "room": room})

    def post(self, room: str, text: str, reply_to: str | None = None) -> dict[str, Any]:
        """Post and return the stored message (``seq``, ``id``, ...)."""
        message: dict[str, Any] = {"type": "post", "room": room, "text": text}
        if reply_to:
            message["replyTo"] = reply_to
        return dict(self.request(message)["message"])

    def fetch(self, room: str, after_seq: int = 0, limit: int | None = None) -> dict[str, Any]:
        """Messages after ``after_seq``; the reply also has ``lastSeq`` and this role's ``cursor``."""
        message: dict[str, Any] = {"type": "fetch", "room": room, "afterSeq": after_seq}
        if limit is not None:
            message["limit"] = limit
        return self.request(message)

    def set_cursor(self, room: str, seq: int) -> int:
        return int(self.request({"type": "set_cursor", "room": room, "seq": seq})["seq"])

    def cursor(self, room: str) -> int:
        """This role's cursor in ``room`` (read through a one-message fetch; moves nothing)."""
        return int(self.fetch(room, after_seq=0, limit=1)["cursor"])
