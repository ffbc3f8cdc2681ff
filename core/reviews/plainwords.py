"""The review queue in words a person uses (``commonkeep review --list`` and the prompts).

The JSON output keeps the field values (``primary_trust_class``, ``worth_decision``,
``poisoning_risk_reasons``, ``match_kind``); these functions only say them.
"""

from __future__ import annotations

from typing import Any

TRUST = {
    "direct_user_instruction": "the user said so directly",
    "user_correction": "the user corrected an agent",
    "repeated_user_preference": "the user asked for it more than once",
    "accepted_code_review_outcome": "an accepted code review",
    "existing_project_convention": "a convention the project already follows",
    "passing_tool_or_test_outcome": "a passing tool or test run",
    "agent_inference": "an agent inferred it",
    "single_session_observation": "an agent saw it once, in one session",
    "repository_text": "text found in the repository",
    "generated_content": "generated text",
    "third_party_documentation": "someone else's documentation",
}
WORTH = {
    "candidate": "worth keeping as a long-term memory",
    "daily_only": "better kept in the daily log only",
    "inquiry": "needs a question answered first",
    "reject": "not worth keeping",
}
MATCH = {
    "new": "nothing like it is stored yet",
    "duplicate": "the same as a stored memory",
    "strengthens_existing": "backs up a stored memory",
    "updates_existing": "updates a stored memory",
    "supersedes_existing": "replaces a stored memory",
    "potential_conflict": "may contradict a stored memory",
    "ambiguous": "close to several stored memories",
}
REASONS = {
    "hidden_characters": "hidden characters in the text",
    "hidden_markup": "hidden markup in the text",
    "confusable_letters": "letters from other alphabets that look like Latin ones",
    "styled_letters": "styled (look-alike) letters",
    "encoded_or_split_text": "encoded or split-up words",
    "leetspeak": "words spelled with digits (leetspeak)",
    "exfiltration_like": "looks like it sends data somewhere",
    "authority_claim": "claims an authority it cannot prove",
    "disables_safeguards": "asks to turn off a safeguard",
    "identity_change": "tries to change who the agent is",
    "instruction_like_text": "reads like an instruction to an agent",
    "remote_execution": "asks to run something fetched from elsewhere",
    "role_marker": "contains chat role markers (system:, assistant:)",
    "secrecy": "asks to keep something from the user",
    "tool_call_lookalike": "looks like a tool call",
}
DURABILITY = {"temporary": "for now only", "session": "for this session only", "task": "for one task only"}


def trust_words(trust: Any) -> str:
    if not trust:
        return "not stated by the writer"
    return TRUST.get(str(trust), str(trust).replace("_", " "))


def confidence_words(confidence: Any) -> str:
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        return f"{round(100 * confidence)}%"
    return "not given"


def worth_words(decision: Any, score: Any) -> str:
    said = WORTH.get(str(decision), str(decision).replace("_", " ")) if decision else "not scored"
    return said + (f" (score {score})" if isinstance(score, (int, float)) else "")


def reason_words(reason: str) -> str:
    kind, _, value = reason.partition(":")
    if kind == "non_durable":
        return f"sounds short-lived ({DURABILITY.get(value, value)})"
    if kind == "low_trust_class":
        return f"its source is weakly trusted ({trust_words(value)})"
    if kind == "low_trust_source":
        return f"it comes from a weakly trusted place ({value.replace('_', ' ')})"
    return REASONS.get(reason, reason.replace("_", " "))


def match_words(kind: Any, ids: list[str]) -> str:
    said = MATCH.get(str(kind), str(kind).replace("_", " ")) if kind else "not compared yet"
    return said + (f": {', '.join(ids)}" if ids else "")
