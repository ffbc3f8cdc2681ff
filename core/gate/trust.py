"""The gate's vocabulary of trust: the trust classes (contract §6.1), risk levels, durability signals
and the curator's defaults (§6.6). Plain data beneath both the detection (``scoring``, ``poisoning``)
and the policy (``autoapply``), so neither imports the other for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Risk = Literal["low", "medium", "high"]


RISK_ORDER: dict[str, int] = {"low": 0, "medium": 1, "high": 2}


@dataclass(frozen=True)
class TrustClass:
    """One row of §6.1."""

    weight: float
    base: float
    low_trust: bool
    risk: Risk


TRUST_CLASSES: dict[str, TrustClass] = {
    "direct_user_instruction": TrustClass(1.0, 0.90, False, "low"),
    "user_correction": TrustClass(1.0, 0.90, False, "low"),
    "repeated_user_preference": TrustClass(0.9, 0.86, False, "low"),
    "accepted_code_review_outcome": TrustClass(0.8, 0.82, False, "low"),
    "existing_project_convention": TrustClass(0.65, 0.82, False, "low"),
    "passing_tool_or_test_outcome": TrustClass(0.55, 0.72, False, "low"),
    "agent_inference": TrustClass(0.35, 0.55, True, "medium"),
    "single_session_observation": TrustClass(0.3, 0.58, True, "medium"),
    "repository_text": TrustClass(0.25, 0.55, True, "high"),
    "generated_content": TrustClass(0.2, 0.45, True, "high"),
    "third_party_documentation": TrustClass(0.2, 0.62, True, "high"),
}


USER_TRUST = frozenset({"direct_user_instruction", "user_correction", "repeated_user_preference"})


DURABILITY_SIGNALS = ("temporary", "session", "task", "project", "repository", "user_global", "long_term", "unknown")


NON_DURABLE = frozenset({"temporary", "session", "task"})


# §6.6 curator defaults
MIN_CONFIDENCE = 0.75


MIN_EVIDENCE_COUNT = 2


AUTO_CURATE_HIGH_THRESHOLD = 0.85


DEFAULT_CANDIDATE_CONFIDENCE = 0.75


def max_risk(*risks: str) -> Risk:
    """The highest of the given risk levels (``low`` when none)."""
    best: Risk = "low"
    for r in risks:
        if RISK_ORDER.get(r, 0) > RISK_ORDER[best]:
            best = r  # type: ignore[assignment]
    return best


def trust_weight(trust_class: str | None) -> float | None:
    """``source_trust_weight`` of a trust class, ``None`` for an unknown or missing class."""
    tc = TRUST_CLASSES.get(trust_class or "")
    return tc.weight if tc else None
