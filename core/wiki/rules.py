"""Versioned rules and what supersedes, revokes, voids or reinstates what.

A rule is a family word and a version (``Policy v6``, ``Rule 3``, ``Guideline v2.1``). A source
declares a rule ("Policy v2: ...", "This is Policy v6."), and its sentences may change the
status of other versions: "supersedes v1-v6", "All previous policies superseded", "Ignore
Policy v5, it was a draft", "this was revoked", "revert to v6", "is reinstated".
The status of every version is worked out later from all events in date order (see
``commonkeep.wiki.status``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FAMILY_WORDS = {
    "policy": "policy", "policies": "policy", "rule": "rule", "rules": "rule", "regulation": "regulation",
    "regulations": "regulation", "guideline": "guideline", "guidelines": "guideline", "standard": "standard",
    "standards": "standard", "directive": "directive", "directives": "directive", "procedure": "procedure",
    "procedures": "procedure", "requirement": "requirement", "requirements": "requirement",
    "amendment": "amendment", "amendments": "amendment", "spec": "spec", "specification": "spec",
}
_FAMILY = r"(?P<family>" + "|".join(sorted(FAMILY_WORDS, key=len, reverse=True)) + r")"
_VERSION = r"(?P<version>v\d+(?:\.\d+)*|\d+(?:\.\d+)*)"
_REF = re.compile(r"\b" + _FAMILY + r"\s+" + _VERSION + r"\b", re.IGNORECASE)
_BARE = re.compile(r"(?<![\w.-])v(\d+(?:\.\d+)*)(?![\w.-]*\w)")
_RANGE = re.compile(r"(?<![\w.-])v?(\d+)\s*(?:-|–|to|through|thru)\s*v?(\d+)(?![\w.])", re.IGNORECASE)
_HEAD_DECL = re.compile(r"^\s*" + _FAMILY + r"\s+" + _VERSION + r"\s*(?::|—|–|-\s)", re.IGNORECASE)
_DOC_DECL = re.compile(
    r"\b(?:this\s+is|this\s+(?:becomes|will\s+be)|(?:issued|published|adopted|enacted)\s+as)\s+" + _FAMILY + r"\s+" + _VERSION + r"\b",
    re.IGNORECASE,
)
_SUPERSEDE = re.compile(r"\b(?:supersed(?:es|ing)|replaces|replacing|overrides|overriding)\b", re.IGNORECASE)
_ALL_PREVIOUS = re.compile(
    r"\b(?:all|any)\s+(?:previous|prior|earlier|older|existing)\s+(?:\w+\s+)?(?:versions?|" + "|".join(FAMILY_WORDS) + r")\b[^.;]{0,30}?\b(?:are\s+|is\s+|were\s+)?(?:superseded|replaced|void|revoked)"
    r"|\bsupersed(?:es|ing)\s+(?:all|any)\s+(?:previous|prior|earlier)",
    re.IGNORECASE,
)
_VOID = re.compile(
    r"\b(?:ignore|disregard|discard)\s+(?P<ref>[^.;,]{1,40})"
    r"|(?P<ref2>[^.;]{1,40}?)(?:,\s*it|\s+(?:was|is))\s+(?:only\s+|just\s+|merely\s+)?a\s+draft\b",
    re.IGNORECASE,
)
_PASSIVE_REVOKE = re.compile(
    r"\b(?:was|were|is|are|has\s+been|have\s+been|had\s+been|got)\s+(?:(?:now|since|later|officially|formally|also)\s+)?"
    r"(?:revoked|rescinded|retracted|withdrawn|invalidated|cancell?ed|repealed|annulled|superseded)",
    re.IGNORECASE,
)
_ACTIVE_REVOKE = re.compile(r"\b(?:revokes|rescinds|retracts|repeals|cancels|withdraws|annuls|voids)\b", re.IGNORECASE)
_PRONOUN_REVOKE = re.compile(r"\b(?:this|it|that)\s+" + _PASSIVE_REVOKE.pattern[2:], re.IGNORECASE)
_REVERT = re.compile(r"\b(?:revert(?:s|ed|ing)?|roll(?:s|ed)?\s+back|go(?:es)?\s+back)\s+(?:back\s+)?to\s+(?P<ref>[^.;,]{1,40})", re.IGNORECASE)
_REINSTATE = re.compile(r"\b(?:is|are|was|were|has\s+been|have\s+been)\s+(?:now\s+)?(?:reinstated|restored|back\s+in\s+force)\b|\breinstat(?:es|ing)\b", re.IGNORECASE)
_REMAINS = re.compile(r"\bremains?\s+(?:in\s+force|valid|binding|in\s+effect|the\s+only\s+(?:enforceable|binding|valid))", re.IGNORECASE)


@dataclass(frozen=True)
class RuleRef:
    """A reference to one version of a rule family."""

    family: str
    version: str

    @property
    def label(self) -> str:
        return f"{self.family.capitalize()} {self.version}"


@dataclass(frozen=True)
class Declaration:
    ref: RuleRef
    whole_document: bool


def _version(v: str) -> str:
    return v if v.lower().startswith("v") else f"v{v}"


def version_key(version: str) -> tuple[int, ...]:
    """Sortable form of ``v2.10``."""
    return tuple(int(p) for p in version.lstrip("vV").split(".") if p.isdigit())


def find_rule_refs(text: str, families: set[str]) -> list[RuleRef]:
    """Rule references in ``text``: ``Policy v6``, and bare ``v6`` when one family is in play."""
    refs = [RuleRef(FAMILY_WORDS[m.group("family").casefold()], _version(m.group("version"))) for m in _REF.finditer(text)]
    family = refs[0].family if refs else (next(iter(families)) if len(families) == 1 else None)
    if family is not None:
        for m in _RANGE.finditer(text):
            lo, hi = int(m.group(1)), int(m.group(2))
            if m.group(0).lower().startswith("v") and 0 < lo < hi <= lo + 50:
                refs.extend(RuleRef(family, f"v{i}") for i in range(lo, hi + 1))
        for m in _BARE.finditer(text):
            refs.append(RuleRef(family, f"v{m.group(1)}"))
    return list(dict.fromkeys(refs))


def rule_declaration(text: str, families: set[str]) -> Declaration | None:
    """The rule a sentence declares: ``Policy v2: ...`` (from here on) or ``This is Policy v6.``
    (the whole document)."""
    m = _HEAD_DECL.match(text)
    if m:
        return Declaration(RuleRef(FAMILY_WORDS[m.group("family").casefold()], _version(m.group("version"))), False)
    m = _DOC_DECL.search(text)
    if m:
        return Declaration(RuleRef(FAMILY_WORDS[m.group("family").casefold()], _version(m.group("version"))), True)
    return None


def _refs_in(fragment: str, families: set[str], default: str | None) -> list[RuleRef]:
    fams = families | ({default} if default else set())
    return find_rule_refs(fragment, fams if len(fams) == 1 else families)


def find_rule_events(text: str, families: set[str], rule: RuleRef | None) -> list[dict[str, object]]:
    """Status changes a sentence states, as event dicts (``event``, ``family``, ``targets``, ``by``)."""
    events: list[dict[str, object]] = []
    by = rule.version if rule else None
    default = rule.family if rule else None

    def emit(event: str, refs: list[RuleRef]) -> None:
        for fam in dict.fromkeys(r.family for r in refs):
            targets = [r.version for r in refs if r.family == fam and (rule is None or r != rule)]
            if targets:
                events.append({"event": event, "family": fam, "targets": targets, "by": by if fam == default else None})

    if rule is not None and _ALL_PREVIOUS.search(text):
        events.append({"event": "supersede_all", "family": rule.family, "targets": [], "by": rule.version})
    else:
        m = _SUPERSEDE.search(text)
        if m and rule is not None:
            emit("supersede", _refs_in(text[m.end() : m.end() + 60], families, default))
    for m in _VOID.finditer(text):
        emit("void", _refs_in(m.group("ref") or m.group("ref2") or "", families, default))
    m = _REVERT.search(text)
    if m:
        emit("reinstate", _refs_in(m.group("ref"), families, default))
    m = _REINSTATE.search(text)
    if m:
        emit("reinstate", _refs_in(text[: m.start()] if not m.group(0).lower().startswith("reinstat") else text[m.end() :], families, default))
    if rule is not None and _PRONOUN_REVOKE.search(text):
        events.append({"event": "revoke", "family": rule.family, "targets": [rule.version], "by": None})
    else:
        m = _PASSIVE_REVOKE.search(text)
        if m:
            emit("revoke", _refs_in(text[: m.start()], families, default))
        m = _ACTIVE_REVOKE.search(text)
        if m:
            emit("revoke", _refs_in(text[m.end() : m.end() + 60], families, default))
    m = _REMAINS.search(text)
    if m:
        emit("reaffirm", _refs_in(text[: m.start()], families, default))
    return events
