"""Poisoning risk of a candidate: text that tries to instruct the agent, and low-trust sources.

A memory that says "ignore previous instructions" or carries a tool call would be replayed into
every future context, so such text is scored ``high`` and never auto-applies; the reviewer sees
the reasons. Rules: trust class risk (``contracts/ompkeep-store.md`` §6.1), non-durable signals
raise to at least ``medium`` (§6.2), plus the text cues below. Reasons are short codes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from commonkeep.governance.scoring import NON_DURABLE, TRUST_CLASSES, Risk, max_risk

_INSTRUCTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(?:previous|prior|above|earlier|all|system|your)\b"
    r"[^.\n]{0,20}\b(?:instructions?|prompts?|rules?|guidelines?|messages?|context)\b"
    r"|\byou are now\b|\bnew (?:system )?instructions?\b|\b(?:reveal|print|show|leak)\b[^.\n]{0,30}\bsystem prompt\b"
    r"|\bdo not (?:tell|inform|mention (?:this )?to) the user\b|\bjailbreak\b|\bdeveloper mode\b"
    r"|\bpretend (?:to be|you are)\b|\bact as (?:an? )?(?:system|admin|root|developer)\b",
    re.I,
)
_TOOL_CALL = re.compile(
    r"</?(?:tool_call|tool_use|function_calls?|invoke|antml:[a-z_]+|parameter)\b"
    r"|\"(?:tool_calls|function_call)\"\s*:"
    r"|\{\s*\"(?:name|tool)\"\s*:\s*\"[\w.-]+\"\s*,\s*\"(?:arguments|parameters|input|args)\"\s*:"
    r"|```(?:tool|tool_code|function)\b"
    r"|\bfunctions\.[a-z_]\w*\s*\(",
    re.I,
)
_ROLE_MARKER = re.compile(
    r"(?:^|\n)\s*(?:system|assistant|user|human|developer)\s*:\s"
    r"|<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>"
    r"|\[/?INST\]|<</?SYS>>|(?:^|\n)#{2,3}\s*(?:system|assistant|instruction)s?\b",
    re.I,
)
_HIDDEN = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_EXFIL = re.compile(r"\b(?:curl|wget)\b[^\n]{0,80}\|\s*(?:ba)?sh\b|\bsend\b[^.\n]{0,60}\bto\s+https?://", re.I)

LOW_TRUST_SOURCE_TYPES = frozenset({"web", "url", "generated", "generated_content", "tool_result", "repository_text", "external_document"})


@dataclass
class PoisoningAssessment:
    """``poisoning_risk`` and ``poisoning_risk_reasons`` of a candidate."""

    risk: Risk
    reasons: list[str] = field(default_factory=list)


def assess_text(text: str) -> PoisoningAssessment:
    """Risk from the wording alone."""
    reasons: list[str] = []
    risk: Risk = "low"
    for code, rx, level in (
        ("instruction_like_text", _INSTRUCTION, "high"),
        ("tool_call_lookalike", _TOOL_CALL, "high"),
        ("role_marker", _ROLE_MARKER, "high"),
        ("hidden_characters", _HIDDEN, "high"),
        ("exfiltration_like", _EXFIL, "medium"),
    ):
        if rx.search(text):
            reasons.append(code)
            risk = max_risk(risk, level)
    return PoisoningAssessment(risk, reasons)


def assess_candidate(cand: dict[str, Any]) -> PoisoningAssessment:
    """Risk of a candidate from its text, trust class, durability and source type."""
    found = assess_text(str(cand.get("text", "")))
    risk, reasons = found.risk, list(found.reasons)
    tc_name = cand.get("primary_trust_class")
    tc = TRUST_CLASSES.get(tc_name or "")
    if tc is not None and tc.risk != "low":
        reasons.append(f"low_trust_class:{tc_name}")
        risk = max_risk(risk, tc.risk)
    if cand.get("durability_signal") in NON_DURABLE:
        reasons.append(f"non_durable:{cand['durability_signal']}")
        risk = max_risk(risk, "medium")
    source = cand.get("source") or {}
    if isinstance(source, dict) and source.get("type") in LOW_TRUST_SOURCE_TYPES:
        reasons.append(f"low_trust_source:{source['type']}")
        risk = max_risk(risk, "medium")
    stored = cand.get("poisoning_risk")
    if isinstance(stored, str) and stored in ("low", "medium", "high"):
        risk = max_risk(risk, stored)
        for r in cand.get("poisoning_risk_reasons") or []:
            if r not in reasons:
                reasons.append(str(r))
    return PoisoningAssessment(risk, reasons)
