"""A regular expression with a literal prefilter, as the poisoning and policy rules use it.

Each ``Rule`` knows the lower-cased literals one of which every match of its pattern holds
(worked out from the pattern's parse tree, or ahead in ``poisoning_literals``), and asks the
one Aho-Corasick pass of ``prefilter`` whether a text holds one; a text that holds none never
runs the expression. For an ASCII text it runs only the top-level alternatives of the pattern
whose own literals the text holds (``Rule._narrowed``): the same matches, found sooner.
"""

from __future__ import annotations

import re

from commonkeep.gate import prefilter
from commonkeep.gate.prefilter import possible
from commonkeep.util.regex_literals import required_literals as _required_literals

_ASKS_BEFORE_NEEDLES = 16  # searches of a rule before its required literals are worked out
RULES: list[Rule] = []  # every rule made (``poisoning_literals`` works out their literals ahead)


class Rule:
    """A rule with a literal prefilter: the substrings one of which every match must hold (derived
    from the pattern's parse tree), so most texts skip the regular expression entirely. Both are
    worked out when needed, not at import (the rules cost a new process ~25 ms to compile, and a
    text that holds none of a rule's literals never needs its regular expression); the literals
    only after a rule's first searches, since finding them parses the pattern a second time, which
    a process that checks one candidate (``review --approve``) does not earn back."""

    def __init__(self, pattern: str, flags: int = re.I) -> None:
        self.pattern, self.flags = pattern, flags
        self._rx: re.Pattern[str] | None = None
        self._needles: tuple[frozenset[str] | None] | None = None
        self._asked = 0
        self._filtered = False  # the literals are known (not ``None``): ``search`` asks the prefilter
        # the scoring and the policy ask about one text in turn: (text, match, the expression that ran)
        self._last: tuple[str, re.Match[str] | None, re.Pattern[str] | None] = ("\x00", None, None)
        # the alternatives of the pattern with the bit of the first (``_narrowed``), once their literals are known
        self._alts: tuple[tuple[str, ...], int, int, int] | None = None
        self._narrow: dict[int, re.Pattern[str]] = {}
        RULES.append(self)
        from commonkeep.gate.poisoning_literals import ALTERNATIVES, TABLE, key

        k = key(pattern, flags)
        if k in TABLE:  # worked out before (``poisoning_literals``)
            known = TABLE[k]
            self._needles = (frozenset(known) if known is not None else None,)
            self._asked = _ASKS_BEFORE_NEEDLES  # the literals cost nothing now: use them from the first search
            self._filtered = known is not None
        self._bit = prefilter.register(self._needles[0] if self._needles is not None else None)
        if k in ALTERNATIVES and self._needles is not None:
            self._known_alternatives(ALTERNATIVES[k])

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    @property
    def needles(self) -> frozenset[str] | None:
        if self._needles is None:
            self._needles = (_required_literals(self.pattern, self.flags),)
            prefilter.known(self._bit, self._needles[0])
            alts = alternatives(self.pattern, self.flags)
            if alts is not None:
                self._known_alternatives(tuple((a, _sorted(_required_literals(a, self.flags))) for a in alts))
        return self._needles[0]

    def _known_alternatives(self, alts: tuple[tuple[str, tuple[str, ...] | None], ...]) -> None:
        """Register the literals of each top-level alternative of the pattern (``_narrowed``)."""
        if len(alts) < 2 or "|".join(a for a, _ in alts) != self.pattern:
            return
        first = prefilter.register_many([frozenset(lits) if lits is not None else None for _, lits in alts])
        full = (1 << len(alts)) - 1
        always = sum(1 << i for i, (_, lits) in enumerate(alts) if lits is None or "" in lits)
        self._alts = (tuple(a for a, _ in alts), first, full, always)

    def _narrowed(self, text: str, bits: int) -> re.Pattern[str]:
        """The pattern less the top-level alternatives whose literals ``text`` does not hold.

        An alternative none of whose literals the text holds matches nowhere in it, so the
        alternation of the others finds the same matches, in the same places, as the whole
        pattern (a search tries the alternatives in order at each position; one that cannot
        match there changes nothing). Only for ASCII text: there, lower-casing is exactly what
        ``re.IGNORECASE`` folds (outside ASCII it folds a few letters more, ``ſ`` to ``s``)."""
        alts = self._alts
        if alts is None or not text.isascii():
            return self.rx
        sources, first, full, always = alts
        keep = (bits >> first) & full | always
        if keep == full or not keep:
            return self.rx
        rx = self._narrow.get(keep)
        if rx is None:
            if len(self._narrow) >= 512:  # texts of every kind: keep the cache bounded
                self._narrow.clear()
            rx = self._narrow[keep] = re.compile("|".join(s for i, s in enumerate(sources) if keep >> i & 1), self.flags)
        return rx

    def search(self, text: str) -> re.Match[str] | None:
        last = self._last
        if last[0] == text:
            return last[1]
        rx: re.Pattern[str] | None
        if self._filtered:  # the literals are known: the one pass of ``prefilter`` decides
            bits = possible(text)
            rx = self._narrowed(text, bits) if bits >> self._bit & 1 else None
        else:
            rx = self._first_searches(text)
        found = rx.search(text) if rx is not None else None
        self._last = (text, found, rx)
        return found

    def _first_searches(self, text: str) -> re.Pattern[str] | None:
        """The expression to run while the literals are not known: the whole pattern for the first
        searches (finding the literals parses the pattern again: worth it only for a process that
        asks often, unless ``poisoning_literals`` holds them), then the prefilter's choice."""
        self._asked += 1
        if self._asked <= _ASKS_BEFORE_NEEDLES or self.needles is None:
            return self.rx
        self._filtered = True
        bits = possible(text)
        return self._narrowed(text, bits) if bits >> self._bit & 1 else None

    def finditer(self, text: str) -> list[re.Match[str]]:
        if not self.search(text):
            return []
        rx = self._last[2] if self._last[0] == text else None
        return list((rx or self.rx).finditer(text))


def _sorted(literals: frozenset[str] | None) -> tuple[str, ...] | None:
    return tuple(sorted(literals)) if literals is not None else None


def alternatives(pattern: str, flags: int = 0) -> list[str] | None:
    """The top-level alternatives of ``pattern`` (``a|b(c|d)|e`` -> ``a``, ``b(c|d)``, ``e``), each a
    pattern of its own; ``None`` where dropping one could change the others (groups, inline or
    verbose flags) or the split does not compile."""
    if flags & re.X or "(?P" in pattern or re.compile(pattern, flags).groups:
        return None
    out: list[str] = []
    depth = start = i = 0
    n = len(pattern)
    in_set = False
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_set:
            in_set = c != "]"
        elif c == "[":
            in_set = True
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":  # a "]" first in a set is one of its characters
                i += 1
            continue
        elif c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith(("(?:", "(?=", "(?!", "(?<=", "(?<!"), i):
                return None  # inline flags, a conditional, a comment: not split
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    try:
        for alt in out:
            re.compile(alt, flags)
    except re.error:
        return None
    return out

