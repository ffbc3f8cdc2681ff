"""The agent tools this plugin contributes (served by ``commonkeep mcp`` and host adapters).

``roundtable_export`` and ``roundtable_memory`` are the contract's ``export`` action and
``memory`` tool; ``roundtable_memory`` is not called plain ``memory`` because Hermes drops
provider tools that shadow its built-in ``memory`` tool. The room tools (``rooms``, ``join``,
``leave``, ``post``, ``digest``, ``peek``, ``fetch``) let an MCP host take part in a room. Each ``call``
returns text, or raises a ``CommonkeepError`` whose message is the contract's error text.
Configuration (agent dir, memory dir, writer role) is read on every call, like upstream.

None of these tools stamps ``user_turn`` (issue 22): a room's posts are written by agents through
their tool arguments, and the host passes no user message of its own out of band.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from commonkeep.errors import BadInput
from commonkeep.tools.agent import CoreTool as AgentTool  # one tool shape for every part
from commonkeep_roundtable.client import BrokerClient, BrokerConnectionLost
from commonkeep_roundtable.digest import DEFAULT_BUDGET, DEFAULT_PER_MESSAGE, digest_room
from commonkeep_roundtable.export import export_room
from commonkeep_roundtable.jsunits import js_len, utf8_text
from commonkeep_roundtable.memory import ACTIONS, memory_call
from commonkeep_roundtable.paths import agent_dir


def _text(arguments: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = arguments.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise BadInput(f"argument {key!r} must be a non-empty string")
    return value


def _int(arguments: dict[str, Any], key: str, default: int) -> int:
    value = arguments.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"argument {key!r} must be an integer")
    return value


_sessions: dict[tuple[str, str], BrokerClient] = {}
_sessions_lock = threading.Lock()
T = TypeVar("T")


def with_session(role: str | None, body: Callable[[BrokerClient], T]) -> T:
    """Run ``body`` with this process's session for ``role``, kept open between calls.

    A long-lived host (the MCP server) thus stays a member of the rooms it joined and keeps the
    broker alive, as Orphus's bridge does. A connection lost since the last call (the broker
    exited) is reopened once; a room without members and messages is gone by then anyway.
    Room clients without a role are ``session-<pid>``, as upstream.
    """
    name = role or f"session-{os.getpid()}"
    base = agent_dir()
    key = (str(base), name)
    with _sessions_lock:
        for attempt in (1, 2):
            client = _sessions.get(key)
            if client is None:
                client = BrokerClient.connect(name, base=base)
                _sessions[key] = client
            try:
                return body(client)
            except BrokerConnectionLost:
                _sessions.pop(key, None)
                client.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")


def close_sessions() -> None:
    """Close every kept session (sockets close with the process anyway; tests and hosts that
    outlive their rooms call this)."""
    with _sessions_lock:
        for client in _sessions.values():
            client.close()
        _sessions.clear()


def _export(arguments: dict[str, Any], role: str | None) -> str:
    room = _text(arguments, "room") or ""
    path = _text(arguments, "path") or ""
    return export_room(room, path, role=role, base=agent_dir()).text


def _memory(arguments: dict[str, Any], role: str | None) -> str:
    action = _text(arguments, "action") or ""
    return memory_call(
        action,
        role=role,
        question=_text(arguments, "question", required=False),
        source=_text(arguments, "source", required=False),
    )


def _rooms(arguments: dict[str, Any], role: str | None) -> str:
    rooms = with_session(role, lambda client: client.rooms())
    if not rooms:
        return "No active rooms. Use join to create one."
    lines = []
    for info in rooms:
        topic = f" — {info['topic']}" if info.get("topic") else ""
        members = ", ".join(m["name"] for m in info.get("members", [])) or "none"
        unread = f"{info['unread']} unread · " if "unread" in info else ""
        lines.append(f"#{info['name']}{topic} · {unread}{info['messageCount']} msgs · members: {members}")
    return "\n".join(lines)


def _join(arguments: dict[str, Any], role: str | None) -> str:
    room = _text(arguments, "room") or ""
    topic = _text(arguments, "topic", required=False)
    reply = with_session(role, lambda client: client.join(room, topic))
    info = reply["room"]
    about = f" — {info['topic']}" if info.get("topic") else ""
    unread = int(info["lastSeq"]) - int(reply["cursor"])
    catch_up = " Use digest to catch up." if unread > 0 else ""
    return f"Joined #{room}{about}. {len(info['members'])} member(s), {unread} unread message(s).{catch_up}"


def _leave(arguments: dict[str, Any], role: str | None) -> str:
    room = _text(arguments, "room") or ""
    with_session(role, lambda client: client.leave(room))
    return f"Left #{room}."


def _post(arguments: dict[str, Any], role: str | None) -> str:
    room = _text(arguments, "room") or ""
    text = _text(arguments, "message") or ""
    topic = _text(arguments, "topic", required=False)
    reply_to = _text(arguments, "replyTo", required=False)

    def body(client: BrokerClient) -> str:
        client.join(room, topic)
        message = client.post(room, text, reply_to)
        return f"Posted to #{room} as {client.name}#{message['seq']}."

    return with_session(role, body)


def _digest(peek: bool) -> Callable[[dict[str, Any], str | None], str]:
    def run(arguments: dict[str, Any], role: str | None) -> str:
        room = _text(arguments, "room") or ""
        budget = _int(arguments, "budget", DEFAULT_BUDGET)
        per_message = _int(arguments, "perMessage", DEFAULT_PER_MESSAGE)

        def body(client: BrokerClient) -> str:  # no join: a digest never creates a room
            return digest_room(client, room, budget=budget, per_message=per_message, peek=peek).text

        return with_session(role, body)

    return run


def _fetch(arguments: dict[str, Any], role: str | None) -> str:
    room = _text(arguments, "room") or ""
    limit = _int(arguments, "limit", 20)

    def body(client: BrokerClient) -> tuple[int, dict[str, Any]]:
        after = _int(arguments, "afterSeq", client.cursor(room))
        return after, client.fetch(room, after_seq=after, limit=limit)

    after, reply = with_session(role, body)
    messages, last = reply["messages"], reply["lastSeq"]
    if not messages:
        return f"#{room} · nothing after seq {after} (latest is {last})."
    lines = "\n".join(f"[{m['from']['name']}#{m['seq']}] {m['text']}" for m in messages)
    return f"#{room} · {len(messages)} message(s) after seq {after} (latest is {last}) · {js_len(lines)} chars · cursor unchanged\n{lines}"


_ROOM = {"type": "string", "description": "room name, e.g. design"}


def _digest_schema() -> dict[str, Any]:
    """The arguments of ``roundtable_digest`` and ``roundtable_peek`` (a fresh dict per tool)."""
    return {
        "type": "object",
        "properties": {"room": _ROOM, "budget": {"type": "integer"}, "perMessage": {"type": "integer"}},
        "required": ["room"],
    }


def _encodable(run: Callable[[dict[str, Any], str | None], str]) -> Callable[[dict[str, Any], str | None], str]:
    """``run`` with each lone surrogate from the wire (a room name, a message) shown as U+FFFD."""

    def call(arguments: dict[str, Any], role: str | None) -> str:
        return utf8_text(run(arguments, role))

    return call


def roundtable_tools() -> list[AgentTool]:
    """Every tool of this plugin, fresh objects each call; their texts always encode as UTF-8."""
    return [AgentTool(t.name, t.description, t.input_schema, _encodable(t.run)) for t in _tools()]


def _tools() -> list[AgentTool]:
    return [
        AgentTool(
            "roundtable_export",
            "Export a room's whole retained transcript to a file under the memory dir's raw/ (writer role "
            "only; cursors untouched). Returns metadata only. Then ingest it with roundtable_memory.",
            {
                "type": "object",
                "properties": {"room": _ROOM, "path": {"type": "string", "description": "relative path under raw/, e.g. raw/design.md"}},
                "required": ["room", "path"],
            },
            _export,
        ),
        AgentTool(
            "roundtable_memory",
            "Explicit-fetch access to the wiki memory: query (anyone), doctor (anyone), ingest a raw/ file "
            "and gardener (writer role only).",
            {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "question": {"type": "string", "description": "for query"},
                    "source": {"type": "string", "description": "for ingest: a path such as raw/design.md"},
                },
                "required": ["action"],
            },
            _memory,
        ),
        AgentTool("roundtable_rooms", "List the active rooms with your unread counts.", {"type": "object", "properties": {}}, _rooms),
        AgentTool(
            "roundtable_join",
            "Join a room, creating it if needed (topic used only at creation); says how much is unread.",
            {"type": "object", "properties": {"room": _ROOM, "topic": {"type": "string"}}, "required": ["room"]},
            _join,
        ),
        AgentTool(
            "roundtable_leave",
            "Leave a room.",
            {"type": "object", "properties": {"room": _ROOM}, "required": ["room"]},
            _leave,
        ),
        AgentTool(
            "roundtable_post",
            "Post a message to a room (joining it first; topic used only when the room is created).",
            {
                "type": "object",
                "properties": {"room": _ROOM, "message": {"type": "string"}, "replyTo": {"type": "string"}, "topic": {"type": "string"}},
                "required": ["room", "message"],
            },
            _post,
        ),
        AgentTool(
            "roundtable_digest",
            "A bounded digest of your unread messages in a room; advances your cursor.",
            _digest_schema(),
            _digest(peek=False),
        ),
        AgentTool(
            "roundtable_peek",
            "Like roundtable_digest, but your cursor stays where it is.",
            _digest_schema(),
            _digest(peek=True),
        ),
        AgentTool(
            "roundtable_fetch",
            "Raw full message bodies after a seq (default: your cursor); cursor unchanged.",
            {
                "type": "object",
                "properties": {"room": _ROOM, "afterSeq": {"type": "integer"}, "limit": {"type": "integer"}},
                "required": ["room"],
            },
            _fetch,
        ),
    ]
