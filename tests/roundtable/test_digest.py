"""The bounded digest (contracts/roundtable.md §4): verbatim, headlines, collapse, cursor."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from commonkeep_roundtable.client import BrokerClient
from commonkeep_roundtable.digest import build_digest, digest_room, headline_line, verbatim_line


def msg(seq: int, text: str, name: str = "planner", reply_to: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f"id{seq}", "seq": seq, "timestamp": 1_767_225_600_000 + seq * 60_000, "room": "r", "from": {"sessionId": "s", "name": name}, "text": text}
    if reply_to:
        out["replyTo"] = reply_to
    return out


def test_line_forms() -> None:
    assert verbatim_line(msg(3, "hello"), 600) == "[00:03] planner#3: hello"
    assert verbatim_line(msg(4, "yes", "critic", reply_to="id3"), 600) == "[00:04] critic#4 (reply to id3): yes"
    assert verbatim_line(msg(5, "x" * 90), 80) == "[00:05] planner#5: " + "x" * 80 + " …(+10 chars)"
    assert headline_line(msg(6, "short"), 100) == "· planner#6: short"
    assert headline_line(msg(7, "first\nsecond"), 100) == "· planner#7: first …"
    assert headline_line(msg(8, "y" * 120), 100) == "· planner#8: " + "y" * 100 + " …"


def test_everything_fits_verbatim_oldest_first() -> None:
    body = build_digest([msg(1, "a"), msg(2, "b")])
    assert body.lines == ["[00:01] planner#1: a", "[00:02] planner#2: b"]
    assert (body.verbatim, body.headlines, body.collapsed) == (2, 0, 0)


def test_budget_turns_older_messages_into_headlines_then_collapses_the_rest() -> None:
    messages = [msg(i, f"Point {i}: " + "z" * 150) for i in range(1, 11)]
    body = build_digest(messages, budget=700, per_message=600)
    assert body.verbatim >= 1 and body.headlines >= 1 and body.collapsed >= 1
    assert body.verbatim + body.headlines + body.collapsed == 10
    assert body.lines[0] == f"({body.collapsed} older messages collapsed — fetch with after_seq 0 to read them)"
    assert len("\n".join(body.lines[1:])) <= 700  # the budget binds everything but the marker
    assert body.lines[-1].startswith("[00:10] planner#10: Point 10")  # newest is verbatim, last
    assert body.lines[1].startswith("· planner#")


def test_floors_apply_to_tiny_budgets() -> None:
    body = build_digest([msg(i, "w" * 500) for i in range(1, 4)], budget=10, per_message=1)
    assert len("\n".join(line for line in body.lines if not line.startswith("("))) <= 200
    assert "…(+420 chars)" in body.lines[-1]  # per-message floor is 80


def test_digest_advances_the_cursor_and_peek_does_not(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with BrokerClient.connect("planner", base=agent_base, start=False) as planner, BrokerClient.connect(
        "reviewer", base=agent_base, start=False
    ) as reviewer:
        planner.join("design")
        reviewer.join("design")
        for i in range(1, 4):
            planner.post("design", f"note {i}")
        peek = digest_room(reviewer, "design", peek=True)
        assert peek.text.splitlines()[0] == "#design · 3 unread · showing 3 verbatim, 0 headline(s), 0 collapsed · " + str(peek.details["chars"]) + " chars · peek (cursor unchanged)"
        assert reviewer.cursor("design") == 0
        digest = digest_room(reviewer, "design")
        assert digest.details == {"room": "design", "lastSeq": 3, "cursorBefore": 0, "consumedSeq": 3, "chars": peek.details["chars"]}
        assert reviewer.cursor("design") == 3
        empty = digest_room(reviewer, "design")
        assert empty.text == "#design · 0 unread · showing 0 verbatim, 0 headline(s), 0 collapsed · 0 chars\nNo new messages."
        assert empty.details == {"room": "design", "lastSeq": 3, "cursorBefore": 3, "consumedSeq": 0, "chars": 0}
