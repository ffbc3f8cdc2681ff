"""The local broker against the contract (§2): rooms, ring buffers, cursors, replies, lifetime."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commonkeep_roundtable.client import BrokerClient, BrokerError
from commonkeep_roundtable.framing import FrameDecoder, encode_frame
from commonkeep_roundtable.paths import socket_path
from tests.roundtable.conftest import start_broker


def connect(base: Path, name: str) -> BrokerClient:
    return BrokerClient.connect(name, base=base, start=False)


def test_join_post_fetch_replies_have_the_contract_shapes(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "planner") as planner:
        joined = planner.join("design", topic="rate limits")
        assert joined["type"] == "joined" and joined["cursor"] == 0
        info = joined["room"]
        assert info["name"] == "design" and info["topic"] == "rate limits"
        assert info["members"][0]["name"] == "planner" and {"sessionId", "joinedAt"} <= set(info["members"][0])
        posted = planner.post("design", "hello", reply_to=None)
        assert posted["seq"] == 1 and posted["room"] == "design" and posted["from"]["name"] == "planner"
        assert isinstance(posted["id"], str) and isinstance(posted["timestamp"], int)
        reply = planner.post("design", "re", reply_to=posted["id"])
        assert reply["replyTo"] == posted["id"]
        fetched = planner.fetch("design", after_seq=0)
        assert fetched["type"] == "messages" and fetched["lastSeq"] == 2
        assert [m["text"] for m in fetched["messages"]] == ["hello", "re"]
        # posting moved the author's cursor to its own message
        assert fetched["cursor"] == 2
        assert planner.rooms()[0]["messageCount"] == 2


def test_posting_without_joining_is_refused_with_orphus_text(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "critic") as critic, connect(agent_base, "planner") as planner:
        with pytest.raises(BrokerError) as err:
            critic.post("design", "hi")
        assert str(err.value) == 'Room "design" does not exist; join it first'
        planner.join("design")
        with pytest.raises(BrokerError) as err:
            critic.post("design", "hi")
        assert str(err.value) == 'Not a member of room "design"; join it first'


def test_ring_buffer_keeps_the_newest_500_messages(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "librarian") as lib:
        lib.join("ring")
        for i in range(1, 503):
            lib.post("ring", f"message {i}")
        reply = lib.fetch("ring", after_seq=0, limit=1000)
        seqs = [m["seq"] for m in reply["messages"]]
        assert seqs == list(range(3, 503))
        assert lib.rooms()[0]["messageCount"] == 500


def test_fetch_default_limit_200_and_at_least_one(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "planner") as planner:
        planner.join("big")
        for i in range(250):
            planner.post("big", f"m{i}")
        assert [m["seq"] for m in planner.fetch("big", after_seq=0)["messages"]] == list(range(1, 201))
        assert [m["seq"] for m in planner.fetch("big", after_seq=10, limit=0)["messages"]] == [11]


def test_cursors_are_keyed_by_role_survive_reconnects_and_only_move_forward(
    agent_base: Path, broker: subprocess.Popen[bytes]
) -> None:
    with connect(agent_base, "planner") as planner:
        planner.join("design")
        for i in range(5):
            planner.post("design", f"m{i}")
        with connect(agent_base, "reviewer") as one, connect(agent_base, "reviewer") as two:
            one.join("design")
            assert one.set_cursor("design", 3) == 3
            assert two.cursor("design") == 3  # same name, same cursor
            assert one.set_cursor("design", 1) == 3  # never backwards
            assert one.set_cursor("design", 99) == 5  # clamped to lastSeq
        with connect(agent_base, "reviewer") as again:
            assert again.cursor("design") == 5  # survives the reconnect
        assert planner.cursor("design") == 5


def test_activity_pushes_are_set_aside_not_taken_for_replies(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "planner") as planner, connect(agent_base, "critic") as critic:
        planner.join("design")
        critic.join("design")
        planner.post("design", "one")
        planner.post("design", "two")
        assert [m["text"] for m in critic.fetch("design")["messages"]] == ["one", "two"]
        assert {"type": "activity", "room": "design", "from": "planner", "seq": 2} in critic.activity


def test_room_without_members_and_messages_is_deleted(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "planner") as planner:
        planner.join("empty")
        planner.join("kept")
        planner.post("kept", "x")
        planner.leave("empty")
        planner.leave("kept")
        assert [r["name"] for r in planner.rooms()] == ["kept"]


def test_raw_socket_partial_frames_requests_before_register_and_bad_payloads(
    agent_base: Path, broker: subprocess.Popen[bytes]
) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(socket_path(agent_base)))
    decoder = FrameDecoder()
    queue: list[dict[str, object]] = []

    def read_one() -> dict[str, object]:
        while not queue:
            data = sock.recv(65536)
            assert data, "broker closed the connection"
            queue.extend(decoder.feed(data))
        return queue.pop(0)

    frame = encode_frame({"type": "rooms", "requestId": "r1"})
    sock.sendall(frame[:3])
    sock.sendall(frame[3:])
    early = read_one()
    assert early["type"] == "error" and early["requestId"] == "r1" and early["error"] == "Register before sending requests"
    both = encode_frame({"type": "register", "name": "raw", "pid": 1, "cwd": "/"}) + encode_frame({"type": "rooms", "requestId": "r2"})
    sock.sendall(both)
    assert read_one()["type"] == "registered"
    assert read_one() == {"type": "rooms", "rooms": [], "requestId": "r2"}
    sock.sendall(struct.pack(">I", 3) + b"{{{")
    bad = read_one()
    assert bad["type"] == "error" and "protocol error" in str(bad["error"])
    assert sock.recv(65536) == b""  # the connection is closed after a bad payload
    sock.close()


def test_a_second_broker_refuses_to_start(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    second = subprocess.run(
        [sys.executable, "-m", "commonkeep_roundtable.broker", "--agent-dir", str(agent_base)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert second.returncode == 4
    assert "another roundtable broker" in second.stderr
    assert broker.poll() is None


def test_socket_is_private_to_the_user(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    sock = socket_path(agent_base)
    assert sock.stat().st_mode & 0o777 == 0o600
    assert sock.parent.stat().st_mode & 0o777 == 0o700


def test_broker_exits_after_its_last_client_leaves_and_cleans_up(agent_base: Path) -> None:
    proc = start_broker(agent_base, linger=0.2)
    try:
        with connect(agent_base, "planner") as planner:
            planner.join("design")
            planner.post("design", "bye")
        assert proc.wait(timeout=30) == 0
        assert not socket_path(agent_base).exists()
        assert not (socket_path(agent_base).parent / "broker.pid").exists()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_client_starts_a_broker_that_exits_once_idle(agent_base: Path) -> None:
    assert not socket_path(agent_base).exists()
    with BrokerClient.connect("planner", base=agent_base) as planner:
        planner.join("auto")
        assert planner.post("auto", "started for me")["seq"] == 1
        pid = int((socket_path(agent_base).parent / "broker.pid").read_text())
        assert pid != os.getpid()
    for _ in range(600):  # linger is 0.5 s here; wait up to 30 s for the exit
        if not socket_path(agent_base).exists():
            break
        time.sleep(0.05)
    assert not socket_path(agent_base).exists()


def test_without_a_broker_and_no_autostart_the_error_says_what_to_do(agent_base: Path) -> None:
    with pytest.raises(BrokerError) as err:
        BrokerClient.connect("planner", base=agent_base, start=False)
    assert "no roundtable broker answers" in str(err.value)
    assert "commonkeep roundtable broker" in str(err.value)


def test_socket_path_too_long_is_a_clear_error(tmp_path: Path) -> None:
    from commonkeep.errors import BadInput

    deep = tmp_path / ("d" * 120)
    with pytest.raises(BadInput) as err:
        BrokerClient.connect("planner", base=deep)
    assert "Unix sockets allow at most" in str(err.value) and "ORPHUS_CODING_AGENT_DIR" in str(err.value)


def test_clients_racing_to_start_a_broker_all_end_up_on_one(agent_base: Path) -> None:
    import threading

    clients: list[BrokerClient] = []
    errors: list[BaseException] = []

    def connect_one(name: str) -> None:
        try:
            clients.append(BrokerClient.connect(name, base=agent_base))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=connect_one, args=(f"role{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    try:
        assert errors == [] and len(clients) == 3
        # session ids carry the broker's pid: one broker serves all three
        assert len({c.session_id.split("-")[0] for c in clients}) == 1
        clients[0].join("race")
        clients[0].post("race", "first")
        assert clients[1].fetch("race")["lastSeq"] == 1
    finally:
        for c in clients:
            c.close()
