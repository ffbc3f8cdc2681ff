"""Rooms held by the local broker (contracts/roundtable.md §2, ``broker/room-store.ts``).

Each room is a ring buffer of the newest ``DEFAULT_ROOM_CAPACITY`` messages with a per-room
``seq`` starting at 1. Cursors are keyed by role name, not session, so they survive reconnects
and two sessions with the same name share one. This module is plain data: no sockets, no clock
of its own (the broker passes ``now_ms``), so it is tested directly.

Names, topics and texts are any strings, as Orphus takes them (``design.v2``, ``#design`` and
``design review`` are room names). What Orphus does not have are the bounds below: without them
one client could fill the broker's memory (500 messages of any size in any number of rooms) or
make a room's fetch reply too large to send, which would leave the room unreadable for everyone.
"""

from __future__ import annotations

import re
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ROOM_CAPACITY = 500
DEFAULT_FETCH_LIMIT = 200
# The bounds (issue 39). A post's text in UTF-8 bytes: agents post findings, not files (a digest
# shows 600 characters of a message); 500 such messages are a room's worst case.
MAX_TEXT_BYTES = 256 * 1024
MAX_NAME_CHARS = 200  # room, member and replyTo names (an id is 36)
MAX_TOPIC_CHARS = 1000
MAX_ROOMS = 1000
# A room's ring also drops its oldest messages while their texts pass this many bytes, so the
# broker's memory is bounded (MAX_ROOMS rooms of at most this much text) whatever clients post.
MAX_ROOM_TEXT_BYTES = 8 * 1024 * 1024
# A fetch reply stops adding messages past this many bytes of text (always at least one message);
# the caller reads on from the last seq it got, as after any limited fetch.
MAX_FETCH_TEXT_BYTES = 4 * 1024 * 1024
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_size(text: str) -> int:
    """Bytes of ``text`` on the wire (a lone surrogate counts as its 6-byte escape)."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return len(text.encode("utf-8", "surrogatepass")) + 3 * len(_LONE_SURROGATE.findall(text))


def _bounded(what: str, value: str, limit: int) -> str:
    if len(value) > limit:
        raise RoomError(f"{what} is {len(value)} characters long; the limit is {limit}")
    return value


class RoomError(Exception):
    """A request the room store refuses; the text goes back to the client as ``error``."""


@dataclass
class Member:
    session_id: str
    name: str
    joined_at: int

    def to_wire(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "name": self.name, "joinedAt": self.joined_at}


@dataclass
class Room:
    name: str
    topic: str | None
    capacity: int
    messages: deque[dict[str, Any]] = field(default_factory=deque)
    sizes: deque[int] = field(default_factory=deque)  # utf8_size of each message's text
    members: list[Member] = field(default_factory=list)
    cursors: dict[str, int] = field(default_factory=dict)
    last_seq: int = 0
    last_activity: int = 0
    text_bytes: int = 0  # sum of sizes

    def info(self, viewer: str | None = None) -> dict[str, Any]:
        """The wire ``RoomInfo``; ``unread`` only when listed for a named viewer."""
        out: dict[str, Any] = {"name": self.name}
        if self.topic is not None:
            out["topic"] = self.topic
        out.update(
            members=[m.to_wire() for m in self.members],
            messageCount=len(self.messages),
            lastSeq=self.last_seq,
            lastActivity=self.last_activity,
        )
        if viewer is not None:
            out["unread"] = max(0, self.last_seq - self.cursors.get(viewer, 0))
        return out

    def is_member(self, session_id: str) -> bool:
        return any(m.session_id == session_id for m in self.members)


class RoomStore:
    """All rooms of one broker."""

    def __init__(self, capacity: int = DEFAULT_ROOM_CAPACITY) -> None:
        self.capacity = capacity
        self.rooms: dict[str, Room] = {}

    def _room(self, name: str) -> Room:
        room = self.rooms.get(name)
        if room is None:
            raise RoomError(f'Room "{name}" does not exist')  # as Orphus says it; only join creates rooms
        return room

    def listing(self, viewer: str | None = None) -> list[dict[str, Any]]:
        return [room.info(viewer) for room in self.rooms.values()]

    def join(self, name: str, session_id: str, member_name: str, now_ms: int, topic: str | None = None) -> Room:
        """Join, creating the room if needed; ``topic`` is kept only while the room has none."""
        _bounded("The room name", name, MAX_NAME_CHARS)
        if topic is not None:
            _bounded("The topic", topic, MAX_TOPIC_CHARS)
        room = self.rooms.get(name)
        if room is None:
            if len(self.rooms) >= MAX_ROOMS:
                raise RoomError(f"The broker holds {MAX_ROOMS} rooms, its limit; leave or export one first")
            room = Room(name=name, topic=topic, capacity=self.capacity, last_activity=now_ms)
            self.rooms[name] = room
        elif room.topic is None and topic is not None:
            room.topic = topic  # as Orphus: a later join may give a room without a topic its topic
        if not room.is_member(session_id):
            room.members.append(Member(session_id, member_name, now_ms))
        return room

    def leave(self, name: str, session_id: str) -> bool:
        """Remove the session; delete the room when no member and no message is left."""
        room = self.rooms.get(name)
        if room is None:
            return False
        before = len(room.members)
        room.members = [m for m in room.members if m.session_id != session_id]
        if not room.members and not room.messages:
            del self.rooms[name]
        return len(room.members) != before

    def leave_all(self, session_id: str) -> list[str]:
        """Remove a disconnected session from every room; returns the rooms it had joined."""
        left = [name for name, room in self.rooms.items() if room.is_member(session_id)]
        for name in left:
            self.leave(name, session_id)
        return left

    def post(
        self, name: str, session_id: str, author: str, text: str, now_ms: int, reply_to: str | None = None
    ) -> dict[str, Any]:
        """Append a message, trim the ring, and move the author's cursor to it."""
        room = self.rooms.get(name)
        if room is None:
            raise RoomError(f'Room "{name}" does not exist; join it first')
        if not room.is_member(session_id):
            raise RoomError(f'Not a member of room "{name}"; join it first')
        size = utf8_size(text)
        if size > MAX_TEXT_BYTES:
            raise RoomError(f"The message is {size} bytes of UTF-8; the limit is {MAX_TEXT_BYTES}: post a summary")
        if reply_to is not None:
            _bounded("replyTo", reply_to, MAX_NAME_CHARS)
        room.last_seq += 1
        message: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "seq": room.last_seq,
            "timestamp": now_ms,
            "room": name,
            "from": {"sessionId": session_id, "name": author},
            "text": text,
        }
        if reply_to is not None:
            message["replyTo"] = reply_to
        room.messages.append(message)
        room.sizes.append(size)
        room.text_bytes += size
        while len(room.messages) > room.capacity or (room.text_bytes > MAX_ROOM_TEXT_BYTES and len(room.messages) > 1):
            room.messages.popleft()
            room.text_bytes -= room.sizes.popleft()
        room.last_activity = now_ms
        room.cursors[author] = room.last_seq
        return message

    def fetch(self, name: str, after_seq: int, limit: int | None = None) -> list[dict[str, Any]]:
        """Messages with ``seq > after_seq``, oldest first, at most ``max(1, limit)``; cursors untouched.

        The reply also stops before its texts pass ``MAX_FETCH_TEXT_BYTES`` (at least one message).
        """
        room = self._room(name)
        cap = max(1, DEFAULT_FETCH_LIMIT if limit is None else limit)
        out: list[dict[str, Any]] = []
        size = 0
        for message, text_size in zip(room.messages, room.sizes, strict=True):
            if message["seq"] > after_seq:
                size += text_size
                if out and size > MAX_FETCH_TEXT_BYTES:
                    break
                out.append(message)
                if len(out) >= cap:
                    break
        return out

    def cursor(self, name: str, viewer: str) -> int:
        room = self.rooms.get(name)
        return 0 if room is None else room.cursors.get(viewer, 0)

    def set_cursor(self, name: str, viewer: str, seq: int) -> int:
        """Move ``viewer``'s cursor forward only, clamped to ``lastSeq``; returns the cursor."""
        room = self._room(name)
        current = room.cursors.get(viewer, 0)
        target = min(max(seq, current), room.last_seq)
        room.cursors[viewer] = target
        return target
