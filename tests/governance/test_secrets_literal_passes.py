"""The secret rules' literal look-ups done in one Aho-Corasick pass give exactly what the
substring tests they replace gave (``rules._present``, ``public._gates``), on the generated
corpora (every kind planted, the benign public data), the benchmark's texts and generated ones."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.bench import secrets_templates
from commonkeep.bench.capture import WORKLOADS
from commonkeep.secrets import (
    asides,
    context,
    flags,
    literals,
    named,
    places,
    precheck,
    public,
    rules,
    services,
)
from commonkeep.secrets.literals import Literals


def _texts() -> list[str]:
    texts = [text for _, text, _ in secrets_templates.planted(2, 5)] + secrets_templates.benign(600, 5)
    for name in ("mixed", "tokens"):
        texts += [text for text, _ in WORKLOADS[name](300, 5)]
    return texts + [t.upper() for t in texts] + [t.lower() for t in texts]


def _want_present(text: str) -> tuple[set[str], set[str], int]:
    low = text.lower()
    cs = {n for n in rules._ALL_CS if n in text}
    ci = {n for n in rules._ALL_CI if n in low}
    live = 0
    for i, (kind, _, needles, fold_case, _, _) in enumerate(rules._PLAN):
        if kind == "hex_key" or not needles.isdisjoint(ci if fold_case else cs):
            live |= 1 << i
    return cs, ci, live


def _want_gates(text: str) -> int:
    low = text.lower()
    return sum(1 << i for i, (literals, _, _) in enumerate(public._GATED) if any(w in low for w in literals))


def _same(text: str) -> None:
    wanted = rules._WANTED
    patterns, wanted._patterns = wanted._patterns, None  # the literals of the rules' kinds alone (narrowing: below)
    try:
        assert wanted.present(text, text.lower()) == _want_present(text), text
    finally:
        wanted._patterns = patterns
    assert public._gates(text.lower()) == _want_gates(text), text


def test_the_corpora() -> None:
    for text in _texts():
        _same(text)


_PIECES = sorted(set(rules._ALL_CS) | set(rules._ALL_CI) | {w for literals, _, _ in public._GATED for w in literals})


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=5)), max_size=12), st.sampled_from(["", " ", "=", "\n"]))
def test_generated_texts(pieces: list[str], sep: str) -> None:
    _same(sep.join(pieces))


def _language(pattern: str) -> set[str]:
    """Every string a pattern of literals, alternations and one-character sets matches."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]

    def seq(items: Any) -> set[str]:
        out = {""}
        for op, av in items:
            if op is c.LITERAL:
                opts = {chr(av)}
            elif op is c.IN:
                assert all(o is c.LITERAL for o, _ in av), av
                opts = {chr(v) for _, v in av}
            elif op is c.BRANCH:
                opts = set().union(*(seq(a) for a in av[1]))
            elif op is c.SUBPATTERN:
                opts = seq(av[-1])
            else:
                raise AssertionError(op)
            out = {a + b for a in out for b in opts}
        return out

    return seq(parser.parse(pattern))


def test_the_words_are_the_expressions() -> None:
    assert _language(precheck._PREFIXES.pattern) == set(precheck.PREFIX_WORDS)
    trigger = re.compile("|".join(re.escape(w) for w in context.TRIGGER_WORDS))
    for text in _texts():
        assert precheck._PREFIX_FINDER.any_in(text) == (precheck._PREFIXES.search(text) is not None), text
        low = text.lower()
        assert context._TRIGGER.any_in(low) == (trigger.search(low) is not None), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=8, unique=True), st.text(max_size=40))
def test_literals_found_are_the_substring_tests(words: list[str], text: str) -> None:
    finder = Literals(words)
    haystack = text + "".join(words[::2]) + text[::-1]
    assert finder.found(haystack) == {i for i, w in enumerate(words) if w in haystack}
    assert finder.any_in(text) == any(w in text for w in words)


def _find_both(text: str) -> None:
    wanted = rules._WANTED
    wanted._asks = 10**6  # narrowed from the first ask
    narrowed = rules.find(text)
    patterns, wanted._patterns = wanted._patterns, None
    try:
        whole = rules.find(text)
    finally:
        wanted._patterns = patterns
    assert narrowed == whole, text


def test_find_narrowed_by_each_patterns_literals_finds_the_same() -> None:
    for text in _texts():
        _find_both(text)
        _find_both(text.replace(" ", "\n"))


_PATTERN_PIECES = sorted({w for source_flags in rules._WANTED._patterns or () for w in
                          (literals.required_literals(*source_flags) or ())} | set(_PIECES))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PATTERN_PIECES), st.sampled_from(["=", ":", " ", "\"", "'", "-", "--", "/", "@", "://"]),
                          st.text(st.characters(max_codepoint=127), max_size=24)), max_size=14))
def test_generated_ascii_texts_find_the_same(pieces: list[str]) -> None:
    _find_both("".join(pieces))


def test_no_letter_outside_ascii_in_a_pattern_matches_an_ascii_one() -> None:
    """The premise of narrowing ASCII text only (``literals.Wanted._could_match``)."""
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]

    def codes(items: Any) -> set[int]:
        out: set[int] = set()
        for op, av in items:
            if op is c.LITERAL:
                out.add(av)
            elif isinstance(av, (list, tuple)):
                for x in av:
                    if isinstance(x, parser.SubPattern):
                        out |= codes(x)
                    elif isinstance(x, (list, tuple)):
                        out |= codes([y for y in x if isinstance(y, tuple) and len(y) == 2]) if all(
                            isinstance(y, tuple) for y in x) else set().union(*(codes(y) for y in x if isinstance(y, parser.SubPattern)))
            if isinstance(av, parser.SubPattern):
                out |= codes(av)
        return out

    odd = set()
    for source, re_flags in rules._WANTED._patterns or ():
        for code in codes(parser.parse(source, re_flags)):
            if code > 127 and any(re.fullmatch(re.escape(chr(code)), chr(a), re_flags | re.I) for a in range(128)):
                odd.add(chr(code))
    assert odd <= literals.ASCII_ALIKE
    assert all(any(re.fullmatch(re.escape(ch), chr(a), re.I) for a in range(128)) for ch in literals.ASCII_ALIKE)


_OLD_CONTEXTS = {  # the contexts as they were before their words were looked up first
    context._SECRET_NAME: lambda low: ("=" in low or ":" in low) and context._SECRET_NAME_CONTEXT.search(low) is not None,
    context._KEY_PROSE: lambda low: context._KEYISH.search(low) is not None and context._LONG_VALUE.search(low) is not None,
    context._PROSE_OTHER: lambda low: any(w in low for w in context._PW_LITERALS),
    named._SET_LINE: lambda low: ("env" in low or "set" in low) and named._SET_CONTEXT.search(low) is not None,
    named.PROSE_QUOTED: lambda low: any(q in low for q in named._QUOTES) and named._PROSE_CONTEXT.search(low) is not None,
}


def _contexts_same(low: str) -> None:
    for pattern, old in _OLD_CONTEXTS.items():
        new = context.CONTEXTS.get(pattern) or named.CONTEXTS[pattern]
        assert bool(new(low)) == bool(old(low)), (pattern.pattern[:40], low)


def test_the_contexts_looking_words_up_first_say_the_same() -> None:
    for text in _texts():
        _contexts_same(text.lower())


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PATTERN_PIECES + list(context._PW_LITERALS) + ["secret_key", "api-token", "setenv",
                                                                                             "“", "«", "‘", "key ", "=", ": "]),
                          st.text(max_size=12)), max_size=12))
def test_generated_texts_the_contexts_say_the_same(pieces: list[str]) -> None:
    _contexts_same("".join(pieces).lower())


def test_public_spans_remembered_for_the_last_text_are_its_spans() -> None:
    texts = _texts()[:400]
    for a, b in zip(texts, texts[1:], strict=False):
        for text in (a, a, b, a):
            got = public.spans(text)
            assert got == public._spans(text)
            got.append((0, 0))  # the caller's list is its own
            assert public.spans(text) == public._spans(text)


def test_strings_worth_scanning_joined_are_worth_scanning() -> None:
    from commonkeep.secrets import provider

    texts = [t for t in _texts() if provider.worth_scanning(t)]
    for i in range(0, len(texts) - 3, 3):
        parts = texts[i:i + 3]
        assert provider._worth_scanning("\n".join(parts))
        assert provider._worth_scanning("\n".join(parts[:1]))
    for part in ("a1b2c3d4e5f6", "X" * 5 + "y7" * 4, "token0123456789ab"):
        assert provider.worth_scanning(part) == provider._worth_scanning("\n".join([part]))


def test_the_two_rule_sets_share_one_literal_finder() -> None:
    """The poisoning rules and the secret rules find their literals with one function, kept below
    both (``util.regex_literals``): neither imports the other (the secrets package would cost every
    process that scores ~15 ms)."""
    from commonkeep.gate import literal_rule
    from commonkeep.util import regex_literals

    assert literal_rule._required_literals is regex_literals.required_literals is literals.required_literals


def test_scoring_does_not_import_the_secret_rules() -> None:
    import subprocess
    import sys

    code = "import sys, commonkeep.gate.autoapply; print('commonkeep.secrets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_text_with_lone_surrogates() -> None:
    """Bytes that are not UTF-8 reach the gate as lone surrogates (``surrogateescape``), which the
    automaton cannot read: the words are then looked up one by one."""
    words = ["key", "token", "\udcff"]
    finder = Literals(words)
    for text in ("api key \udcff\udcfe", "plain \udc80 text", "token=\udcffabc"):
        assert finder.found(text) == {i for i, w in enumerate(words) if w in text}
        assert finder.any_in(text) == any(w in text for w in words)
        rules.find(text)
        _same(text)


def _conjunct_words(module: Any, body: Any) -> list[set[str] | None]:
    """The words one of which each ``and``-ed condition of a context's code needs (``None``: not such a test)."""
    import ast

    def words(node: Any) -> set[str] | None:
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)
                and isinstance(node.left, ast.Constant) and isinstance(node.left.value, str)
                and isinstance(node.comparators[0], ast.Name) and node.comparators[0].id == "low"):
            return {node.left.value}
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            parts = [words(v) for v in node.values]
            return None if any(p is None for p in parts) else set().union(*parts)  # type: ignore[arg-type]
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "any_in"
                and isinstance(node.func.value, ast.Name) and [getattr(a, "id", None) for a in node.args] == ["low"]):
            return set(getattr(module, node.func.value.id).words)
        return None

    conjuncts = body.values if isinstance(body, ast.BoolOp) and isinstance(body.op, ast.And) else [body]
    return [words(c) for c in conjuncts]


def test_each_contexts_words_are_one_of_its_conditions() -> None:
    """``CONTEXT_WORDS`` lets ``maybe`` skip a context whose words the text lacks: each must be the
    words of one of the conditions the context's own code ``and``s (so it cannot say yes without one)."""
    import ast
    import inspect

    for module in (context, named, places, flags, services, asides):
        tree = ast.parse(inspect.getsource(module))
        table = next(n.value for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) and isinstance(n.value, ast.Dict)
                     and ast.unparse(n.target) == "CONTEXTS")
        assert isinstance(table, ast.Dict)
        assert len(table.keys) == len(module.CONTEXTS) == len(module.CONTEXT_WORDS)
        for key, value in zip(table.keys, table.values, strict=True):
            assert isinstance(key, ast.Name) and isinstance(value, ast.Lambda)
            gate = module.CONTEXT_WORDS[getattr(module, key.id)]
            if gate is not None:
                assert set(gate) in _conjunct_words(module, value.body), (module.__name__, key.id, gate)


def _old_maybe(low: str) -> tuple[bool, bool]:
    ctx = (not low.isascii() or context.CARD_DIGITS.search(low) is not None
           or (any(w in low for w in context.TRIGGER_WORDS) and any(c(low) for c in context.CONTEXTS.values())))
    nam = (("%3d" in low and any(w in low for w in ("pass", "pw", "secret", "key", "token", "credential")))
           or any(c(low) for p, c in named._MAYBE.items() if p is not named._ENCODED))
    return bool(ctx), bool(nam)


def test_maybe_asks_the_code_pattern_itself_after_its_context() -> None:
    """``named.maybe`` asks ``_CODE``'s own pattern where its context (``\\bpin\\b`` …) says yes: never no
    where the pattern matches, and no to "pin the version" (which cost ``rules.find`` a whole pass)."""
    test = named._MAYBE[named._CODE]
    for text in [*_texts(), "Pin requests==2.24.0: newer releases break the import", "The PIN is 4921.", "pin code: 0000-1234"]:
        low = text.lower()
        if named._CODE.search(low) is not None:
            assert test(low), text
    assert not test("pin requests==2.24.0: newer releases break the import")
    assert test("the pin is 4921.") and test("pin code: 0000-1234")


def test_maybe_asking_only_the_gated_contexts_says_the_same() -> None:
    for text in _texts():
        low = text.lower()
        assert (context.maybe(low), named.maybe(low)) == _old_maybe(low), text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(sorted({w for m in (context, named) for g in m.CONTEXT_WORDS.values() for w in g or ()})
                                          + ["=", ":", "(", "|", " as ", " to ", "-", "a" * 20]),
                          st.text(st.characters(max_codepoint=127), max_size=10)), max_size=12))
def test_generated_texts_maybe_says_the_same(pieces: list[str]) -> None:
    low = "".join(pieces).lower()
    assert (context.maybe(low), named.maybe(low)) == _old_maybe(low)
