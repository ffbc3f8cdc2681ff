"""Many literals looked up in one pass: ``Literals(words).found(text)`` is the set of the indexes
of the words ``text`` holds, ``{i for i, w in enumerate(words) if w in text}``, and ``any_in(text)``
whether it holds one; one Aho-Corasick pass (``ahocorasick_rs``, a maintained Rust library) where
a substring test per word cost a few hundred nanoseconds each. The automaton is built on first use
(a process that never asks pays nothing)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any


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
        return {i for i, _, _ in self._built().find_matches_as_indexes(text, overlapping=True)}

    def any_in(self, text: str) -> bool:
        """Whether ``text`` holds one of the words (any occurrence ends in a match of the automaton)."""
        return bool(self._built().find_matches_as_indexes(text))


class Wanted:
    """Which of a list of rules a text wants run: rule ``i`` wants one of its literals (looked up
    as written, or in the lower-cased text when its flag says so); ``always`` are the bits of the
    rules that run whatever the text holds. ``extra_ci``: more lower-cased literals whose presence
    the caller asks about (the rules' gates)."""

    def __init__(self, needles: list[tuple[frozenset[str], bool]], extra_ci: Iterable[str] = (), *, always: int = 0) -> None:
        self.cs = sorted({n for words, ci in needles if not ci for n in words})
        self.ci = sorted({n for words, ci in needles if ci for n in words} | set(extra_ci))
        self._want_cs = [sum(1 << i for i, (words, ci) in enumerate(needles) if not ci and n in words) for n in self.cs]
        self._want_ci = [sum(1 << i for i, (words, ci) in enumerate(needles) if ci and n in words) for n in self.ci]
        self._cs, self._ci = Literals(self.cs), Literals(self.ci)
        self.always = always

    def present(self, text: str, low: str) -> tuple[set[str], set[str], int]:
        """The literals ``text`` holds (``{n for n in self.cs if n in text}``), those ``low`` holds
        (of ``self.ci``), and the bits of the rules that want one of them, ``always`` with them."""
        live = self.always
        found_cs = self._cs.found(text)
        found_ci = self._ci.found(low)
        for i in found_cs:
            live |= self._want_cs[i]
        for i in found_ci:
            live |= self._want_ci[i]
        return {self.cs[i] for i in found_cs}, {self.ci[i] for i in found_ci}, live
