"""Length-prefixed JSON frames, the roundtable broker's wire format (contracts/roundtable.md §2.4).

Every message in both directions is a 4-byte big-endian unsigned length followed by that many
bytes of UTF-8 JSON. A reader must cope with partial reads and several frames in one read.
"""

from __future__ import annotations

import json
import struct
from typing import Any

HEADER = struct.Struct(">I")
# A frame larger than this is a protocol error, not a message: 500 messages of text fit easily.
MAX_FRAME_BYTES = 64 * 1024 * 1024


class FrameError(Exception):
    """The peer sent bytes that are not a valid frame (bad length or a payload that is not JSON)."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """One frame: the length header, then the compact UTF-8 JSON of ``message``."""
    payload = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    if len(payload) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(payload)} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")
    return HEADER.pack(len(payload)) + payload


class FrameDecoder:
    """Accumulates bytes and yields whole messages; keeps a partial frame until the rest arrives."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add ``data``; return every message completed by it, oldest first."""
        self._buffer.extend(data)
        out: list[dict[str, Any]] = []
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > MAX_FRAME_BYTES:
                raise FrameError(f"frame length {length} exceeds the {MAX_FRAME_BYTES}-byte limit")
            end = HEADER.size + length
            if len(self._buffer) < end:
                break
            payload = bytes(self._buffer[HEADER.size : end])
            del self._buffer[:end]
            try:
                message = json.loads(payload.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise FrameError(f"frame payload is not UTF-8 JSON: {exc}") from exc
            if not isinstance(message, dict):
                raise FrameError("frame payload is JSON but not an object")
            out.append(message)
        return out

    @property
    def pending(self) -> int:
        """Bytes held back as an incomplete frame."""
        return len(self._buffer)
