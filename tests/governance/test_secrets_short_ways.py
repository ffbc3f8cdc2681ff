"""The secret gate's short ways give the long ways' answers: ``context.card_digits`` is the card
pre-check's search, the pre-check's runs cut out with ``bytes.translate`` are its expressions' matches,
the public structures searched only where their first words stand are the whole searches, and
``redact_obj`` walks an object as before (short strings kept, the rest redacted, split tokens found)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.bench.capture import WORKLOADS
from commonkeep.secrets import (
    _redact_cached,
    _redact_uncached,
    context,
    precheck,
    public,
    redact_obj,
    runs,
    structure,
)

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


def _run_by_regex(part: str, low: str, exact: bool) -> bool:
    """``precheck._run`` as its expressions read a piece of text (before the runs were cut out)."""
    for m in runs._HEX_RUN.finditer(part):
        run = m.group(0)
        if len(run) >= 48 or (len(run) >= 32 and any(w in low for w in runs._HEX_WORDS)) or runs._readable(run):
            return True
    if ("_" in part or "-" in part) and runs._PREFIXED_HEX.search(part):
        return True
    for m in runs._TOKEN_RUN.finditer(part):
        run = m.group(0)
        if run != run.lower() and runs._RANDOM_HINT.search(run) and (not exact or runs.random_parts(run)):
            return True
    return any(runs._readable(m.group(0)) for m in runs._B64_RUN.finditer(part))


_RUNNY = ["0123456789abcdef" * 2, "deadBEEF", "aGVsbG8gd29ybGQgc2VjcmV0", "=", "==", "===", "+", "/", "_", "-", ".", ":", "x",
          "Zq8", "cGFzc3dvcmQ9aHVudGVyMg", "_0123456789abcdef0123456789abcdef"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_RUNNY) | st.text(alphabet="aZ09+/=_-.:!", max_size=8), min_size=1, max_size=12).map("".join),
       st.sampled_from(["", "the api key"]), st.booleans())
def test_runs_cut_out_are_the_expressions_matches(part: str, low: str, exact: bool) -> None:
    assert runs._run(part, low, exact) == _run_by_regex(part, low, exact)


def test_runs_on_the_workloads() -> None:
    for name in ("mixed", "tokens"):
        for text, _ in WORKLOADS[name](600, 3):
            for part in text.split():
                if len(part) >= 16 and part.isascii():
                    for exact in (False, True):
                        assert runs._run(part, text.lower(), exact) == _run_by_regex(part, text.lower(), exact), part


_STARTY = ["sha", "SHA256:", "md5=", "h1:", "zh:", "blake2b-", "crc32c:", "hash=", "checksum: ", "digest ", "sum=", "sha256sum ",
           "Fingerprint: ", "gpg: ", "RSA key ", "key ID ", "://", "https://", "WWW.", "www.", "git+ssh://", "_x://", "a.b-c+d://",
           "é://", "'", '"', "0123456789abcdef", "Co0G0Q/RMpfAjJH4ZBRY=", "@", "?", "&", "#"]


def _matches(found: Any) -> list[tuple[tuple[int, int], dict[str, Any]]]:
    return [(m.span(), m.groupdict()) for m in found]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_STARTY) | st.text(alphabet="aZf09+/=_-.: \n\"'", max_size=10), max_size=10).map("".join))
def test_public_structures_searched_where_they_can_start(text: str) -> None:
    low = text.lower()
    for rx in public._STARTS:
        assert _matches(public._finditer(rx, text, low)) == _matches(rx.finditer(text)), rx.pattern
    assert _matches(public._urls(text)) == _matches(public._URL.finditer(text))
    for seg in re.split(r"[/?&#=\s]", text):  # a URL's segments: its body holds no white space
        assert seg.lower().endswith(public._SECRET_ENDINGS) == (public._SECRET_SEGMENT.search(seg) is not None), seg


def test_public_structures_on_the_workloads() -> None:
    for name in ("mixed", "tokens"):
        for text, _ in WORKLOADS[name](600, 3):
            low = text.lower()
            for rx in public._STARTS:
                assert _matches(public._finditer(rx, text, low)) == _matches(rx.finditer(text)), text
            assert _matches(public._urls(text)) == _matches(public._URL.finditer(text)), text


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


def test_a_tuple_from_a_python_caller_is_walked_too() -> None:
    """A host's provenance built in Python may hold a tuple; JSON writes it as a list, so its strings
    are redacted as a list's are (they were kept as they were before)."""
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    found: list[str] = []
    out = redact_obj({"provenance": {"tool_args": ("--token", token), "deep": [("x", (token,))]}}, found)
    assert out == {"provenance": {"tool_args": ("--token", "[REDACTED:github_token]"), "deep": [("x", ("[REDACTED:github_token]",))]}}
    assert found == ["github_token", "github_token"]


def _bare_secrets() -> list[str]:
    """Secrets only the last rules find (no word, prefix or place around them): random runs of each
    shape, base64 that decodes to text (at the shortest the rule reads, 16 characters), card numbers
    and a seed phrase. Values generated here, seeded."""
    import base64
    import random
    import string

    rng = random.Random(37)
    alnum = string.ascii_letters + string.digits
    out = []
    for n in (20, 24, 32, 40):
        out += ["".join(rng.choice(alnum) for _ in range(n)) for _ in range(3)]
    out += ["".join(rng.choice("0123456789abcdef") for _ in range(48)) for _ in range(2)]
    out.append(base64.b64encode(b"password=hunter22x").decode())  # readable text, encoded
    out.append(base64.b64encode(b"pw: hunter22").decode())  # 16 characters: the shortest run the rule reads
    out += ["card 3545807302157361 exp 12/29 cvv 123", "Visa 3545 8073 0215 7361, expires 12/29, CVC 123"]
    english = sorted(structure.word_lists()[0])  # one list's words (a phrase mixes no lists)
    out.append(" ".join(rng.sample(english, 12)))
    return out


def test_the_pre_check_lets_through_what_only_the_last_rules_find() -> None:
    """The runs, the card numbers and the seed phrases: the pre-check's own tests of them (not a
    rule's literal) must say yes wherever ``find`` claims something, alone and inside a sentence."""
    from commonkeep.secrets import rules

    for secret in _bare_secrets():
        for text in (secret, f"the value is {secret} for now", f"{secret}\nnext line"):
            assert rules.find(text), text
            assert precheck.needs_scan(text), text


def test_the_pre_check_s_seed_phrase_test_is_the_structure_s() -> None:
    words = sorted(w.decode() for w in structure.ascii_words())[:40]
    for n_list in range(6, 11):  # eight words of a list at the least, twelve words in all
        for n_all in (11, 12, 13):
            plain = words[:n_list] + ["zzqx"] * max(0, n_all - n_list)
            low = " ".join(plain)
            assert runs._seedlike(runs._words(low)) == structure.seedlike(low), (n_list, n_all)


def test_the_shortest_seed_phrase_is_worked_out_from_the_lists() -> None:
    shortest = min(len(w) for wl in structure.word_lists() for w in wl)
    assert structure.SEED_LENGTHS[0] * (shortest + 1) - 1 == runs.SEED_CHARS
