"""The wire framing: 4-byte big-endian length + UTF-8 JSON, partial and coalesced reads."""

from __future__ import annotations

import struct

import pytest

from commonkeep_roundtable.framing import FrameDecoder, FrameError, encode_frame


def test_frame_is_big_endian_length_then_utf8_json() -> None:
    frame = encode_frame({"type": "post", "text": "é"})
    payload = '{"type":"post","text":"é"}'.encode()
    assert frame == struct.pack(">I", len(payload)) + payload


def test_decoder_survives_a_frame_split_byte_by_byte_and_two_frames_in_one_read() -> None:
    data = encode_frame({"n": 1, "text": "naïve ☃"}) + encode_frame({"n": 2})
    decoder = FrameDecoder()
    got = []
    for i in range(len(data) - 10):
        got += decoder.feed(data[i : i + 1])
    assert got == [{"n": 1, "text": "naïve ☃"}]
    assert decoder.pending > 0
    got += decoder.feed(data[len(data) - 10 :])
    assert got == [{"n": 1, "text": "naïve ☃"}, {"n": 2}]
    assert decoder.pending == 0


def test_payload_that_is_not_json_is_an_error() -> None:
    with pytest.raises(FrameError, match="not JSON"):
        FrameDecoder().feed(struct.pack(">I", 5) + b"hello")


def test_json_that_is_not_an_object_is_an_error() -> None:
    with pytest.raises(FrameError, match="not an object"):
        FrameDecoder().feed(struct.pack(">I", 2) + b"[]")
