"""The secret rules as they were before issue 15, frozen: the baseline of ``commonkeep bench secrets``.

Not used by the gate (``commonkeep.secrets`` is); kept so the benchmark prints the old
figures beside the new ones from the same run. Do not fix anything here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

MARKER = "[REDACTED:{kind}]"
_MARKER_RE = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")

_ASSIGN_NAMES = (
    r"(?:(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
    r"|auth[_-]?key|private[_-]?key|client[_-]?secret|credentials?))"
)

# values that name where a secret comes from rather than being one (code and config templates)
_PLACEHOLDER = r"\$|\{\{|<|%\(|os\.environ|os\.getenv|process\.env|getenv|env\.|None\b|null\b|true\b|false\b|\*{3,}|x{6,}|changeme\b|required\b"

# Where a token may start: not inside a longer word or number, but right after ``_`` too
# (``key_AKIA…``, ``token_ghp_…``), which ``\b`` would miss (``_`` is a word character).
_START = r"(?<![A-Za-z0-9])"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
    ),
    ("anthropic_key", re.compile(_START + r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}")),
    ("openai_key", re.compile(_START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github_token", re.compile(_START + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab_token", re.compile(_START + r"glpat-[A-Za-z0-9_-]{20,}")),
    ("slack_token", re.compile(_START + r"xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack_webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}")),
    ("stripe_key", re.compile(_START + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google_api_key", re.compile(_START + r"AIza[0-9A-Za-z_-]{35}")),
    ("aws_access_key", re.compile(_START + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}\b")),
    ("huggingface_token", re.compile(_START + r"hf_[A-Za-z0-9]{30,}")),
    ("npm_token", re.compile(_START + r"npm_[A-Za-z0-9]{36}\b")),
    ("sendgrid_key", re.compile(_START + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("twilio_key", re.compile(_START + r"SK[0-9a-fA-F]{32}\b")),
    ("jwt", re.compile(_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("bearer_token", re.compile(r"(?i)\b(?:bearer|basic) (?!\[REDACTED)(?P<v>[A-Za-z0-9._~+/=-]{16,})")),
    (
        "password_in_url",
        re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/@\[\]]{1,64}:(?!\[REDACTED)(?P<v>[^\s@/]{1,256})@"),
    ),
    (
        "password_assignment",
        re.compile(
            r"(?i)" + _ASSIGN_NAMES + r"[\"']?\s*[:=]\s*[\"']?(?!\[REDACTED)(?!" + _PLACEHOLDER + r")(?P<v>[^\s\"',;]{6,})"
        ),
    ),
)

_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
# A cheap pre-check that matches wherever any pattern above could (each has a literal anchor, a
# 16+ alphanumeric run, or a 32+ token run), so most strings are scanned once and left alone.
_ANY = re.compile(
    r"[A-Za-z0-9]{16,}|[A-Za-z0-9+/_=-]{32,}|://|eyJ|AIza|glpat-|sk-|SG\.|xox|-----BEGIN|bearer|basic"
    r"|pass|pwd|secret|token|key|credential",
    re.I,
)


@dataclass
class Redacted:
    """The redacted text and the kinds of secret found in it (one entry per secret)."""

    text: str
    findings: list[str] = field(default_factory=list)


def shannon_entropy(s: str) -> float:
    """Bits per character of ``s``."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _looks_random(token: str) -> bool:
    core = token.strip("=")
    if len(core) < 32 or core.startswith("REDACTED"):
        return False
    if not (re.search(r"[A-Z]", core) and re.search(r"[a-z]", core) and re.search(r"[0-9]", core)):
        return False
    return shannon_entropy(core) >= 4.2


def _sub(kind: str, findings: list[str]) -> Callable[[re.Match[str]], str]:
    def replace(m: re.Match[str]) -> str:
        findings.append(kind)
        marker = MARKER.format(kind=kind)
        if "v" not in m.re.groupindex:
            return marker
        whole, start = m.group(0), m.start()
        return whole[: m.start("v") - start] + marker + whole[m.end("v") - start :]

    return replace


def redact(text: str) -> Redacted:
    """Replace every secret in ``text``; ``findings`` lists the kinds, one per secret."""
    if len(text) < 8:
        return Redacted(text, [])
    if len(text) > 4096:
        return Redacted(*_split(_redact_uncached(text) if _ANY.search(text) else (text, ())))
    clean, kinds = _redact_cached(text)
    return Redacted(clean, list(kinds))


@lru_cache(maxsize=65536)
def _redact_cached(text: str) -> tuple[str, tuple[str, ...]]:
    # patch files and records repeat the same strings (refs, notes, change conditions) many times
    if not _ANY.search(text):  # the common case: one scan, nothing to replace
        return text, ()
    return _redact_uncached(text)


def _split(result: tuple[str, tuple[str, ...]]) -> tuple[str, list[str]]:
    return result[0], list(result[1])


def _redact_uncached(text: str) -> tuple[str, tuple[str, ...]]:
    findings: list[str] = []
    for kind, pattern in _PATTERNS:
        text = pattern.sub(_sub(kind, findings), text)

    def entropy_sub(m: re.Match[str]) -> str:
        if _looks_random(m.group(0)):
            findings.append("high_entropy")
            return MARKER.format(kind="high_entropy")
        return m.group(0)

    text = _TOKEN.sub(entropy_sub, text)
    return text, tuple(findings)
