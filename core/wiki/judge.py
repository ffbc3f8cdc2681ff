"""A deterministic, LLM-free judge for retrieved context (``contracts/dossier.md §9.3``).

It is labelled "RAGAS-style, deterministic judge" wherever its numbers are shown: ID-based
context recall and average precision (the RAGAS formula with v_k = 1 iff the item's id is gold),
gold-fact recall by string containment, and lexical faithfulness - a returned sentence is
faithful when one sentence of the source it cites holds at least 60 % of its content words and
every number and identifier in it verbatim. The judge reads the raw files itself; it shares no
code with the query's grounding filter beyond sentence splitting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from commonkeep.wiki.text import normalise, split_sentences, words

_NUMERIC = re.compile(r"\d")


def average_precision(ranked_ids: Sequence[object], gold: AbstractSet[object]) -> float:
    """Σ_k precision@k · v_k / (Σ v_k + 1e-10), as RAGAS context precision computes it."""
    hits = 0
    total = 0.0
    for k, item in enumerate(ranked_ids, start=1):
        if item in gold:
            hits += 1
            total += hits / k
    return total / (hits + 1e-10)


def id_recall(ranked_ids: Sequence[object], gold: AbstractSet[object]) -> float:
    return len(set(ranked_ids) & gold) / len(gold) if gold else 1.0


def fact_recall(context: str, facts: Sequence[str]) -> tuple[float, list[str]]:
    """Share of gold fact strings found in the context (whitespace- and case-insensitive)."""
    ctx = normalise(context)
    missing = [f for f in facts if normalise(f) not in ctx]
    return (1.0 - len(missing) / len(facts)) if facts else 1.0, missing


def _anchors(text: str) -> set[str]:
    return {w.casefold() for w in words(text) if _NUMERIC.search(w) or "-" in w}


def claim_supported(claim: str, source_text: str, threshold: float = 0.6) -> bool:
    """True when one sentence of ``source_text`` supports ``claim`` lexically (§9.3 item 3)."""
    tokens = {w.casefold() for w in words(claim)}
    if not tokens:
        return True
    anchors = _anchors(claim)
    for s in split_sentences(source_text):
        have = {w.casefold() for w in words(s.text)}
        if anchors <= have and len(tokens & have) / len(tokens) >= threshold:
            return True
    return False


def faithfulness(claims: Sequence[tuple[str, str]]) -> float:
    """Share of (claim, cited source text) pairs that the source supports."""
    if not claims:
        return 1.0
    return sum(1 for c, src in claims if claim_supported(c, src)) / len(claims)
