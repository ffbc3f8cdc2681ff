"""The first layer of the secret gate: a maintained rule set of hundreds of providers.

Kingfisher (``kingfisher-secret-scanner``, MongoDB's scanner, Rust and Vectorscan in process,
no network) with its built-in catalogue: the Betterleaks rules (gitleaks' successor, ~460
providers) and OSV-Scalibr's Veles detectors, loaded from the installed package. It was chosen
by measurement (``commonkeep bench secrets`` runs it alone as a column): it found every provider
token of the generated corpus that its rules know, changed no benign text, and costs ~20 µs a
text, where Betterleaks' own Python binding costs ~60 µs (``docs/security.md``).

``provider_values(text)`` returns the secret values found, with a kind named after the rule
(``github_pat``, ``generic_credential_uri``); callers look the values up in each field, so one
candidate is scanned once, all its fields joined. The compiled rules are cached on disk by
Kingfisher (first load ~3 s, then ~0.3 s), and loaded only when a text could hold a token (12+ letters and digits in a row, mixed).
Without the package the layer is skipped and our own rules still run.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Any

Hit = tuple[str, str]  # (secret value, kind)

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
    for m in _STRETCH.finditer(text):
        s = m.group(0)
        if not (s.isalpha() or s.isdigit()) or (s.isalpha() and not (s.islower() or s.isupper())):
            return True  # letters and digits mixed, or both cases (a run of digits alone is a date or a number)
    return False
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

                rules = kingfisher_sdk.Rules()
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


@lru_cache(maxsize=16384)
def _scan(text: str) -> tuple[Hit, ...]:
    scanner = _scanner()
    if scanner is None:
        return ()
    try:
        findings = scanner.scan(_TRAILING.sub(lambda m: " " * len(m.group(0)), text))
    except (RuntimeError, TimeoutError, ValueError):
        return ()
    hits: dict[str, str] = {}
    for f in findings:
        if not f.visible:
            continue
        value = f.secret
        if isinstance(value, str) and len(value.strip()) >= MIN_VALUE and "[REDACTED" not in value:
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
