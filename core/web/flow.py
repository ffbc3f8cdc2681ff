"""The inbox as a daily queue: one view (filters, session, sort) kept across decisions, facet
counts, duplicates grouped by the record they repeat, the next candidate after a decision, and
what each candidate's flags mean in plain words.

A view is the query string of the inbox (``?agent=omp&sort=risk``): it survives a reload and a
decision, and the candidate page carries it, so "next" means the next one in that same view.
Nothing here writes; the queue's rows come from :class:`commonkeep.web.queue.Queue`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from commonkeep.reviews.words import CODES
from commonkeep.web.filters import RISKS, Filters, agent_of
from commonkeep.web.queue import Queue

Row = dict[str, Any]
ALL = 10**9  # a page size that holds every candidate: the view sorts and pages itself
SORTS = {"oldest": "oldest first", "newest": "newest first", "risk": "highest risk first",
         "agent": "by agent", "session": "by session"}
DUPLICATE_KINDS = ("duplicate", "strengthens_existing", "updates_existing")  # repeats and near-repeats: reinforce by default
CONFLICT_KINDS = ("potential_conflict", "ambiguous", "supersedes_existing")
_RISK_ORDER = {"high": 0, "medium": 1, "low": 2}

#: What the gate's reason codes mean, for a person deciding: the one table (``governance.words``).
PLAIN_REASONS = CODES
PLAIN_MATCHES = {
    "new": "new: nothing like it in memory",
    "duplicate": "repeats a record already in memory",
    "strengthens_existing": "says again what a record already says",
    "updates_existing": "updates a record already in memory",
    "potential_conflict": "contradicts a record in memory",
    "ambiguous": "contradicts several records in memory",
    "supersedes_existing": "replaces a record in memory",
}


def plain_reason(code: str) -> str:
    """A gate reason code (``low_trust_class:repository_text``) in plain words."""
    head, _, detail = str(code).partition(":")
    said = PLAIN_REASONS.get(head)
    if said is None:
        return str(code).replace("_", " ")
    return f"{said} ({detail.replace('_', ' ')})" if detail else said


def secrets_removed(cand: Row) -> list[str]:
    """The kinds of secret removed from the candidate's text before it was stored."""
    from commonkeep.secrets import redacted_kinds

    return sorted(set(redacted_kinds(str(cand.get("text", "")))))


def session_of(cand: Row) -> str:
    prov = cand.get("provenance")
    return str(prov.get("session_id") or "") if isinstance(prov, dict) else ""


def asks_twice(cand: Row, choice: str = "") -> str:
    """Why approving this candidate asks once more ("" when it does not): high risk, a conflict, or
    a replace (``choice``), which retires the record it matches."""
    why = []
    risk, reasons = cand.get("poisoning_risk"), cand.get("poisoning_risk_reasons") or []
    if not risk:  # not scored yet (the queue is warming up): scored here, so an unscored row never skips the question
        from commonkeep.gate.poisoning import assess_candidate

        found = assess_candidate(cand)
        risk, reasons = found.risk, found.reasons
    if risk == "high":
        why.append("it is high risk: " + "; ".join(plain_reason(r) for r in reasons))
    if cand.get("match_kind") in CONFLICT_KINDS:
        why.append(PLAIN_MATCHES.get(str(cand.get("match_kind")), "it conflicts with memory")
                   + " " + ", ".join(map(str, cand.get("matched_memory_ids") or [])))
    if choice == "replace":
        why.append("it replaces " + (", ".join(map(str, cand.get("matched_memory_ids") or [])) or "the record it matches")
                   + "; the old text stays only in the history")
    return "; ".join(why)


@dataclass
class View:
    """What the reviewer asked to see and in which order (the inbox's query string)."""

    filters: Filters
    session: str = ""
    sort: str = "oldest"

    @classmethod
    def from_query(cls, params: Any) -> View:
        session = str(params.get("session") or "").strip()[:200]
        sort = str(params.get("sort") or "oldest")
        return cls(Filters.from_query(params), session, sort if sort in SORTS else "oldest")

    def keep(self, **changes: Any) -> dict[str, str]:
        """The query of this view (page included), with ``changes``; empty values dropped."""
        f = self.filters
        now: dict[str, Any] = {"q": f.q, "agent": f.agent, "risk": f.risk, "session": self.session, "tag": f.tag,
                               "status": "" if f.status == "new" else f.status, "sort": "" if self.sort == "oldest" else self.sort,
                               "page": "" if f.page == 1 else f.page}
        now.update(changes)
        return {k: str(v) for k, v in now.items() if v not in ("", None)}

    def qs(self, **changes: Any) -> str:
        query = urlencode(self.keep(**changes))
        return f"?{query}" if query else ""

    def matches(self, cand: Row) -> bool:
        return self.filters.matches(cand) and (not self.session or session_of(cand) == self.session)


@dataclass
class Facets:
    """Counts beside each filter value, each counted with the other filters applied."""

    agents: list[tuple[str, int]] = field(default_factory=list)
    risks: list[tuple[str, int]] = field(default_factory=list)
    sessions: list[tuple[str, int]] = field(default_factory=list)
    tags: list[tuple[str, int]] = field(default_factory=list)


def _sorted(rows: list[Row], sort: str) -> list[Row]:
    if sort == "newest":
        return sorted(rows, key=lambda c: str(c.get("created_at") or ""), reverse=True)
    if sort == "risk":
        return sorted(rows, key=lambda c: (_RISK_ORDER.get(str(c.get("poisoning_risk")), 3), str(c.get("created_at") or "")))
    if sort == "agent":
        return sorted(rows, key=lambda c: (agent_of(c), str(c.get("created_at") or "")))
    if sort == "session":
        return sorted(rows, key=lambda c: (session_of(c), str(c.get("created_at") or "")))
    return sorted(rows, key=lambda c: str(c.get("created_at") or ""))


def view_rows(queue: Queue, view: View, *, with_facets: bool = True) -> tuple[list[Row], Facets, bool]:
    """Every candidate in the view, sorted; the facet counts (each counted with the other filters
    applied; one pass over the inbox); whether scores are being refreshed."""
    base = queue.page(Filters(status=view.filters.status), page_size=ALL)
    f = view.filters
    words = f.q.casefold().split()
    agents: Counter[str] = Counter()
    risks: Counter[str] = Counter()
    sessions: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    hits = []
    for cand in base.items:
        agent, risk, session = agent_of(cand), str(cand.get("poisoning_risk") or ""), session_of(cand)
        its_tags = [str(t) for t in cand.get("tags") or []]
        if words:
            hay = " ".join([str(cand.get("text", "")), str(cand.get("id", "")), " ".join(its_tags)]).casefold()
            if not all(w in hay for w in words):
                continue
        a_ok, r_ok = not f.agent or agent == f.agent, not f.risk or risk == f.risk
        s_ok, t_ok = not view.session or session == view.session, not f.tag or f.tag in its_tags
        missed = (not a_ok) + (not r_ok) + (not s_ok) + (not t_ok)
        if not missed:
            hits.append(cand)
        if not with_facets or missed > 1:
            continue
        # a facet's counts ignore its own filter: counted when every other filter passes
        if (r_ok and s_ok and t_ok):
            agents[agent] += 1
        if (a_ok and s_ok and t_ok):
            risks[risk] += 1
        if (a_ok and r_ok and t_ok):
            sessions[session] += 1
        if (a_ok and r_ok and s_ok):
            for t in its_tags:
                tags[t] += 1
    facets = Facets(
        agents=sorted((a, n) for a, n in agents.items() if a),
        risks=sorted(((r, n) for r, n in risks.items() if r in RISKS), key=lambda x: _RISK_ORDER.get(x[0], 3)),
        sessions=sorted((x, n) for x, n in sessions.items() if x),
        tags=sorted(tags.items())[:200],
    )
    return _sorted(hits, view.sort), facets, base.refreshing


#: What each approve choice is called on a button (``governance.decide.CHOICES``); ``{rid}`` is the matched record.
CHOICE_LABELS = {"add": "Approve", "reinforce": "Keep {rid}, reinforce it", "replace": "Replace {rid} with this",
                 "keep_both": "Keep both, contested", "contest": "Keep both, contested"}
SAFE_CHOICES = ("add", "reinforce", "keep_both", "contest")  # the one `a` presses, in this order of preference


def choices_of(item: Any) -> list[str]:
    """The approve choices of a review item: the server's own (``ReviewItem.choices``) when it names
    them, else from the match kind (a repeat: reinforce or replace; a conflict: keep both or replace)."""
    named = getattr(item, "choices", None)
    if named:  # the safe one first: it is the one `a` presses
        return sorted((str(x) for x in named), key=lambda x: (x not in SAFE_CHOICES, SAFE_CHOICES.index(x) if x in SAFE_CHOICES else 0))
    c = item.candidate
    if c.get("match_kind") in DUPLICATE_KINDS and c.get("matched_memory_ids"):
        return ["reinforce", "replace"]
    if c.get("match_kind") in CONFLICT_KINDS:
        return ["contest", "replace"]
    return []


def grouped(rows: list[Row]) -> list[tuple[str, list[Row]]]:
    """Rows in order, the ones repeating the same record gathered under it: ``(record_id, rows)``
    for the candidates that repeat ``record_id``; ``("", rows)`` for a candidate and the pending
    candidates with the same statement (approving them together adds it once)."""
    from commonkeep.web.decisions import same_text

    out: list[tuple[str, list[Row]]] = []
    at: dict[str, int] = {}
    texts: dict[str, int] = {}
    for c in rows:
        matched = c.get("matched_memory_ids") or []
        if c.get("match_kind") in DUPLICATE_KINDS and matched:
            rid = str(matched[0])
            if rid in at:
                out[at[rid]][1].append(c)
                continue
            at[rid] = len(out)
            out.append((rid, [c]))
            continue
        key = same_text(c)
        if key in texts and c.get("status") == "new":  # a repeat of another pending candidate: shown under it
            out[texts[key]][1].append(c)
            continue
        texts[key] = len(out)
        out.append(("", [c]))
    return out


def next_candidate(queue: Queue, view: View, decided: list[str]) -> str | None:
    """The candidate to open after deciding ``decided`` on a candidate's page: the next pending one
    of the view after it, else the one before it. The inbox's own orders (oldest, newest first)
    are read from the queue's order index (:meth:`Queue.next_pending`: no sort of the whole queue,
    the same cost at 10,000 pending as at 10); the other sorts sort the view."""
    if not decided:
        return None
    if view.sort in ("oldest", "newest") and view.filters.status == "new":
        return queue.next_pending(decided[0], view.matches, exclude=set(decided), newest_first=view.sort == "newest")
    order = [str(c["id"]) for c in view_rows(queue, view, with_facets=False)[0]]
    return next_in_view(order, decided, queue.pending_ids() - set(decided))


def next_in_view(order: list[str], current: list[str], still_pending: set[str]) -> str | None:
    """The candidate to open after deciding ``current``: the next pending one after it in the view's
    order, else the one before it (the end of the view was reached), else ``None``."""
    if not current or current[0] not in order:
        return next((i for i in order if i in still_pending and i not in current), None)
    at = order.index(current[0])
    after = [i for i in order[at + 1:] if i in still_pending and i not in current]
    before = [i for i in reversed(order[:at]) if i in still_pending and i not in current]
    return next(iter(after or before), None)
