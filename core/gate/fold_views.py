"""The views of a text the poisoning rules score (``poisoning._assess``), by short ways where a long
one provably changes nothing: ``fold`` skipped for a text it would return as it is, and the rot13
view looked for hints without being built or folded where that is the same.

``_fold_keeps`` and ``_fold_leaves`` say yes only where ``fold(text) == text``; ``_rot13_view`` is
the folded rot13 wherever that view holds a hint (``_rot13_hint``), the folded text itself where it
holds none, so it is not scored. ``tests/governance/test_poisoning_short_ways.py`` holds them to the
long ways.
"""

from __future__ import annotations

import re
from typing import Any

from commonkeep.util.normalize import _B64, _SPLIT, _b64, _hex, fold, rot13

# words one of the high-risk families needs: the rot13 view of a text is scored only when it holds
# one (substrings of the lower-cased text, looked up in one pass; a case-insensitive regex of 24
# alternatives cost ~10 us a text)
_ROT13_HINTS = ("ignor", "disregard", "forget", "overrid", "instruction", "prompt", "system", "previous", "prior", "reveal",
                "secret", "password", "token", "credential", "you are", "pretend", "developer", "jailbr", "obey", "tell",
                "send", "upload", "priority", "admin")


# a run of 16 characters a hex or base64 run is made of: without one, ``fold`` decodes neither
_RUN16 = re.compile(r"[A-Za-z0-9+/_=-]{16}")


def _fold_keeps(text: str) -> bool:
    """True only where ``fold(text) == text``: ASCII text (nothing to drop, normalise or fold) with no
    letters split by a separator, no entity, percent or backslash escape, and no run a hex or base64
    decoding could read, so each of ``fold``'s steps leaves it as it is (asked of the text and of
    its rot13 view: a third of the texts a host captures, a fold of ~10 µs each)."""
    return (text.isascii() and "&" not in text and "%" not in text and "\\" not in text
            and _RUN16.search(text) is None and _SPLIT.search(text) is None)


def _rot13_hint(text: str) -> bool:
    """``any(h in text.lower() for h in _ROT13_HINTS)``, in one pass (``_Words``)."""
    return _ROT13_FINDER.any_in(text.lower())


class _Words:
    """``any(w in text for w in words)`` in one Aho-Corasick pass (``ahocorasick_rs``, as ``prefilter``;
    built on first use). Not ``secrets.literals``: scoring does not import the secret rules."""

    __slots__ = ("_automaton", "words")

    def __init__(self, words: tuple[str, ...]) -> None:
        self.words = words
        self._automaton: Any = None

    def any_in(self, text: str) -> bool:
        if self._automaton is None:
            from ahocorasick_rs import AhoCorasick

            self._automaton = AhoCorasick(list(self.words))
        try:
            return bool(self._automaton.find_matches_as_indexes(text))
        except UnicodeError:  # lone surrogates (bytes that were not UTF-8): a test per word
            return any(w in text for w in self.words)


_ROT13_FINDER = _Words(_ROT13_HINTS)
# what ``fold``'s decoding does to a run of hex digits or of base64 characters: ``True`` when it leaves it
# as written (a path, a hash, a random token: nearly all); paths and ids repeat, so the answer is kept
_HEX_KEPT: dict[str, bool] = {}
_B64_KEPT: dict[str, bool] = {}


def _fold_leaves(text: str) -> bool:
    """True only where ``fold(text) == text``, for texts ``_fold_keeps`` leaves to ``fold`` because of a
    run of 16 (paths, URLs, hashes): an ASCII text with no letters split by a separator and no entity,
    percent or backslash escape (``_plain_shape``), each of whose hex and base64 runs ``fold``'s
    decoding leaves as written (``_runs_kept``). Its first round then changes nothing (``_collapse``
    finds nothing to join; ``decode_layers`` replaces each run by itself), so ``fold`` returns it."""
    return _plain_shape(text) and _runs_kept(text)


def _plain_shape(text: str) -> bool:
    return (text.isascii() and "&" not in text and "\\" not in text and text.count("%") < 3
            and _SPLIT.search(text) is None)


# ``normalize._HEX``'s matches are the maximal runs of hex digits of an even length of 16 or more:
# found as the maximal runs of 16 or more, the odd ones left out (half the time of its look-arounds)
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{16,}")


def _runs_kept(text: str) -> bool:
    """Whether ``fold``'s decoding leaves each hex and base64 run of ``text`` as written."""
    for m in _HEX_RUN.finditer(text):
        run = m.group(0)
        if len(run) % 2 == 0 and not _kept(_HEX_KEPT, run, m, _hex):
            return False
    return all(_kept(_B64_KEPT, m.group(0), m, _b64) for m in _B64.finditer(text))


def _kept(memo: dict[str, bool], run: str, m: re.Match[str], decode: Any) -> bool:
    same = memo.get(run)
    if same is None:
        if len(memo) >= 8192:  # texts of every kind: keep it bounded
            memo.clear()
        same = memo[run] = decode(m) == run
    return same


# the hints as rot13 writes them: ``h in rot13(t).lower()`` is ``rot13(h) in t.lower()`` for an ASCII ``t``
_ROT13_WRITTEN = _Words(tuple(rot13(h) for h in _ROT13_HINTS))


def _rot13_view(folded: str, keeps: bool, leaves: bool) -> str:
    """The rot13 view ``_assess`` scores: ``rot13(folded)``, folded unless ``fold`` would leave it as it
    is; ``folded`` itself where that view holds no hint (``_rot13_hint``), so it is not scored.

    rot13 changes ASCII letters into ASCII letters and nothing else: what ``_fold_keeps`` and
    ``_plain_shape`` read of an ASCII text (its other characters, its runs of letters, digits and
    base64 characters, letters split by a separator) is the same in its rot13, so a text ``fold``
    keeps has a rot13 ``fold`` keeps too (only hex runs differ: ``_runs_kept`` reads them)."""
    if keeps:  # ``folded`` is the text, and its rot13 keeps too: the hints are looked up in the text
        return rot13(folded) if _ROT13_WRITTEN.any_in(folded.lower()) else folded
    flipped = rot13(folded)
    if leaves and _runs_kept(flipped):
        return flipped
    return flipped if _fold_keeps(flipped) or _fold_leaves(flipped) else fold(flipped)
