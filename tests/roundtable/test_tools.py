"""The roundtable agent tools as a host calls them: kept sessions, texts, reconnects."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from commonkeep_roundtable.tools import close_sessions, roundtable_tools
from tests.roundtable.conftest import start_broker, stop_broker_of


@pytest.fixture
def tools(agent_base: Path) -> Iterator[dict[str, Any]]:
    try:
        yield {t.name: t for t in roundtable_tools()}
    finally:
        close_sessions()


def test_room_tools_speak_the_contract_texts(tools: dict[str, Any], agent_base: Path) -> None:
    assert tools["roundtable_rooms"].call({}, "planner") == "No active rooms. Use join to create one."
    assert tools["roundtable_post"].call({"room": "design", "message": "one", "topic": "limits"}, "planner") == "Posted to #design as planner#1."
    tools["roundtable_post"].call({"room": "design", "message": "two\nlines"}, "critic")
    assert tools["roundtable_rooms"].call({}, "planner") == "#design — limits · 1 unread · 2 msgs · members: planner, critic"
    fetched = tools["roundtable_fetch"].call({"room": "design"}, "planner")
    assert fetched.splitlines()[0].startswith("#design · 1 message(s) after seq 1 (latest is 2) · ")
    assert fetched.endswith("cursor unchanged\n[critic#2] two\nlines")
    assert tools["roundtable_fetch"].call({"room": "design", "afterSeq": 2}, "planner") == "#design · nothing after seq 2 (latest is 2)."
    peek = tools["roundtable_peek"].call({"room": "design"}, "planner")
    assert peek.splitlines()[0].endswith("· peek (cursor unchanged)")
    assert tools["roundtable_digest"].call({"room": "design"}, "planner").startswith("#design · 1 unread · showing 1 verbatim")
    assert tools["roundtable_digest"].call({"room": "design"}, "planner") == "#design · 0 unread · showing 0 verbatim, 0 headline(s), 0 collapsed · 0 chars\nNo new messages."
    assert tools["roundtable_join"].call({"room": "design"}, "reviewer") == (
        "Joined #design — limits. 3 member(s), 2 unread message(s). Use digest to catch up."
    )
    assert tools["roundtable_leave"].call({"room": "design"}, "reviewer") == "Left #design."
    assert "members: planner, critic" in tools["roundtable_rooms"].call({}, "planner")


def test_a_kept_session_reconnects_once_after_the_broker_restarted(tools: dict[str, Any], agent_base: Path) -> None:
    tools["roundtable_post"].call({"room": "design", "message": "before"}, "planner")
    stop_broker_of(agent_base)  # the broker the tool started goes away, rooms with it
    proc = start_broker(agent_base)
    try:
        assert tools["roundtable_rooms"].call({}, "planner") == "No active rooms. Use join to create one."
        assert tools["roundtable_post"].call({"room": "design", "message": "after"}, "planner") == "Posted to #design as planner#1."
    finally:
        close_sessions()
        proc.terminate()
        proc.communicate(timeout=30)


def test_digest_and_peek_take_the_same_arguments_without_sharing_one_schema_object() -> None:
    by_name = {tool.name: tool for tool in roundtable_tools()}
    digest, peek = by_name["roundtable_digest"].input_schema, by_name["roundtable_peek"].input_schema
    assert digest == peek and digest["required"] == ["room"]
    assert set(digest["properties"]) == {"room", "budget", "perMessage"}
    assert digest is not peek  # a host that annotates one schema must not change the other
