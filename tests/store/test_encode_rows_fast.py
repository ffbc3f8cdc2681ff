"""``jsonl.encode_rows`` writes a row by orjson when it can: the bytes are the ones ``dumps_line``
(``JSON.stringify`` parity) writes, for every character, every float, and every value orjson or
``json`` would treat differently (those take the ``dumps_line`` path)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import sys
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.bench.capture import WORKLOADS
from commonkeep.store import jsonfast, jsonl


def _same(rows: list[Any]) -> None:
    try:
        want: bytes | type[BaseException] = jsonl._encode_rows(rows)
    except (TypeError, ValueError, RecursionError) as exc:
        want = type(exc)
    try:
        got: bytes | type[BaseException] = jsonl.encode_rows(rows)
    except (TypeError, ValueError, RecursionError) as exc:
        got = type(exc)
    assert got == want, rows


def test_every_character_is_written_as_dumps_line_writes_it() -> None:
    chars = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)
    row = {"text": chars, chars[:5000]: [chars[i:i + 97] for i in range(0, 4000, 97)]}
    assert jsonfast.fast_rows([row]) is not None
    _same([row])


@pytest.mark.parametrize("value", [
    1.0, -0.0, 0.0, 1e16, 9999999999999998.0, 1e-4, 0.0001, 0.00011, 1e-5, 1.5e300, 5e-324, float("nan"), float("inf"),
    2**53, 2**63, 2**64, -(2**63) - 1, 2**100, True, None, "\ud800", {"a": "\udfff"}, (1, 2), {1: "a"},
    datetime.date(2026, 1, 1), uuid.UUID(int=5), enum.Enum("E", "A").A, enum.IntEnum("I", "B").B, [[[[["deep"]]]]],
])
def test_values_orjson_and_json_may_write_differently(value: Any) -> None:
    _same([{"id": "cap_1", "v": value}, {"id": "cap_2"}])


def test_a_dataclass_or_subclass_is_refused_or_written_as_before() -> None:
    @dataclasses.dataclass
    class D:
        x: int = 1

    class S(str):
        pass

    class Dct(dict[str, Any]):
        pass

    for value in (D(), S("a"), Dct(a=1), {S("k"): 1}):
        _same([{"v": value}])
        assert jsonfast.fast_rows([{"v": value}]) is None


def test_the_benchmark_candidates_go_the_fast_way() -> None:
    import tempfile
    from pathlib import Path

    from commonkeep.gate.capture import capture

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        rows = [capture(root, text, **kwargs).candidate for text, kwargs in WORKLOADS["mixed"](100, 3) + WORKLOADS["tokens"](100, 3)]
        rows.append({**rows[0], "confidence": 0.85, "source_trust_weight": 1.0, "weights": [0.35, 0.1, 1e-7]})
    for row in rows:
        _same([row])
    assert jsonfast.fast_rows(rows[:-1]) == jsonl._encode_rows(rows[:-1])
    assert jsonfast.fast_rows(rows[-1:]) is None  # an integral float and an exponent: dumps_line's way


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=8), _json, max_size=6), max_size=3))
def test_generated_rows_are_written_as_dumps_line_writes_them(rows: list[dict[str, Any]]) -> None:
    _same(rows)


@settings(max_examples=600, deadline=None)
@given(st.floats(min_value=1e-4, max_value=1e16, exclude_max=True))
def test_floats_in_the_plain_range(x: float) -> None:
    _same([{"x": x, "y": -x}])
