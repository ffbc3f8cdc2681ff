"""Which records are hard rules (§6.11), for the projection and the search index alike.

Its own module so that an apply's search-index sync (``search.delta``) does not import the whole
projection (``recall.projection`` re-exports these names).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HARD_RULE_TYPES = ("avoid_pattern", "prefer_pattern", "correction", "convention")
HARD_RULE_MIN_CONFIDENCE = 0.85


def is_hard_rule(record: Mapping[str, Any]) -> bool:
    """§6.11: active L2, confidence ≥ 0.85, ruleType avoid/prefer pattern, correction or convention."""
    return (
        record.get("layer") == "L2"
        and record.get("status") == "active"
        and float(record.get("confidence", 0) or 0) >= HARD_RULE_MIN_CONFIDENCE
        and record.get("ruleType") in HARD_RULE_TYPES
    )
