"""Regular expressions compiled when first used, not at import.

The secret rules are some seventy regular expressions; compiling them all costs a new process
about 13 ms, although a text that holds none of a rule's literals never runs it (``rules.find``
and ``precheck`` skip it), so ``commonkeep review --approve`` paid for rules it never ran. A
:func:`lazy` pattern answers ``search``, ``match``, ``fullmatch``, ``finditer``, ``findall``,
``sub``, ``subn`` and ``split`` as the compiled pattern does, compiling it on the first call;
it is hashable by identity (the rules key dicts by pattern). ``re.compile`` errors come at the
first use instead of at import: ``tests/governance/test_secrets_lazy.py`` compiles them all.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, cast

MADE: list[LazyPattern] = []  # every lazy pattern (the test compiles each)


# the compiled pattern's methods a lazy pattern answers with
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """Once compiled, the compiled pattern's own methods are set on the instance (they come before
    the class's in the look-up): a search is then one call, not three."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags = source, flags
        self._rx: re.Pattern[str] | None = None
        MADE.append(self)

    def compiled(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:
            rx = re.compile(self._source, self._flags)
            for name in _METHODS:
                setattr(self, name, getattr(rx, name))
            self._rx = rx
        return rx

    @property
    def pattern(self) -> str:
        return self._source

    @property
    def flags(self) -> int:
        return self.compiled().flags

    @property
    def groups(self) -> int:
        return self.compiled().groups

    @property
    def groupindex(self) -> Any:
        return self.compiled().groupindex

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self.compiled().sub(repl, string, count)

    def subn(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> tuple[str, int]:
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"lazy({self._source!r})"


def source(pattern: re.Pattern[str]) -> tuple[str, int]:
    """A pattern's source and flags, without compiling a lazy one."""
    if isinstance(pattern, LazyPattern):
        return pattern._source, pattern._flags
    return pattern.pattern, pattern.flags


def compile_all() -> int:
    """Compile every lazy pattern made so far; returns how many were not compiled yet. A process that
    goes on scanning (one that builds the rules' net, ``rule_net.build``) does it once, in the
    background, instead of 1-10 ms at a time inside the captures that first use each (a first hour's
    captures paid ~50 ms that way)."""
    fresh = [p for p in list(MADE) if p._rx is None]
    for p in fresh:
        try:
            p.compiled()
        except re.error:  # its first use raises it, as without this (``test_secrets_lazy.py`` holds ours to compiling)
            continue
    return len(fresh)


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern for ``source`` compiled on first use (typed as the compiled pattern it stands for)."""
    return cast("re.Pattern[str]", LazyPattern(source, flags))
