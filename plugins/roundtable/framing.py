"""Length-prefixed JSON frames, the roundtable broker's wire format (contracts/roundtable.md §2.4).

Every message in both directions is a 4-byte big-endian unsigned length followed by that many
bytes of UTF-8 JSON. A reader must cope with partial reads and several frames in one read.

Frames are read and written as JavaScript does, so that any frame a JavaScript peer sends can be
stored and sent back (issue 39):

- a lone UTF-16 surrogate (``"\\ud800"``) is valid JSON and ``JSON.stringify`` emits it; it has no
  UTF-8 form, so it is written as the same ``\\udxxx`` escape ``JSON.stringify`` writes;
- bytes that are not UTF-8 become U+FFFD, as Node's ``buffer.toString("utf-8")`` makes them;
- ``NaN`` and ``Infinity`` are refused, as ``JSON.parse`` refuses them (Python would accept them
  and then write JSON that no JavaScript peer can read).
"""

from __future__ import annotations

import json
import re
import struct
from typing import Any

HEADER = struct.Struct(">I")
# A frame larger than this is a protocol error, not a message: a post's text is limited to far
# less (rooms.MAX_TEXT_BYTES), and the broker splits a long fetch over several replies.
MAX_FRAME_BYTES = 64 * 1024 * 1024
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class FrameError(Exception):
    """The peer sent bytes that are not a valid frame (bad length or a payload that is not JSON)."""


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps(message: Any) -> str:
    """Compact JSON as ``JSON.stringify`` writes it, lone surrogates escaped; always encodable."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if text.isascii():
        return text
    # in json.dumps' output a surrogate can only sit inside a string (keys included), where its
    # escape means the same thing; a str from json.loads never holds a valid pair as two halves
    return _LONE_SURROGATE.sub(_escape_surrogate, text)


def encode_frame(message: dict[str, Any]) -> bytes:
    """One frame: the length header, then the compact UTF-8 JSON of ``message``."""
    try:
        payload = dumps(message).encode("utf-8")
    except ValueError as exc:  # NaN or Infinity: our own bug, never the peer's input
        raise FrameError(f"message is not JSON: {exc}") from exc
    if len(payload) > MAX_FRAME_BYTES:
        raise FrameError(f"frame of {len(payload)} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")
    return HEADER.pack(len(payload)) + payload


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode_payload(payload: bytes) -> dict[str, Any]:
    """One frame's payload as a message; :class:`FrameError` for anything else."""
    try:
        message = json.loads(payload.decode("utf-8", "replace"), parse_constant=_refuse_constant)
    except RecursionError:
        raise FrameError("frame payload nests too deeply") from None
    except ValueError as exc:  # JSONDecodeError, NaN, or an integer too long to convert
        raise FrameError(f"frame payload is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError("frame payload is JSON but not an object")
    return message


class FrameDecoder:
    """Accumulates bytes and yields whole messages; keeps a partial frame until the rest arrives."""

    def __init__(self, max_frame: int = MAX_FRAME_BYTES) -> None:
        self._buffer = bytearray()
        self.max_frame = max_frame

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Add ``data``; return every message completed by it, oldest first."""
        self._buffer.extend(data)
        out: list[dict[str, Any]] = []
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > self.max_frame:
                raise FrameError(f"frame length {length} exceeds the {self.max_frame}-byte limit")
            end = HEADER.size + length
            if len(self._buffer) < end:
                break
            payload = bytes(self._buffer[HEADER.size : end])
            del self._buffer[:end]
            out.append(decode_payload(payload))
        return out

    @property
    def pending(self) -> int:
        """Bytes held back as an incomplete frame."""
        return len(self._buffer)
