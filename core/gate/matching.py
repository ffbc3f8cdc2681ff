"""Matching a candidate against existing records (``contracts/ompkeep-store.md`` §6.8, §4.2).

``match_kind`` is one of ``new``, ``duplicate`` (token similarity ≥ 0.82 and nothing added),
``strengthens_existing`` (similar, same direction, nothing added), ``updates_existing`` (same
``normalized_key`` and similarity ≥ 0.3; or similar to a record but adding to it or changing one
of its values: a slow-burn edit such as the same rule "and skip the tests on Fridays", or "line
length is 120" against "line length is 110", is an update a person reviews, never a second
active record and never a strengthening that auto-applies),
``potential_conflict`` (contradiction cue plus tag overlap, score ≥ 2), ``supersedes_existing``
(a ``supersedes:<id>`` tag or the phrase "supersedes <id>") and ``ambiguous`` (several conflicts).

A candidate updates, or contradicts, a record only when both are about the same subject
(:func:`subject_change`: the candidate keeps every word of the record but its values); a
candidate that names something else ("kazorzor" for "terpolvex") or drops what the record says
("…, as before.") is ``new``: it never replaces a record.

``MatchIndex`` keeps an inverted token index so curating thousands of candidates does not compare
every pair: only records sharing a token with the candidate are scored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

DUPLICATE_SIMILARITY = 0.82
STRENGTHENS_SIMILARITY = 0.5
CONFLICT_MIN_SIMILARITY = 0.2
UPDATES_MIN_SIMILARITY = 0.3

_STOP = frozenset(
    ["a", "an", "the", "and", "or", "of", "to", "in", "on", "for", "with", "by", "at", "from", "as", "is", "are", "be", "been", "was", "were", "it", "its", "this", "that", "these", "those", "we", "you", "i", "they", "he", "she", "our", "your", "their", "my", "me", "us", "them", "should", "would", "could", "can", "will", "shall", "may", "might", "must", "do", "does", "did", "done", "has", "have", "had"]
)
_CUES = frozenset(
    ["not", "never", "don't", "dont", "no", "instead", "avoid", "stop", "stopped", "longer", "wrong", "incorrect", "deprecated", "rather", "replace", "replaced", "removed", "disable", "disabled", "without"]
)
# words that add nothing to a rule ("Always run X" repeats "Run X")
_FILLER = frozenset(["always", "please", "remember", "note", "just", "also", "really", "all", "every", "time", "times"])
_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")
_SUPERSEDES_PHRASE = re.compile(r"\bsupersedes\s+(mem_[A-Za-z0-9_]+)", re.I)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def tokens(text: str) -> frozenset[str]:
    """Content tokens of a text: lowercase words without stop words."""
    return frozenset(w for w in words(text) if w not in _STOP)


def statement_words(statement: str) -> tuple[frozenset[str], bool]:
    """A record's :func:`tokens` and whether it holds a contradiction cue (its words found once)."""
    ws = words(statement)
    return frozenset(w for w in ws if w not in _STOP), not _CUES.isdisjoint(ws) or "no longer" in statement.lower()


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Token similarity: Jaccard over content tokens (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def added_tokens(candidate: frozenset[str], record: frozenset[str]) -> frozenset[str]:
    """What a candidate says that the record does not (filler words aside)."""
    return frozenset(candidate - record - _FILLER)


def _is_value(token: str) -> bool:
    """A number, version or port: a value a statement about the same subject may change."""
    return any(ch.isdigit() for ch in token)


def subject_change(candidate: str, record: str, *, replacing: bool = True) -> str:
    """Why ``candidate`` is not about the same subject as ``record`` (``""`` when it is).

    The subject of a statement is what it names: its names, paths, identifiers, rare words and
    numbers, that is every content token but the filler words and the contradiction cues (which
    say the direction, not the subject). Two statements are about the same subject when the
    candidate keeps every one of the record's words, changing at most its values (a number for a
    number: "port 5433" to "port 6543", "line length 110" to "120"), and adding what it likes
    ("… and skip the tests on Fridays"). A candidate that drops one of the record's words is
    about something else ("kazorzor" for "terpolvex"), or a lossy rewrite ("postgres 16 on port
    6543." to "…, as before."): it may never replace the record. With ``replacing=False``
    (whether two statements contradict each other) only a substitution counts: the candidate
    drops one of the record's words and puts another in its place.
    """
    return _subject_change(tokens(candidate), tokens(record), replacing)


def _stem(word: str) -> str:
    """A word without its inflection ("committing", "commits" and "commit" are one word here); a
    value is kept whole."""
    if _is_value(word) or len(word) <= 3:
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # "committ" -> "commit"
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _subject_change(candidate: frozenset[str], record: frozenset[str], replacing: bool) -> str:
    ct = frozenset(_stem(t) for t in candidate - _FILLER - _CUES)
    rt = frozenset(_stem(t) for t in record - _FILLER - _CUES)
    lost, added = rt - ct, ct - rt
    lost_words = sorted(t for t in lost if not _is_value(t))
    added_words = sorted(t for t in added if not _is_value(t))
    lost_values = sorted(t for t in lost if _is_value(t))
    added_values = sorted(t for t in added if _is_value(t))
    if replacing and len(lost_values) > len(added_values):
        return f"it drops {', '.join([*lost_values, *lost_words][:4])} from the record: a lossy rewrite"
    if lost_words and (replacing or added_words):
        said = ", ".join(lost_words[:4])
        if added_words:
            return f"it names {', '.join(added_words[:4])} where the record names {said}: another subject"
        return f"it drops {said} from the record: a lossy rewrite"
    return ""


def same_subject(candidate: str, record: str, *, replacing: bool = True) -> bool:
    """Whether ``candidate`` is about the same subject as ``record`` (:func:`subject_change`)."""
    return not subject_change(candidate, record, replacing=replacing)


def has_contradiction_cue(text: str) -> bool:
    return any(w in _CUES for w in words(text)) or "no longer" in text.lower()


def slug(value: str) -> str:
    """The contract's slug (§2.1): lowercase, runs outside ``[a-z0-9]`` become ``-``, trimmed."""
    return _slug(value) if len(value) <= 256 else _slug.__wrapped__(value)


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=4096)  # every capture slugs its profile, scope and topic: the same few words
def _slug(value: str) -> str:
    s = _NOT_SLUG.sub("-", value.lower()).strip("-")
    return s or "project"


def normalized_key(
    *, profile_id: str | None, scope: dict[str, Any] | None, tags: list[str], rule_type: str | None
) -> str | None:
    """``profile|scope_level|scope_ref|topic|ruleType``, each part slugged (§6.8); ``None`` without a topic."""
    topic = next((t for t in tags if not t.startswith("supersedes:") and t not in (rule_type, "correction")), None)
    if topic is None:
        return None
    scope = scope or {"type": "global"}
    level = str(scope.get("type") or "global")
    ref = str(scope.get("project") or level)
    profile = (profile_id or "legacy").split(":")[-1]
    return "|".join(slug(p) for p in (profile, level, ref, topic, rule_type or "memory"))


def supersedes_target(text: str, tags: list[str]) -> str | None:
    """The record id a candidate says it supersedes, first by tag, then by phrase."""
    for t in tags:
        if t.startswith("supersedes:") and t[len("supersedes:") :]:
            return t[len("supersedes:") :]
    m = _SUPERSEDES_PHRASE.search(text)
    return m.group(1) if m else None


@dataclass
class Match:
    """The result of matching one candidate."""

    kind: str = "new"
    ids: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    best_similarity: float = 0.0


@dataclass
class _Entry:
    id: str
    tokens: frozenset[str]
    tags: frozenset[str]
    key: str | None
    cue: bool


class MatchIndex:
    """Active records (and records proposed earlier in the same curation) indexed by token."""

    # Postings scanned per candidate beyond the exact duplicate prefix (see ``neighbours``).
    SCAN_BUDGET = 150

    def __init__(self) -> None:
        self._entries: list[_Entry] = []
        self._by_id: dict[str, int] = {}
        self._postings: dict[str, list[int]] = {}
        self._keys: dict[str, list[int]] = {}

    def __contains__(self, record_id: object) -> bool:
        return record_id in self._by_id

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, record_id: str, statement: str, tags: list[str], key: str | None) -> None:
        """Index a record (an id added twice keeps its first entry)."""
        if record_id in self._by_id:
            return
        toks, cue = statement_words(statement)
        self.add_known(record_id, toks, tags, key, cue)

    def add_known(self, record_id: str, toks: frozenset[str], tags: list[str], key: str | None, cue: bool) -> None:
        """Index a record whose statement's :func:`statement_words` are known (``toks``, ``cue``)."""
        if record_id in self._by_id:
            return
        i = len(self._entries)
        self._entries.append(_Entry(record_id, toks, frozenset(tags), key, cue))
        self._by_id[record_id] = i
        for t in toks:
            self._postings.setdefault(t, []).append(i)
        if key:
            self._keys.setdefault(key, []).append(i)

    def add_record(self, rec: dict[str, Any]) -> None:
        self.add(str(rec["id"]), str(rec.get("statement", "")), list(rec.get("tags") or []), rec.get("normalized_key"))

    def neighbours(self, toks: frozenset[str]) -> set[int]:
        """Entries that may be similar to ``toks``.

        Exact for duplicates (prefix filtering: an entry with token similarity ≥ 0.82 shares at
        least one of the query's ``n - ceil(0.82 n) + 1`` rarest tokens, since every entry is
        indexed under all its tokens); beyond that prefix, rarer tokens are followed while the
        scanned postings stay within ``SCAN_BUDGET``, so frequent words cannot make curation
        quadratic. Weaker relations (strengthens, conflicts) are found among these neighbours.
        """
        order = sorted(toks, key=lambda t: len(self._postings.get(t, ())))
        exact = len(order) - math.ceil(DUPLICATE_SIMILARITY * len(order)) + 1
        found: set[int] = set()
        scanned = 0
        for k, t in enumerate(order):
            posting = self._postings.get(t)
            if not posting:
                continue
            if k >= exact and scanned + len(posting) > self.SCAN_BUDGET:
                break
            found.update(posting)
            scanned += len(posting)
        return found

    def match(self, text: str, tags: list[str], key: str | None) -> Match:
        """Classify a candidate text against the index."""
        target = supersedes_target(text, tags)
        if target is not None and target in self._by_id:
            return Match("supersedes_existing", [target], [f"declares it supersedes {target}"])
        toks = tokens(text)
        n = len(toks)
        scored: list[tuple[float, int]] = []
        for i in self.neighbours(toks):
            other = self._entries[i].tokens
            inter = len(toks & other)
            sim = inter / (n + len(other) - inter) if n + len(other) else 1.0
            if sim >= CONFLICT_MIN_SIMILARITY:
                scored.append((sim, i))
        scored.sort(reverse=True)
        best = scored[0][0] if scored else 0.0
        if scored and best >= DUPLICATE_SIMILARITY:
            e = self._entries[scored[0][1]]
            if not added_tokens(toks, e.tokens):
                return Match("duplicate", [e.id], [f"token similarity {best:.2f} with {e.id}"], best)
        cue = has_contradiction_cue(text)
        tagset = frozenset(tags)
        conflicts: list[tuple[int, str]] = []
        for sim, i in scored:
            if sim < CONFLICT_MIN_SIMILARITY:
                break
            e = self._entries[i]
            overlap = len(tagset & e.tags)
            score = (1 if cue != e.cue else 0) + overlap + (1 if sim >= STRENGTHENS_SIMILARITY else 0)
            if cue != e.cue and score >= 2 and not _subject_change(toks, e.tokens, False):  # about one subject
                conflicts.append((i, f"contradiction cue, {overlap} shared tags, similarity {sim:.2f} with {e.id}"))
        if len(conflicts) > 1:
            ids = [self._entries[i].id for i, _ in conflicts[:5]]
            return Match("ambiguous", ids, [r for _, r in conflicts[:5]], best)
        if conflicts:
            i, why = conflicts[0]
            return Match("potential_conflict", [self._entries[i].id], [why], best)
        if key and key in self._keys:
            same_key = set(self._keys[key])
            for sim, i in scored:  # same topic *and* overlapping content; a shared first tag alone is not enough
                if i in same_key and sim >= UPDATES_MIN_SIMILARITY and not _subject_change(toks, self._entries[i].tokens, True):
                    e = self._entries[i]
                    return Match("updates_existing", [e.id], [f"same normalized_key {key}, similarity {sim:.2f}"], best)
        if scored and best >= STRENGTHENS_SIMILARITY:
            e = self._entries[scored[0][1]]
            extra = added_tokens(toks, e.tokens)
            if extra and _subject_change(toks, e.tokens, True):  # another subject, or a lossy rewrite: a record of its own
                return Match("new", [], [f"{_subject_change(toks, e.tokens, True)} ({e.id})"], best)
            if extra:  # the same rule plus something, or one of its values changed: a person decides
                dropped = sorted(e.tokens - toks)
                what = (f"changes {', '.join(dropped[:4])} to {', '.join(sorted(extra)[:4])}" if dropped
                        else f"adds {', '.join(sorted(extra)[:6])}")
                return Match("updates_existing", [e.id], [f"{what} (token similarity {best:.2f} with {e.id})"], best)
            return Match("strengthens_existing", [e.id], [f"token similarity {best:.2f} with {e.id}"], best)
        return Match("new", [], [], best)
