"""The deterministic, model-free extractor: entities, aliases, definitions, quantities and rules.

Every fact keeps the exact sentence it came from; nothing here paraphrases. The patterns are
ordinary English constructions ("X is the same as Y", "renamed to", "now called", "Policy v2:",
"supersedes v1-v6", "revert to v6", "4.2 million records daily"), not any one data set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from commonkeep.wiki.entities import Mention, document_names, find_mentions, plausible_name
from commonkeep.wiki.quantities import Quantity, find_quantities
from commonkeep.wiki.rules import RuleRef, find_rule_events, find_rule_refs, rule_declaration
from commonkeep.wiki.text import Sentence, slugify, split_sentences

_ALIAS_VERBS = re.compile(
    r"\b(?:is|are|was|were)\s+(?:exactly\s+|just\s+|simply\s+)?(?:the\s+same\s+(?:thing\s+)?as|identical\s+to|equivalent\s+to|"
    r"another\s+name\s+for|an?\s+(?:alias|synonym)\s+(?:of|for)|also\s+(?:known\s+as|called)|a\.?k\.?a\.?)"
    r"|\b(?:was|were|has\s+been|have\s+been|had\s+been|is\s+being|got|been)?\s*renamed\s+(?:to|as|into)"
    r"|\b(?:is|are)\s+now\s+(?:called|named|known\s+as)"
    r"|\b(?:now|also|formerly|previously)\s+(?:called|named|known\s+as)"
    r"|\b(?:is|are|was)\s+the\s+(?:[\w-]+\s+){0,3}names?\s+(?:for|of)"
    r"|\(\s*(?:(?:internal|external|former|old|new|official)\s+)?(?:codename|code\s+name|aka|a\.k\.a\.|also\s+known\s+as|formerly(?:\s+known\s+as)?|alias)\s",
    re.IGNORECASE,
)
_DEFINITION = re.compile(
    r"^(?P<term>(?:(?:a|an|the)\s+)?[\w][\w\- ]{0,40}?)\s+(?:is|are)\s+(?:defined\s+as\s+)?(?P<def>(?:a|an)\s+.{3,200})$"
    r"|^(?P<term2>[\w][\w\- ]{0,40}?)\s+(?:means|refers\s+to|stands\s+for)\s+(?P<def2>.{3,200})$",
    re.IGNORECASE,
)


@dataclass
class Fact:
    """One extracted fact: ``key`` is unique per source, ``sentence`` is the exact source text."""

    kind: str
    key: str
    value: str
    subject: str
    sentence: str
    ordinal: int
    detail: dict[str, object] = field(default_factory=dict)


@dataclass
class Extraction:
    """What the extractor found in one source."""

    title: str
    sentences: list[Sentence]
    mentions: dict[int, list[str]]  # sentence ordinal -> entity names
    concepts: dict[str, list[int]]  # concept name -> sentence ordinals
    facts: list[Fact]
    rule_events: list[dict[str, object]]

    @property
    def entities(self) -> list[str]:
        seen: dict[str, None] = {}
        for names in self.mentions.values():
            for n in names:
                seen.setdefault(n, None)
        return list(seen)


def _alias_pairs(text: str, mentions: list[Mention]) -> list[tuple[list[str], str]]:
    pairs: list[tuple[list[str], str]] = []
    for verb in _ALIAS_VERBS.finditer(text):
        before = [m for m in mentions if m.end <= verb.start()]
        after = [m for m in mentions if m.start >= verb.end()]
        if not before or not after:
            continue
        right = after[0]
        if right.start - verb.end() > 60:
            continue
        left = [before[-1]]
        # "Phoenix/Aether systems (which ... renamed to X)": slash- or and-joined names go together.
        for m in reversed(before[:-1]):
            gap = text[m.end : left[0].start]
            if gap.strip() in ("/", "and", ",", "or"):
                left.insert(0, m)
            else:
                break
        pairs.append(([m.name for m in left if m.name != right.name], right.name))
    return pairs


def _definition(text: str, names: set[str]) -> tuple[str, str] | None:
    body = text.rstrip(".!").strip()
    if len(body) > 240 or ":" in body[:3]:
        return None
    m = _DEFINITION.match(body)
    if not m:
        return None
    term = (m.group("term") or m.group("term2") or "").strip()
    definition = (m.group("def") or m.group("def2") or "").strip()
    term = re.sub(r"^(?:a|an|the)\s+", "", term, flags=re.IGNORECASE)
    if not term or len(term.split()) > 4 or term.casefold() in {"this", "that", "it", "there", "here", "which", "what"}:
        return None
    if _ALIAS_VERBS.search(text):
        return None
    return term, definition


def extract(text: str, *, source_slug: str, known_names: set[str], known_families: set[str]) -> Extraction:
    """Extract facts from one source document (deterministic; same input, same output)."""
    sentences = split_sentences(text)
    plain = [s.text for s in sentences]
    names = document_names(plain, known_names)
    # a name used anywhere in the document also counts when it starts a sentence
    names |= {n for n in known_names if any(n in s for s in plain)}
    # "Atlas, formerly known as ...", "Phoenix was renamed to ...": a capitalised sentence starter
    # directly followed by an alias phrase names something even if nothing else mentions it.
    for text_ in plain:
        m = re.match(r"^([A-ZΦ][\w-]*)\s*,?\s*", text_)
        if m and _ALIAS_VERBS.match(text_, m.end()):
            names.add(m.group(1))
    names = {n for n in names if plausible_name(n)}
    title = next((s.text for s in sentences if s.text.strip()), source_slug)[:120]

    mentions: dict[int, list[str]] = {}
    concepts: dict[str, list[int]] = {}
    facts: list[Fact] = []
    events: list[dict[str, object]] = []
    families = set(known_families)
    current_rule: RuleRef | None = None
    doc_rule: RuleRef | None = None
    for s in sentences:
        found = find_rule_refs(s.text, families)
        families |= {r.family for r in found}
        decl = rule_declaration(s.text, families)
        if decl is not None and decl.whole_document:
            doc_rule = decl.ref
    counter: dict[str, int] = {}

    def add(kind: str, key: str, value: str, subject: str, s: Sentence, **detail: object) -> None:
        if rule is not None and "rule" not in detail and kind != "quantity":
            detail["rule"] = rule.label
        n = counter.get(key, 0)
        counter[key] = n + 1
        unique = key if n == 0 else f"{key}#{n + 1}"
        facts.append(Fact(kind, f"{unique}@{source_slug}", value, subject, s.text, s.ordinal, dict(detail)))

    for s in sentences:
        ms = find_mentions(s.text, names)
        if ms:
            mentions[s.ordinal] = list(dict.fromkeys(m.name for m in ms))
        decl = rule_declaration(s.text, families)
        if decl is not None and not decl.whole_document:
            current_rule = decl.ref
        rule = current_rule or doc_rule
        refs = find_rule_refs(s.text, families)
        for ref in refs:
            concepts.setdefault(ref.family.capitalize(), []).append(s.ordinal)
        if rule is not None and s.text != s.section:
            concepts.setdefault(rule.family.capitalize(), []).append(s.ordinal)
        if decl is not None:
            members = [x.text for x in sentences if (decl.whole_document or x.ordinal >= s.ordinal) and x.text != x.section]
            add("rule", f"rule:{decl.ref.family}:{decl.ref.version}", " ".join(members)[:400], decl.ref.label, s,
                family=decl.ref.family, version=decl.ref.version, rule=decl.ref.label)
            events.append({"event": "declare", "family": decl.ref.family, "version": decl.ref.version,
                           "targets": [decl.ref.version], "ordinal": s.ordinal, "by": decl.ref.version})
        for ev in find_rule_events(s.text, families, rule):
            ev["ordinal"] = s.ordinal
            events.append(ev)
            if ev["event"] != "declare":
                add("rule_change", f"rule:{ev['family']}:{ev['event']}", s.text, str(ev["family"]), s,
                    family=ev["family"], event=ev["event"], targets=ev["targets"], by=ev.get("by"))
        for left, right in _alias_pairs(s.text, ms):
            for name in left:
                a, b = sorted((slugify(name), slugify(right)))
                add("alias", f"alias:{a}~{b}", f"{name} = {right}", name, s, names=[name, right])
        d = _definition(s.text, names)
        if d is not None:
            term, definition = d
            add("definition", f"definition:{slugify(term)}", definition, term, s, term=term)
            if term not in names:
                concepts.setdefault(term, []).append(s.ordinal)
        for q in find_quantities(s.text):
            subject = _quantity_subject(q, s, ms, refs, rule, names)
            add("quantity", f"quantity:{slugify(subject)}:{slugify(q.unit.replace('%', 'percent'))}", q.display, subject, s,
                number=q.number, unit=q.unit, rule=(rule.label if rule and not refs else None))
    if doc_rule is not None:
        # every sentence of a document that declares a rule belongs to that rule
        for f in facts:
            if f.kind == "quantity" and f.detail.get("rule") is None and not find_rule_refs(f.sentence, families):
                f.detail["rule"] = doc_rule.label
    return Extraction(title, sentences, mentions, concepts, facts, events)


def _quantity_subject(q: Quantity, s: Sentence, ms: list[Mention], refs: list[RuleRef], rule: RuleRef | None,
                      names: set[str]) -> str:
    """What a number is about: a rule it names or sits in, else the nearest name (see below)."""
    if refs:
        return refs[0].label
    if rule is not None:
        return rule.label
    # the name in the same clause as the number, else the heading's topic, else the sentence's first
    clause_start = max(s.text.rfind(p, 0, s.text.find(q.text)) for p in (", ", "; ", ": ", " — ", "("))
    clause_end = min([i for i in (s.text.find(p, s.text.find(q.text)) for p in (", ", "; ")) if i >= 0] or [len(s.text)])
    near = [m for m in ms if m.start >= clause_start and m.end <= clause_end]
    if near:
        return near[0].name
    if s.section:
        heading = find_mentions(s.section, names)
        if heading:
            return heading[0].name
    if ms:
        return ms[0].name
    return "unspecified"
