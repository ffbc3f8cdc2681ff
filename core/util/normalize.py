"""Fold a text to the form the gate scores: what a reader sees, not how it was spelled.

Injections and secrets hide behind spelling: full-width or mathematical letters, Cyrillic
look-alikes, zero-width or bidi characters, letters split by dots, ``&#105;`` entities, base64.
``fold(text)`` undoes these so one set of rules sees one spelling:

1. invisible characters dropped (format characters: zero-width, bidi controls, soft hyphen;
   variation selectors); Unicode *tag* characters (U+E0020–E007E, "ASCII smuggling") become the
   ASCII they encode;
2. NFKC (full-width, mathematical and circled letters become plain ones); combining accents on
   Latin, Greek and Cyrillic letters are dropped (``ïġńőŕė`` → ``ignore``); Japanese voicing marks stay;
3. confusables folded to Latin with the Unicode confusables table (the maintained
   ``confusable-homoglyphs`` package): inside any word that also holds a Latin letter, and in every
   word when the text is mostly Latin; a Russian sentence keeps its Cyrillic;
4. separators inside words collapsed: ``i.g.n.o.r.e``, ``i-g-n-o-r-e``, ``i g n o r e`` → ``ignore``
   (four or more single characters joined by one repeated separator, at least two of them letters);
5. common encodings decoded, twice at most: HTML entities, ``%XX``, ``\\uXXXX``/``\\xXX`` escapes,
   and base64 or hex runs whose bytes are readable text (a commit hash or a random token decodes to
   bytes that are not, and stays as written).

Leetspeak (``1gn0r3``) is not undone here: digits carry meaning for secrets and versions.
``unleet`` does it for the injection rules, which also score the rot13 of a text
(``commonkeep.gate.poisoning``).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import unicodedata
from functools import lru_cache
from urllib.parse import unquote

_TAG_BASE = 0xE0000
_COMBINING_LATIN = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_WORD = re.compile(r"\w+")
_ASCII_LETTER = re.compile(r"[A-Za-z]")
_SPLIT = re.compile(r"(?<!\w)\w(?P<sep>[ .\-_*·•|/~+,:'’`]{1,2})\w(?:(?P=sep)\w){2,}(?!\w)")
_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})")
_PERCENT_ONE = re.compile(r"%[0-9A-Fa-f]{2}")
_PERCENT_TOKEN = re.compile(r"\S*%[0-9A-Fa-f]{2}\S*")
_ENTITY = re.compile(r"&(?:#\d{2,7}|#[xX][0-9a-fA-F]{2,6}|[A-Za-z]{2,8});")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s", "!": "i", "|": "l"})
_LEET_WORD = re.compile(r"(?=[\w@$!|]*[A-Za-z])(?=[\w@$!|]*[0-9@$!|])[\w@$!|]{3,}")


@lru_cache(maxsize=1)
def _confusables() -> dict[int, str]:
    """Non-ASCII characters that look like one ASCII letter or digit, from the Unicode table."""
    try:
        from confusable_homoglyphs.confusables import confusables_data
    except ImportError:  # pragma: no cover - the dependency is declared; NFKC still runs without it
        return {}
    table: dict[int, str] = {}
    for char, glyphs in confusables_data.items():
        if len(char) != 1 or ord(char) < 0x80 or ord(char) >= 0x2E80:
            continue
        targets = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalnum()]
        letters = [t for t in targets if t.isalpha()]
        if letters or targets:
            table[ord(char)] = (letters or targets)[0]
    # small Cyrillic letters that read as Latin in most fonts but are not in the table
    for char, latin in zip("тмкнвгп", "tmkhbrn", strict=True):
        table.setdefault(ord(char), latin)
    return table


def _visible(text: str) -> str:
    out: list[str] = []
    for ch in text:
        cp = ord(ch)
        if 0xE0020 <= cp <= 0xE007E:
            out.append(chr(cp - _TAG_BASE))
        elif unicodedata.category(ch) == "Cf" or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF or cp == 0xE0001 or cp == 0xE007F:
            continue
        else:
            out.append(ch)
    return "".join(out)


@lru_cache(maxsize=1)
def _exact() -> frozenset[int]:
    """Characters the Unicode table maps to a Latin *letter* (no digits, none of the Cyrillic extras)."""
    from_table = {cp for cp, latin in _confusables().items() if latin.isalpha()}
    return frozenset(from_table - {ord(c) for c in "тмкнвгп"})


def _fold_confusables(text: str) -> str:
    table = _confusables()
    if not table:
        return text
    exact = _exact()
    words = _WORD.findall(text)
    latin = sum(1 for w in words if _ASCII_LETTER.search(w) or all(ord(c) in exact for c in w if c.isalpha()))
    mostly_latin = latin * 2 > len(words)

    def word(m: re.Match[str]) -> str:
        w = m.group(0)
        if w.isascii():
            return w
        if mostly_latin or _ASCII_LETTER.search(w):
            return w.translate(table)
        return w

    return _WORD.sub(word, text)


def _collapse(text: str) -> str:
    def join(m: re.Match[str]) -> str:
        chars = re.findall(r"[^\W_]", m.group(0))
        if sum(c.isalpha() for c in chars) < 2:
            return m.group(0)
        return "".join(chars)

    return _SPLIT.sub(join, text)


def _readable(data: bytes) -> str | None:
    try:
        s = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(s) < 4:
        return None
    good = sum(1 for c in s if c.isprintable() or c in "\n\t")
    letters = sum(1 for c in s if c.isalpha())
    return s if good >= 0.95 * len(s) and letters >= 0.5 * len(s.replace(" ", "")) else None


def _b64(m: re.Match[str]) -> str:
    tok = m.group(0)
    if tok.isalpha() and (tok.islower() or tok.isupper()):  # a long plain word, not an encoding
        return tok
    pad = "=" * (-len(tok.rstrip("=")) % 4)
    raw = tok.rstrip("=") + pad
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            s = _readable(decode(raw))
        except (binascii.Error, ValueError):
            continue
        if s is not None:
            return s
    return tok


def _hex(m: re.Match[str]) -> str:
    s = _readable(bytes.fromhex(m.group(0)))
    return s if s is not None else m.group(0)


def decode_layers(text: str) -> str:
    """Entities, percent- and backslash-escapes, readable base64 and hex, decoded in place."""
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    if text.count("%") >= 3 and len(_PERCENT_ONE.findall(text)) >= 3:  # "Ignore%20all%20previous…"
        text = _PERCENT_TOKEN.sub(lambda m: unquote(m.group(0)) if len(_PERCENT_ONE.findall(m.group(0))) >= 2 else m.group(0), text)
    if "\\" in text:
        text = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)
    text = _HEX.sub(_hex, text)
    return _B64.sub(_b64, text)


def plain(text: str) -> str:
    """Only the lossless-looking steps of ``fold``: invisible characters, NFKC, Latin accents."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", _visible(text))
    return unicodedata.normalize("NFC", _COMBINING_LATIN.sub("", unicodedata.normalize("NFD", text)))


def fold(text: str) -> str:
    """The text as a reader sees it, in one spelling (see the module docstring)."""
    return _fold(text) if len(text) <= 4096 else _fold.__wrapped__(text)


@lru_cache(maxsize=4096)  # a candidate is scored at capture, at curation, by the policy and at apply
def _fold(text: str) -> str:
    for _ in range(2):
        before = text
        if not text.isascii():  # plain ASCII has nothing to drop, normalise or fold (the common case)
            text = _visible(text)
            text = unicodedata.normalize("NFKC", text)
            text = unicodedata.normalize("NFC", _COMBINING_LATIN.sub("", unicodedata.normalize("NFD", text)))
            text = _fold_confusables(text)
        text = _collapse(text)
        text = decode_layers(text)
        if text == before:
            break
    return text


def unleet(text: str) -> str:
    """Leetspeak undone in words that mix letters with digits or ``@$!|`` (``1gn0r3`` → ``ignore``)."""
    return _LEET_WORD.sub(lambda m: m.group(0).translate(_LEET), text)


def rot13(text: str) -> str:
    """The rot13 of ``text`` (its own inverse)."""
    return codecs.encode(text, "rot13")
