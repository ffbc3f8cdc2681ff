"""Secret scanning and redaction (placeholder API; the governance part owns and extends it).

``redact(text)`` returns the text with every secret replaced by ``[REDACTED:<kind>]`` and the
list of kinds found (never the values), so callers can report what was redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)")),
    ("openai_key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}")),
    ("aws_access_key", re.compile(r"\bAKIA[0-9A-Z]{16}\b")),
)


@dataclass
class Redacted:
    text: str
    findings: list[str] = field(default_factory=list)


def redact(text: str) -> Redacted:
    """Replace every secret in ``text``; ``findings`` lists the kinds, one per secret."""
    findings: list[str] = []
    for kind, pattern in _PATTERNS:
        def sub(_m: re.Match[str], kind: str = kind) -> str:
            findings.append(kind)
            return f"[REDACTED:{kind}]"

        text = pattern.sub(sub, text)
    return Redacted(text, findings)
