"""Issue 39: digests byte-identical to Orphus's on the same messages.

``fixtures/digest_orphus.json`` holds 150 rooms of a seeded corpus (Unicode, lone surrogates,
trailing whitespace of every kind, budgets and per-message caps under and over their floors,
cursors, peeks) with the bytes Orphus's ``buildDigest`` and tool header gave for each; the
tests below name the differences the issue found, one by one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep_roundtable.digest import DEFAULT_BUDGET, DEFAULT_PER_MESSAGE, build_digest, digest_header

FIXTURE = Path(__file__).parent / "fixtures" / "digest_orphus.json"
CASES: list[dict[str, Any]] = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]


def render(case: dict[str, Any]) -> tuple[str, int, int]:
    budget = DEFAULT_BUDGET if case["budget"] is None else case["budget"]
    per_message = DEFAULT_PER_MESSAGE if case["perMessage"] is None else case["perMessage"]
    body = build_digest(case["messages"], budget=budget, per_message=per_message)
    return f"{digest_header(case['room'], body, peek=case['peek'])}\n{body.text}", body.consumed_seq, body.chars


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_the_digest_is_the_bytes_orphus_writes(case: dict[str, Any]) -> None:
    text, consumed, chars = render(case)
    expected = case["expected"]
    assert text.encode("utf-8") == expected["text"].encode("utf-8")
    assert (consumed, chars) == (expected["consumedSeq"], expected["chars"])


def msg(seq: int, text: str, name: str = "planner") -> dict[str, Any]:
    return {"id": f"id{seq}", "seq": seq, "timestamp": 60_000 * seq, "room": "r", "from": {"sessionId": "s", "name": name}, "text": text}


def test_trailing_whitespace_of_a_message_is_dropped_javascripts_way() -> None:
    body = build_digest([msg(1, "Ship the limiter.  \n\t\u00a0\ufeff")])
    assert body.text == "[00:01] planner#1: Ship the limiter."
    # U+001C and U+0085 are whitespace to Python, not to JavaScript: kept
    assert build_digest([msg(1, "x\x1c\x85")]).text == "[00:01] planner#1: x\x1c\x85"


def test_one_collapsed_message_is_one_older_message() -> None:
    messages = [msg(i, "w" * 300) for i in range(1, 3)]
    body = build_digest(messages, budget=200, per_message=600)
    assert body.collapsed == 1
    assert body.lines[0] == "(1 older message collapsed — fetch with after_seq 0 to read them)"


def test_every_line_costs_its_length_plus_one_so_a_line_of_exactly_the_budget_is_a_headline() -> None:
    prefix = "[00:01] planner#1: "
    body = build_digest([msg(1, "q" * (200 - len(prefix)))], budget=200, per_message=1000)
    assert (body.verbatim, body.headlines) == (0, 1)
    assert body.text == "· planner#1: " + "q" * 100 + " …"
    body = build_digest([msg(1, "q" * (199 - len(prefix)))], budget=200, per_message=1000)
    assert (body.verbatim, body.headlines) == (1, 0)


def test_the_header_counts_the_messages_fetched_and_an_empty_digest_consumed_nothing() -> None:
    body = build_digest([msg(7, "a"), msg(8, "b")])
    assert digest_header("design.v2", body, peek=False).startswith("#design.v2 · 2 unread · showing 2 verbatim")
    empty = build_digest([])
    assert (empty.text, empty.consumed_seq, empty.chars) == ("No new messages.", 0, 0)
    assert digest_header("d", empty, peek=True) == "#d · 0 unread · showing 0 verbatim, 0 headline(s), 0 collapsed · 0 chars · peek (cursor unchanged)"


def test_a_headline_goes_on_when_the_body_has_more_lines_even_blank_ones() -> None:
    assert build_digest([msg(i, "x" * 300) for i in range(1, 3)] + [msg(3, "first\n")], budget=200).lines[-2:] == [
        "· planner#2: " + "x" * 100 + " …", "[00:03] planner#3: first"]
