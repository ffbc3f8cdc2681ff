"""Many literals looked up in one pass: ``Literals(words).found(text)`` is the set of the indexes
of the words ``text`` holds, ``{i for i, w in enumerate(words) if w in text}``, and ``any_in(text)``
whether it holds one; one Aho-Corasick pass (``ahocorasick_rs``, a maintained Rust library) where
a substring test per word cost a few hundred nanoseconds each. The automaton is built on first use
(a process that never asks pays nothing)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from commonkeep.util.regex_literals import required_literals


class Literals:
    __slots__ = ("_automaton", "_lock", "words")

    def __init__(self, words: Iterable[str]) -> None:
        self.words: tuple[str, ...] = tuple(words)
        if not self.words or "" in self.words:
            raise ValueError("literals must be non-empty strings")
        self._automaton: Any = None
        self._lock = threading.Lock()

    def _built(self) -> Any:
        automaton = self._automaton
        if automaton is None:
            with self._lock:
                if self._automaton is None:
                    from ahocorasick_rs import AhoCorasick

                    self._automaton = AhoCorasick(list(self.words))
                automaton = self._automaton
        return automaton

    def found(self, text: str) -> set[int]:
        """The indexes of the words ``text`` holds (every occurrence of every word is seen: overlapping ones too)."""
        try:
            return {i for i, _, _ in self._built().find_matches_as_indexes(text, overlapping=True)}
        except UnicodeError:  # lone surrogates (bytes that were not UTF-8, kept as surrogateescape): a test per word
            return {i for i, w in enumerate(self.words) if w in text}

    def any_in(self, text: str) -> bool:
        """Whether ``text`` holds one of the words (any occurrence ends in a match of the automaton)."""
        try:
            return bool(self._built().find_matches_as_indexes(text))
        except UnicodeError:  # lone surrogates: a test per word
            return any(w in text for w in self.words)


class Wanted:
    """Which of a list of rules a text wants run: rule ``i`` wants one of its literals (looked up
    as written, or in the lower-cased text when its flag says so); ``always`` are the bits of the
    rules that run whatever the text holds. ``extra_ci``: more lower-cased literals whose presence
    the caller asks about (the rules' gates)."""

    def __init__(self, needles: list[tuple[frozenset[str], bool]], extra_ci: Iterable[str] = (), *, always: int = 0,
                 patterns: list[tuple[str, int]] | None = None) -> None:
        bits: tuple[dict[str, int], dict[str, int]] = ({}, {})  # each literal: the rules that want it (as written, lower-cased)
        for i, (words, ci) in enumerate(needles):
            wants = bits[1 if ci else 0]
            for n in words:
                wants[n] = wants.get(n, 0) | 1 << i
        for n in extra_ci:
            bits[1].setdefault(n, 0)
        self.cs, self.ci = sorted(bits[0]), sorted(bits[1])
        self._want_cs = [bits[0][n] for n in self.cs]
        self._want_ci = [bits[1][n] for n in self.ci]
        self._cs, self._ci = Literals(self.cs), Literals(self.ci)
        self.always = always
        self._patterns = patterns
        self._asks = 0
        self._narrow: tuple[Literals | None, list[int], int] | None = None
        # once narrowing is worked out: the lower-cased literals and the patterns' in one automaton, one
        # pass over ``low`` for both (each word: its index in ``ci`` or -1, the patterns that hold it)
        self._joint: tuple[Literals, list[int], list[int], int] | None = None

    def present(self, text: str, low: str) -> tuple[set[str], set[str], int]:
        """The literals ``text`` holds (``{n for n in self.cs if n in text}``), those ``low`` holds
        (of ``self.ci``), and the bits of the rules that want one of them, ``always`` with them."""
        live = self.always
        found_cs = self._cs.found(text)
        for i in found_cs:
            live |= self._want_cs[i]
        joint = self._joint
        if joint is not None and self._patterns is not None and text.isascii():
            finder, ci_index, wants, could = joint
            present_ci: set[str] = set()
            for j in finder.found(low):
                i = ci_index[j]
                if i >= 0:
                    present_ci.add(self.ci[i])
                    live |= self._want_ci[i]
                could |= wants[j]
            return {self.cs[i] for i in found_cs}, present_ci, live & could
        found_ci = self._ci.found(low)
        for i in found_ci:
            live |= self._want_ci[i]
        if self._patterns is not None and live and text.isascii():
            live &= self._could_match(low)
        return {self.cs[i] for i in found_cs}, {self.ci[i] for i in found_ci}, live

    def _could_match(self, low: str) -> int:
        """The bits of the rules whose own pattern could match ``low`` (an ASCII text, lower-cased):
        each pattern's match holds one of its literals (``required_literals``), and a pattern none
        of whose literals the text holds matches nowhere in it, nor in a copy with spans masked
        out. For ASCII text only, where lower-casing is what ``re.IGNORECASE`` folds. Worked out
        after a few asks (parsing every pattern costs a new process ~18 ms)."""
        narrow = self._narrow
        if narrow is None:
            self._asks += 1
            if self._asks <= ASKS_BEFORE_NARROWING or self._patterns is None:
                return -1
            narrow = self._narrow = _narrowing(self._patterns)
            self._joint = _joined(self.ci, narrow)
        finder, wants, free = narrow
        if finder is not None:
            for i in finder.found(low):
                free |= wants[i]
        return free


ASKS_BEFORE_NARROWING = 16
# letters outside ASCII that ``re.IGNORECASE`` matches to an ASCII one (``ı`` to ``i``): a pattern whose
# literals hold one may match an ASCII text that holds none of them as written, so it is never narrowed
# (tests/governance/test_secrets_literal_passes.py checks every letter of the patterns against this)
ASCII_ALIKE = frozenset("\u0131\u017f\u212a\u0130")


def _narrowing(patterns: list[tuple[str, int]]) -> tuple[Literals | None, list[int], int]:
    """An automaton of every pattern's literals, the patterns that want each, and those whose literals are not known."""
    sets = [required_literals(source, flags) for source, flags in patterns]
    sets = [None if found is None or any(not w or any(ch in ASCII_ALIKE for ch in w) for w in found) else found for found in sets]
    words = sorted({w for found in sets if found is not None for w in found})
    free = sum(1 << i for i, found in enumerate(sets) if not found)
    wants = [sum(1 << i for i, found in enumerate(sets) if found is not None and w in found) for w in words]
    return (Literals(words) if words else None), wants, free


def _joined(ci: list[str], narrow: tuple[Literals | None, list[int], int]) -> tuple[Literals, list[int], list[int], int]:
    """One automaton for the lower-cased literals ``ci`` and the narrowing's: each word's index in
    ``ci`` (-1: not one of them) and the patterns that hold it."""
    finder, wants, free = narrow
    words = sorted(set(ci) | set(finder.words if finder is not None else ()))
    where = {w: i for i, w in enumerate(ci)}
    holds = dict(zip(finder.words, wants, strict=True)) if finder is not None else {}
    return Literals(words), [where.get(w, -1) for w in words], [holds.get(w, 0) for w in words], free


class Gated:
    """Tests each gated by words one of which it needs to say yes (``None``: no such words):
    ``any_true(low)`` is ``any(test(low) for test in tests)``, asking only the tests whose words
    ``low`` holds, found in one pass."""

    def __init__(self, tests: list[Callable[[str], bool]], gates: list[tuple[str, ...] | None]) -> None:
        if len(tests) != len(gates):
            raise ValueError("one gate per test")
        words = sorted({w for gate in gates if gate for w in gate})
        self._tests = tests
        self._finder = Literals(words)
        self._want = [sum(1 << i for i, gate in enumerate(gates) if gate and w in gate) for w in words]
        self._free = sum(1 << i for i, gate in enumerate(gates) if not gate)

    def any_true(self, low: str) -> bool:
        bits = self._free
        for i in self._finder.found(low):
            bits |= self._want[i]
        while bits:
            bit = bits & -bits
            bits ^= bit
            if self._tests[bit.bit_length() - 1](low):
                return True
        return False


class Maybe:
    """A module of rules' wide net for the pre-check (``precheck._in_context``): could one of its patterns
    match the lower-cased text? One of its trigger words, then one of its contexts whose words the text
    holds says yes (``Gated``); a text outside ASCII is answered yes where ``outside_ascii`` (patterns
    that read other scripts, whose case folding the words do not follow)."""

    def __init__(self, triggers: Sequence[str], contexts: Mapping[Any, Callable[[str], bool]],
                 words: Mapping[Any, tuple[str, ...] | None], *, outside_ascii: bool) -> None:
        self._trigger = Literals(triggers)
        self._gated = Gated(list(contexts.values()), [words[p] for p in contexts])
        self._outside_ascii = outside_ascii

    def __call__(self, low: str) -> bool:
        if self._outside_ascii and not low.isascii():
            return True
        return self._trigger.any_in(low) and self._gated.any_true(low)

