"""``query``: scored candidates (pages and facts) and grounded evidence sentences.

Scoring is lexical and explainable: a BM25 score over stemmed terms (SQLite FTS5), plus a bonus
when a sentence names the asked-about entity *or any name in its alias chain*, plus a bonus for
sentences that carry a rule of a family the question names ("policy") or a fact about the
entity. Rules keep their whole version history (marked current / superseded / revoked / draft),
because which rule binds depends on it; a quantity replaced by a newer value from a newer source
is marked superseded and ranked below current evidence. Every returned sentence passes the
grounding filter and names its source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from commonkeep.wiki.factsdb import FactsDB
from commonkeep.wiki.grounding import ELLIPSIS, Grounder
from commonkeep.wiki.layout import project_layout
from commonkeep.wiki.rules import FAMILY_WORDS
from commonkeep.wiki.text import collapse, content_terms

DEFAULT_LIMIT = 10
DEFAULT_MAX_CHARS = 2000
PER_SOURCE = 2
CLIP_AT = 200
REPLACED_WEIGHT = 0.3
# the rules in force decide which constraints apply; their sentences rank like a name match
CURRENT_RULE_BONUS = 1.0


@dataclass
class Evidence:
    """One grounded sentence (or clipped span of one) with its source and status."""

    text: str
    source: str
    date: str
    score: float
    status: str = "current"
    status_by: str | None = None
    facts: list[str] = field(default_factory=list)
    ordinal: int = -1  # sentence number in the source

    def render(self) -> str:
        note = "" if self.status == "current" else f" ({self.status}{' by ' + self.status_by if self.status_by else ''})"
        return f"- {self.text} [{self.source}]{note}"


@dataclass
class Candidate:
    kind: str  # "wiki" or "fact"
    ref: str
    score: float


@dataclass
class QueryResult:
    """What ``query`` returns: the Dossier candidate list plus grounded evidence."""

    question: str
    candidates: list[Candidate]
    evidence: list[Evidence]
    entities: list[str] = field(default_factory=list)
    ungrounded_dropped: int = 0

    def context(self) -> str:
        """The evidence as the text handed to an agent (already within the char budget)."""
        return "\n".join(e.render() for e in self.evidence)

    def render(self) -> str:
        """Dossier's stdout shape (``contracts/dossier.md §2.1``), then the evidence."""
        lines = [f"question: {self.question}", f"candidates ({len(self.candidates)}):"]
        lines += [f"  {c.kind} {c.ref} score={c.score:.2f}" for c in self.candidates]
        ctx = self.context()
        lines.append(f"evidence ({len(self.evidence)}, {len(ctx)} chars, grounded in raw/):")
        lines += [f"  {line}" for line in ctx.splitlines()]
        lines += [f"alias chain: {chain}" for chain in self.entities]
        if self.ungrounded_dropped:
            lines.append(f"dropped {self.ungrounded_dropped} sentence(s) not found in their source")
        return "\n".join(lines)


def _name_in(name: str, text: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-]*\w)", text, re.IGNORECASE) is not None


def _clip(text: str, keys: list[tuple[str, int]]) -> str:
    """Shorten a long sentence to the run of clauses that carries the most matched words.

    The result is a verbatim span of the sentence, marked with ``…`` where it was cut, so the
    grounding filter still finds it in the source.
    """
    if len(text) <= CLIP_AT:
        return text
    bounds = [0] + [m.end() for m in re.finditer(r"[,;:()—]\s*", text)] + [len(text)]
    clauses = [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]
    low = text.casefold()
    weights = [sum(w for k, w in keys if k in low[a:b]) + (1 if re.search(r"\d", text[a:b]) else 0) for a, b in clauses]
    best = (0, 0, 0)
    for i in range(len(clauses)):
        for j in range(i, len(clauses)):
            if clauses[j][1] - clauses[i][0] > CLIP_AT and j > i:
                break
            total = sum(weights[i : j + 1])
            if (total, -(clauses[j][1] - clauses[i][0])) > (best[0], -(clauses[best[2]][1] - clauses[best[1]][0])):
                best = (total, i, j)
    start, end = clauses[best[1]][0], clauses[best[2]][1]
    span = text[start:end].strip().rstrip(",;:(— ")
    if len(span) > CLIP_AT + 60:
        span = span[: CLIP_AT + 60].rsplit(" ", 1)[0]
    head = ELLIPSIS if start > 0 else ""
    tail = ELLIPSIS if text[start:].strip().rstrip(",;:(— .") != span.rstrip(".") else ""
    return head + span + tail


def query(project: str | Path, question: str, limit: int = DEFAULT_LIMIT, max_chars: int = DEFAULT_MAX_CHARS) -> QueryResult:
    """Answer ``question`` from the wiki: candidates and grounded evidence within ``max_chars``."""
    layout = project_layout(project)
    q = collapse(question)
    if not layout.facts_db.exists():
        return QueryResult(q, [], [])
    db = FactsDB(layout.facts_db)
    try:
        return _query(db, layout.project, q, max(0, limit), max_chars)
    finally:
        db.close()


def _query(db: FactsDB, project: Path, q: str, limit: int, max_chars: int) -> QueryResult:
    c = db.conn
    names = db.entity_names()
    qfold = q.casefold()
    matched = {slug for slug, name in names.items() if name.casefold() in qfold and _name_in(name, q)}
    groups = db.alias_groups()
    group: set[str] = set(matched)
    for slug in matched:
        group |= groups.get(slug, set())
    families = {fam for word, fam in FAMILY_WORDS.items() if re.search(rf"\b{word}\b", qfold)} & db.families()
    terms = list(dict.fromkeys(content_terms(q)))

    lex: dict[int, float] = {}
    if terms:
        expr = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        for rowid, rank in c.execute(
            "SELECT rowid, bm25(sentences_fts) FROM sentences_fts WHERE sentences_fts MATCH ? ORDER BY rank LIMIT 400", (expr,)
        ):
            lex[rowid] = -float(rank)
    ent_hit: set[int] = set()
    if group:
        marks = ",".join("?" * len(group))
        ent_hit = {r[0] for r in c.execute(f"SELECT sentence_id FROM mentions WHERE entity IN ({marks})", sorted(group))}
    fam_hit: set[int] = set()
    if families:
        marks = ",".join("?" * len(families))
        fam_hit = {r[0] for r in c.execute(f"SELECT sentence_id FROM concepts WHERE slug IN ({marks})", sorted(families))}
    ids = set(lex) | ent_hit | fam_hit
    if not ids:
        return QueryResult(q, [], [])
    top_lex = max(lex.values(), default=1.0) or 1.0
    group_names = [names[s].casefold() for s in group if s in names]
    keys = [(n, 3) for n in group_names] + [(f, 2) for f in families] + [(t, 1) for t in terms if len(t) > 3]

    rows = []
    for sid in ids:
        row = c.execute(
            "SELECT s.source, s.ordinal, s.text, s.section, src.date, src.seq FROM sentences s "
            "JOIN sources src ON src.path = s.source WHERE s.id=?", (sid,)).fetchone()
        if row is None or row[2] == row[3]:
            continue  # headings are labels, not claims
        source, ordinal, text, _section, date, _seq = row
        facts = c.execute("SELECT key, kind, subject, status, status_by, detail FROM facts WHERE source=? AND ordinal=?",
                          (source, ordinal)).fetchall()
        score = lex.get(sid, 0.0) / top_lex
        score += 1.0 if sid in ent_hit else 0.0
        score += 0.6 if sid in fam_hit else 0.0
        bonus = 0.0
        status, status_by = "current", None
        current_rule = False
        for key, kind, subject, st, by, detail in facts:
            rule_label = str(json.loads(detail).get("rule") or "")
            in_family = any(rule_label.casefold().startswith(f + " ") for f in families)
            if in_family and st == "current":
                current_rule = True
            if kind == "alias" and any(n in key for n in group) or kind in ("rule", "rule_change") and any(key.startswith(f"rule:{f}:") for f in families) or kind == "quantity" and (in_family or subject.casefold() in group_names or any(key.startswith(f"quantity:{g}:") for g in group)):
                bonus = max(bonus, 0.4)
            if st != "current" and status == "current":
                status, status_by = st, by
            elif st == "current" and by and status == "current":
                status_by = by
        score += bonus + (CURRENT_RULE_BONUS if current_rule else 0.0)
        replaced = status == "superseded" and status_by is not None and status_by.startswith("raw/")
        if replaced:
            score *= REPLACED_WEIGHT
        rows.append((score, date, source, ordinal, text, status, status_by, [f[0] for f in facts]))
    rows.sort(key=lambda r: (-r[0], r[1], r[2], r[3]))

    grounder = Grounder(project)
    evidence: list[Evidence] = []
    used = 0
    per_source: dict[str, int] = {}
    dropped = 0
    for score, date, source, ordinal, text, status, status_by, fkeys in rows:
        if per_source.get(source, 0) >= PER_SOURCE:
            continue
        shown = _clip(text, keys)
        if not grounder.supported(shown, source):
            dropped += 1
            continue
        item = Evidence(shown, source, date, round(score, 4), status, status_by, fkeys, ordinal)
        cost = len(item.render()) + (1 if evidence else 0)
        if used + cost > max_chars:
            continue
        used += cost
        per_source[source] = per_source.get(source, 0) + 1
        evidence.append(item)

    candidates = _candidates(db, project, evidence, group, families)
    top = max((cand.score for cand in candidates), default=1.0) or 1.0
    for cand in candidates:
        cand.score = cand.score / top
    candidates.sort(key=lambda cand: (-cand.score, cand.kind != "wiki", cand.ref))
    chains = []
    for slug in sorted(matched):
        members = sorted(groups.get(slug, {slug}), key=lambda s: str(names.get(s, s)).casefold())
        if len(members) > 1:
            chains.append(f"{names[slug]} = " + ", ".join(names.get(m, m) for m in members if m != slug))
    return QueryResult(q, candidates[:limit], evidence, chains, dropped)


def _candidates(db: FactsDB, project: Path, evidence: list[Evidence], group: set[str], families: set[str]) -> list[Candidate]:
    slugs = dict(db.conn.execute("SELECT path, slug FROM sources"))
    names = db.entity_names()
    pages: dict[str, float] = {}
    facts: dict[str, float] = {}
    for ev in evidence:
        for key in ev.facts:
            facts[key] = max(facts.get(key, 0.0), ev.score)
        if ev.source in slugs:
            ref = f"sources/{slugs[ev.source]}.md"
            pages[ref] = max(pages.get(ref, 0.0), ev.score)
        low = ev.text.casefold()
        mentioned = db.conn.execute(
            "SELECT m.entity FROM mentions m JOIN sentences s ON s.id = m.sentence_id WHERE s.source=? AND s.ordinal=?",
            (ev.source, ev.ordinal),
        ).fetchall()
        for (slug,) in mentioned:
            name = names.get(slug)
            if name and name.casefold() in low:
                ref = f"entities/{slug}.md"
                # the asked-about entity (or an alias of it) outranks names merely mentioned nearby
                pages[ref] = max(pages.get(ref, 0.0), ev.score + (0.5 if slug in group else 0.0))
        for fam in families:
            if fam in low:
                ref = f"concepts/{fam}.md"
                pages[ref] = max(pages.get(ref, 0.0), ev.score + 0.25)
    out = [Candidate("wiki", ref, s) for ref, s in pages.items() if (project / "wiki" / ref).exists()]
    out += [Candidate("fact", key, s) for key, s in facts.items()]
    return out
