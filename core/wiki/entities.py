"""Finding the names of things in a sentence, better than "any capitalised word".

A name is a quoted name (``'Phoenix'``), an identifier with digits or inner hyphens
(``K-12``, ``Tartarus-v3``, ``LΦ-88``), or a run of capitalised words that does not merely start
the sentence. A capitalised sentence starter only counts when the same document, the wiki, or an
alias statement already knows it as a name. Designators such as "Project" are dropped, so
"Project Cerberus" and "Cerberus" are one entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from commonkeep.wiki.text import STOPWORDS

_QUOTED = re.compile(r"(?<!\w)['\"‘“]([^'\"’”\n]{1,48}?)['\"’”](?!\w)")
_TOKEN = re.compile(r"[\w][\w\-Φ]*(?:'s)?", re.UNICODE)
_CODE = re.compile(r"^(?=.*[A-Za-zΦ])(?=.*(?:\d|[a-zΦ]-[A-Za-zΦ]|[A-ZΦ]-))[\w][\w\-]*[\w]$", re.UNICODE)
_NOT_NAMES = re.compile(r"^(?:[vV]\d+(?:\.\d+)*|Q[1-4]|H[12]|FY\d+|\d+(?:st|nd|rd|th)|p\d+|[a-z][\w-]*)$")
DESIGNATORS = frozenset({"project", "operation", "program", "programme", "codename", "team"})
_COMMON_CAPS = frozenset(
    ["i", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "today", "tomorrow", "yesterday", "subject", "to", "from", "cc", "re", "fw", "fwd", "dear", "hi", "hello", "regards", "thanks", "team", "note", "update", "updated", "new", "final", "ignore", "all", "any", "each", "every", "no", "yes", "ok", "okay"]
)
_UNIT_WORDS = frozenset(["b", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "pib", "ms", "usd", "eur", "gbp"])
_RULE_WORDS = frozenset(
    ["policy", "policies", "rule", "rules", "regulation", "guideline", "standard", "directive", "procedure", "requirement", "amendment", "version", "revision", "release", "spec", "specification"]
)


@dataclass(frozen=True)
class Mention:
    """A name found in a sentence, with its character span."""

    name: str
    start: int
    end: int


def _clean(name: str) -> str:
    name = name.strip(" -'\"")
    if name.endswith("'s"):
        name = name[:-2]
    parts = name.split()
    while len(parts) > 1 and parts[0].casefold() in DESIGNATORS:
        parts = parts[1:]
    return " ".join(parts)


def plausible_name(name: str) -> bool:
    """True when ``name`` can be an entity: not a stopword, version, ordinal or lowercase word."""
    name = _clean(name)
    if not name or len(name) > 60 or _NOT_NAMES.match(name) or "REDACTED" in name:
        return False  # a redaction marker ([REDACTED:<kind>], commonkeep.secrets) names nothing
    first = name.split()[0]
    if len(name.split()) == 1 and (first.casefold() in STOPWORDS or first.casefold() in _COMMON_CAPS):
        return False
    if name.casefold() in _UNIT_WORDS:
        return False
    if first.casefold() in _RULE_WORDS and len(name.split()) <= 2:
        return False
    return any(ch.isalpha() for ch in name) and (name[0].isupper() or name[0].isdigit() or bool(_CODE.match(name)))


def is_code(token: str) -> bool:
    """Identifiers such as ``K-12``, ``River-9``, ``Tartarus-v3``, ``Legacy-Phi``."""
    return bool(_CODE.match(token)) and not _NOT_NAMES.match(token) and token[0].isupper()


def document_names(sentences: list[str], known: set[str]) -> set[str]:
    """Names a document introduces: quoted names, identifiers, mid-sentence capitalised runs."""
    found: set[str] = set()
    for text in sentences:
        for m in _QUOTED.finditer(text):
            cand = _clean(m.group(1))
            if plausible_name(cand) and len(cand.split()) <= 4:
                found.add(cand)
        for run, at_start in _split_known(_capital_runs(text), known | found):
            if at_start and len(run) == 1 and run[0] not in known and not is_code(run[0]):
                continue
            if at_start and run[0] not in known and not is_code(run[0]) and run[0].casefold() in (STOPWORDS | _COMMON_CAPS):
                run = run[1:]
            cand = _clean(" ".join(run))
            if cand and plausible_name(cand):
                found.add(cand)
    return found


def _split_known(runs: list[tuple[list[str], bool]], known: set[str]) -> list[tuple[list[str], bool]]:
    """A run that starts with a known name is that name plus whatever follows it."""
    out: list[tuple[list[str], bool]] = []
    for run, at_start in runs:
        for n in range(len(run) - 1, 0, -1):
            if " ".join(run[:n]) in known:
                out.append((run[:n], at_start))
                out.append((run[n:], False))
                break
        else:
            out.append((run, at_start))
    return out


def _capital_runs(text: str) -> list[tuple[list[str], bool]]:
    runs: list[tuple[list[str], bool]] = []
    current: list[str] = []
    start_flag = False
    prev_end = 0
    sentence_start = True
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        between = text[prev_end : m.start()]
        if current and (between.strip() not in ("", "&") or not (tok[0].isupper() or is_code(tok))):
            runs.append((current, start_flag))
            current = []
        if tok[0].isupper() or is_code(tok):
            if not current:
                start_flag = sentence_start or between.rstrip().endswith((":", "\u2014"))
            current.append(tok)
        sentence_start = False
        prev_end = m.end()
    if current:
        runs.append((current, start_flag))
    return runs


def find_mentions(text: str, names: set[str]) -> list[Mention]:
    """Every occurrence of a known name in ``text`` (longest names first, no overlaps)."""
    taken: list[tuple[int, int]] = []
    out: list[Mention] = []
    for name in sorted(names, key=len, reverse=True):
        pattern = r"(?<![\w-])" + re.escape(name) + r"(?![\w-]*\w)"
        for m in re.finditer(pattern, text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            taken.append((m.start(), m.end()))
            out.append(Mention(name, m.start(), m.end()))
    # "Project Cerberus" names the entity "Cerberus": the designator is not part of the name.
    return sorted(out, key=lambda mm: mm.start)
