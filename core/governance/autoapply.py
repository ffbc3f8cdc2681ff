"""The auto-apply policy: what ``curate --auto`` (and every host that auto-curates) may apply unseen.

Detection (``poisoning``) cannot know every paraphrase, so the weight is on this policy. What a
candidate merely *claims* never earns auto-apply: its ``primary_trust_class``, ``confidence``,
``promotion_eligibility`` or the role in its provenance are written by whoever wrote the
candidate, a model included. What earns it is a **stamp**, set by code the model does not control:

- the **host** stamp: the Hermes adapter stamps ``provenance.stamped_by = "commonkeep_hermes"``
  with the ``origin`` it observed; ``import`` (the entries of Hermes' own ``MEMORY.md`` found at
  install) and ``external_edit`` (a person's hand edit of that file) are stamped trust;
- the **writer** stamp: a candidate written with ``commonkeep write --trust CLASS`` by the writer
  role itself (``provenance.role`` is the configured writer role, no agent ``tool`` in the
  provenance, source ``manual``): the librarian vouches for it. Like the role gate, this rests on
  the role convention (``docs/security.md``).

A candidate is held for review (its op is not default-selected, and ``auto_select`` never picks
it) when any of these holds, whatever it claims:

1. its poisoning risk is ``medium`` or ``high``;
2. its text addresses the agent with instructions (``addresses_agent``: second-person address,
   talk of prompts and instructions, control of the agent's replies, what to tell the user) and
   it carries no stamp;
3. it claims a person's trust class without a stamp: the claim is ignored and the candidate is
   judged as one without trust metadata (so the claim can never lift it over the gate).

Imported Hermes entries keep the agent's memory (they are stamped) but still pass secret
redaction at capture and wait for review when the poisoning score holds them (rule 1).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from commonkeep.governance.normalize import fold, unleet
from commonkeep.governance.poisoning import Rule
from commonkeep.governance.scoring import USER_TRUST

if TYPE_CHECKING:
    from commonkeep.governance.curate import Proposal

#: host stamps: ``provenance.stamped_by`` -> {``provenance.origin`` -> the trust it stamps}
HOST_STAMPS: dict[str, dict[str, str]] = {
    "commonkeep_hermes": {"import": "direct_user_instruction", "external_edit": "direct_user_instruction"},
    **{h: {"user_turn": "direct_user_instruction"} for h in ("commonkeep_omp", "commonkeep_mcp", "commonkeep_roundtable")},
}
HOST_STAMPS["commonkeep_hermes"]["user_turn"] = "direct_user_instruction"  # issue 22 (userturn helper)


def stamped_trust(cand: dict[str, Any], writer_role: str | None = None) -> str | None:
    """The trust class a host or the writer stamped on ``cand``; ``None`` when it only claims one."""
    prov = cand.get("provenance")
    if not isinstance(prov, dict):
        return None
    host = HOST_STAMPS.get(str(prov.get("stamped_by") or ""))
    if host is not None:
        return host.get(str(prov.get("origin") or ""))
    claimed = cand.get("primary_trust_class")
    source = cand.get("source")
    source = source if isinstance(source, dict) else {}
    if (writer_role and prov.get("role") == writer_role and not prov.get("tool") and not prov.get("stamped_by")
            and source.get("type") == "manual" and claimed in USER_TRUST):
        return str(claimed)
    return None


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
    from commonkeep.governance import poisoning as p

    return bool((p._OVERRIDE.search(text) and p._INSTRUCTIONS.search(text)) or p._IDENTITY.search(text)
                or p._SECRECY.search(text) or p._AUTHORITY.search(text)
                or (p._unnegated(p._REVEAL, text) and p._SENSITIVE.search(text)))


def policy_blockers(cand: dict[str, Any], writer_role: str | None = None) -> list[str]:
    """Why the auto-apply policy holds ``cand`` (on top of ``scoring.auto_apply_blockers``)."""
    why: list[str] = []
    if cand.get("poisoning_risk") == "medium":
        why.append("poisoning risk is medium (never auto-applied)")
    if stamped_trust(cand, writer_role) is None:
        directed = addresses_agent(str(cand.get("text", "")))
        if directed:
            why.append(f"addresses the agent with instructions ({', '.join(directed)}) and no host or writer stamp vouches for it")
    return why


AUTO_POLICIES = ("high-only", "propose", "off")


def curator_config(root: Path | str) -> dict[str, Any]:
    """``config.json`` ``curator`` and ``governance`` settings over the contract's defaults (§4.12)."""
    from commonkeep.store.layout import Layout

    conf: dict[str, Any] = {"autoCurate": "high-only", "autoCurateHighThreshold": 0.85, "governanceMode": "compatibility"}
    try:
        data = json.loads(Layout(root).config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return conf
    if not isinstance(data, dict):
        return conf
    cur, gov = data.get("curator"), data.get("governance")
    if isinstance(cur, dict):
        if cur.get("autoCurate") in AUTO_POLICIES:
            conf["autoCurate"] = cur["autoCurate"]
        threshold = cur.get("autoCurateHighThreshold")
        # A number in [0, 1]; anything else (``true``, a string, NaN, -1) keeps the default, as
        # upstream reads only a JS number: ``true`` is not 1.0 and a negative value is not "all".
        if isinstance(threshold, int | float) and not isinstance(threshold, bool) and 0 <= threshold <= 1:
            conf["autoCurateHighThreshold"] = float(threshold)
    if isinstance(gov, dict) and gov.get("mode") in ("compatibility", "strict"):
        conf["governanceMode"] = gov["mode"]
    return conf



@dataclass
class AutoCuration:
    """What ``auto_curate`` did at session end."""

    policy: str
    proposal: Proposal | None = None
    applied: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        if self.proposal is None:
            return f"auto-curation off (policy {self.policy})"
        p = self.proposal.patch
        if not p["ops"]:
            waiting = len(set(self.proposal.already_proposed.values()))
            return (f"auto-curation ({self.policy}): nothing to curate; {len(self.proposal.pending)} candidate(s) left for review"
                    + (f"; the rest already waits in {waiting} patch(es)" if waiting else ""))
        return (f"auto-curation ({self.policy}): patch {p['patch_id']} with {len(p['ops'])} op(s); "
                f"applied {len(self.applied)}; {len(self.proposal.pending)} candidate(s) left for review")


def auto_select(prop: Proposal, threshold: float) -> list[str]:
    """§6.6 ``high-only``: default-selected ops that are low risk (``medium`` and ``high`` never), not L1,
    with confidence ≥ threshold."""
    chosen = []
    for op in prop.ops:
        rec = op.get("record") or op.get("to_record") or {}
        if not op.get("default_selected") or op.get("risk") in ("medium", "high") or rec.get("layer") == "L1":
            continue
        if prop.op_confidence.get(op["op_id"], 0.0) >= threshold:
            chosen.append(op["op_id"])
    return chosen


def auto_curate(
    root: Path | str,
    *,
    role: str | None,
    policy: str | None = None,
    threshold: float | None = None,
    log: bool = True,
) -> AutoCuration:
    """What a host runs at session end (§11.3): curate, then apply per ``policy``.

    ``policy`` defaults to ``config.json`` ``curator.autoCurate`` (``high-only``).
    ``high-only`` applies only default-selected, non-high-risk ops with confidence ≥
    ``autoCurateHighThreshold`` (0.85); ``propose`` writes the patch and applies nothing (every
    op waits for ``commonkeep review``); ``off`` does nothing. A ``## Auto-curation`` section is
    logged in the daily log.
    """
    from commonkeep.governance.scoring import AUTO_CURATE_HIGH_THRESHOLD
    from commonkeep.governance.writer import require_writer

    conf = curator_config(root)
    policy = policy or str(conf["autoCurate"])
    if policy not in AUTO_POLICIES:
        from commonkeep.errors import BadInput

        raise BadInput(f"unknown auto-curation policy {policy!r}; use one of {', '.join(AUTO_POLICIES)}")
    out = AutoCuration(policy)
    if policy == "off":
        return out
    require_writer("auto-curate", role, root)
    from commonkeep.governance.curate import curate

    prop = curate(root, role=role, mode="auto" if policy == "high-only" else "propose")
    out.proposal = prop
    if threshold is None:
        threshold = float(conf.get("autoCurateHighThreshold", AUTO_CURATE_HIGH_THRESHOLD))
    chosen = auto_select(prop, threshold) if policy == "high-only" else []
    if chosen:
        from commonkeep.governance.patch import apply_patch

        res = apply_patch(root, prop.patch["patch_id"], role=role, op_ids=chosen)
        out.applied, out.skipped = res.applied, res.skipped
        prop.patch = res.patch
    if log and prop.ops:
        from commonkeep.store.core import Store

        Store(root).append_daily(f"## Auto-curation\n- {out.describe()}")
    return out
