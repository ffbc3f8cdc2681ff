"""The one path by which any agent writes a long-term candidate.

The CLI (``commonkeep write``), the Hermes plugin, the MCP server and scripts all call
``capture``: build the candidate (secrets redacted, provenance stamped), score it with the
governance rules when that part is present, append it to the shared inbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store


@dataclass
class Captured:
    """What ``capture`` wrote: the candidate and the kinds of secrets it redacted."""

    candidate: dict[str, Any]
    redacted: list[str] = field(default_factory=list)
    inbox: Path | None = None


def score(store: Store, cand: dict[str, Any]) -> dict[str, Any]:
    """Attach the governance scores (trust, worth, risk, matches) when that part is installed."""
    try:
        from commonkeep.governance import scoring
    except ImportError:
        return cand
    fn = getattr(scoring, "score_candidate", None)
    if fn is None:
        return cand
    scored: dict[str, Any] = fn(cand, store)
    return scored


def capture(root: Path | str, text: str, **kwargs: Any) -> Captured:
    """Write one candidate into the inbox of ``root``; keyword arguments as ``new_candidate``."""
    store = Store(root)
    findings: list[str] = []
    cand = new_candidate(text, findings=findings, **kwargs)
    cand = score(store, cand)
    store.append_candidate(cand)
    return Captured(cand, findings, store.layout.inbox)
