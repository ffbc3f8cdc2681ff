"""Secret scanning and redaction: nothing that looks like a credential is ever written to disk.

``redact(text)`` returns the text with every secret replaced by ``[REDACTED:<kind>]`` and the
list of kinds found, one entry per secret (never the values), so callers can report what was
redacted. ``redact_obj`` does the same for every string inside a JSON-like value (patch files,
records, evidence), and also finds a secret split across two of its strings. Redaction is
idempotent: the markers themselves never match.

Where the secrets are is decided by ``rules.find`` (the kinds are listed there): provider tokens,
private keys, ``Bearer``/``Basic`` credentials, passwords in URLs (an empty user, an ``@`` inside),
in assignments and in prose, hex keys next to a secret word, hex or base64 runs that decode to a
secret, and long random-looking runs. A text with characters outside ASCII is scanned as folded
(``fold.py``: full-width letters, zero-width characters, Cyrillic look-alikes) and the spans are
mapped back, so the disguised characters are what is removed. ``docs/security.md`` has the
measured figures (``commonkeep bench secrets``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from commonkeep.secrets import precheck, provider
from commonkeep.secrets.fields import _WORDS_AND_NUMBERS
from commonkeep.secrets.fold import fold_map, to_original

# not the bare name: importing the submodule again (an old dotted path) would set it on the package
from commonkeep.secrets.identifier import identifier as _identifier
from commonkeep.secrets.kept import Kept
from commonkeep.secrets.randomness import random_head, shannon_entropy
from commonkeep.secrets.rules import _NOT_TOKENS, find

__all__ = ["MARKER", "Redacted", "contains_secret", "redact", "redact_again", "redact_name", "redact_obj", "redacted_kinds",
           "shannon_entropy", "summarize"]

MARKER = "[REDACTED:{kind}]"
_MARKER_RE = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")

# The first pre-check, kept for the tests that hold the rules to it: it matches wherever any of the
# first rules could (each has a literal anchor, a 16+ token run, or a secret word). The redactor
# asks ``precheck.needs_scan``, which is exact per rule and lets far fewer texts through.
_ANY = re.compile(
    r"[A-Za-z0-9]{16,}|[A-Za-z0-9+/_=-]{32,}|://|eyJ|AIza|gl[a-z]{1,5}-|sk-|SG\.|xox|-----BEGIN|bearer|basic"
    r"|hf_|npm_|AKIA|pypi-|gh[pousr]_|github_pat_|pass|pwd|secret|token|key|credential|kennwort|senha",
    re.I,
)


@dataclass
class Redacted:
    """The redacted text and the kinds of secret found in it (one entry per secret)."""

    text: str
    findings: list[str] = field(default_factory=list)


def redact(text: str) -> Redacted:
    """Replace every secret in ``text``; ``findings`` lists the kinds, one per secret."""
    if len(text) < 8:
        return Redacted(text, [])
    hits = provider.provider_values(text)
    if len(text) > 4096:
        return Redacted(*_split(_redact_uncached(text, hits) if hits or _needs_scan(text) else (text, ())))
    clean, kinds = _redact_cached(text, hits)
    return Redacted(clean, list(kinds))


def redact_again(text: str) -> Redacted:
    """``redact`` for text that passed the full gate already (an index's rows, cut into snippets): our
    rules only, not the maintained provider layer, whose values were removed the first time and
    whose scanner costs a short-lived process ~0.3 s to load (``search --notes``)."""
    if len(text) < 8:
        return Redacted(text, [])
    if len(text) > 4096:
        return Redacted(*_split(_redact_uncached(text) if _needs_scan(text) else (text, ())))
    clean, kinds = _redact_cached(text)
    return Redacted(clean, list(kinds))


# whether ``rules.find`` could redact anything in a text: ``precheck.py``
_needs_scan = precheck.needs_scan


@lru_cache(maxsize=65536)
def _redact_cached(text: str, hits: tuple[provider.Hit, ...] = ()) -> tuple[str, tuple[str, ...]]:
    # patch files and records repeat the same strings (refs, notes, change conditions) many times
    if not hits and not _needs_scan(text):  # the common case: one scan, nothing to replace
        return text, ()
    return _redact_uncached(text, hits)


def _split(result: tuple[str, tuple[str, ...]]) -> tuple[str, list[str]]:
    return result[0], list(result[1])


def _redact_uncached(text: str, hits: tuple[provider.Hit, ...] = ()) -> tuple[str, tuple[str, ...]]:
    spans: list[tuple[int, int, str]] = []
    if text.isascii():
        spans = find(text, known=hits)
    else:
        # scanned folded (disguised tokens) and as written (words in other scripts, e.g. "пароль")
        folded, origin = fold_map(text)
        more = provider.provider_values(folded)
        if folded == text and set(more) <= set(hits):  # nothing disguised (accents, other scripts): one scan reads both
            return _replaced(text, find(text, known=hits))
        found = [(*to_original(origin, s, e, len(text)), kind) for s, e, kind in find(folded, known=hits + more)]
        found += find(text, known=hits)
        for o_s, o_e, kind in sorted(found, key=lambda sp: (sp[0], -sp[1])):  # overlaps merge, the longer kind names it
            if spans and o_s < spans[-1][1]:
                if o_e > spans[-1][1]:
                    spans[-1] = (spans[-1][0], o_e, spans[-1][2])
                continue
            spans.append((o_s, o_e, kind))
    return _replaced(text, spans)


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, tuple[str, ...]]:
    """``text`` with each span (sorted, not overlapping) replaced by its marker, and the kinds."""
    if not spans:
        return text, ()
    out: list[str] = []
    last = 0
    for s, e, kind in spans:
        out.append(text[last:s])
        out.append(MARKER.format(kind=kind))
        last = e
    out.append(text[last:])
    return "".join(out), tuple(kind for _, _, kind in spans)


def contains_secret(text: str) -> bool:
    """True when ``redact`` would change ``text``."""
    return bool(redact(text).findings)


def redact_obj(value: Any, findings: list[str] | None = None) -> Any:
    """A copy of a JSON-like value with every string redacted; kinds are appended to ``findings``.

    Dict keys are kept (they are field names), dict key order is preserved.
    """
    local: list[str] = []
    seen: list[str] = []
    marked: list[str] = []  # strings that hold a marker after the walk (a half of a split token?)
    out = _walk(value, local, (), seen, marked)
    # the maintained provider rules run once over all the strings joined, not once per string, and over
    # what our rules left of them (a token our rules took is not looked for again: the provider rules are
    # there for what ours miss); in the rare case they find something, the value is walked again with it
    hits = provider.joined_values(seen) if seen else ()
    if hits:
        local, marked = [], []
        out = _walk(value, local, hits, None, marked)
    if "partial_token" in local or any(_is_half(s) for s in marked):
        out = _other_half(out, local)
    if findings is not None:
        findings.extend(local)
    return out


# commonkeep's own ids and ISO times: their shape leaves no room for a secret
_OWN = re.compile(r"(?:cap|mem|patch|op|inq|intent)_\d{8,14}(?:_[a-z0-9]{2,12})?"
                  r"|\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d{1,6})?)?(?:Z|[+-]\d\d:?\d\d)?)?")


_OWN_START = frozenset("cmpoi2")


# the strings ``_clean`` left as they were, with nothing for the provider rules to read and no marker: the
# walk keeps them without a call of its own (a capture's tags, refs, source and session id repeat). Not a
# capture's text, which rarely comes again (``_clean`` keeps it too): the set would fill with them, and
# each time it grows it is copied whole
_UNTOUCHED = Kept()
_UNTOUCHED_CHARS = 200


def _walk(value: Any, sink: list[str], hits: tuple[provider.Hit, ...], seen: list[str] | None, marked: list[str]) -> Any:
    # hot on big patch files and on every capture: a short string (an id, an enum, a date's tail)
    # cannot hold a secret and is kept without a call of its own, nor is one the walk saw untouched
    # before (not when the provider rules found values: they are looked for in every string); a
    # longer one goes straight to ``_string``
    if isinstance(value, str):
        return _string(value, sink, hits, seen, marked)
    if not hits and (type(value) is dict or type(value) is list):
        return _walk_first(value, sink, seen, marked)
    if isinstance(value, dict):
        return {k: (v if len(v) < 8 else _string(v, sink, hits, seen, marked)) if type(v) is str else _walk(v, sink, hits, seen, marked)
                for k, v in value.items()}
    if isinstance(value, list):
        return [(v if len(v) < 8 else _string(v, sink, hits, seen, marked)) if type(v) is str else _walk(v, sink, hits, seen, marked)
                for v in value]
    if isinstance(value, tuple):  # from a Python caller (a host's provenance): written as a JSON list
        return tuple(_walk(v, sink, hits, seen, marked) for v in value)
    return value


def _walk_first(value: dict[Any, Any] | list[Any], sink: list[str], seen: list[str] | None, marked: list[str]) -> Any:
    """``_walk`` of a plain dict or list where no provider value is known (every capture): a dict's items in
    a loop of this frame (a comprehension is a call of its own), a string the walk saw untouched kept
    without a call; any other value (a tuple, a subclass) goes back to ``_walk``."""
    if type(value) is dict:
        out = {}
        for k, v in value.items():
            if type(v) is str:
                out[k] = v if len(v) < 8 or v in _UNTOUCHED else _string(v, sink, (), seen, marked)
            else:
                out[k] = _walk(v, sink, (), seen, marked)
        return out
    return [(v if len(v) < 8 or v in _UNTOUCHED else _string(v, sink, (), seen, marked)) if type(v) is str
            else _walk(v, sink, (), seen, marked) for v in value]


def _string(value: str, sink: list[str], hits: tuple[provider.Hit, ...], seen: list[str] | None, marked: list[str]) -> str:
    if not hits and 8 <= len(value) <= 4096:  # the common case: one look-up of all a string's answers
        text, kinds, worth, marker = _clean(value)
        if not (kinds or worth or marker):
            if len(value) <= _UNTOUCHED_CHARS:
                _UNTOUCHED.keep(value)
            return text
        if worth and seen is not None:
            seen.append(_for_provider(value, text, kinds))
        if kinds:
            sink.extend(kinds)
        if marker:
            marked.append(text)
        return text
    if len(value) < 8 or (value[:1] in _OWN_START and _OWN.fullmatch(value) is not None):
        return value
    mine = tuple(h for h in hits if h[0] in value) if hits else ()
    if len(value) <= 4096:
        text, kinds = _redact_cached(value, mine) if mine else _redact_cached(value)
    else:
        text, kinds = _redact_uncached(value, mine) if mine or _needs_scan(value) else (value, ())
    if seen is not None and provider.worth_scanning(read := _for_provider(value, text, kinds)):
        seen.append(read)
    if kinds:
        sink.extend(kinds)
    if "[REDACTED:" in text:
        marked.append(text)
    return text


@lru_cache(maxsize=65536)
def _clean(value: str) -> tuple[str, tuple[str, ...], bool, bool]:
    """For ``_string``: a string's redaction with no provider hits, its kinds, whether the provider
    rules should read what our rules left of it (``provider.worth_scanning``) and whether the result
    holds a marker. Captures and patch files repeat their refs, tags, ids and notes: one look-up
    answers all four. Commonkeep's own ids are kept as they are."""
    if value[:1] in _OWN_START and _OWN.fullmatch(value) is not None:
        return value, (), False, False
    # (this answer is kept: the redaction and the provider rules' test are not kept a second time)
    text, kinds = _redact_cached.__wrapped__(value)
    return text, kinds, provider._worth_scanning(_for_provider(value, text, kinds)), "[REDACTED:" in text


# the kinds of our rules of shape: a token they took may be one the provider rules know by name (a Postman key
# taken as ``high_entropy``), so those rules read it whole and name it
_GENERIC = frozenset({"high_entropy", "hex_key", "partial_token", "prefixed_hex_token"})


def _for_provider(value: str, text: str, kinds: tuple[str, ...]) -> str:
    """What the provider rules read of a string: what our rules left of it, or all of it where a rule of
    shape took something."""
    return value if any(k in _GENERIC or k.startswith("encoded") for k in kinds) else text


# the rest of a split token, at the start of another string (``randomness.random_head``)
_HEAD = re.compile(r"^(\s*)([A-Za-z0-9_-]{8,})(?![A-Za-z0-9_-])")
# a string that ends with a redacted token (or holds the first half of one) may be one half
_HALF = re.compile(r"\[REDACTED:partial_token\]|\[REDACTED:([a-z0-9_]+)\][\s.,;:!?)]*$")
# fields that hold ids, dates, enums and digests (``edited.sha256``), never the rest of a token
_ID_KEY = re.compile(r"(?i)(?:^|_)(?:id|ids|at|on|date|status|type|kind|layer|sha\d*|md5|hash|digest|checksum|etag)$")


def _is_half(value: Any) -> bool:
    if not isinstance(value, str) or "[REDACTED:" not in value:
        return False
    m = _HALF.search(value)  # a password, a key of a config line or a phrase is not cut in two: a token is
    return m is not None and (m.group(1) is None or m.group(1) not in _NOT_TOKENS)


_TAG = re.compile(r"(?:[a-z]+|[A-Z][a-z]+)\d{1,4}|\d{1,4}[a-z]+|[vV]?\d+[a-z]{1,3}\d*")
_DIGEST = re.compile(r"[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{56}|[0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128}")


def _named_piece(piece: str) -> bool:
    """A digest, a tag of words and numbers (``python311``, ``ubuntu2204``) or a name from code: not a token's rest."""
    return (_TAG.fullmatch(piece) is not None or _DIGEST.fullmatch(piece) is not None
            or _WORDS_AND_NUMBERS.fullmatch(piece) is not None or _identifier(piece))


def _head(value: str, sink: list[str]) -> str:
    m = _HEAD.match(value)
    # the rest must look random on its own: not a tag (``python311``), a digest or a name from code
    if m is None or not random_head(m.group(2)) or _named_piece(m.group(2)):
        return value
    sink.append("partial_token")
    return m.group(1) + MARKER.format(kind="partial_token") + value[m.end() :]


def _other_half(value: Any, sink: list[str]) -> Any:
    """Where one string of an object ends with a redacted token or holds the first half of one,
    the rest may start another of its strings (a secret split across two fields): such a
    random-looking head is redacted too. An object's strings are its own, those of its lists of
    strings and those of the objects inside it; ids, dates and enums are left alone; the items of
    a list of objects are groups of their own. ``value`` is a fresh copy (``_walk``), changed in place."""
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return [_head(v, sink) for v in value] if any(_is_half(v) for v in value) else value
        return [_other_half(v, sink) for v in value]
    if not isinstance(value, dict):
        return value
    slots: list[tuple[Any, Any]] = []  # (container, key or index) of each string of the group
    inner: list[tuple[Any, Any]] = []  # lists of objects: groups of their own

    def collect(d: dict[Any, Any]) -> None:
        for k, v in d.items():
            if _ID_KEY.search(str(k)):
                continue
            if isinstance(v, str):
                slots.append((d, k))
            elif isinstance(v, dict):
                collect(v)
            elif isinstance(v, list) and all(isinstance(x, str) for x in v):
                slots.extend((v, i) for i in range(len(v)))
            elif isinstance(v, list):
                inner.append((d, k))

    collect(value)
    if any(_is_half(c[k]) for c, k in slots):
        for c, k in slots:
            c[k] = _head(c[k], sink)
    for c, k in inner:
        c[k] = _other_half(c[k], sink)
    return value


def summarize(findings: list[str]) -> str:
    """``"2 openai_key, 1 password_in_url"`` (kinds and counts, never values); ``""`` when none."""
    counts = Counter(findings)
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def redacted_kinds(text: str) -> list[str]:
    """The kinds of secrets already redacted out of ``text`` (its ``[REDACTED:<kind>]`` markers).

    Text on its way to scoring was redacted at capture; this reads what was found there instead
    of scanning the clean text again (which can never find anything).
    """
    return _MARKER_RE.findall(text)


_NAME_MARKER = "REDACTED-{kind}"
_NAME_MARKER_RE = re.compile(r"REDACTED-([a-z0-9_]+)")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def redact_name(name: str) -> Redacted:
    """``redact`` for one file or folder name; markers become the file-name-safe ``REDACTED-<kind>``.

    A token right after ``_`` (``aws_AKIA….md``, ``x_sk_live_….md``) is found as in any text (the
    patterns start at ``_START``, not ``\\b``). An extension the redaction
    swallowed (``password=hunter22.md``) is put back when it holds nothing itself. Idempotent: a
    redacted name redacts to itself.
    """
    red = redact(_NAME_MARKER_RE.sub(r"[REDACTED:\1]", name))
    text, findings = red.text, red.findings
    if not findings:
        return Redacted(name, [])
    ext = _EXTENSION.search(name)
    if ext and not text.endswith(ext.group(0)) and not redact(text + ext.group(0)).findings:
        text += ext.group(0)
    return Redacted(_MARKER_RE.sub(lambda m: _NAME_MARKER.format(kind=m.group(1)), text), findings)

