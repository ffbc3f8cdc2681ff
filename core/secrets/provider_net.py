"""Could the provider scanner find anything in a text? Its own rules' net, in one native pass.

Kingfisher (``provider.py``) costs ~20 µs a text even where it finds nothing, and on token-heavy
text most of the texts sent to it hold a run of letters and digits none of its rules wants (a
lockfile's hash, a request id, a build id). Its rules' patterns are read from the installed
package (``Rules().detail(id)["detection_regex"]``, the regular expressions it confirms a match
with) and compiled here into one Hyperscan database in *prefilter* mode, where a pattern may match
more than the pattern but never less (a wide bounded repeat is also left open: the same set, far
cheaper to compile). Where none of them could match a text, nor any text Kingfisher would decode
from it, Kingfisher would find nothing: it is not asked (:func:`finds_nothing`).

It is sound only where the two engines read a text alike: Kingfisher's Rust expressions are
Unicode-aware (``\\w``, ``\\b``, case folding), Hyperscan's here read bytes, and the two agree on
printable ASCII with tab, line feed, carriage return and NUL (``_ALIKE``). Any other text is sent
to Kingfisher as before.

Kingfisher also reads base64: each run of ``[A-Za-z0-9+/_-]`` with up to two ``=`` after it, 32
bytes or more and a multiple of 4 long, is decoded (standard alphabet, then URL-safe) and, where
the bytes are ASCII, scanned too. The net does the same, and again inside what it decoded (to any
depth, where Kingfisher 1.5 reads one); a run Python cannot decode would be sent to Kingfisher. A version of Kingfisher this was not verified on
(``VERIFIED``: another decoding, another reading of a pattern) builds no net.

Built like the rules' net (``rule_net.py``): once, in a background thread, in a process that goes
on scanning (8 texts over a second or more: a host's process, the scanner service, a sweep), from
the rules the process loaded; 0.6 s of a core; nothing kept on disk.
``COMMONKEEP_PROVIDER_NET=0`` turns it off.
"""

from __future__ import annotations

import binascii
import os
import re
import sys
import threading
from base64 import b64decode
from contextlib import suppress
from functools import partial
from typing import Any

from commonkeep.secrets.compiled import Compiled, asked, forget_in_child

OFF = "COMMONKEEP_PROVIDER_NET"
#: the Kingfisher versions (major.minor) whose decodings and pattern syntax the net was checked against
VERIFIED = ("1.5",)
AFTER, AFTER_SECONDS = 8, 1.0
# what Rust's Unicode expressions and the engine's byte expressions read alike (not \v, \f: the
# engines' ``\s`` may differ there)
_ALIKE = re.compile(r"[\x00\t\n\r\x20-\x7e]*")
# a run Kingfisher decodes as base64 (``_decoded``): its letters, up to two "=" after them, 32 bytes or more
# in all and a multiple of 4 (the first place the expression matches is a whole run's start)
BASE64_MIN = 32
_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/_-]{%d,}={0,2}" % (BASE64_MIN - 2))
# the URL-safe alphabet's two letters as the standard one's (the same bytes decoded)
_URL_SAFE = bytes.maketrans(b"-_", b"+/")
# a bounded repeat whose range is wide: left open (a superset, and a quarter of the compile time)
_WIDE = re.compile(r"(?<!\\)\{(\d*),(\d+)\}")

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {"asked": 0}


os.register_at_fork(after_in_child=partial(forget_in_child, sys.modules[__name__]))  # its own lock and build in a child


def finds_nothing(text: str, rules: Any) -> bool:
    """True when Kingfisher's ``rules`` could find nothing in ``text`` (as it is handed to the
    scanner), by the net built from them; False when it may, or when the net cannot say (not built
    yet, turned off, no engine, a text the engines read differently)."""
    net = _STATE.get("net")
    if net is None or net.rules is not rules:
        if rules is not None:
            _asked(rules)
        return False
    if _ALIKE.fullmatch(text) is None:
        return False
    return not net.may_find(text.encode("ascii"))


class _Net(Compiled):
    __slots__ = ("rules", "_stopped")

    def __init__(self, rules: Any, db: Any, stopped: type[Exception]) -> None:
        super().__init__(db)
        self.rules, self._stopped = rules, stopped

    def _matches(self, data: bytes) -> bool:
        found: list[int] = []
        with suppress(self._stopped):  # the first match stops the scan
            self.db.scan(data, match_event_handler=_on_match, context=found, scratch=self.scratch())
        return bool(found)

    def may_find(self, data: bytes) -> bool:
        """Could a pattern match ``data`` (ASCII), or the ASCII that a base64 run in it decodes to?"""
        if self._matches(data):
            return True
        for m in _BASE64_RUN.finditer(data):
            run = m.group(0)
            if len(run) < BASE64_MIN or len(run) % 4 or not b64decode(run[:4].translate(_URL_SAFE)).isascii():
                continue  # not read by Kingfisher; or its first bytes are outside ASCII: so is the whole
            decoded = _decoded(run)
            if decoded is None:  # not seen (Python's decoder is the more lenient): Kingfisher is asked
                return True
            if decoded.isascii() and (_ALIKE.fullmatch(decoded.decode("ascii")) is None or self.may_find(decoded)):
                return True
        return False


def _on_match(rule: int, start: int, end: int, flags: int, found: list[int]) -> bool:
    found.append(rule)
    return True  # one is enough: the scan stops here (the binding raises ``ScanTerminated``)


def _decoded(run: bytes) -> bytes | None:
    for alt in (None, b"-_"):
        try:
            return b64decode(run, altchars=alt, validate=True)
        except (binascii.Error, ValueError):
            continue
    return None


def _asked(rules: Any) -> None:
    asked(_STATE, _LOCK, rules, build, after=AFTER, after_seconds=AFTER_SECONDS, off=OFF, name="commonkeep-provider-net")


def verified() -> bool:
    """Is the installed Kingfisher a version the net was checked against?"""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("kingfisher-secret-scanner")
    except PackageNotFoundError:
        return False
    return ".".join(installed.split(".")[:2]) in VERIFIED


def build(rules: Any) -> bool:
    """Compile the net from Kingfisher's ``rules`` and use it from now on; False (no net: every text
    is sent to Kingfisher) without the engine, on a version not verified, or when the engine refuses
    a pattern (one left out would let what it matches through)."""
    try:
        import hyperscan
    except ImportError:
        return False
    if not verified():
        return False
    try:
        patterns = [rules.detail(meta["id"])["detection_regex"] for meta in rules.metadata()]
    except Exception:  # noqa: BLE001 - the rules' catalogue reads otherwise: no net
        return False
    flag = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
    db = hyperscan.Database()
    try:
        db.compile(expressions=[_WIDE.sub(_widen, p).encode() for p in patterns], ids=list(range(len(patterns))),
                   elements=len(patterns), flags=[flag] * len(patterns))
    except (hyperscan.error, TypeError, UnicodeEncodeError):
        return False
    _STATE["net"] = _Net(rules, db, hyperscan.ScanTerminated)
    return True


def _widen(m: re.Match[str]) -> str:
    low, high = int(m.group(1) or 0), int(m.group(2))
    return f"{{{low},}}" if high - low > 8 else f"{{{low},{high}}}"  # ``{,n}`` written out: the engine reads it as text


def ready(rules: Any) -> bool:
    """Is the net for ``rules`` built?"""
    net = _STATE.get("net")
    return net is not None and net.rules is rules
