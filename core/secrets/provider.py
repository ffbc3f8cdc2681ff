"""The first layer of the secret gate: a maintained rule set of hundreds of providers.

Kingfisher (``kingfisher-secret-scanner``, MongoDB's scanner, Rust and Vectorscan in process,
no network) with its built-in catalogue: the Betterleaks rules (gitleaks' successor, ~460
providers) and OSV-Scalibr's Veles detectors, loaded from the installed package. It was chosen
by measurement (``commonkeep bench secrets`` runs it alone as a column): it found every provider
token of the generated corpus that its rules know, changed no benign text, and costs ~20 µs a
text, where Betterleaks' own Python binding costs ~60 µs (``docs/security.md``).

``provider_values(text)`` returns the secret values found, with a kind named after the rule
(``github_pat``, ``generic_credential_uri``); callers look the values up in each field, so one
candidate is scanned once, all its fields joined, each as our rules of place left it (a token they
took is not looked for again; one our rules of shape took is read whole, so that it gets its name). The compiled rules are cached on disk by
Kingfisher (first load ~3 s, then ~0.3 s), and loaded only when a text could hold a token (12+ letters and digits in a row, mixed).
A short-lived ``commonkeep`` command does not load them at all: it asks the scanner service
(``scanner_service.py``), which loaded them once, and scans here only when it gets no answer.
A process that goes on scanning (that one, a host's) first asks the net of Kingfisher's own patterns
(``provider_net.py``): where none could match, Kingfisher is not asked.
Without the package the layer is skipped and our own rules still run.
"""

from __future__ import annotations

import os
import re
import threading
from functools import lru_cache
from typing import Any

from commonkeep.secrets import provider_net, public
from commonkeep.secrets.identifier import CODE_WORDS, SHORT_WORDS

Hit = tuple[str, str]  # (secret value, kind)

#: ``0`` turns the scanner service off (``scanner_service.py``): every process loads the rules itself
SERVICE_OFF = "COMMONKEEP_SCANNER_SERVICE"
#: set by the CLI to its own pid: that process asks the scanner service (``commonkeep.cli``)
SERVICE_CLIENT = "COMMONKEEP_SCANNER_CLIENT"

_LOCK = threading.Lock()
_STATE: dict[str, Any] = {}
# a token's random part: 12+ letters and digits in a row, mixing letters and digits or cases
# (slugs such as ``fact-the-service-on-port`` and plain words have none)
_STRETCH = re.compile(r"[A-Za-z0-9]{12,}")


@lru_cache(maxsize=65536)
def worth_scanning(text: str) -> bool:
    """Could ``text`` hold a token the provider rules know (see ``_STRETCH``)?"""
    return _worth_scanning(text)


def _worth_scanning(text: str) -> bool:
    strong: list[tuple[int, int]] | None = None
    for m in _STRETCH.finditer(text):
        s = m.group(0)
        if s.isdigit() or (s.isalpha() and (s.islower() or s.isupper())):
            continue  # a run of digits alone is a date or a number; one case of letters alone is a word
        # letters and digits mixed, or both cases: worth it, unless the run is inside a structure public
        # by design (a hash after its algorithm, a public key: ``public.strong_spans``; a key's base64
        # holds dozens of such runs), the whole text is one UUID (a host's session id: the provider
        # rules that read UUIDs want a name beside them), or the run is a name a person chose
        if strong is None:
            if _ONLY_UUID.fullmatch(text):
                return False
            strong = public.strong_spans(text)
        start, end = m.span()
        if strong and any(a <= start and end <= b for a, b in strong):
            continue
        if not _named(s):
            return True
    return False


_ONLY_UUID = re.compile(r"\s*[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\s*")


_NUMBERS = re.compile(r"[0-9]+")
_LETTERS = re.compile(r"[A-Za-z]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
# a spoken word: a vowel, no four consonants in a row (``Connection``, ``Pool``; not ``Xq``, ``kqxz``)
_SPOKEN = re.compile(r"(?i)(?=[a-z]*[aeiouy])(?![a-z]*[b-df-hj-np-tv-xz]{4})[a-z]{3,}")


def _named(run: str) -> bool:
    """A name a person chose, not the random part of a token: ``HTTPSConnectionPoolV2``, ``python311``,
    ``AES256GcmCipher``: its numbers are short (4 digits at most, 3 numbers at most) and 80 % of its
    letters are in spoken words of 3+ letters (one of 4+ at least) or acronyms of 2 to 5 capitals. A random token of letters
    and digits breaks into pieces that are neither (``a8Fk2LmQ9x``: ``Fk``, ``LmQ``), and a long
    number or many numbers (a hex key) count against it; so the maintained scanner is not loaded
    (~0.3 s a process) for a CamelCase name or a tag."""
    numbers = _NUMBERS.findall(run)
    if len(numbers) > 3 or any(len(p) > 4 for p in numbers):
        return False
    pieces = _LETTERS.findall(run)
    letters = sum(map(len, pieces))
    wordy = longest = 0
    for p in pieces:
        for w in _CAMEL.findall(p):
            if _SPOKEN.fullmatch(w):
                wordy += len(w)
                longest = max(longest, len(w))
            elif (w.isupper() and 2 <= len(w) <= 5) or w.lower() in SHORT_WORDS or w.lower() in CODE_WORDS:  # ``AES``, ``By``, ``Http``
                wordy += len(w)
    return longest >= 4 and wordy >= 0.8 * letters
_SLUG = re.compile(r"[^a-z0-9]+")
# sentence punctuation right after a token: many rules end a token at a space, a quote or the end,
# so "…use dapi….": the text is scanned with such punctuation read as spaces (same length)
_TRAILING = re.compile(r"[.,;:!?)\]}>]+(?=\s|$)")
MIN_VALUE = 6  # a shorter "secret" would be found inside ordinary words of other fields


def available() -> bool:
    """True when the maintained detector is installed and loads."""
    return _scanner() is not None


def _scanner() -> Any:
    if "scanner" in _STATE:
        return _STATE["scanner"]
    with _LOCK:
        if "scanner" not in _STATE:
            try:
                import kingfisher_sdk

                rules = _STATE["rules"] = kingfisher_sdk.Rules()
                _STATE["scanner"] = kingfisher_sdk.Scanner(rules, base64=True)
            except Exception:  # noqa: BLE001 - not installed or no rules: the layer is skipped, ours still run
                _STATE["scanner"] = None
    return _STATE["scanner"]


def kind_of(rule_id: str) -> str:
    """``betterleaks.github-pat`` -> ``github_pat``; ``veles.secrets/gcpsak`` -> ``gcpsak``."""
    name = rule_id.split("/")[-1]
    for prefix in ("betterleaks.", "kingfisher.", "custom.", "veles."):
        if name.startswith(prefix):
            name = name[len(prefix):]
    return _SLUG.sub("_", name.lower()).strip("_") or "provider_token"


def provider_values(text: str) -> tuple[Hit, ...]:
    """The secret values the maintained rules find in ``text`` (longest first), with their kinds."""
    if len(text) < 16 or not _worth_scanning(text):  # the common case, not worth a cache entry
        return ()
    return _scan(text)


def joined_values(parts: list[str]) -> tuple[Hit, ...]:
    """``provider_values("\\n".join(parts))`` for strings each ``worth_scanning``: the joined text is
    worth scanning too (a line break ends a run of letters and digits, so its runs are the parts'
    runs), and it is not asked again."""
    text = "\n".join(parts)
    return _scan(text) if len(text) >= 16 else ()


@lru_cache(maxsize=16384)
def _scan(text: str) -> tuple[Hit, ...]:
    if "scanner" not in _STATE and _service_on():  # a short-lived CLI process: ask the scanner service
        try:
            from commonkeep.secrets import scanner_service

            hits = scanner_service.ask(text)
        except Exception:  # noqa: BLE001 - whatever went wrong there, the text is scanned here
            hits = None
        if hits is not None:
            return hits
    return _scan_here(text)  # no answer (whatever the reason): scanned here, as without the service


def _service_on() -> bool:
    """Does this process ask the scanner service (``scanner_service.py``)? Only the process the CLI
    marked as its own (its pid in ``SERVICE_CLIENT``; a child inherits a pid that is not its own),
    and not with ``COMMONKEEP_SCANNER_SERVICE=0``."""
    return os.environ.get(SERVICE_OFF) != "0" and os.environ.get(SERVICE_CLIENT) == str(os.getpid())


def _scan_here(text: str) -> tuple[Hit, ...]:
    """The scan itself, in this process (uncached: the scanner service keeps no text)."""
    scanner = _scanner()
    if scanner is None:
        return ()
    read = _TRAILING.sub(lambda m: " " * len(m.group(0)), text)
    if provider_net.finds_nothing(read, _STATE.get("rules")):  # none of its patterns could match (a long-lived process)
        return ()
    try:
        findings = scanner.scan(read)
    except (RuntimeError, TimeoutError, ValueError):
        return ()
    hits: dict[str, str] = {}
    for f in findings:
        if not f.visible:
            continue
        value = f.secret
        if isinstance(value, str) and len(value.strip()) >= MIN_VALUE and "REDACTED" not in value:  # not a marker of ours
            hits.setdefault(value.strip(), kind_of(f.rule_id))
    return tuple(sorted(hits.items(), key=lambda h: -len(h[0])))


def spans(text: str, hits: tuple[Hit, ...]) -> list[tuple[int, int, str]]:
    """Every place in ``text`` where one of ``hits`` occurs."""
    out: list[tuple[int, int, str]] = []
    for value, kind in hits:
        start = text.find(value)
        while start >= 0:
            out.append((start, start + len(value), kind))
            start = text.find(value, start + len(value))
    return out
