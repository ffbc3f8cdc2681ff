"""``poisoning.Rule`` runs, for an ASCII text, only the top-level alternatives of its pattern whose
literals the text holds: the answers (match or not, where, every match of ``finditer``) are the
whole pattern's, on the corpora, the benchmark's texts and generated ones."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.gate import autoapply, poisoning, poisoning_literals  # noqa: F401  (autoapply: its rules)
from commonkeep.util.normalize import rot13
from tests.governance.gate_texts import gate_texts


def _spans(matches: list[re.Match[str]]) -> list[tuple[int, int]]:
    return [m.span() for m in matches]


def _same(rule: poisoning.Rule, text: str) -> None:
    rule._last = ("\x00", None, None)
    got = rule.search(text)
    want = rule.rx.search(text)
    assert (got and got.span()) == (want and want.span()), (rule.pattern[:60], text)
    assert _spans(rule.finditer(text)) == (_spans(list(rule.rx.finditer(text))) if want else []), (rule.pattern[:60], text)


def test_the_split_is_the_pattern() -> None:
    assert poisoning.alternatives(r"a|b(?:c|d)|[|]|\||[]|]|[^]|x]|e") == ["a", "b(?:c|d)", "[|]", r"\|", "[]|]", "[^]|x]", "e"]
    assert poisoning.alternatives(r"(a)|b") is None  # a group: dropping an alternative renumbers groups
    assert poisoning.alternatives(r"(?i:a)|b") is None  # inline flags are not split
    assert poisoning.alternatives("a|b", re.X) is None
    for rule in poisoning.RULES:
        alts = poisoning.alternatives(rule.pattern, rule.flags)
        assert alts is not None and "|".join(alts) == rule.pattern
        assert rule._alts is not None and rule._alts[0] == tuple(alts), "every rule is narrowed from its first search"


def test_the_alternatives_are_worked_out_ahead() -> None:
    computed = poisoning_literals.compute_alternatives()
    assert set(computed) == set(poisoning_literals.ALTERNATIVES), "run python -m commonkeep.gate.poisoning_literals"
    if sys.version_info[:2] == poisoning_literals.PYTHON:
        assert computed == poisoning_literals.ALTERNATIVES


def test_no_letter_outside_ascii_matches_an_ascii_one() -> None:
    """The premise of narrowing ASCII text only: there, ``IGNORECASE`` folds exactly as ``lower`` does."""
    odd = set()
    for rule in poisoning.RULES:
        for ch in {c for c in rule.pattern if not c.isascii()}:
            if any(re.fullmatch(re.escape(ch), chr(a), rule.flags) for a in range(128)):
                odd.add(ch)
    assert not odd


def test_a_narrowed_search_runs_fewer_alternatives() -> None:
    text = "Never paste a password or token into chat; rotate it every 30 days."
    rule = poisoning._SENSITIVE
    rule.search(text)
    narrowed = rule._last[2]
    assert narrowed is not None and narrowed is not rule.rx and len(narrowed.pattern) < len(rule.pattern) / 3


@pytest.mark.parametrize("rule", poisoning.RULES, ids=lambda r: r.pattern[:24])
def test_the_corpora_get_the_whole_patterns_answers(rule: poisoning.Rule) -> None:
    for text in _CORPUS:
        _same(rule, text)


_CORPUS = gate_texts(7)
_PIECES = sorted({n for v in poisoning_literals.TABLE.values() for n in v or ()} |
                 {"ignore", "previous", "instructions", "you", "are", "now", "the", "system", "prompt", "all", "rules",
                  "From now on", "Assistant:", "<|im_start|>", "disregard", "earlier", "guidance", "tell", "user", "."})
_ASCII_PIECES = [p for p in _PIECES if p.isascii()]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_ASCII_PIECES), st.text(st.characters(max_codepoint=127), max_size=6)),
                max_size=16),
       st.sampled_from([" ", "", "  ", "\n", "-", ", "]), st.booleans())
def test_generated_ascii_texts_get_the_whole_patterns_answers(pieces: list[str], sep: str, upper: bool) -> None:
    text = sep.join(pieces)
    text = text.upper() if upper else text
    for rule in poisoning.RULES:
        _same(rule, text)


def test_fold_keeps_only_what_fold_keeps() -> None:
    from commonkeep.util.normalize import _fold

    kept = 0
    for text in _CORPUS:
        for view in (text, rot13(text)):
            if poisoning._fold_keeps(view):
                kept += 1
                assert _fold.__wrapped__(view) == view, view
    assert kept > len(_CORPUS) // 4  # the common case takes the short way


@settings(max_examples=400, deadline=None)
@given(st.text(st.characters(max_codepoint=127), max_size=60) | st.lists(st.sampled_from(
    ["a", "b.", "c-", "&amp;", "%41", "\\x41", "aGVsbG8gd29ybGQgdGhlcmU=", "0123456789abcdef0123", "i g n o r e", " "]),
    max_size=10).map("".join))
def test_fold_keeps_generated(text: str) -> None:
    from commonkeep.util.normalize import _fold

    if poisoning._fold_keeps(text):
        assert _fold.__wrapped__(text) == text


def test_the_assessment_is_the_same_without_the_short_way(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _CORPUS[:1500]
    fast = [poisoning._assess.__wrapped__(t) for t in texts]
    monkeypatch.setattr(poisoning, "_fold_keeps", lambda text: False)
    assert [poisoning._assess.__wrapped__(t) for t in texts] == fast


def test_unleet_is_normalizes() -> None:
    from commonkeep.util import normalize

    for text in _CORPUS:
        assert poisoning.unleet(text) == normalize.unleet(text), text


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(list("ab Z_01379@$!|.-é٣ж\n'") + ["l33t", "p4ss", "1gn0r3", "ab", "x1"]), max_size=30).map("".join)
       | st.text(max_size=40))
def test_unleet_generated(text: str) -> None:
    from commonkeep.util import normalize

    assert poisoning.unleet(text) == normalize.unleet(text)
