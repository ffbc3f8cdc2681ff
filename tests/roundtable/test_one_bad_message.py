"""Issue 39: no message a client can send makes a room, or the broker, unusable for the others.

Against a real broker process: a lone UTF-16 surrogate (valid JSON, and what JavaScript's
``JSON.stringify`` writes for half an emoji), JSON that JavaScript refuses, frames nested too
deeply, texts larger than the bounds, and a member that never reads.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
from pathlib import Path

import pytest

from commonkeep_roundtable.client import BrokerClient, BrokerError
from commonkeep_roundtable.digest import digest_room
from commonkeep_roundtable.export import export_room
from commonkeep_roundtable.framing import HEADER, FrameDecoder, encode_frame
from commonkeep_roundtable.paths import socket_path
from commonkeep_roundtable.rooms import MAX_FETCH_TEXT_BYTES, MAX_TEXT_BYTES


def connect(base: Path, name: str) -> BrokerClient:
    return BrokerClient.connect(name, base=base, start=False)


def raw(base: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(socket_path(base)))
    return sock


def test_a_lone_surrogate_is_stored_sent_back_escaped_and_the_room_stays_readable(
        agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "librarian") as librarian, connect(agent_base, "critic") as critic:
        librarian.join("design")
        posted = librarian.post("design", "half \ud800 an emoji")
        assert posted["text"] == "half \ud800 an emoji"
        assert b'"half \\ud800 an emoji"' in encode_frame(posted)  # as JSON.stringify writes it
        critic.join("design")
        assert critic.fetch("design")["messages"][0]["text"] == "half \ud800 an emoji"
        digest = digest_room(critic, "design")
        assert digest.text.endswith("half \ufffd an emoji")  # the bytes Node writes for it
        result = export_room("design", "raw/design.md", role="librarian", client=librarian)
        assert result.messages == 1
        content = (agent_base / "memory" / "raw" / "design.md").read_text(encoding="utf-8")
        assert content.endswith("librarian#1: half \ufffd an emoji\n")
        librarian.post("design", "still here")
        assert [m["seq"] for m in critic.fetch("design")["messages"]] == [1, 2]


@pytest.mark.parametrize(
    "payload",
    [b'{"type":"rooms","requestId":NaN}', b"[" * 100_000 + b"]" * 100_000, b'{"type":"rooms","n":' + b"9" * 5000 + b"}",
     b"\xff\xfe{", b"", b'"just a string"'],
    ids=["nan", "deep", "long-int", "not-utf8", "empty", "not-an-object"],
)
def test_a_frame_javascript_cannot_read_closes_only_its_own_connection(
        agent_base: Path, broker: subprocess.Popen[bytes], payload: bytes) -> None:
    with connect(agent_base, "planner") as planner:
        planner.join("design")
        planner.post("design", "before")
        sock = raw(agent_base)
        sock.sendall(HEADER.pack(len(payload)) + payload)
        replies = []
        decoder = FrameDecoder()
        while data := sock.recv(65536):
            replies += decoder.feed(data)
        sock.close()
        assert [r["type"] for r in replies] == ["error"] and "protocol error" in replies[0]["error"]
        planner.post("design", "after")
        assert [m["text"] for m in planner.fetch("design")["messages"]] == ["before", "after"]


def test_room_names_orphus_accepts_are_rooms(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    names = ["design.v2", "#design", "design review", "Désign 🚀", "\ud800"]
    with connect(agent_base, "planner") as planner:
        for name in names:
            planner.join(name)
            planner.post(name, f"in {name}")
        assert [r["name"] for r in planner.rooms()] == names
        assert digest_room(planner, "design review", peek=True).details["lastSeq"] == 1


def test_a_text_over_the_bound_is_refused_and_a_long_fetch_comes_in_pages(
        agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "planner") as planner:
        planner.join("design")
        with pytest.raises(BrokerError, match=f"the limit is {MAX_TEXT_BYTES}"):
            planner.post("design", "x" * (MAX_TEXT_BYTES + 1))
        big = MAX_TEXT_BYTES
        count = MAX_FETCH_TEXT_BYTES // big + 3
        for i in range(count):
            planner.post("design", str(i % 10) * big)
        seen: list[int] = []
        after = 0
        while True:
            page = planner.fetch("design", after_seq=after, limit=500)["messages"]
            if not page:
                break
            assert sum(len(m["text"]) for m in page) <= MAX_FETCH_TEXT_BYTES
            seen += [m["seq"] for m in page]
            after = page[-1]["seq"]
        assert seen == list(range(1, count + 1))  # a refused post takes no seq


def test_a_member_that_never_reads_holds_up_nobody(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    slow = raw(agent_base)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.sendall(encode_frame({"type": "register", "name": "slow", "pid": 1, "cwd": "/"})
                 + encode_frame({"type": "join", "requestId": "j", "room": "design"}))
    with connect(agent_base, "planner") as planner, connect(agent_base, "critic") as critic:
        planner.join("design")
        for _ in range(5):
            planner.post("design", "y" * 200_000)
        # the slow member asks for far more than it reads: its replies wait for it, nobody else does
        slow.sendall(b"".join(encode_frame({"type": "fetch", "requestId": f"f{i}", "room": "design", "afterSeq": 0})
                              for i in range(200)))
        for i in range(2000):  # each post pushes activity to the member that does not read
            planner.post("design", f"note {i}")
        assert critic.fetch("design", after_seq=2000)["lastSeq"] == 2005
        assert critic.rooms()[0]["messageCount"] == 500
    slow.close()


def test_a_probe_neither_keeps_the_broker_alive_nor_restarts_its_wait(
        agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    from commonkeep_roundtable.broker import socket_answers

    with connect(agent_base, "planner") as planner:
        planner.join("design")
    # the last session left: the broker exits after its linger (0.5 s here) although something
    # keeps asking whether it answers, as Orphus's does (only sessions count)
    import time

    bound = time.monotonic() + 60  # a bound on the wait, far longer than the linger: a count of probes
    while broker.poll() is None and time.monotonic() < bound:  # could end before it on a fast machine
        socket_answers(socket_path(agent_base))
    assert broker.poll() == 0  # it left while being probed


def _broker_with_files(base: Path, limit: int, log: Path) -> subprocess.Popen[bytes]:
    """A broker process whose soft and hard limits of open files are both ``limit``."""
    import resource
    import sys
    import time

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "commonkeep_roundtable.broker", "--agent-dir", str(base), "--linger", "0.5"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=lower,
        )
    from commonkeep_roundtable.broker import socket_answers

    bound = time.monotonic() + 30
    while not socket_answers(socket_path(base)):
        assert proc.poll() is None and time.monotonic() < bound, log.read_bytes()[-2000:]
        time.sleep(0.02)
    return proc


def test_a_flood_of_connections_past_the_open_files_limit_costs_one_line_and_no_member(
        agent_base: Path, tmp_path: Path) -> None:
    # a client that opens connections faster than the broker closes them runs it out of files;
    # asyncio then wrote a traceback per failed accept (megabytes a second, into broker.log or a
    # pipe that fills and blocks the broker past its linger). Now one line, and members go on.
    import threading
    import time

    from commonkeep_roundtable.broker import socket_answers

    log = tmp_path / "broker.log"
    proc = _broker_with_files(agent_base, 48, log)
    try:
        with connect(agent_base, "planner") as planner:
            planner.join("design")
            held: list[socket.socket] = []
            for _ in range(60):  # past the limit: accepts fail until some of these close
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(0.2)
                with contextlib.suppress(OSError):
                    sock.connect(str(socket_path(agent_base)))
                held.append(sock)
            stop = time.monotonic() + 2
            flood = threading.Thread(target=lambda: [socket_answers(socket_path(agent_base))
                                                     for _ in iter(lambda: time.monotonic() < stop, False)])
            flood.start()
            time.sleep(1)
            for sock in held:
                sock.close()
            flood.join()
            assert planner.post("design", "still served")["seq"] == 1
        assert proc.wait(timeout=30) == 0  # and it still leaves after its linger
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "Too many open files" in text  # the limit was reached, and said
    assert "Traceback" not in text and len(text.splitlines()) <= 2, text[:2000]


def test_a_broker_process_raises_its_soft_limit_of_open_files_to_the_hard_one(agent_base: Path) -> None:
    import resource

    from commonkeep_roundtable.broker import raise_open_files_limit

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        wanted = 128 if hard == resource.RLIM_INFINITY else min(128, hard)
        assert raise_open_files_limit(128) == wanted
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == wanted
        assert raise_open_files_limit(100) == wanted  # never lowered
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
