"""Is a run of token characters random? What the rules of shape ask last (``rules.find``'s
high-entropy and split-token rules, the pre-check's run test): Shannon entropy, changes of case,
the words of a name from code (``identifier``), and for a path only the segments that are random
on their own."""

from __future__ import annotations

import math
from collections import Counter

from commonkeep.secrets.fields import _CAMEL_PART
from commonkeep.secrets.identifier import identifier, upper_name
from commonkeep.secrets.lazy import lazy

_CASE_CHANGE = lazy(r"(?=[a-z][A-Z]|[A-Z][a-z])")


def random_head(token: str) -> bool:
    """The rest of a split token: letters and digits, or upper and lower case changing more than
    once (``tLLCWPgEux``, not ``hf_transfer`` or ``Kestrel``)."""
    upper, lower, digit = (any(f(c) for c in token) for f in (str.isupper, str.islower, str.isdigit))
    if digit:
        return upper or lower
    return upper and lower and len(_CASE_CHANGE.findall(token)) >= 2


def shannon_entropy(s: str) -> float:
    """Bits per character of ``s``."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


_UPPER, _LOWER, _DIGIT = lazy(r"[A-Z]"), lazy(r"[a-z]"), lazy(r"[0-9]")
_LOWER_RUN = lazy(r"[a-z]{4,}")  # the words of an identifier (``EncodedStringHelper``)


def looks_random(token: str) -> bool:
    """32+ characters mixing upper case, lower case and digits with entropy ≥ 4.2 bits a character;
    or 20 to 31 characters of upper and lower case (two of each at least) changing case twice or
    more with two digits or more (four times with one digit, six with none), entropy ≥ 3.5 and under half of it in runs of four lower-case
    letters (the words of ``CamelCase`` identifiers); or 24+ upper-case letters (many beyond hex) and digits with entropy
    ≥ 3.6. A name from code (``HTTPSConnectionPoolV2``: words, acronyms, short numbers) is not random
    (``identifier.py``)."""
    core = token.strip("=")
    if len(core) < 20 or core.startswith("REDACTED"):
        return False
    upper, lower, digit = (len(r.findall(core)) for r in (_UPPER, _LOWER, _DIGIT))
    if upper and digit and not lower and len(core) >= 24:  # upper case and digits only (``NRAK-…``), not hex
        return (digit >= 3 and len(set(core) - set("ABCDEF0123456789_-")) >= 6 and shannon_entropy(core) >= 3.6
                and not upper_name(core))
    if len(core) >= 32:
        return bool(upper and lower and digit) and shannon_entropy(core) >= 4.2 and not identifier(core)
    if min(upper, lower) < 2 or sum(map(len, _LOWER_RUN.findall(core))) > 0.45 * len(core):
        return False
    changes = len(_CASE_CHANGE.findall(core))
    if changes < (6 if not digit else 4 if digit < 2 else 2):
        return False
    return shannon_entropy(core) >= 3.5 and not identifier(core)


_SEGMENT = lazy(r"[^/.]+")


def _wordy(seg: str) -> bool:
    """A path segment written by a person: lower case (digits, ``-`` and ``_`` allowed), Capitalised,
    words run together (``WireGuard``, ``OpenVPN``), or a word in capitals (``MAPPINGS/VENDORS/…``)."""
    return len(seg) >= 2 and (seg.islower() or (seg[:1].isupper() and seg[1:].islower()) or _camel_name(seg)
                              or (seg.isalpha() and seg.isupper() and len(seg) <= 12))  # ``VENDORS``, ``TXT``


_SPOKEN = lazy(r"[A-Z]?(?=[a-z]*[aeiouy])(?![a-z]*[b-df-hj-np-tv-xz]{4})[a-z]{2,}")


def _camel_name(seg: str) -> bool:
    """Words run together, as a product is named (``WireGuard``, ``OpenVPN``, ``GitHub``): letters only,
    each part a spoken word of 3+ letters (a lower-case vowel, no four consonants in a row) or an
    acronym of 2 to 4 capitals, one word of 4+ letters at least. Random letters break into parts
    that are neither (``KCFAzvvhRr``), which ``fields._camel_words`` (tags) still reads as words."""
    if not seg.isalpha() or not seg.isascii():
        return False
    parts = _CAMEL_PART.findall(seg)  # split as ``fields`` splits a tag
    spoken = [p for p in parts if len(p) >= 3 and _SPOKEN.fullmatch(p)]
    return (len(parts) >= 2 and any(len(p) >= 4 for p in spoken)
            and all(p in spoken or (p.isupper() and 2 <= len(p) <= 4) for p in parts))


def random_parts(token: str) -> list[tuple[int, int]]:
    """Where a run of token characters is random: the whole run, or for a file path
    (``/tmp/tmp.X7fa9Qz2Lk.json``: segments between ``/`` and ``.``, two of them plain words)
    only its segments that are random on their own."""
    if "/" in token or "." in token:
        segs = list(_SEGMENT.finditer(token))
        wordy = sum(1 for g in segs if _wordy(g.group(0)))
        if len(segs) >= 2 and wordy >= 2 and 2 * wordy >= len(segs):
            return [g.span() for g in segs if looks_random(g.group(0))]
    return [(0, len(token))] if looks_random(token) else []
