"""Governance's reason codes in the words a person uses (for the review pages and the Hermes tab).

:func:`plain_reason` turns a poisoning reason code (``low_trust_class:repository_text``), a match
kind, or a reason an op was skipped or refused (``its candidate … was rejected``) into a short
sentence; anything it does not know is returned with its underscores made spaces, never dropped.
"""

from __future__ import annotations

import re

CODES = {
    # the gate's poisoning reasons (commonkeep.gate.poisoning)
    "instruction_like_text": "reads like an instruction to the agent (\"ignore previous instructions\")",
    "identity_change": "tries to change who the agent or the user is",
    "secrecy": "asks to keep something secret from the user",
    "authority_claim": "claims an authority it cannot prove (\"the admin says\")",
    "exfiltration_like": "asks to reveal or send out sensitive data",
    "remote_execution": "asks to download and run code",
    "disables_safeguards": "asks to turn off a safety check",
    "tool_call_lookalike": "contains something that looks like a tool call",
    "role_marker": "contains a chat role marker (system:, assistant:)",
    "hidden_characters": "contains invisible characters",
    "hidden_markup": "contains hidden markup",
    "confusable_letters": "mixes look-alike letters from other alphabets",
    "styled_letters": "is written in styled (fancy) letters",
    "leetspeak": "hides words in leetspeak (1gn0r3)",
    "encoded_or_split_text": "hides text in an encoding or splits words apart",
    "low_trust_class": "comes from a low-trust source",
    "non_durable": "sounds temporary, not a lasting fact",
    "low_trust_source": "was captured from a low-trust place",
    # match kinds (commonkeep.gate.matching)
    "new": "nothing like it is in memory yet",
    "duplicate": "repeats a record already in memory",
    "strengthens_existing": "says again what a record already says",
    "updates_existing": "says something new about a record's topic",
    "potential_conflict": "contradicts a record in memory",
    "ambiguous": "contradicts several records in memory",
    "supersedes_existing": "says it replaces a record in memory",
}
DETAILS = {
    "repository_text": "text found in a repository", "generated_content": "generated text",
    "third_party_documentation": "third-party documentation", "agent_inference": "the agent's own guess",
    "single_session_observation": "seen in one session only", "temporary": "temporary", "session": "this session only",
    "task": "this task only",
}
# reasons an op is skipped or an approve refused, as apply and review word them
SENTENCES = [
    (re.compile(r"^its candidate (\S+) was already promoted by another patch$"),
     "already decided: candidate {0} was approved by another decision, so this older op was skipped"),
    (re.compile(r"^its candidate (\S+) was rejected$"),
     "already decided: candidate {0} was rejected, so this older op was skipped"),
    (re.compile(r"^candidate (\S+) was already (patched|rejected)$"),
     "already decided: candidate {0} was already {1}"),
    (re.compile(r"^an active record \((\S+)\) already says this; .*$"),
     "{0} already says this, so no second copy was added"),
    (re.compile(r"^(mem_\S+) is tombstoned and can never come back$"), "{0} was deleted and can never come back"),
    (re.compile(r"^(mem_\S+) already exists$"), "{0} is already in memory"),
    (re.compile(r"^L1 records are never auto-applied.*$"), "identity memories need ratifying (commonkeep ratify)"),
]


def plain_reason(code: str) -> str:
    """``code`` (a reason code, a match kind or a skip reason) in plain words."""
    text = str(code).strip()
    for pattern, words in SENTENCES:
        m = pattern.match(text)
        if m:
            return words.format(*m.groups())
    head, _, detail = text.partition(":")
    said = CODES.get(head)
    if said is None:
        return text.replace("_", " ")
    if not detail:
        return said
    return f"{said} ({DETAILS.get(detail, detail.replace('_', ' '))})"


# what approving does, one meaning on every surface (the CLI, the web app, the Hermes tab); the keys
# are ``decide.CHOICES``' (the values a form or ``--choice`` sends)
CHOICE_WORDS = {
    "add": "add it as a new record",
    "reinforce": "keep the existing record and add this evidence to it",
    "replace": "replace the existing record with this statement (the old text stays in the history)",
    "keep_both": "keep both, marked contested",
    "repeat": "close it as a repeat of a candidate approved in the same decision",
}
# what a candidate is to the records, said before the choice
KIND_WORDS = {
    "new": "a new statement",
    "duplicate": "a repeat of a record",
    "strengthens_existing": "a near-repeat of a record",
    "updates_existing": "a change to a record",
    "supersedes_existing": "a replacement of a record",
    "potential_conflict": "a contradiction of a record",
    "ambiguous": "a contradiction of several records",
    "repeat": "a repeat of another candidate in this decision",
}


def choice_words(choice: str) -> str:
    """What approving with ``choice`` does, in plain words (``keep_both``: "keep both, marked contested")."""
    return CHOICE_WORDS.get(choice, choice.replace("_", " "))


def kind_words(kind: str) -> str:
    """What a candidate is to the records (a match kind), in plain words."""
    return KIND_WORDS.get(kind, kind.replace("_", " "))
