"""Scoring of capture candidates: trust, durability, eligibility, confidence and memory-worth.

Numbers and rules are the contract's (``contracts/ompkeep-store.md`` §6.1–§6.6, §6.9). Pure
functions over plain candidate dicts; nothing here touches the disk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from commonkeep.gate.trust import (  # the vocabulary moved beneath scoring and the policy in 0.3; these names keep importing from here
    AUTO_CURATE_HIGH_THRESHOLD,  # noqa: F401
    DEFAULT_CANDIDATE_CONFIDENCE,  # noqa: F401
    DURABILITY_SIGNALS,  # noqa: F401
    MIN_CONFIDENCE,  # noqa: F401
    MIN_EVIDENCE_COUNT,  # noqa: F401
    NON_DURABLE,  # noqa: F401
    RISK_ORDER,  # noqa: F401
    TRUST_CLASSES,  # noqa: F401
    USER_TRUST,  # noqa: F401
    Risk,  # noqa: F401
    TrustClass,  # noqa: F401
    max_risk,  # noqa: F401
    trust_weight,  # noqa: F401
)


def has_trust_metadata(cand: dict[str, Any]) -> bool:
    """Legacy candidates (compatibility mode) carry no ``primary_trust_class``."""
    return bool(cand.get("primary_trust_class"))


_TEMPORARY = re.compile(r"\b(for now|temporar(?:y|ily)|right now|today|until (?:tomorrow|later)|for the moment)\b", re.I)
_SESSION = re.compile(r"\b(this session|in this chat|this conversation)\b", re.I)
_TASK = re.compile(r"\b(this task|for this (?:task|ticket|pr|change)|just here)\b", re.I)  # a bare "here" is the project
_GLOBAL = re.compile(r"\b(always|never|from now on|in general|every project|all projects|by default)\b", re.I)
_PROJECT = re.compile(r"\b(this (?:project|repo|repository|codebase)|in this repo)\b", re.I)


def infer_durability(text: str) -> str:
    """A durability signal (§6.2) from wording alone; ``unknown`` when nothing says."""
    if _TEMPORARY.search(text):
        return "temporary"
    if _SESSION.search(text):
        return "session"
    if _TASK.search(text):
        return "task"
    if _GLOBAL.search(text):
        return "long_term"
    if _PROJECT.search(text):
        return "project"
    return "unknown"


def proposed_layer(cand: dict[str, Any]) -> str:
    """``L1`` for identity/profile candidates (``proposed_layer``/``layer`` field or tag), else ``L2``."""
    layer = cand.get("proposed_layer") or cand.get("layer")
    if layer in ("L1", "L2"):
        return str(layer)
    tags = {str(t).lower() for t in cand.get("tags") or []}
    return "L1" if tags & {"l1", "identity"} else "L2"


def promotion_eligibility(layer: str, durability: str | None, trust_class: str | None) -> str:
    """§6.3, first matching rule wins."""
    if layer == "L1":
        return "l1_review_only"
    if not durability or durability == "unknown" or durability in NON_DURABLE:
        return "review_only"
    tc = TRUST_CLASSES.get(trust_class or "")
    if tc is None or tc.low_trust:
        return "review_only"
    if trust_class in USER_TRUST:
        return "auto_candidate"
    return "review_only"


def auto_apply_blockers(
    cand: dict[str, Any], governance_mode: str = "compatibility", writer_role: str | None = None, root: Any = None
) -> list[str]:
    """Why a candidate of ``root`` may not be auto-applied (§6.4 and ``commonkeep.gate.autoapply``); empty when it may.

    A trust class and an eligibility count only when a host or the writer stamped the candidate
    (``autoapply.stamped_trust``); claimed without a stamp, the candidate is judged as one without
    trust metadata, so the claim never lifts it over the gate. Checks that only hold a candidate
    back (its own ``review_required`` or ``review_only``, a non-durable signal, a conflicting match)
    apply either way.
    """
    from commonkeep.gate.autoapply import policy_blockers, stamped_trust

    strict = governance_mode == "strict"
    why: list[str] = []
    if "[REDACTED:" in str(cand.get("text", "")):
        why.append("secrets were redacted from the text")
    if cand.get("poisoning_risk") == "high":
        why.append("poisoning risk is high")
    why += policy_blockers(cand, writer_role, root)
    prov = cand.get("provenance")
    if isinstance(prov, dict) and (prov.get("requeued_by") or prov.get("requeued_from")):
        why.append("a person undid its decision: it waits for a person")  # whatever stamp it carried (issue 40)
    if not has_trust_metadata(cand):
        return [*why, "strict governance requires trust metadata"] if strict else why
    claimed_only = stamped_trust(cand, writer_role, root) is None  # the trust class (and eligibility) are only claimed
    if cand.get("verification_status") in ("rejected", "review_required"):
        why.append(f"verification_status is {cand['verification_status']}")
    if cand.get("match_kind") in ("potential_conflict", "supersedes_existing", "ambiguous"):
        why.append(f"match is {cand['match_kind']}")
    if cand.get("durability_signal") in NON_DURABLE:
        why.append(f"durability is {cand['durability_signal']}")
    elig = cand.get("promotion_eligibility")
    if elig not in ("auto_candidate", "auto_apply_l2") and (elig or not claimed_only):  # a claim may only hold back
        why.append(f"eligibility is {elig or 'missing'}")
    if claimed_only:
        return [*why, "its trust is claimed, not stamped by a host or the writer"] if strict else why
    if strict:
        if cand.get("verification_status") in (None, "legacy_unverified"):
            why.append("strict governance requires a non-legacy verification")
        if not cand.get("evidence_ids") and cand.get("primary_trust_class") != "direct_user_instruction":
            why.append("strict governance requires evidence_ids")
    return why


@dataclass
class ConfidenceResult:
    """``computeCandidateConfidence`` (§6.5): the value, its cap and why."""

    confidence: float
    cap: float
    review_required: bool
    reasons: list[str] = field(default_factory=list)


def compute_confidence(
    *,
    trust_class: str | None,
    durability: str | None = None,
    supplied: float | None = None,
    has_structured_evidence: bool = False,
    codebase_analysis: bool = False,
    redacted_evidence: bool = False,
    contradiction: bool = False,
    corroboration: float = 0.0,
    reinforcement: float = 0.0,
    stale: bool = False,
    strict: bool = False,
) -> ConfidenceResult:
    """Confidence of a candidate from its trust and evidence (§6.5); the lowest applicable cap wins.

    ``corroboration`` and ``reinforcement`` are 0..1 strengths, scaled to +0.08 and +0.06.
    """
    tc = TRUST_CLASSES.get(trust_class or "")
    base = tc.base if tc else 0.5
    cap = 0.95
    reasons: list[str] = []

    def lower(to: float, why: str) -> None:
        nonlocal cap
        reasons.append(why)
        cap = min(cap, to)

    if tc is None:
        lower(0.49 if strict else 0.7, "trust metadata missing")
    elif tc.low_trust:
        lower(0.64, "low-trust class")
    if codebase_analysis:
        lower(0.78, "codebase-analysis evidence")
    if not has_structured_evidence:
        lower(0.49 if strict else 0.72, "no structured evidence")
    if redacted_evidence:
        lower(0.35, "redacted evidence")
    if contradiction:
        lower(0.55, "contradiction signals")
        base -= 0.18
    if durability in NON_DURABLE:
        lower(0.68, "non-durable signals")
    base += 0.08 * max(0.0, min(1.0, corroboration))
    base += 0.06 * max(0.0, min(1.0, reinforcement))
    if stale:
        base -= 0.08
    if supplied is not None:
        base = (base + float(supplied)) / 2
    value = round(max(0.1, min(cap, base)), 4)
    return ConfidenceResult(value, cap, value < 0.85 or cap < 0.85, reasons)


def candidate_confidence(cand: dict[str, Any]) -> float:
    """The confidence the curator gates on: the stored one, else computed from trust metadata."""
    c = cand.get("confidence")
    if isinstance(c, int | float) and not isinstance(c, bool):
        return float(c)
    return compute_confidence(
        trust_class=cand.get("primary_trust_class"),
        durability=cand.get("durability_signal"),
        has_structured_evidence=bool(cand.get("evidence_ids")),
    ).confidence


# §6.9 memory-worth
WORTH_WEIGHTS: dict[str, float] = {
    "explicit": 0.18,
    "recurrence": 0.16,
    "correction": 0.18,
    "operational_impact": 0.14,
    "reuse": 0.12,
    "specificity": 0.08,
    "scope_clarity": 0.07,
    "evidence": 0.07,
    "sensitivity": -0.25,
    "volatility": -0.12,
}
_WORTH_CUES: dict[str, re.Pattern[str]] = {
    "explicit": re.compile(r"\b(remember|always|never|from now on|make sure|please note|prefer|must|do not|don't)\b", re.I),
    "recurrence": re.compile(r"\b(again|every time|each time|repeatedly|keeps?|as (?:usual|before)|recurring)\b", re.I),
    "correction": re.compile(r"\b(actually|instead|wrong|incorrect|not correct|correction|should not|shouldn't|no longer)\b", re.I),
    "operational_impact": re.compile(r"\b(break|breaks|fail|fails|deploy|build|tests?|production|migrat\w*|error|crash|ci)\b", re.I),
    "reuse": re.compile(r"\b(whenever|in general|convention|every|all (?:projects|repos|files)|by default|always)\b", re.I),
    "scope_clarity": re.compile(r"\b(project|repo|repository|module|package|service|file|directory)\b", re.I),
    "volatility": _TEMPORARY,
}
_SPECIFIC = re.compile(r"`[^`]+`|\b[\w.-]+\.(?:py|ts|js|md|json|toml|yaml|yml|sh)\b|--?[a-z][\w-]*|\b\d+(?:\.\d+)*\b")


@dataclass
class Worth:
    """The memory-worth decision for a text (§6.9)."""

    decision: str
    score: float
    reasons: list[str]


def memory_worth(
    text: str,
    *,
    evidence_count: int = 0,
    duplicate_of: str | None = None,
    secret_kinds: list[str] | None = None,
    secret_requested: bool = False,
) -> Worth:
    """Score a text for long-term memory: ``candidate``, ``daily_only``, ``inquiry`` or ``reject``."""
    signals: list[str] = [k for k, rx in _WORTH_CUES.items() if rx.search(text)]
    if _SPECIFIC.search(text) or len(text.split()) >= 8:
        signals.append("specificity")
    if evidence_count > 0:
        signals.append("evidence")
    if secret_kinds:
        signals.append("sensitivity")
    score = round(sum(WORTH_WEIGHTS[s] for s in signals), 4)
    reasons = [f"{s} {WORTH_WEIGHTS[s]:+.2f}" for s in signals]
    words = re.findall(r"\w+", text)
    if len(words) < 3 or len(text.strip()) < 12:
        return Worth("reject", score, [*reasons, "trivial text"])
    if duplicate_of:
        return Worth("reject", score, [*reasons, f"duplicate of {duplicate_of}"])
    if secret_kinds and not secret_requested:
        return Worth("reject", score, [*reasons, "unrequested secret"])
    override = "correction" in signals or ("explicit" in signals and "operational_impact" in signals)
    if score >= 0.58 or (override and score >= 0.35):
        return Worth("candidate", score, reasons)
    if score < 0.35:
        return Worth("reject", score, [*reasons, "worth below 0.35"])
    if "volatility" in signals:
        return Worth("daily_only", score, reasons)
    if text.rstrip().endswith("?"):
        return Worth("inquiry", score, reasons)
    return Worth("daily_only", score, reasons)


def enrich_candidate(
    cand: dict[str, Any], index: Any = None, governance_mode: str = "compatibility", writer_role: str | None = None,
    root: Any = None,
) -> dict[str, Any]:
    """A copy of ``cand`` with the governance fields of §4.2 filled in (stored values win).

    Trust weight, durability, eligibility and confidence are added only for candidates that
    carry a trust class (legacy candidates stay legacy, §6.4); poisoning risk and matching
    (against ``index``, a ``commonkeep.gate.matching.MatchIndex``) are always computed. Memory-worth
    (§6.9) is not added here (it would change how another curator reads the inbox): ``review``
    computes it for display.

    ``promotion_eligibility`` states commonkeep's decision, for OmpKeep's curator too (it reads the
    field, ``contracts/ompkeep-store.md`` §6.4): a candidate no host or writer stamped
    (``autoapply.stamped_trust``) is ``review_only`` whatever it claims; a claimed other value is kept
    in ``claimed_promotion_eligibility`` for display. ``root`` is the candidate's root (its stamp is
    checked against the stamp journal for it).
    """
    # the modules from their package, not names from each module: an import statement in a function
    # costs every capture ~0.5 µs a name from a module (1.5 µs from one with a ``__getattr__``)
    from commonkeep.gate import autoapply, matching, poisoning

    out = dict(cand)
    text = str(out.get("text", ""))
    tags = [str(t) for t in out.get("tags") or []]
    tc = out.get("primary_trust_class")
    if tc:
        if "source_trust_weight" not in out and trust_weight(tc) is not None:
            out["source_trust_weight"] = trust_weight(tc)
        out.setdefault("durability_signal", infer_durability(text))
        out.setdefault("promotion_eligibility", promotion_eligibility(proposed_layer(out), out["durability_signal"], tc))
        if "confidence" not in out:
            out["confidence"] = compute_confidence(
                trust_class=tc,
                durability=out["durability_signal"],
                has_structured_evidence=bool(out.get("evidence_ids")),
                strict=governance_mode == "strict",
            ).confidence
    if autoapply.stamped_trust(out, writer_role, root) is None and out.get("promotion_eligibility") not in ("review_only", "l1_review_only", "never"):
        if out.get("promotion_eligibility"):
            out["claimed_promotion_eligibility"] = out["promotion_eligibility"]
        out["promotion_eligibility"] = "review_only"
    if "normalized_key" not in out:
        src = out.get("source") or {}
        scope = {"type": "project", "project": _project_name(src.get("cwd"))} if isinstance(src, dict) and src.get("cwd") else None
        key = matching.normalized_key(profile_id=out.get("profile_id"), scope=scope, tags=tags, rule_type=out.get("ruleType"))
        if key:
            out["normalized_key"] = key
    match = None
    if index is not None:
        match = index.match(text, tags, out.get("normalized_key"))
        out["match_kind"] = match.kind
        out["matched_memory_ids"] = match.ids
        out["match_reasons"] = match.reasons
    risk = poisoning.assess_candidate(out)
    out["poisoning_risk"], out["poisoning_risk_reasons"] = risk.risk, risk.reasons
    return out


def _project_name(cwd: Any) -> str:
    from commonkeep.store.project import infer_project_name

    return str(infer_project_name(str(cwd)))


def score_candidate(cand: dict[str, Any], store: Any = None, *, writer_role: str | None = None) -> dict[str, Any]:
    """The capture-time hook (``commonkeep.gate.capture``): trust, eligibility and poisoning fields.

    Matching is left to curation, which matches against the store as it is then: capture sits on
    the hosts' hot path (a subprocess per tool call) and must not read every record. The writer
    role (for the writer stamp) is the one configured for ``store``'s root (``writer_role``: the
    caller read it already).
    """
    if writer_role is None:
        from commonkeep.gate.writer import configured_writer_role

        writer_role = configured_writer_role(store.root if store is not None else None)
    writer = writer_role
    return enrich_candidate(cand, None, writer_role=writer, root=store.root if store is not None else None)
