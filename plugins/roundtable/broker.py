"""A local roundtable broker, compatible with Orphus's (contracts/roundtable.md §2).

One process holds every room in memory and serves length-prefixed JSON over the Unix socket
``<agentDir>/roundtable/broker.sock`` (mode 0600). Beside the socket it keeps a pid file and a
start-up lock; it refuses to start while another broker holds the lock or answers on the
socket, and exits ``linger`` seconds (default 5) after its last session disconnects. Rooms die
with it: they are working memory, and durable knowledge leaves through ``export``.

Run it with ``commonkeep roundtable broker`` or ``python -m commonkeep_roundtable.broker``;
:class:`BrokerThread` runs the same server inside a Python host (the demo does that).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import fcntl
import os
import resource
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from commonkeep.errors import CommonkeepError, LockHeld
from commonkeep_roundtable.framing import FrameDecoder, FrameError, encode_frame
from commonkeep_roundtable.paths import agent_dir, broker_dir, socket_path
from commonkeep_roundtable.rooms import DEFAULT_ROOM_CAPACITY, MAX_NAME_CHARS, RoomError, RoomStore

DEFAULT_LINGER_SECONDS = 5.0
LINGER_ENV = "COMMONKEEP_BROKER_LINGER"
# A broker nobody has connected to yet waits at least this long: the client that spawned it
# needs a moment to connect.
STARTUP_GRACE_SECONDS = 5.0
# ``from`` of the membership push when a member leaves, cleanly or by a dropped connection (as
# Orphus sends it: the others learn that someone left, not who).
LEFT = "(left)"
# The largest request frame: a post at rooms.MAX_TEXT_BYTES, every character escaped, fits.
MAX_REQUEST_BYTES = 8 * 1024 * 1024
# Replies to a client that does not read wait for it (the broker stops reading its requests);
# activity pushes beyond this many unsent bytes are dropped, since a push is only a hint that
# the digest makes good, and a member that never reads must not grow the broker's memory.
MAX_UNSENT_BYTES = 1024 * 1024
# A broker run as its own process raises its soft limit of open files to the hard limit, up to
# this many: each client holds one, and a flood of connections must not starve the members.
WANTED_OPEN_FILES = 65536
# Out of files (or buffers), asyncio's accept loop reports every failed accept with a traceback,
# megabytes a second into broker.log; the broker says it in one line at most this often.
RESOURCE_REPORT_SECONDS = 60.0
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def socket_answers(path: Path) -> bool:
    """True when something accepts connections on the Unix socket at ``path``."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


class _Conn:
    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        self.session_id: str | None = None
        self.name: str | None = None

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode_frame(message))

    @property
    def unsent(self) -> int:
        """Bytes written to this connection that the client has not taken yet."""
        return self.writer.transport.get_write_buffer_size()

    def push(self, message: dict[str, Any]) -> None:
        """Send an activity push unless the client has stopped reading."""
        if self.unsent <= MAX_UNSENT_BYTES:
            self.send(message)


def _field(msg: dict[str, Any], key: str, kind: type, *, required: bool = True) -> Any:
    value = msg.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise RoomError(f'Bad {msg.get("type")} request: "{key}" must be a {kind.__name__}')
    return value


class Broker:
    """The server: rooms, sessions, and the lifetime rules (lock, pid file, linger)."""

    def __init__(self, base: Path, *, linger: float | None = DEFAULT_LINGER_SECONDS, capacity: int = DEFAULT_ROOM_CAPACITY) -> None:
        self.base = base
        self.socket = socket_path(base)
        self.pid_file = broker_dir(base) / "broker.pid"
        self.lock_file = broker_dir(base) / "broker.lock"
        self.linger = linger
        self.store = RoomStore(capacity)
        self.sessions: dict[str, _Conn] = {}
        self.connections = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._lock: IO[str] | None = None
        self._stop: asyncio.Event | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._next_session = 0
        self.resource_errors = 0
        self._next_resource_report = 0.0

    # -- lifetime -----------------------------------------------------------------------------
    def claim(self) -> None:
        """Take the start-up lock and clear a stale socket; refuse when a broker is running."""
        d = broker_dir(self.base)
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o700)
        lock = open(self.lock_file, "a+", encoding="utf-8")  # noqa: SIM115 - held for the broker's life
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            raise LockHeld(
                f"another roundtable broker is running or starting ({self.lock_file} is locked)",
                hint=f"use it (clients connect to {self.socket}) or stop the process in {self.pid_file}",
            ) from None
        if self.socket.exists() or self.socket.is_symlink():
            if socket_answers(self.socket):
                lock.close()
                raise LockHeld(f"another roundtable broker already listens on {self.socket}")
            self.socket.unlink()
        self._lock = lock
        # written before the socket exists, so whoever sees the socket answer finds the pid
        self.pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")

    def release(self) -> None:
        for path in (self.socket, self.pid_file):
            with contextlib.suppress(FileNotFoundError):
                if path == self.pid_file and path.read_text(encoding="utf-8").strip() != str(os.getpid()):
                    continue
                path.unlink()
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _arm_idle(self, delay: float | None) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        if delay is not None and self._stop is not None:
            self._idle = asyncio.get_running_loop().call_later(delay, self._idle_check)

    def _idle_check(self) -> None:
        """Stop unless a session is registered (a connection that never registers, such as a
        probe asking whether the broker answers, neither keeps it alive nor restarts its wait)."""
        self._idle = None
        if not self.sessions and self._stop is not None:
            self._stop.set()

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """Report running out of files or buffers in one line per minute, with a count; any
        other error as asyncio does. Connections wait in the socket's queue meanwhile."""
        exc = context.get("exception")
        if not (isinstance(exc, OSError) and exc.errno in _OUT_OF_RESOURCES):
            loop.default_exception_handler(context)
            return
        self.resource_errors += 1
        now = time.monotonic()
        if now < self._next_resource_report:
            return
        self._next_resource_report = now + RESOURCE_REPORT_SECONDS
        print(
            f"commonkeep roundtable broker: cannot accept a connection: {os.strerror(exc.errno or 0)} "
            f"({self.resource_errors} times so far); new connections wait until clients close theirs",
            file=sys.stderr, flush=True,
        )

    async def serve(self, ready: threading.Event | None = None) -> None:
        """Listen until stopped or idle for ``linger`` seconds. Call :meth:`claim` first."""
        self._stop = asyncio.Event()
        asyncio.get_running_loop().set_exception_handler(self._on_loop_error)
        try:
            server = await asyncio.start_unix_server(self._handle, path=str(self.socket))
            os.chmod(self.socket, 0o600)
        except BaseException:
            self.release()
            raise
        if self.linger is not None:
            self._arm_idle(max(self.linger, STARTUP_GRACE_SECONDS))
        if ready is not None:
            ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            for writer in list(self._writers):
                writer.close()
            if self._tasks:
                await asyncio.wait(list(self._tasks), timeout=5)
            await server.wait_closed()
            self.release()

    # -- connections --------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._writers.add(writer)
        conn = _Conn(writer)
        decoder = FrameDecoder(MAX_REQUEST_BYTES)
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                try:
                    messages = decoder.feed(data)
                except FrameError as exc:
                    conn.send({"type": "error", "error": f"protocol error: {exc}"})
                    break
                for message in messages:
                    self._reply(conn, self.dispatch(conn, message))
                    if conn.unsent > MAX_UNSENT_BYTES:
                        await writer.drain()  # a client that does not read waits here, alone
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._disconnect(conn)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()
            self.connections -= 1
            if conn.session_id is not None and not self.sessions:
                self._arm_idle(self.linger)  # the last session left; as Orphus, sessions are what count

    @staticmethod
    def _reply(conn: _Conn, reply: dict[str, Any]) -> None:
        try:
            conn.send(reply)
        except FrameError as exc:  # cannot happen within the rooms' bounds; say so if it does
            error = {"type": "error", "error": f"The reply could not be sent: {exc}"}
            if "requestId" in reply:
                error["requestId"] = reply["requestId"]
            conn.send(error)

    def _disconnect(self, conn: _Conn) -> None:
        if conn.session_id is None:
            return
        self.sessions.pop(conn.session_id, None)
        for room in self.store.leave_all(conn.session_id):
            self._push(room, LEFT, 0, exclude=conn.session_id)

    def _push(self, room_name: str, author: str, seq: int, exclude: str | None) -> None:
        room = self.store.rooms.get(room_name)
        if room is None:
            return
        push = {"type": "activity", "room": room_name, "from": author, "seq": seq}
        for member in room.members:
            target = self.sessions.get(member.session_id)
            if target is not None and member.session_id != exclude:
                target.push(push)

    def dispatch(self, conn: _Conn, msg: dict[str, Any]) -> dict[str, Any]:
        """Answer one request; every failure becomes an ``error`` reply, never a crash."""
        request_id = msg.get("requestId")
        try:
            reply = self._answer(conn, msg)
        except RoomError as exc:
            reply = {"type": "error", "error": str(exc)}
        except Exception as exc:  # noqa: BLE001 - a bug of ours must cost one reply, not the broker
            reply = {"type": "error", "error": f"The broker could not answer this {str(msg.get('type'))[:40]} request: {exc!r}"[:500]}
        if request_id is not None:
            reply["requestId"] = request_id
        return reply

    def _answer(self, conn: _Conn, msg: dict[str, Any]) -> dict[str, Any]:
        kind = msg.get("type")
        if kind == "register":
            name = _field(msg, "name", str).strip()
            if not name:
                raise RoomError('Bad register request: "name" must not be blank')
            if len(name) > MAX_NAME_CHARS:
                raise RoomError(f'Bad register request: "name" is longer than {MAX_NAME_CHARS} characters')
            if conn.session_id is not None:
                # one connection, one session, as Orphus: a second register would rename the
                # session, so a post could be credited to one name while the members show another
                raise RoomError("This connection is already registered")
            self._next_session += 1
            conn.session_id = f"s{os.getpid()}-{self._next_session}"
            self.sessions[conn.session_id] = conn
            conn.name = name
            return {"type": "registered", "sessionId": conn.session_id}
        if conn.session_id is None or conn.name is None:
            raise RoomError("Register before sending requests")  # Orphus's words
        sid, name = conn.session_id, conn.name
        now = _now_ms()
        if kind == "rooms":
            return {"type": "rooms", "rooms": self.store.listing(viewer=name)}
        if kind == "join":
            room_name = _field(msg, "room", str)
            topic = _field(msg, "topic", str, required=False)
            room = self.store.join(room_name, sid, name, now, topic)
            # as Orphus: every join is announced, and the RoomInfo carries no viewer's unread
            self._push(room_name, name, 0, exclude=sid)
            return {"type": "joined", "room": room.info(), "cursor": self.store.cursor(room_name, name)}
        if kind == "leave":
            room_name = _field(msg, "room", str)
            self._push(room_name, LEFT, 0, exclude=sid)
            self.store.leave(room_name, sid)
            return {"type": "left", "room": room_name}
        if kind == "post":
            room_name = _field(msg, "room", str)
            text = _field(msg, "text", str)
            reply_to = _field(msg, "replyTo", str, required=False)
            message = self.store.post(room_name, sid, name, text, now, reply_to)
            self._push(room_name, name, message["seq"], exclude=sid)
            return {"type": "posted", "message": message}
        if kind == "fetch":
            room_name = _field(msg, "room", str)
            after = _field(msg, "afterSeq", int)
            limit = _field(msg, "limit", int, required=False)
            messages = self.store.fetch(room_name, after, limit)
            room = self.store.rooms[room_name]
            return {
                "type": "messages",
                "room": room_name,
                "messages": messages,
                "lastSeq": room.last_seq,
                "cursor": self.store.cursor(room_name, name),
            }
        if kind == "set_cursor":
            room_name = _field(msg, "room", str)
            seq = _field(msg, "seq", int)
            return {"type": "cursor_set", "room": room_name, "seq": self.store.set_cursor(room_name, name, seq)}
        raise RoomError(f"Unknown message type: {kind if isinstance(kind, str) else '?'}"[:200])  # Orphus's words


class BrokerThread:
    """The broker inside this process, on a background thread (for the demo and Python hosts).

    ``linger=None`` keeps it up until :meth:`stop`; use it as a context manager.
    """

    def __init__(self, base: Path, *, linger: float | None = None) -> None:
        self.broker = Broker(base, linger=linger)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def socket(self) -> Path:
        return self.broker.socket

    def start(self) -> BrokerThread:
        self.broker.claim()
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self.broker.serve(ready))
            except BaseException as exc:  # surfaced to the starter below
                self._error = exc
                ready.set()
            finally:
                loop.close()

        self._thread = threading.Thread(target=run, name="commonkeep-roundtable-broker", daemon=True)
        self._thread.start()
        ready.wait(10)
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self.broker.stop)
            self._thread.join(10)

    def __enter__(self) -> BrokerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def default_linger() -> float:
    """``$COMMONKEEP_BROKER_LINGER`` seconds if set (tests shorten it), else 5."""
    raw = os.environ.get(LINGER_ENV, "").strip()
    if not raw:
        return DEFAULT_LINGER_SECONDS
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise CommonkeepError(f"{LINGER_ENV}={raw!r} is not a number of seconds", hint="e.g. 5 or 0.5") from None


def raise_open_files_limit(wanted: int = WANTED_OPEN_FILES) -> int:
    """Raise this process's soft limit of open files toward ``wanted`` (never past the hard
    limit, never lower); return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
    return soft


def run_broker(base: Path, linger: float) -> int:
    """Run a broker in the foreground until idle or signalled; returns the exit code."""
    raise_open_files_limit()
    broker = Broker(base, linger=linger)
    broker.claim()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, broker.stop)
        await broker.serve()

    asyncio.run(main())
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``commonkeep roundtable broker`` (and ``python -m commonkeep_roundtable.broker``)."""
    parser.add_argument("--agent-dir", metavar="DIR", help="agent dir holding roundtable/broker.sock (default: as the contract resolves it)")
    parser.add_argument(
        "--linger", metavar="SECONDS", type=float, default=None,
        help=f"exit this long after the last client leaves (default: ${LINGER_ENV} or 5)",
    )


def run_from_args(args: argparse.Namespace) -> int:
    base = Path(args.agent_dir).expanduser().absolute() if args.agent_dir else agent_dir()
    linger = args.linger if args.linger is not None else default_linger()
    return run_broker(base, linger)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="commonkeep roundtable broker", description=__doc__.splitlines()[0])
    configure(parser)
    args = parser.parse_args(argv)
    try:
        return run_from_args(args)
    except CommonkeepError as exc:
        print(f"commonkeep roundtable broker: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
