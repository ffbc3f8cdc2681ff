"""Single-value fields are strict: a tag, an evidence ref, the source ref or the session id holds
one value, so a token-like value there is redacted whole, not searched for a secret's shape.

``token_like(value)`` is true when a piece of ``value`` (split at ``/ . : _ - + = @`` and spaces)
is 8+ characters mixing letters and digits (not only hex digits: commit hashes, digests and UUIDs
stay) or upper and lower case changing three times or more (``tLLCWPgEux``; not words run
together, ``GitHubActions``): the rest of a random token. Words, numbers, paths, versions,
dates and commonkeep's ids (``cap_…``, ``mem_…``, ``patch_…``) have no such piece.

``strict(cand, sink)`` applies it to a candidate's single-value fields, and removes both halves of
a token split across two of them: each pair of fields is checked joined (``AKIA…`` in one tag, its
rest in another; a token cut between ``--evidence`` and ``--session``).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from commonkeep.secrets.identifier import identifier
from commonkeep.secrets.kept import Kept

MARKER = "[REDACTED:{kind}]"
_PIECE = re.compile(r"[^/.:_\-+=@\s,;#?&]+")
_HEX = re.compile(r"[0-9a-fA-F]+")
_SPACE = re.compile(r"\s")
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{6,}")
_LONG_PIECE = re.compile(r"[^/.:_\-+=@\s,;#?&]{8,}")  # a piece ``_random_piece`` may read: symbols do not cut it
# the symbols of a generated password, rare in names, paths and versions; not "+", which joins words
# in a tag ("iOS17+iPadOS")
_PASSWORD_SYMBOL = re.compile(r"[!$%^*~?#&|]")
_PATHLIKE = re.compile(r"[\s/.:]")  # a path, a URL, a file name, an anchor (``hermes:MEMORY.md#…``)
# a field that ends with a redacted token, or holds the first half of one
_HALF = re.compile(r"\[REDACTED:partial_token\]|\[REDACTED:[a-z0-9_]+\][\s.,;:!?)]*$")
_CASE_CHANGE = re.compile(r"(?=[a-z][A-Z]|[A-Z][a-z])")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_VOWEL = re.compile(r"[aeiouyAEIOUY]")
# up to three lower-case words of 3+ letters, each with two vowels and no run of 3 consonants, and
# numbers of up to 4 digits after them ("python3ubuntu2204": two tags joined); letters drawn at
# random rarely read as such words
_WORD = r"(?=[a-z]*[aeiouy][a-z]*[aeiouy])(?![a-z]*[b-df-hj-np-tv-xz]{3})[a-z]{3,}"
_WORDS_AND_NUMBERS = re.compile(rf"(?:{_WORD}\d{{1,4}}){{1,3}}(?:{_WORD})?")
# a value that starts or ends like a provider token cut in two
_HALF_START = re.compile(r"^(?:sk-|gh[pousr]_|github_pat_|gl[a-z]{2,5}-|xox[a-z]-|hf_|npm_|AKIA|ASIA|AIza|SG\.|pypi-|eyJ)")


def _random_piece(piece: str) -> bool:
    if len(piece) < 8 or _HEX.fullmatch(piece):
        return False
    if identifier(piece):  # a name from code (``HTTPSConnectionPoolV2`` as a tag), as in prose
        return False
    letters = any(c.isalpha() for c in piece)
    digits = sum(c.isdigit() for c in piece)
    if letters and digits >= 2 and not re.fullmatch(r"[A-Za-z]+\d{1,4}|\d{1,4}[A-Za-z]+|[vV]?\d+[a-z]{1,3}\d*", piece) \
            and not _WORDS_AND_NUMBERS.fullmatch(piece):
        return True  # "build2026", "v12rc3" or "python3ubuntu2204" are words and numbers; "a8Fk2LmQ" is not
    upper, lower = any(c.isupper() for c in piece), any(c.islower() for c in piece)
    if letters and _PASSWORD_SYMBOL.search(piece) and (digits or (upper and lower)):
        return True  # a generated password: letters, a password symbol, and digits or both cases ("v^*cxnx4FY")
    if not (upper and lower and len(_CASE_CHANGE.findall(piece)) >= 3):
        return False
    return not (piece.isalpha() and _camel_words(piece))


def _camel_words(piece: str) -> bool:
    """Whether a letters-only ``piece`` reads as words run together (``GitHubActions``, ``JavaScript``,
    ``XMLHttpRequest``, ``getElementById``): its camel-case parts are 3 letters long on average and
    each part with lower-case letters has a vowel. A random run of upper and lower case
    (``tLLCWPgEux``) breaks into parts of one or two letters."""
    parts = _CAMEL_PART.findall(piece)
    spoken = [p for p in parts if not p.isupper()]
    return bool(parts) and sum(map(len, parts)) / len(parts) >= 3 and 2 * sum(
        bool(_VOWEL.search(p)) for p in spoken) >= len(spoken)


def _generated_password(value: str) -> bool:
    """A whole value of 8 to 64 characters, no space, ``/``, ``.`` or ``:``, with lower case, upper case, a digit and a
    password symbol (``0kNH+*v3Ng``, ``+LczBMMJN6?D4wp``): the separators that cut a path or a version
    into pieces cut a generated password too, into pieces too short to read as random."""
    v = value.strip()
    return (8 <= len(v) <= 64 and _PASSWORD_SYMBOL.search(v) is not None and _PATHLIKE.search(v) is None
            and any(c.islower() for c in v) and any(c.isupper() for c in v) and any(c.isdigit() for c in v))


def token_like(value: str) -> bool:
    """True when ``value`` is, or holds, a random token (see the module doc)."""
    if "[REDACTED:" in value:
        value = re.sub(r"\[REDACTED:[a-z0-9_]+\]", " ", value)
    return _generated_password(value) or any(_random_piece(p) for p in _PIECE.findall(value))


def _slots(cand: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(container, key) of every single-value field of a candidate, in order."""
    out: list[tuple[Any, Any]] = []
    for name in ("tags", "evidence_refs"):
        values = cand.get(name)
        if isinstance(values, list):
            out += [(values, i) for i, v in enumerate(values) if isinstance(v, str)]
    source = cand.get("source")
    if isinstance(source, dict) and isinstance(source.get("ref"), str):
        out.append((source, "ref"))
    prov = cand.get("provenance")
    if isinstance(prov, dict):
        out += [(prov, k) for k in ("session_id", "task_id") if isinstance(prov.get(k), str)]
    return out


def _piece_of_token(value: str) -> bool:
    """Could ``value`` be one half of a split token: no spaces, and random-looking or a token's start."""
    v = value.strip()
    return 4 <= len(v) <= 200 and _SPACE.search(v) is None and (
        _HALF_START.match(v) is not None or any(_random_piece(p) for p in _PIECE.findall(v))
        or (len(v) >= 6 and v.isalnum() and not v.isalpha() and not v.isdigit()))


@lru_cache(maxsize=16384)
def _suspect(value: str) -> bool:
    """Could ``token_like`` or ``_piece_of_token`` say yes to ``value``? A quick superset of both,
    asked of every single-value field (tags and refs repeat, so the answer is kept): a value that
    starts like a token, is one run of 6+ letters and digits mixed, or has a piece ``_random_piece``
    could call random (8+ characters, not only digits, not only hex digits, not one word)."""
    v = value.strip()
    if _HALF_START.match(v) or (len(v) >= 6 and v.isalnum() and not v.isalpha() and not v.isdigit()) or _generated_password(v):
        return True
    for p in _PIECE.findall(v):
        if len(p) < 8 or p.isdigit() or _HEX.fullmatch(p) or (p.isalpha() and (p.islower() or p.isupper())):
            continue
        return True
    return False


# the values ``_suspect`` said no to: the next capture's same tags and refs are one look-up each
_PLAIN = Kept()


def _suspect_now(value: str) -> bool:
    if _suspect(value):
        return True
    _PLAIN.keep(value)
    return False


def strict(cand: dict[str, Any], sink: list[str]) -> None:
    """Redact, in place, the single-value fields of ``cand`` that are or hold a token, and both
    halves of a token split across two of them; the kinds go to ``sink``."""
    source, prov = cand.get("source"), cand.get("provenance")
    quick = [v for v in (*(cand.get("tags") or ()), *(cand.get("evidence_refs") or ()),
                         source.get("ref", "") if isinstance(source, dict) else "",
                         *((prov.get("session_id") or "", prov.get("task_id") or "") if isinstance(prov, dict) else ()))
             if isinstance(v, str)]  # (a provenance value may be any JSON value)
    if _PLAIN.issuperset(quick) or not any(_suspect_now(v) for v in quick if v not in _PLAIN):
        return  # the common case: words, numbers, paths, dates; nothing random, nothing a token starts with
    every = _slots(cand)
    slots = [(c, k) for c, k in every
             if _ALNUM_RUN.search(c[k]) or _LONG_PIECE.search(c[k]) or _HALF_START.match(c[k].strip()) or _generated_password(c[k])]
    if not slots:  # no field has 6 letters or digits in a row, nor a piece of 8: nothing random, nothing split
        return
    from commonkeep.secrets import redact

    whole = MARKER.format(kind="token_in_field")
    for c, k in slots:
        if c[k] != whole and token_like(c[k]):
            c[k] = whole
            sink.append("token_in_field")
    split = MARKER.format(kind="split_token")
    pieces = [(c, k) for c, k in slots if c[k] != whole and _piece_of_token(c[k])]
    if any(_HALF.search(c[k]) for c, k in every):  # one half already went: the other may be any piece
        for c, k in pieces:
            c[k] = split
            sink.append("split_token")
        return
    if len(pieces) < 2:
        return
    gone: set[int] = set()
    for i, (c1, k1) in enumerate(pieces):
        for j, (c2, k2) in enumerate(pieces):
            if i == j:
                continue
            joined = c1[k1].strip() + c2[k2].strip()
            if token_like(joined) or redact(joined).findings:
                gone |= {i, j}
    for n in sorted(gone):
        c, k = pieces[n]
        c[k] = split
        sink.append("split_token")
