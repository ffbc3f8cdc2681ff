"""One pass over a text for the literals of every poisoning rule at once.

Each ``poisoning.Rule`` knows the lower-cased literals one of which every match of its pattern
holds (``poisoning_literals``). Asking rule by rule meant some seventy substring searches per rule
and thirteen rules per text, twice or three times per candidate (as written, with leetspeak undone,
as rot13): about 150 µs of a capture's 580. Here the literals of all the rules are one
Aho-Corasick automaton (``ahocorasick_rs``, a maintained Rust library); one pass over the
lower-cased text gives the set of rules that could match (a bit per rule), and a rule whose bit
is not set skips its regular expression exactly as before: the answer is the same, only found
once for all rules.

The last text asked about is remembered (the rules ask about one text in turn), as one tuple so
that a thread never sees one text's answer beside another's text.
"""

from __future__ import annotations

import threading
from typing import Any

_LOCK = threading.Lock()
# (automaton, the bit mask of each of its patterns, the bits always set) or None: built on first use
_BUILT: tuple[Any, list[int], int] | None = None
_LAST: tuple[str, int, object] = ("\x00", 0, None)  # the last text, the rules it could match, by which automaton
_SOURCES: list[frozenset[str] | None] = []  # the literals of each rule registered, by its bit


def register(literals: frozenset[str] | None) -> int:
    """A new rule's bit; ``literals`` ``None`` (not known yet) leaves the rule out until ``known``."""
    global _BUILT
    with _LOCK:
        bit = len(_SOURCES)
        _SOURCES.append(literals)
        _BUILT = None
    return bit


def register_many(sources: list[frozenset[str] | None]) -> int:
    """Consecutive bits for several literal sets (the alternatives of one rule); returns the first."""
    global _BUILT
    with _LOCK:
        first = len(_SOURCES)
        _SOURCES.extend(sources)
        _BUILT = None
    return first


def known(bit: int, literals: frozenset[str] | None) -> None:
    """The literals of rule ``bit`` were worked out (``None``: no set is known; it always runs)."""
    global _BUILT
    with _LOCK:
        _SOURCES[bit] = literals
        _BUILT = None


def covers(bit: int) -> bool:
    """Whether rule ``bit`` is in the automaton (its literals are known)."""
    return _SOURCES[bit] is not None


def _build(sources: list[frozenset[str] | None]) -> tuple[Any, list[int], int]:
    from ahocorasick_rs import AhoCorasick

    masks: dict[str, int] = {}
    always = 0
    for bit, literals in enumerate(sources):
        if literals is None:
            continue
        if "" in literals:  # a rule that holds the empty literal may match any text
            always |= 1 << bit
        for lit in literals:
            if lit:
                masks[lit] = masks.get(lit, 0) | (1 << bit)
    patterns = list(masks)
    return AhoCorasick(patterns), [masks[p] for p in patterns], always


def possible(text: str) -> int:
    """The bits of the rules whose literals ``text`` holds (lower-cased, overlapping matches)."""
    global _BUILT, _LAST
    last, built = _LAST, _BUILT
    if built is not None and last[2] is built and (last[0] is text or last[0] == text):
        return last[1]
    if built is None:
        with _LOCK:
            built = _BUILT = _build(list(_SOURCES))
    automaton, masks, mask = built
    for index, _start, _end in automaton.find_matches_as_indexes(text.lower(), overlapping=True):
        mask |= masks[index]
    _LAST = (text, mask, built)
    return mask
