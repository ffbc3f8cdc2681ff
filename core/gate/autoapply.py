"""The auto-apply policy: what ``curate --auto`` (and every host that auto-curates) may apply unseen.

**By provenance, not by appearance.** A candidate auto-applies only when it carries a **stamp**
set by code the model does not control. Everything else waits for a person, whatever its text,
score, confidence, claimed trust class or claimed eligibility: detection (``poisoning``, and
``addresses_agent`` here) cannot know every paraphrase, so it is not what lets a candidate in.
The stamps (``stamped_trust``):

- the **host** stamps (``HOST_STAMPS``): ``provenance.stamped_by`` names a commonkeep adapter and
  ``provenance.origin`` what it observed. The Hermes adapter stamps ``import`` (the entries of
  Hermes' own ``MEMORY.md`` found by ``commonkeep hermes install``); it also records ``external_edit``
  (an edit of that file found later), which earns nothing: a person's hand and an agent's file tool
  make the same edit. The Hermes and OMP adapters stamp ``user_turn`` from what the person typed
  (``docs/security.md``). The MCP server and the roundtable tools never stamp (their host passes
  only the model's arguments), so ``stamped_by: commonkeep_mcp`` or ``commonkeep_roundtable`` earns
  nothing. No agent tool can pass ``stamped_by`` itself;
- the **writer** stamp: a candidate written with ``commonkeep write --trust CLASS`` by the writer
  role itself (``provenance.role`` is the configured writer role, no agent ``tool`` in the
  provenance, source ``manual``), not from inside an agent (``agent_shell``): the librarian vouches
  for it.

**A stamp is honoured only when it was bound when it was set** (``stamps``): the adapter (or
``capture``, for the writer) records it in a journal outside the memory root, for that candidate id,
what its record is made of (text, folder, layer, tags, conditions), the root and the stamp, under a
key the root never holds. A stamp field copied onto another line, edited into a held candidate (or
any field of a stamped one edited), a candidate a person rejected or undid set back to ``new``, or a
``stamped_by`` no adapter sets earns nothing;
``audit`` and ``doctor`` name such lines.

Detection keeps its job: it orders, labels and explains the review queue, and it still holds a
*stamped* candidate when it scores ``medium`` or ``high``. On top of ``scoring.auto_apply_blockers``
a candidate is held when:

1. it carries no stamp (``NOT_STAMPED``), whatever it claims;
2. its poisoning risk is ``medium`` (``high`` is held by ``scoring``);
3. its text addresses the agent with instructions (``addresses_agent``) and it carries no stamp:
   not what holds it (rule 1 does), but what the reviewer is told.

Imported Hermes entries keep the agent's memory (they are stamped) but still pass secret
redaction at capture and wait for review when the poisoning score holds them (rule 2).
"""

from __future__ import annotations

import re
from typing import Any

from commonkeep.gate import stamps
from commonkeep.gate.poisoning import Rule
from commonkeep.gate.trust import USER_TRUST
from commonkeep.util.normalize import fold, unleet

#: host stamps: ``provenance.stamped_by`` -> {``provenance.origin`` -> the trust it stamps}
USER_TURN = {"user_turn": "direct_user_instruction"}
HOST_STAMPS: dict[str, dict[str, str]] = {
    # not ``external_edit``: an edit of Hermes' MEMORY.md found at a refresh may be the person's hand or
    # the model's own file or shell tool, and nothing tells them apart, so it waits for a person
    "commonkeep_hermes": {"import": "direct_user_instruction", **USER_TURN},
    "commonkeep_omp": dict(USER_TURN),
}
#: the reason every unstamped candidate is held (``curate --auto`` counts by it)
NOT_STAMPED = "not stamped by a person"


def claimed_stamp(cand: dict[str, Any], writer_role: str | None = None) -> tuple[str, str] | None:
    """The stamp ``cand``'s provenance says it carries and the trust class it would earn, as
    ``(stamp, trust)`` (``stamp`` as the journal names it: ``writer``, ``commonkeep_hermes/import`` …);
    ``None`` when it claims none. A claim only: :func:`stamped_trust` checks it against the journal."""
    prov = cand.get("provenance")
    if not isinstance(prov, dict) or prov.get("requeued_from"):  # what a person undid waits for a person (issue 40)
        return None
    by = str(prov.get("stamped_by") or "")
    if by:
        origin = str(prov.get("origin") or "")
        trust = HOST_STAMPS.get(by, {}).get(origin)
        return (f"{by}/{origin}", trust) if trust else None
    claimed = cand.get("primary_trust_class")
    source = cand.get("source")
    source = source if isinstance(source, dict) else {}
    if (writer_role and prov.get("role") == writer_role and not prov.get("tool")
            and source.get("type") == "manual" and claimed in USER_TRUST):
        return stamps.WRITER, str(claimed)
    return None


def stamped_trust(cand: dict[str, Any], writer_role: str | None = None, root: Any = None) -> str | None:
    """The trust class a host or the writer stamped on ``cand`` in ``root``; ``None`` when it only claims
    one, or when the stamp journal does not bind that stamp to this candidate's id and exact text in
    ``root`` (``stamps``; no ``root``, no stamp)."""
    claim = claimed_stamp(cand, writer_role)
    if claim is None or not stamps.holds(root, cand, *claim):
        return None
    return claim[1]


def _rx(*parts: str, flags: int = re.I) -> Rule:
    return Rule("|".join(parts), flags)


_SECOND_PERSON = _rx(
    r"\b(?:you|your|yours|yourself|yourselves|ya|u r|thou|thee|thy)\b",
    r"\b(?:vous|votre|vos|toi|ton|tes|tu)\b|\b(?:dein|deine|deinen|deinem|deiner|dich)\b|\b(?:usted|ustedes|voce|voces|vos|tuo|tua|tuoi)\b",
    r"(?:^|[^\w])(?:ты|вы|тебя|тебе|твои|твоя|твое|твоё|твой|ваш|ваша|ваши|вам|вас|тобои)(?=[^\w]|$)",
    r"你|您|あなた|君は|お前|당신|너는|너의|네가",
)
_GERMAN_SIE = re.compile(r"\b(?:Sie|Ihnen|Ihr|Ihre|Ihren)\b(?!\s+(?:ist|sind|war|hat|wurde)\b)")
_AGENT_ADDRESS = _rx(
    r"\b(?:dear|hey|hi|hello|attention|note to|to|for) (?:the |any |every |all |an? |each )?(?:assistant|ai|agent|model|llm|bot|chatbot|claude|gpt|chatgpt|gemini|copilot|language model)s?\b",
    r"(?:^|[.!\n]\s*)(?:assistant|ai|agent|model|llm|bot|claude|gpt|chatgpt|gemini|copilot)\s*[,:]",
    r"\b(?:assistant|ai|agent|model|llm|bot|chatbot|claude|gpt|chatgpt|gemini|copilot)s? (?:must|should|shall|will always|needs? to|has to|have to|is to|are to|may not|must not|is required)\b",
    r"\bas an? (?:ai|assistant|language model|llm|agent)\b|\bany (?:ai|assistant|agent|model|llm) (?:reading|that reads|seeing)\b",
)
_META = _rx(
    r"\b(?:previous|prior|above|earlier|original|initial|hidden|system|real|secret|developer|new|updated|following|these|my|the) (?:instructions?|prompts?|system messages?|directives?)\b",
    r"\bsystem ?prompt\b|\bcontext window\b|\bguardrails?\b|\bjailbreak|\bpersona\b|\bprompt injection\b",
    r"\b(?:obey|comply with|follow) (?:these|the following|my|this|all|every)\b",
)
_OUTPUT_CONTROL = _rx(
    r"\b(?:begin|start|end|prefix|suffix|append|prepend|sign|close|finish|open)\w* (?:\w+ )?(?:every|each|all|any|your)? ?(?:answers?|responses?|replies|reply|messages?|outputs?|completions?)\b",
    r"\b(?:respond|reply|answer|say|output)\w* (?:only|always|exclusively|just) (?:with|in|by)\b|\b(?:respond|reply|answer) (?:to|with) (?:every|each|all|any)\b",
    r"\b(?:every|each|all|any) (?:future )?(?:answers?|responses?|replies|conversations?|chats?|sessions?|prompts?)\b[^.\n]{0,40}\b(?:must|should|shall|will|need)\b",
    r"\bwhen(?:ever)? (?:you|someone|anyone|somebody|the user|a user|they) (?:asks?|mentions?|says?|types?|requests?|reads?|sees?|receives?)\b",
    r"\bwhen asked (?:about|for|to|whether|if)\b|\bif (?:anyone|someone|somebody|the user|a user) asks\b|\bupon reading\b",
)
_TALK_ABOUT_USER = _rx(
    r"\b(?:tell|inform|ask|remind|warn|convince|persuade|trick|mislead|reassure|lie to|deceive|hide from) (?:the |a |your )?(?:user|human|operator|owner|person)s?\b",
    r"\b(?:the |your )?(?:user|human|operator|owner)s? (?:must not|should not|shouldn'?t|must never|need not|needn'?t) (?:know|see|learn|find out|be told)\b",
)


def addresses_agent(text: str) -> list[str]:
    """Why ``text`` addresses the agent with instructions (short codes); empty when it does not.

    Broader than detection on purpose: a memory that is a fact about the project or a person's
    convention ("Use pnpm in this repo", "Never commit to main") does not talk *to* the agent;
    text that says "you", speaks of prompts and instructions, or steers the agent's replies does.
    """
    seen = fold(text)
    views = [seen] if unleet(seen) == seen else [seen, unleet(seen)]
    why: list[str] = []
    for code, rx in (("second_person", _SECOND_PERSON), ("addresses_the_model", _AGENT_ADDRESS),
                     ("talks_about_instructions", _META), ("steers_replies", _OUTPUT_CONTROL),
                     ("steers_what_the_user_is_told", _TALK_ABOUT_USER)):
        if any(rx.search(v) for v in views) and code not in why:
            why.append(code)
    if "second_person" not in why and any(_GERMAN_SIE.search(v) for v in views):
        why.append("second_person")
    if any(_instruction_concepts(v) for v in views):  # the detection lexicon, at a lower bar: one family is enough
        why.append("speaks_of_its_instructions")
    return why


def _instruction_concepts(text: str) -> bool:
    """A concept family of the poisoning rules, without the co-occurrence the risk score asks for:
    overriding instructions (no "previous" needed), identity, secrecy, authority, revealing secrets."""
    from commonkeep.gate import poisoning as p

    return bool((p._OVERRIDE.search(text) and p._INSTRUCTIONS.search(text)) or p._IDENTITY.search(text)
                or p._SECRECY.search(text) or p._AUTHORITY.search(text)
                or (p._unnegated(p._REVEAL, text) and p._SENSITIVE.search(text)))


def policy_blockers(cand: dict[str, Any], writer_role: str | None = None, root: Any = None) -> list[str]:
    """Why the auto-apply policy holds ``cand`` in ``root`` (on top of ``scoring.auto_apply_blockers``)."""
    why: list[str] = []
    unstamped = stamped_trust(cand, writer_role, root) is None
    prov = cand.get("provenance")
    if unstamped and isinstance(prov, dict) and prov.get("requeued_by"):
        pass  # a person undid its decision (its stamp was withdrawn then): ``scoring`` holds it and says so
    elif unstamped and isinstance(prov, dict) and prov.get("origin") == "external_edit":
        why.append(f"{NOT_STAMPED}: an edit of Hermes' memory file, by a person's hand or an agent's file tool "
                   "(nothing tells them apart)")
    elif unstamped and claimed_stamp(cand, writer_role) is not None:
        why.append(f"{NOT_STAMPED}: its stamp is not in the stamp journal for this text (copied or edited by hand?)")
    elif unstamped:
        why.append(f"{NOT_STAMPED}: no host, writer or user_turn stamp")
    if cand.get("poisoning_risk") == "medium":
        why.append("poisoning risk is medium (never auto-applied)")
    if unstamped:  # not what holds it (the missing stamp does), but what the reviewer is told
        directed = addresses_agent(str(cand.get("text", "")))
        if directed:
            why.append(f"addresses the agent with instructions ({', '.join(directed)})")
    return why


HELD_L1 = "L1 identity (needs `commonkeep ratify`)"


from commonkeep.store.curators import (  # noqa: E402,F401  (moved there in 0.3; the old names keep working)
    AUTO_POLICIES,
    OMPKEEP_AUTO_CURATE,
    configure_curators,
    curator_config,
    curator_findings,
)

#: names that moved up to the patch path in 0.3 (the session-end run); ``commonkeep.gate.autoapply.X``
#: keeps working for code written before, without the gate importing the patch path
_MOVED_UP = {name: "commonkeep.patches.auto" for name in (
    "AutoCuration", "HELD_FLAGGED", "HELD_CHANGES", "HELD_GATE", "HELD_WAITING", "HELD_CONFIDENCE", "HELD_POLICY",
    "HELD_REFUSED", "HELD_REDACTED", "held_reasons", "auto_select", "auto_curate")}


def __getattr__(name: str) -> Any:
    from commonkeep._moved import moved_up

    return moved_up(__name__, _MOVED_UP, name)
