"""The auto-apply policy: what ``curate --auto`` (and every host that auto-curates) may apply unseen.

**By provenance, not by appearance.** A candidate auto-applies only when it carries a **stamp**
set by code the model does not control. Everything else waits for a person, whatever its text,
score, confidence, claimed trust class or claimed eligibility: detection (``poisoning``, and
``addresses_agent`` here) cannot know every paraphrase, so it is not what lets a candidate in.
The stamps (``stamped_trust``):

- the **host** stamps (``HOST_STAMPS``): ``provenance.stamped_by`` names a commonkeep adapter and
  ``provenance.origin`` what it observed. The Hermes adapter stamps ``import`` (the entries of
  Hermes' own ``MEMORY.md`` found at install); it also records ``external_edit`` (an edit of that
  file found later), which earns nothing: a person's hand and an agent's file tool make the same
  edit. The Hermes, OMP, MCP and roundtable adapters stamp ``user_turn`` when the person's own
  message in the current session supports the statement (``docs/security.md``). No agent tool can
  pass ``stamped_by`` itself;
- the **writer** stamp: a candidate written with ``commonkeep write --trust CLASS`` by the writer
  role itself (``provenance.role`` is the configured writer role, no agent ``tool`` in the
  provenance, source ``manual``): the librarian vouches for it. Like the role gate, this rests on
  the role convention (``docs/security.md``): a model with a shell can run what the user can.

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
USER_TURN = {"user_turn": "direct_user_instruction"}
HOST_STAMPS: dict[str, dict[str, str]] = {
    # not ``external_edit``: an edit of Hermes' MEMORY.md found at a refresh may be the person's hand or
    # the model's own file or shell tool, and nothing tells them apart, so it waits for a person
    "commonkeep_hermes": {"import": "direct_user_instruction", **USER_TURN},
    "commonkeep_omp": dict(USER_TURN),
    "commonkeep_mcp": dict(USER_TURN),
    "commonkeep_roundtable": dict(USER_TURN),
}
#: the reason every unstamped candidate is held (``curate --auto`` counts by it)
NOT_STAMPED = "not stamped by a person"


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
    unstamped = stamped_trust(cand, writer_role) is None
    prov = cand.get("provenance")
    if unstamped and isinstance(prov, dict) and prov.get("origin") == "external_edit":
        why.append(f"{NOT_STAMPED}: an edit of Hermes' memory file, by a person's hand or an agent's file tool "
                   "(nothing tells them apart)")
    elif unstamped:
        why.append(f"{NOT_STAMPED}: no host, writer or user_turn stamp")
    if cand.get("poisoning_risk") == "medium":
        why.append("poisoning risk is medium (never auto-applied)")
    if unstamped:  # not what holds it (the missing stamp does), but what the reviewer is told
        directed = addresses_agent(str(cand.get("text", "")))
        if directed:
            why.append(f"addresses the agent with instructions ({', '.join(directed)})")
    return why


AUTO_POLICIES = ("high-only", "propose", "off")
#: what OmpKeep must be told so its own session-end curation applies nothing (``config.json``
#: ``curator.autoCurate``; OmpKeep reads ``"propose"`` as "all eligible", so only ``"off"`` holds)
OMPKEEP_AUTO_CURATE = "off"


def _config(root: Path | str) -> dict[str, Any] | None:
    from commonkeep.store.layout import Layout

    try:  # read only: doctor reads it on a root whose folders it reports as linked outside
        data = json.loads(Layout(root, check=False).config.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _threshold(value: Any) -> float | None:
    # A number in [0, 1]; anything else (``true``, a string, NaN, -1) keeps the default, as
    # upstream reads only a JS number: ``true`` is not 1.0 and a negative value is not "all".
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return None


def curator_config(root: Path | str) -> dict[str, Any]:
    """commonkeep's curation settings: ``config.json`` ``commonkeep`` over ``curator`` over the defaults (§4.12).

    The ``commonkeep`` section (``autoCurate``, ``autoCurateHighThreshold``) is commonkeep's own and
    OmpKeep ignores it; ``curator`` is OmpKeep's, read here only where ``commonkeep`` says nothing.
    ``init`` and ``omp install`` write ``curator.autoCurate: "off"`` (OmpKeep applies nothing) and
    ``commonkeep.autoCurate: "high-only"`` (commonkeep's policy still runs at session end).
    ``ompkeepAutoCurate`` is what OmpKeep itself will do (``doctor`` checks it).
    """
    conf: dict[str, Any] = {"autoCurate": "high-only", "autoCurateHighThreshold": 0.85, "governanceMode": "compatibility",
                            "ompkeepAutoCurate": "high-only"}
    data = _config(root)
    if data is None:
        return conf
    cur, own, gov = data.get("curator"), data.get("commonkeep"), data.get("governance")
    for section in (cur, own):  # commonkeep's own section last: it wins
        if not isinstance(section, dict):
            continue
        if section.get("autoCurate") in AUTO_POLICIES:
            conf["autoCurate"] = section["autoCurate"]
        threshold = _threshold(section.get("autoCurateHighThreshold"))
        if threshold is not None:
            conf["autoCurateHighThreshold"] = threshold
    if isinstance(cur, dict) and "autoCurate" in cur:
        conf["ompkeepAutoCurate"] = str(cur["autoCurate"])
    if isinstance(gov, dict) and gov.get("mode") in ("compatibility", "strict"):
        conf["governanceMode"] = gov["mode"]
    return conf


def configure_curators(root: Path | str) -> dict[str, Any]:
    """Write ``config.json`` so OmpKeep's own curator applies nothing and commonkeep's policy runs.

    Sets ``curator.autoCurate`` to ``"off"`` and, when the root has no ``commonkeep.autoCurate``
    yet, carries the policy commonkeep used so far into it (``high-only`` by default; a root that
    had ``curator.autoCurate: "propose"`` keeps proposing). Other settings are kept. A
    ``config.json`` that is not a JSON object is left alone (``BadInput`` names it). Returns the
    settings written.
    """
    from commonkeep.errors import BadInput
    from commonkeep.store.jsonl import atomic_write_bytes
    from commonkeep.store.layout import Layout

    path = Layout(root).config
    data: Any = {}
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            raise BadInput(f"{path} is not valid JSON ({exc}); it was left as it is",
                           hint='fix it, then run this again; it must hold {"curator": {"autoCurate": "off"}}') from None
        if not isinstance(data, dict):
            raise BadInput(f"{path} is not a JSON object; it was left as it is")
    before = curator_config(root)
    cur = data.get("curator") if isinstance(data.get("curator"), dict) else {}
    own = data.get("commonkeep") if isinstance(data.get("commonkeep"), dict) else {}
    changed = False
    if own.get("autoCurate") not in AUTO_POLICIES:
        own = {**own, "autoCurate": before["autoCurate"] if cur.get("autoCurate") != OMPKEEP_AUTO_CURATE else "high-only"}
        changed = True
    if cur.get("autoCurate") != OMPKEEP_AUTO_CURATE:
        cur = {**cur, "autoCurate": OMPKEEP_AUTO_CURATE}
        changed = True
    if changed:
        data = {**data, "curator": cur, "commonkeep": own}
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    return {"curator": {"autoCurate": cur["autoCurate"]}, "commonkeep": {"autoCurate": own["autoCurate"]}, "changed": changed}


def curator_findings(root: Path | str, *, omp_uses_root: bool = False) -> list[dict[str, Any]]:
    """``doctor``: whether another curator (OmpKeep, at every OMP session end) could apply what commonkeep holds.

    A ``warning`` when ``config.json`` sets ``curator.autoCurate`` to anything but ``"off"``, or
    says nothing while an OMP installed here uses the root (``omp_uses_root``); ``info`` when it
    says nothing and no OMP is known to use the root (a Hermes-only root).
    """
    conf = curator_config(root)
    if conf["ompkeepAutoCurate"] == OMPKEEP_AUTO_CURATE:
        return []
    cur = (_config(root) or {}).get("curator")
    explicit = isinstance(cur, dict) and "autoCurate" in cur
    said = f'curator.autoCurate "{conf["ompkeepAutoCurate"]}"' if explicit else "no curator.autoCurate (OmpKeep's default is high-only)"
    return [{"code": "other_curator_may_apply", "severity": "warning" if explicit or omp_uses_root else "info",
             "file": "config.json",
             "message": f"config.json has {said}: OmpKeep's own session-end curation (OMP sessions on this root) "
                        "applies candidates by what they claim, including ones commonkeep holds for a person; "
                        'run `commonkeep init` to set curator.autoCurate "off" (commonkeep\'s own policy is '
                        "commonkeep.autoCurate)"}]


@dataclass
class AutoCuration:
    """What ``auto_curate`` did at session end."""

    policy: str
    proposal: Proposal | None = None
    applied: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)  # why candidates wait for a person -> how many

    def describe(self) -> str:
        if self.proposal is None:
            return f"auto-curation off (policy {self.policy})"
        p = self.proposal.patch
        total = sum(self.held.values())
        held = (f"held {total} for review: " + ", ".join(f"{n} {why}" for why, n in self.held.items())) if total \
            else "held nothing for review"
        if not p["ops"]:
            waiting = len(set(self.proposal.already_proposed.values()))
            return (f"auto-curation ({self.policy}): nothing new to propose; applied 0; {held}"
                    + (f"; {waiting} patch(es) already wait" if waiting else ""))
        return f"auto-curation ({self.policy}): patch {p['patch_id']} with {len(p['ops'])} op(s); applied {len(self.applied)}; {held}"


#: why a candidate waits, in the order ``held_reasons`` tries them (the first that holds is counted)
HELD_FLAGGED = "flagged by detection (risk medium or high)"
HELD_CHANGES = "change or contradict an existing record"
HELD_L1 = "L1 identity (needs `commonkeep ratify`)"
HELD_GATE = "below the curator's gate (confidence or evidence)"
HELD_WAITING = "already wait in an earlier patch"
HELD_CONFIDENCE = "confidence below the auto-apply threshold"
HELD_POLICY = "policy propose: every op waits"
HELD_REFUSED = "refused when applied"
HELD_REDACTED = "secrets redacted from the text"


def held_reasons(prop: Proposal, applied: list[str], *, threshold: float, policy: str,
                 writer_role: str | None, skipped: dict[str, str] | None = None) -> dict[str, int]:
    """Why each candidate curation saw is not applied, one reason a candidate, counted (most first)."""
    done = set(applied)
    by_cand: dict[str, list[dict[str, Any]]] = {}
    for op in prop.ops:
        if op.get("candidate_id"):
            by_cand.setdefault(str(op["candidate_id"]), []).append(op)
    waiting = {str(op.get("candidate_id")) for op in prop.held}
    counts: dict[str, int] = {}
    for cid, cand in prop.scored.items():
        ops = by_cand.get(cid, [])
        if any(op["op_id"] in done for op in ops):
            continue
        why = _why_held(cand, ops, cid in prop.pending, cid in waiting, threshold=threshold, policy=policy,
                        writer_role=writer_role, prop=prop, skipped=skipped or {})
        counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: -kv[1]))


def _why_held(cand: dict[str, Any], ops: list[dict[str, Any]], pending: bool, waiting: bool, *, threshold: float,
              policy: str, writer_role: str | None, prop: Proposal, skipped: dict[str, str]) -> str:
    if stamped_trust(cand, writer_role) is None:
        return NOT_STAMPED
    if cand.get("poisoning_risk") in ("medium", "high"):
        return HELD_FLAGGED
    if "[REDACTED:" in str(cand.get("text", "")):
        return HELD_REDACTED
    if waiting:
        return HELD_WAITING
    if pending:
        return HELD_GATE
    if any(op["op_id"] in skipped for op in ops):
        return HELD_REFUSED
    if any((op.get("record") or {}).get("layer") == "L1" for op in ops):
        return HELD_L1
    if any(op.get("op") in ("supersede", "contest") or (op.get("op") == "update" and "statement" in (op.get("updates") or {}))
           or op.get("risk") in ("medium", "high") for op in ops):
        return HELD_CHANGES
    if policy != "high-only":
        return HELD_POLICY
    if any(prop.op_confidence.get(op["op_id"], 0.0) < threshold for op in ops):
        return HELD_CONFIDENCE
    reasons = [str(op.get("reason")) for op in ops if op.get("reason")]
    return reasons[0] if reasons else "not selected"


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

    ``policy`` defaults to ``config.json`` ``commonkeep.autoCurate``, else ``curator.autoCurate``
    (``high-only``); only stamped candidates can ever be applied (module doc).
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
    from commonkeep.governance.writer import configured_writer_role

    out.held = held_reasons(prop, out.applied, threshold=threshold, policy=policy,
                            writer_role=configured_writer_role(root), skipped=out.skipped)
    if log and prop.ops:
        from commonkeep.store.core import Store

        Store(root).append_daily(f"## Auto-curation\n- {out.describe()}")
    return out
