"""Runs of token characters: could one of the redactor's rules of shape want something in a text?

The rules that judge a run by its shape (``rules.find``'s last ones: bare and prefixed hex keys, hex
or base64 that decodes to text, ``high_entropy``, seed phrases) read only runs of 16 token characters
or more, or twelve words of a BIP-39 list. ``_runs`` answers whether a text holds one they could
want, without searching: the runs are cut out with ``bytes.translate`` and ``split``. The pre-check
(``precheck.py``) asks it of a text no rule matched; ``rules.find`` asks it of what is left once the
rules of place have claimed their values (``shape_runs``), and does not run the rules of shape where
it says no (a password given in a sentence leaves no run behind it).
"""

from __future__ import annotations

import re
from functools import lru_cache

from commonkeep.secrets import structure
from commonkeep.secrets.decoding import _decoded
from commonkeep.secrets.randomness import random_parts

# runs of token characters
_HEX_RUN = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{24,}(?![0-9A-Za-z])")
_PREFIXED_HEX = re.compile(r"[_-][0-9a-f]{32}")
# a hex key is redacted beside one of these words (``rules`` hex_key), else only at 48 digits or more
_HEX_WORDS = ("key", "secret", "token", "pass", "credential", "salt", "hmac", "signing", "seed", "pepper", "api", "pat")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/_=.-]{20,}")  # ``rules._TOKEN``
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")  # ``rules._B64_RUN``


def shape_runs(text: str) -> bool:
    """Could a rule of shape claim anything in ``text`` (claimed spans masked with ``spans.MASK``,
    which no run holds)? False only where none could: a text outside ASCII is answered yes."""
    low = text.lower()
    return _runs(text, low, None)


def _words(low: str) -> list[bytes]:
    return low.encode("ascii").translate(_LETTERS).split()


def _runs(text: str, low: str, words: list[bytes] | None, exact: bool = False, seed_low: str | None = None) -> bool:
    """Could a rule that reads runs want something in ``text``? ``words``: the words of letters of the
    text as written (``seed_low``, lower-cased, else ``low``), worked out here if not given. ASCII text
    only (``needs_scan`` scans any other whole): another is answered yes."""
    if not text.isascii():
        return True
    # every run rule wants 16 characters in a row; the runs are cut out of the whole text at once (white
    # space is outside every class, so they are the runs of its pieces between spaces)
    if len(text) >= 16 and _run(text, low, exact):
        return True
    return len(text) >= SEED_CHARS and _seedlike(_words(seed_low or low) if words is None else words)


def _run(part: str, low: str, exact: bool = False) -> bool:
    """Could a rule that reads runs want something in ``part`` (ASCII text: a piece between spaces, or a whole text)?
    ``exact``: a run of token characters only where ``find``'s last rule (``high_entropy``) would
    claim part of it, not wherever it could (asked where no rule claimed anything).

    The runs are cut out with ``bytes.translate`` and ``split`` (every other byte a space) instead of
    searched: ``_HEX_RUN`` matches a whole run of letters and digits that is all hex digits,
    ``_TOKEN_RUN`` a whole run of its class, and ``_B64_RUN`` a whole run of its class with ``=`` that
    holds ``=`` only at its end, at most two (their look-arounds, tried at every position, cost
    ~18 µs a lockfile entry; this ~4)."""
    raw = part.encode("ascii")
    for r in raw.translate(_ALNUM).split():  # hex keys: long, beside a secret word, or hex-encoded text
        if len(r) >= 24 and not r.translate(None, _HEX_DIGITS):
            n = len(r)
            if n >= 48 or (n >= 32 and any(w in low for w in _HEX_WORDS)) or _readable(r.decode("ascii")):
                return True
    if ("_" in part or "-" in part) and _PREFIXED_HEX.search(part):  # a provider-style prefix before 32 hex digits
        return True
    for r in raw.translate(_TOKEN_CLASS).split():
        if len(r) >= 20:
            run = r.decode("ascii")
            if run != run.lower() and _RANDOM_HINT.search(run) and (not exact or random_parts(run)):
                return True
    for r in raw.translate(_B64_CLASS).split():
        if len(r) >= 16:
            body = r.rstrip(b"=")
            if len(body) >= 16 and len(r) - len(body) <= 2 and b"=" not in body and _readable(r.decode("ascii")):
                return True
    return False


def _keep(chars: bytes) -> bytes:
    """A ``bytes.translate`` table that keeps ``chars`` and makes every other byte a space."""
    return bytes(c if c in chars else 32 for c in range(256))


_LETTERS_DIGITS = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ALNUM = _keep(_LETTERS_DIGITS)  # ``_HEX_RUN``'s look-arounds: no letter or digit either side
_HEX_DIGITS = b"0123456789abcdefABCDEF"
_TOKEN_CLASS = _keep(_LETTERS_DIGITS + b"+/_=.-")  # ``_TOKEN_RUN``
_B64_CLASS = _keep(_LETTERS_DIGITS + b"+/_=-")  # ``_B64_RUN``'s look-arounds


# ``looks_random`` says yes only to a run with an upper-case letter and a digit or a change of case
_RANDOM_HINT = re.compile(r"[0-9]|[a-z][A-Z]|[A-Z][a-z]")


@lru_cache(maxsize=16384)
def _readable(run: str) -> bool:
    """Does a base64 run decode to readable text (``rules._decoded``)? Paths and ids repeat: kept."""
    return _decoded(run) is not None


# lower-case ASCII letters stay, every other byte becomes a space: the words ``structure._WORD`` finds
_LETTERS = structure._LETTERS


def _seedlike(words: list[bytes]) -> bool:
    """``structure.seedlike`` for ASCII text, on its words as bytes (a quarter of the time)."""
    return len(words) >= structure.SEED_LENGTHS[0] and len(structure.ascii_words().intersection(words)) >= 8


# The shortest a seed phrase can be written: twelve words of three letters (the shortest of every list),
# one character between. Written out: working it out loads every BIP-39 list (~11 ms, the first
# redaction of a short-lived process: an apply, a ``write``); ``test_secrets_short_ways.py`` holds it to the lists.
SEED_CHARS = 47
