"""The secret gate's short ways give the long ways' answers: ``context.card_digits`` is the card
pre-check's search, and ``redact_obj`` walks an object as before (short strings kept, the rest
redacted, split tokens found)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.bench.capture import WORKLOADS
from commonkeep.secrets import _redact_cached, _redact_uncached, context, redact_obj, structure

_CARDISH = ["4111 1111 1111 1111", "4111-1111-1111-1111", "5500005555555559", "1", "12", " ", "-", "--", "x", "٣", "١٢٣٤",
            "2026-12-05", "card", "cvv 123"]


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(_CARDISH) | st.text(max_size=6), max_size=14).map("".join))
def test_card_digits_is_the_search(text: str) -> None:
    assert context.card_digits(text) == (context.CARD_DIGITS.search(text) is not None)


def test_card_digits_at_thirteen_digits_and_beyond_ascii() -> None:
    for text in ("4111111111111", "card 4111 1111 1111 1", "411111111111", "٤١١١١١١١١١١١١", "4111111111111١", "a1b2c3d4e5f6g7h8i9j0k1l2m3"):
        assert context.card_digits(text) == (context.CARD_DIGITS.search(text) is not None), text


def test_card_digits_on_the_workloads() -> None:
    for name in ("mixed", "tokens"):
        for text, _ in WORKLOADS[name](600, 3):
            for view in (text, text.lower()):
                assert context.card_digits(view) == (context.CARD_DIGITS.search(view) is not None)


def _seedlike_by_regex(low: str) -> bool:
    plain = structure._WORD.findall(low)
    return len(plain) >= structure.SEED_LENGTHS[0] and len(structure.any_list().intersection(plain)) >= 8


_SEED_WORDS = sorted(structure.any_list())[::97]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_SEED_WORDS + [" ", "\x00", "1.", "-", "_", ",", "abandon", "zoo", "É", "ábaco"])
                | st.text(max_size=5), max_size=30).map("".join))
def test_seedlike_is_the_regex_words(text: str) -> None:
    low = text.lower()
    assert structure.seedlike(low) == _seedlike_by_regex(low)


def test_seedlike_on_phrases_and_the_workloads() -> None:
    phrase = " ".join(_SEED_WORDS[:12])
    texts = [phrase, phrase.replace(" ", "\x00"), "1. " + phrase.replace(" ", " 2) "), phrase[:40]]
    texts += [text for name in ("mixed", "tokens") for text, _ in WORKLOADS[name](300, 4)]
    for text in texts:
        assert structure.seedlike(text.lower()) == _seedlike_by_regex(text.lower()), text
    assert structure.seedlike(phrase)


class _Str(str):
    pass


def _old_walk(value: Any, sink: list[str]) -> Any:
    """Every string redacted on its own (what ``redact_obj`` does where the provider rules find nothing)."""
    if isinstance(value, str):
        if len(value) < 8:
            return value
        text, kinds = _redact_uncached(value) if len(value) > 4096 else _redact_cached(value, ())
        sink.extend(kinds)
        return text
    if isinstance(value, dict):
        return {k: _old_walk(v, sink) for k, v in value.items()}
    if isinstance(value, list):
        return [_old_walk(v, sink) for v in value]
    return value


def test_redact_obj_walks_as_each_string_alone() -> None:
    short = _Str("abc")
    for text, kwargs in WORKLOADS["mixed"](300, 5):
        obj = {"text": text, "n": 3, "x": None, "short": short, "nested": [{"a": text[:7], "b": [text, 1.5]}], **kwargs}
        found: list[str] = []
        out = redact_obj(obj, found)
        if "[REDACTED:" in repr(out):  # a split token or a provider's value: not this simple comparison
            continue
        alone: list[str] = []
        assert out == _old_walk(obj, alone)
        assert found == alone
        assert out["short"] is short
