"""The last wire differences from Orphus (issue 27), against a real broker where the wire is
involved: `(left)` on a clean leave and a dropped session, the digest's ` …(+N chars)` marker, and
lengths in JavaScript string units (an emoji is two) without ever emitting half a character."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from commonkeep_roundtable.client import BrokerClient
from commonkeep_roundtable.digest import build_digest, headline_line, verbatim_line
from commonkeep_roundtable.export import export_room
from commonkeep_roundtable.jsunits import js_len, js_slice

ROCKET = "\U0001F680"


def connect(base: Path, name: str) -> BrokerClient:
    return BrokerClient.connect(name, base=base, start=False)


def _membership_pushes(client: BrokerClient, room: str, want: int) -> list[dict[str, object]]:
    for _ in range(50):
        client.rooms()  # reading a reply sets the pushes that came before it aside
        seen = [a for a in client.activity if a.get("room") == room and a.get("seq") == 0]
        if len(seen) >= want:
            return seen
        time.sleep(0.05)
    return [a for a in client.activity if a.get("room") == room and a.get("seq") == 0]


def test_a_clean_leave_and_a_dropped_session_are_both_announced_as_left(
        agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "critic") as critic:
        critic.join("design")
        with connect(agent_base, "planner") as planner:
            planner.join("design")
            planner.leave("design")
        dropped = connect(agent_base, "reviewer")
        dropped.join("design")
        dropped.close()  # no leave: the connection just goes
        pushes = _membership_pushes(critic, "design", 4)
    assert [p["from"] for p in pushes] == ["planner", "(left)", "reviewer", "(left)"]


def _message(text: str, seq: int = 1) -> dict[str, object]:
    return {"seq": seq, "from": {"name": "planner"}, "text": text, "timestamp": 0}


def test_the_truncation_marker_has_a_space_before_it_as_orphus() -> None:
    line = verbatim_line(_message("x" * 800), 600)
    assert line.endswith("x" * 600 + " …(+200 chars)")


def test_lengths_are_javascript_units_and_a_split_emoji_is_written_as_node_writes_it() -> None:
    assert js_len(ROCKET) == 2 and js_len("a" + ROCKET + "é") == 4
    # JavaScript's slice keeps the first half of the emoji; Node writes that half as U+FFFD
    assert js_slice("ab" + ROCKET, 3) == "ab\ufffd" and js_slice("ab" + ROCKET, 4) == "ab" + ROCKET
    text = "a" * 599 + ROCKET + "b" * 100  # the 600-unit cap falls inside the emoji
    line = verbatim_line(_message(text), 600)
    body = line.split(": ", 1)[1]
    assert body == "a" * 599 + "\ufffd …(+101 chars)"  # 701 units, 600 kept, as Orphus counts
    line.encode("utf-8")  # a half surrogate pair would not encode
    assert verbatim_line(_message(ROCKET * 300), 600).endswith(ROCKET * 300)  # 600 units: fits, no marker
    head = headline_line(_message("c" * 39 + ROCKET * 2), 40)
    assert head == "· planner#1: " + "c" * 39 + "\ufffd …"
    # the digest's budget counts units: 30 rockets are 60 units
    body_ = build_digest([_message(ROCKET * 30, seq=s) for s in range(1, 60)], budget=200)
    assert all(js_len(line) <= 200 for line in body_.lines[1:])
    assert sum(js_len(line) + 1 for line in body_.lines[1:]) - 1 <= 200


def test_export_counts_chars_as_orphus(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "librarian") as lib:
        lib.join("design")
        lib.post("design", f"Ship it {ROCKET}")
        result = export_room("design", "raw/design.md", role="librarian", client=lib)
    content = (agent_base / "memory" / "raw" / "design.md").read_text(encoding="utf-8")
    assert result.chars == len(content.removesuffix("\n")) + 1  # the rocket is two units
