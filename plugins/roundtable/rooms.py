"""Rooms held by the local broker (contracts/roundtable.md §2, ``broker/room-store.ts``).

Each room is a ring buffer of the newest ``DEFAULT_ROOM_CAPACITY`` messages with a per-room
``seq`` starting at 1. Cursors are keyed by role name, not session, so they survive reconnects
and two sessions with the same name share one. This module is plain data: no sockets, no clock
of its own (the broker passes ``now_ms``), so it is tested directly.
"""

from __future__ import annotations

import re
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any

DEFAULT_ROOM_CAPACITY = 500
DEFAULT_FETCH_LIMIT = 200
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$", re.IGNORECASE)


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
    members: list[Member] = field(default_factory=list)
    cursors: dict[str, int] = field(default_factory=dict)
    last_seq: int = 0
    last_activity: int = 0

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
            out["unread"] = self.last_seq - self.cursors.get(viewer, 0)
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
            raise RoomError(f'No room "{name}"')  # only join (and post, which joins) creates rooms
        return room

    def listing(self, viewer: str | None = None) -> list[dict[str, Any]]:
        return [room.info(viewer) for room in self.rooms.values()]

    def join(self, name: str, session_id: str, member_name: str, now_ms: int, topic: str | None = None) -> Room:
        """Join, creating the room if needed; ``topic`` is used only at creation."""
        if not NAME_PATTERN.match(name):
            raise RoomError(f'Invalid room name "{name}": use letters, digits, "-" and "_", starting with a letter or digit')
        room = self.rooms.get(name)
        if room is None:
            room = Room(name=name, topic=topic or None, capacity=self.capacity, last_activity=now_ms)
            self.rooms[name] = room
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
        if room is None or not room.is_member(session_id):
            raise RoomError(f'Not a member of room "{name}"; join it first')
        room.last_seq += 1
        message: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "seq": room.last_seq,
            "timestamp": now_ms,
            "room": name,
            "from": {"sessionId": session_id, "name": author},
            "text": text,
        }
        if reply_to:
            message["replyTo"] = reply_to
        room.messages.append(message)
        while len(room.messages) > room.capacity:
            room.messages.popleft()
        room.last_activity = now_ms
        room.cursors[author] = room.last_seq
        return message

    def fetch(self, name: str, after_seq: int, limit: int | None = None) -> list[dict[str, Any]]:
        """Messages with ``seq > after_seq``, oldest first, at most ``max(1, limit)``; cursors untouched."""
        room = self._room(name)
        cap = max(1, DEFAULT_FETCH_LIMIT if limit is None else limit)
        out: list[dict[str, Any]] = []
        for message in room.messages:
            if message["seq"] > after_seq:
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
