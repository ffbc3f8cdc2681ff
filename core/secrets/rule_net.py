"""Which of the redactor's rules could match a text, in one native pass (Hyperscan).

``rules.plan`` (the pre-check's exact answer) searches the rules whose literals a text holds, one
regular expression at a time, until one matches; on token-heavy text that search and the wide net
before it (``precheck._rules_maybe``) were half of what the pre-check cost. Here all the rules'
patterns are compiled into one Hyperscan database (Intel's multi-pattern engine, ``hyperscan`` on
PyPI) in *prefilter* mode, where a pattern may match more than the Python pattern (lookarounds and
back-references dropped, a long bounded repeat left open) but never less. One scan names the rules
that could match; ``plan`` runs only those, and the wide net is not needed. ``find`` asks again after a
rule claims something (the claim masked out can join a match), and runs only the later rules named.

It is sound only where the two engines read a text alike, so ``possible`` answers ``None`` (the
pure-Python path) for text outside printable ASCII with tabs and line breaks: Python's ``\\s``
also matches ``\\x1c``–``\\x1f``, and case folding outside ASCII differs. A pattern the engine
refuses (a repeat too large for it), one in Python-only syntax (``\\u``, ``\\N``) and one that names a
letter Python's case folding takes for an ASCII one inside a class (``[ı]``) are always run, as are
all of them before the net exists.

The net is built once per process, in a background thread (0.75 s on the 2-core box; the engine
releases the GIL), and only in a process that goes on pre-checking texts (32 over a second or
more: a host's process, the MCP server, a sweep, ``doctor`` on a large root): a short command
never pays for it. Nothing is kept on disk: a compiled
database in a folder an agent can write to could be swapped for one that matches nothing.
``COMMONKEEP_RULE_NET=0`` turns it off; without the package the pure-Python path runs.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

from commonkeep.secrets.compiled import Compiled, asked, forget_in_child
from commonkeep.secrets.lazy import compile_all, source

OFF = "COMMONKEEP_RULE_NET"
# built once a process has asked about 32 texts over a second or more: a short command (``write``, a
# search that redacts its snippets, a ``share sync``) never pays 0.75 s of a core for it
AFTER, AFTER_SECONDS = 32, 1.0
# what both engines read alike: printable ASCII, tab, line feed, carriage return, and the NUL of
# ``spans.MASK`` (not \v, \f, \x1c-\x1f)
_ALIKE = re.compile(r"[\x00\t\n\r\x20-\x7e]*")
# a bounded repeat whose range is wide: left open in the net (a superset, and far cheaper to compile)
_WIDE = re.compile(r"(?<!\\)\{(\d*),(\d+)\}")
# Python-only syntax, read otherwise (or refused) by the engine: the pattern is always run
_PYTHON_ONLY = re.compile(r"\\[uUN]|\(\?[aLu]")

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"asked": 0}


os.register_at_fork(after_in_child=partial(forget_in_child, sys.modules[__name__]))  # its own lock and build in a child


class _Net(Compiled):
    """The compiled database for one list of rules (``plan``), and a scratch space per thread."""

    __slots__ = ("plan", "always")

    def __init__(self, plan: object, db: Any, always: int) -> None:
        super().__init__(db)
        self.plan, self.always = plan, always

    def scan(self, text: str) -> int:
        hits: list[int] = []
        self.db.scan(text.encode("ascii"), match_event_handler=_on_match, context=hits, scratch=self.scratch())
        bits = self.always
        for i in hits:
            bits |= 1 << i
        return bits


def _on_match(rule: int, start: int, end: int, flags: int, hits: list[int]) -> None:
    hits.append(rule)


def possible(text: str, plan: Sequence[tuple[Any, ...]]) -> int | None:
    """The bits (``plan``'s order) of the rules whose pattern could match ``text`` as written: every
    rule that matches it is among them. ``None`` when the net cannot say (not built yet, turned off,
    no engine, or a text the engines read differently): then any rule may match."""
    net = _STATE.get("net")
    if net is None or net.plan is not plan:
        _asked(plan)
        return None
    if _ALIKE.fullmatch(text) is None:
        return None
    bits: int = net.scan(text)
    return bits


def _asked(plan: Sequence[tuple[Any, ...]]) -> None:
    asked(_STATE, _LOCK, plan, build, after=AFTER, after_seconds=AFTER_SECONDS, off=OFF, name="commonkeep-rule-net")


def build(plan: Sequence[tuple[Any, ...]]) -> bool:
    """Compile the net for ``plan`` (``rules._PLAN``: tuples of kind and pattern first) and use it
    from now on; False when the engine is missing or refuses every pattern."""
    try:
        import hyperscan
    except ImportError:
        return False
    flags_base = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
    exprs: list[bytes] = []
    ids: list[int] = []
    flags: list[int] = []
    always = 0
    for i, (_kind, pattern, *_rest) in enumerate(plan):
        expr = _expression(pattern)
        if expr is None:
            always |= 1 << i
            continue
        text, py_flags = expr
        flag = flags_base
        flag |= hyperscan.HS_FLAG_CASELESS if py_flags & re.IGNORECASE else 0
        flag |= hyperscan.HS_FLAG_DOTALL if py_flags & re.DOTALL else 0
        flag |= hyperscan.HS_FLAG_MULTILINE if py_flags & re.MULTILINE else 0  # ``^`` and ``$`` at each line, as in Python
        loose = _expression(pattern, anchors=False)
        if loose is not None and loose[0] != text and _compiled(hyperscan, [text.encode()], [i], [flag]) is None:
            text = loose[0]  # an anchor inside the pattern, which the engine refuses: all of them dropped
        exprs.append(text.encode())
        ids.append(i)
        flags.append(flag)
    db = _compiled(hyperscan, exprs, ids, flags)
    if db is None:  # the engine refused one: its error does not say which, so each is tried alone
        kept = [k for k in range(len(ids)) if _compiled(hyperscan, exprs[k : k + 1], ids[k : k + 1], flags[k : k + 1]) is not None]
        for k in set(range(len(ids))) - set(kept):
            always |= 1 << ids[k]
        db = _compiled(hyperscan, [exprs[k] for k in kept], [ids[k] for k in kept], [flags[k] for k in kept]) if kept else None
    if db is None:
        return False
    _STATE["net"] = _Net(plan, db, always)
    compile_all()  # such a process goes on scanning: the rules' own patterns are compiled now, not mid-capture
    return True


def _compiled(hyperscan: Any, exprs: list[bytes], ids: list[int], flags: list[int]) -> Any:
    db = hyperscan.Database()
    try:
        db.compile(expressions=exprs, ids=ids, elements=len(ids), flags=flags)
    except hyperscan.error:
        return None
    return db


def _expression(pattern: Any, anchors: bool = True) -> tuple[str, int] | None:
    """The pattern as the net compiles it, or None to always run it: wide repeats left open, ``\\A``
    and ``\\Z`` dropped, ``^`` and ``$`` too unless ``anchors`` (the engine refuses one inside a pattern,
    after or before what it matches: ``build`` then drops them), and written for ASCII text alone (the
    only text the net reads, ``_ALIKE``): a letter outside ASCII that Python's case folding takes for
    an ASCII one (``ı``, ``ſ``, ``K``) becomes those ASCII letters, any other can match nothing there
    (``_NOTHING``) and leaves a class. Each change lets it match more ASCII text, never less; and the
    engine compiles far less (the patterns' many languages in UTF-8 were most of a 7 MB database, read
    at every scan)."""
    text, py_flags = source(pattern)
    if py_flags & re.VERBOSE or _PYTHON_ONLY.search(text):
        return None
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            pair = text[i : i + 2]
            out.append("" if pair in ("\\A", "\\Z") else pair)
            i += 2
            continue
        if ch == "[":
            end, members = _class(text, i)
            if members is None:
                return None
            out.append(members)
            i = end
            continue
        if ch in "^$":
            if anchors:
                out.append(ch)
        elif not ch.isascii():
            same = _ascii_twins(ch)
            out.append("(?:" + "|".join(re.escape(a) for a in same) + ")" if same else _NOTHING)
        else:
            out.append(ch)
        i += 1
    return _WIDE.sub(_widen, "".join(out)), py_flags


# a byte no ASCII text holds: a letter outside ASCII, which only such a letter matches, can match nothing the net reads
_NOTHING = r"\xff"


def _class(text: str, start: int) -> tuple[int, str | None]:
    """The class that starts at ``text[start]`` (``[``), for ASCII text: where it ends, and the class
    with its members outside ASCII left out (a positive class left empty matches nothing, a negated one
    anything); None where a member outside ASCII is one Python's case folding takes for an ASCII
    letter, or a range's end (such a class is always run)."""
    i = start + 1
    negated = text.startswith("^", i)
    if negated:
        i += 1
    items: list[str] = []  # each member as written: a character, an escape, or ``-``
    first = True
    while i < len(text) and (text[i] != "]" or first):
        first = False
        if text[i] == "\\":
            size = 4 if text.startswith("x", i + 1) else 2  # ``\xNN``, else ``\w``, ``\]``…
            items.append(text[i : i + size])
            i += size
        else:
            items.append(text[i])
            i += 1
    end = i + 1
    kept: list[str] = []  # each member kept, a range whole
    dropped = False
    k = 0
    while k < len(items):
        item = items[k]
        ranged = k + 2 < len(items) and items[k + 1] == "-"
        if ranged:
            low, high = item, items[k + 2]
            if low.isascii() and high.isascii():
                kept.append(_member(low) + "-" + _member(high))
            elif low.isascii() or high.isascii():
                return end, None  # from ASCII into the rest: not taken apart
            dropped = dropped or not low.isascii()
            k += 3
            continue
        if item.isascii():
            kept.append(_member(item))
        elif _ascii_twins(item):
            return end, None
        dropped = dropped or not item.isascii()
        k += 1
    if not dropped:
        return end, text[start:end]  # nothing left out: as written
    if not kept:
        return end, (r"[\x00-\xff]" if negated else _NOTHING)
    return end, "[" + ("^" if negated else "") + "".join(kept) + "]"


def _member(item: str) -> str:
    """A member of a class as rewritten: "-", "]" and "^" escaped (left out of place once others are
    dropped, they would make a range, end the class or negate it)."""
    return "\\" + item if item in ("-", "]", "^") else item


def _widen(m: re.Match[str]) -> str:
    low, high = int(m.group(1) or 0), int(m.group(2))  # Python's ``{,n}`` is ``{0,n}``; the engine's is text
    return f"{{{low},}}" if high - low > 8 else f"{{{low},{high}}}"


@lru_cache(maxsize=1024)
def _ascii_twins(ch: str) -> tuple[str, ...]:
    """The ASCII letters Python's case-insensitive matching takes ``ch`` for (``ı``: ``I`` and ``i``; most: none)."""
    return tuple(chr(a) for a in range(128) if re.fullmatch(re.escape(ch), chr(a), re.IGNORECASE) is not None)


def ready(plan: object) -> bool:
    """Is the net for ``plan`` built?"""
    net = _STATE.get("net")
    return net is not None and net.plan is plan


def wait(timeout: float) -> None:
    """Wait for a net being built (``bench capture`` does after its warm-up, untimed)."""
    thread = _STATE.get("thread")
    if thread is not None:
        thread.join(timeout)
