"""A seeded fuzzer for the roundtable wire: no input may make a room or the broker unusable (issue 39).

Fuzzing clients send every request type with every field taken now and then from a pool of edge
values (lone and paired surrogates, control and bidi characters, empty and oversized strings,
numbers out of range, wrong JSON types), plus frames no peer should send (truncated, an
oversized length, bytes that are not UTF-8, JSON JavaScript refuses, nesting 100,000 deep, a
frame dribbled out byte by byte). Slow clients join every room and never read. Every
``check_every`` frames a well-behaved observer reads every room whole (fetch pages, digest,
export transcript) and the broker's resident memory is sampled.

Run ``python -m commonkeep_roundtable.wirefuzz --frames 100000`` (it starts its own broker);
the test suite runs a few thousand frames against its broker fixture.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import select
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep_roundtable.client import BrokerClient, BrokerError
from commonkeep_roundtable.digest import build_digest, digest_header
from commonkeep_roundtable.export import render_transcript
from commonkeep_roundtable.framing import HEADER, encode_frame
from commonkeep_roundtable.paths import broker_dir, socket_path

ROOMS = ["design", "design.v2", "#design", "design review", "🚀 launch", "\ud800", "x" * 200]
NAMES = ["planner", "critic", "librarian", "ré🚀", "\udfff", "n" * 200, "  padded  "]
EDGE_STRINGS = [
    "", " ", "\ud800", "\udfff", "a\ud83dz", "\udc00\ud800", "🚀", "👩‍👩‍👧", "\x00", "\x1b[2J", "\u202e", "\ufeff",
    "\u2028", "e\u0301", "日本語", "\\", '"', "\r\n", "n" * 201, "t" * 1001,
]
EDGE_VALUES: list[Any] = [None, True, False, 0, -1, 1, 1.5, -0.0, 2**53, 2**63, 10**30, 1e308, [], {}, [1, [2]], {"a": None}]
TYPES: list[Any] = ["register", "rooms", "join", "leave", "post", "fetch", "set_cursor", "activity", "nope", None, 5]
FIELDS = {
    "register": ["name", "pid", "cwd"], "rooms": [], "join": ["room", "topic"], "leave": ["room"],
    "post": ["room", "text", "replyTo"], "fetch": ["room", "afterSeq", "limit"], "set_cursor": ["room", "seq"],
}
# A reading client the broker neither reads from nor answers for this long is a failure (a
# wedged broker), reported instead of waited for.
STUCK_SECONDS = 20.0
BAD_FRAMES = ("truncated", "oversized", "not-utf8", "not-json", "nan", "deep", "not-object", "empty", "dribble")


def _random_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.002:  # now and then far past a post's bound, or just under it
        return rng.choice(["a", "é", "🚀", "\ud800"]) * rng.choice([70_000, 300_000])
    parts = []
    for _ in range(rng.choice([0, 1, 2, 3, 5, 12, 40])):
        kind = rng.random()
        if kind < 0.4:
            parts.append(rng.choice(EDGE_STRINGS))
        elif kind < 0.6:
            parts.append(chr(rng.choice([rng.randrange(0x20, 0x7F), rng.randrange(0x80, 0xD800),
                                         rng.randrange(0xD800, 0xE000), rng.randrange(0x10000, 0x110000)])))
        else:
            parts.append(rng.choice(["Decision: ", "the limiter", " ", "\n", "ok"]))
    return "".join(parts)


def _value(rng: random.Random, key: str) -> Any:
    if rng.random() < 0.15:
        return rng.choice(EDGE_VALUES + EDGE_STRINGS)
    if key == "room":
        return rng.choice(ROOMS)
    if key == "name":
        return rng.choice(NAMES)
    if key in ("afterSeq", "seq", "limit"):
        return rng.choice([0, 1, 5, 200, 499, 10_000, -3])
    if key == "pid":
        return rng.randrange(1, 99999)
    return _random_text(rng)


def request(rng: random.Random, serial: int) -> dict[str, Any]:
    """One request, mostly well-formed, any field possibly an edge value, missing or extra."""
    kind = rng.choice(TYPES) if rng.random() < 0.1 else rng.choice(["post", "post", "fetch", "join", "rooms", "set_cursor", "leave"])
    message: dict[str, Any] = {"type": kind}
    if rng.random() < 0.03:
        del message["type"]
    if kind != "register":
        message["requestId"] = f"f{serial}" if rng.random() < 0.95 else rng.choice(EDGE_VALUES + EDGE_STRINGS)
    for key in FIELDS.get(kind if isinstance(kind, str) else "", []):
        if rng.random() < 0.04:
            continue
        message[key] = _value(rng, key)
    if rng.random() < 0.03:
        message[rng.choice(EDGE_STRINGS)] = rng.choice(EDGE_VALUES)
    return message


def bad_frame(rng: random.Random, kind: str) -> bytes:
    """A frame no peer should send; after it the broker may close the connection."""
    if kind == "truncated":
        return HEADER.pack(1000) + b'{"type":"rooms"'
    if kind == "oversized":
        return HEADER.pack(rng.choice([2**31, 2**32 - 1, 64 * 1024 * 1024 + 1]))
    payload = {
        "not-utf8": b'{"type":"post","text":"\xff\xfe\xc0"}',
        "not-json": b"{type: post}",
        "nan": b'{"type":"fetch","requestId":"n","room":"design","afterSeq":NaN}',
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "not-object": b'["rooms"]',
        "empty": b"",
    }.get(kind, b"")
    return HEADER.pack(len(payload)) + payload


class Stuck(Exception):
    """The broker stopped serving a client that reads its replies."""


@dataclass
class Report:
    """What a run did and found; ``failures`` is empty when every check held."""

    frames: int = 0
    bad_frames: int = 0
    reconnects: int = 0
    checks: int = 0
    rooms_read: int = 0
    messages_read: int = 0
    rss_kib: list[int] = field(default_factory=list)
    retained: list[int] = field(default_factory=list)  # messages the rooms held at each check
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


class _Peer:
    """A fuzzing connection: sends, and reads only to keep its own replies flowing (unless slow)."""

    def __init__(self, base: Path, slow: bool) -> None:
        self.base = base
        self.slow = slow
        self.sock = self._open()

    def _open(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.slow:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(STUCK_SECONDS)
        sock.connect(str(socket_path(self.base)))
        return sock

    def reopen(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        self.sock = self._open()

    def send(self, data: bytes, dribble: bool = False) -> bool:
        """True when sent; False when the broker closed this connection (it is then reopened).

        A reading client reads its replies while it sends, as a real one would between requests,
        so a broker that waits for it to read never waits in vain; a slow client never reads.
        Raises :class:`Stuck` when the broker neither reads nor answers for ``STUCK_SECONDS``.
        """
        chunk = 1 if dribble else 1 << 16
        view = memoryview(data)
        deadline = time.monotonic() + STUCK_SECONDS
        try:
            self.sock.setblocking(False)
            while view:
                if time.monotonic() > deadline:
                    if self.slow:
                        return True  # a client that does not read may not get to say much either
                    raise Stuck(f"the broker took no bytes from a reading client for {STUCK_SECONDS:.0f} s")
                readable, writable, _ = select.select([] if self.slow else [self.sock], [self.sock], [], 0.5)
                if readable:
                    self._read()
                if writable:
                    with contextlib.suppress(BlockingIOError):
                        view = view[self.sock.send(view[:chunk]) :]
                elif self.slow:
                    return True
            if not self.slow:
                self._read()
        except OSError:
            self.reopen()
            return False
        return True

    def _read(self) -> None:
        try:
            while True:
                if not self.sock.recv(1 << 20):
                    raise ConnectionResetError("closed by the broker")
        except BlockingIOError:
            pass

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


def broker_rss_kib(base: Path) -> int | None:
    """The broker's resident memory, from its pid file and /proc (None where unavailable)."""
    try:
        pid = int((broker_dir(base) / "broker.pid").read_text(encoding="utf-8").strip())
        for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def read_every_room(observer: BrokerClient) -> tuple[int, int]:
    """Read each room whole as another client would; the rooms and messages read. Raises on failure."""
    rooms = observer.rooms()
    total = 0
    for info in rooms:
        name, after, messages = info["name"], 0, []
        while True:
            try:
                page = observer.fetch(name, after_seq=after, limit=500)["messages"]
            except BrokerError as exc:
                if info["messageCount"] == 0 and "does not exist" in str(exc):
                    break  # an empty room goes when its last member leaves, here since the listing
                raise
            if not page:
                break
            if [m["seq"] for m in page] != sorted(m["seq"] for m in page) or page[0]["seq"] <= after:
                raise AssertionError(f"room {name!r}: pages out of order after seq {after}")
            messages += page
            after = page[-1]["seq"]
        body = build_digest(messages[-200:], budget=2000)
        (digest_header(name, body, peek=True) + body.text).encode("utf-8")
        render_transcript(messages).encode("utf-8")
        total += len(messages)
    return len(rooms), total


def _frames(rng: random.Random) -> Iterator[tuple[bytes, str | None]]:
    serial = 0
    while True:
        serial += 1
        if rng.random() < 0.03:
            kind = rng.choice(BAD_FRAMES)
            if kind == "dribble":
                yield encode_frame(request(rng, serial)), kind
            else:
                yield bad_frame(rng, kind), kind
        else:
            yield encode_frame(request(rng, serial)), None


def run(base: Path, frames: int, *, seed: int = 39, clients: int = 4, slow: int = 2, check_every: int = 1000) -> Report:
    """Fuzz the broker under ``base`` with ``frames`` frames; the broker must already be running."""
    rng = random.Random(seed)
    report = Report()
    started = time.monotonic()
    peers = [_Peer(base, slow=i < slow) for i in range(clients + slow)]
    for peer in peers:  # most frames come from registered members of the rooms
        peer.send(encode_frame({"type": "register", "name": rng.choice(NAMES), "pid": 1, "cwd": "/"})
                  + b"".join(encode_frame({"type": "join", "requestId": f"j{r}", "room": r}) for r in ROOMS))
    observer = BrokerClient.connect("observer", base=base, start=False)
    try:
        for data, bad in _frames(rng):
            if report.frames >= frames:
                break
            peer = rng.choice(peers)
            if not peer.send(data, dribble=bad == "dribble"):
                report.reconnects += 1
                peer.send(encode_frame({"type": "register", "name": rng.choice(NAMES), "pid": 1, "cwd": "/"}))
            if bad not in (None, "dribble"):
                report.bad_frames += 1
                peer.reopen()  # the broker drops a connection after a bad frame (or waits on a truncated one)
                report.reconnects += 1
                peer.send(encode_frame({"type": "register", "name": rng.choice(NAMES), "pid": 1, "cwd": "/"})
                          + encode_frame({"type": "join", "requestId": "j", "room": rng.choice(ROOMS)}))
            report.frames += 1
            if report.frames % check_every == 0 or report.frames == frames:
                _check(observer, base, report)
    except BrokerError as exc:
        report.failures.append(f"after {report.frames} frames the observer could not read: {exc}")
    except Stuck as exc:
        report.failures.append(f"after {report.frames} frames: {exc}")
    finally:
        observer.close()
        for peer in peers:
            peer.close()
    report.seconds = time.monotonic() - started
    return report


def _check(observer: BrokerClient, base: Path, report: Report) -> None:
    try:
        rooms, messages = read_every_room(observer)
        report.rooms_read += rooms
        report.messages_read += messages
        report.retained.append(messages)
    except (AssertionError, UnicodeEncodeError) as exc:
        report.failures.append(f"after {report.frames} frames: {exc}")
    report.checks += 1
    rss = broker_rss_kib(base)
    if rss is not None:
        report.rss_kib.append(rss)


def _start_broker(base: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "commonkeep_roundtable.broker", "--agent-dir", str(base), "--linger", "30"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    for _ in range(400):
        with contextlib.suppress(BrokerError):
            BrokerClient.connect("probe", base=base, start=False).close()
            return proc
        if proc.poll() is not None:
            raise SystemExit(f"the broker exited: {proc.communicate()[1].decode(errors='replace')}")
        time.sleep(0.025)
    proc.terminate()
    raise SystemExit("the broker never listened")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m commonkeep_roundtable.wirefuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument("--check-every", type=int, default=5000)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="ckfz", dir="/tmp"))
    proc = _start_broker(base)
    try:
        report = run(base, args.frames, seed=args.seed, check_every=args.check_every)
    finally:
        alive = proc.poll() is None
        proc.terminate()
        stderr = proc.communicate(timeout=30)[1].decode(errors="replace")
    rss = report.rss_kib
    print(f"{report.frames} frames ({report.bad_frames} malformed, {report.reconnects} reconnects) in {report.seconds:.0f} s; "
          f"{report.checks} checks read {report.rooms_read} rooms, {report.messages_read} messages; broker alive: {alive}")
    if rss:
        settled = rss[len(rss) // 5]
        print(f"broker RSS: first check {rss[0]} KiB, at 20 % {settled} KiB, last {rss[-1]} KiB, peak {max(rss)} KiB")
        print("RSS MiB at each check:", " ".join(f"{r / 1024:.0f}" for r in rss))
        print("messages held at each check:", " ".join(map(str, report.retained)))
    if "Traceback" in stderr:
        report.failures.append("the broker printed a traceback:\n" + stderr[-2000:])
    for failure in report.failures:
        print(f"FAIL: {failure}")
    return 0 if alive and not report.failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
