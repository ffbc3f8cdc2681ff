"""What the rerank stage adds to BM25 and cosine: what a question and a record say about time,
about who is speaking, and which episode a record belongs to.

Each cue is a bonus on the rerank score, whose two signals (min-max normalised BM25 and cosine)
each span about one unit:

- **time anchor** (``TIME_ANCHOR_BONUS``, a quarter of one signal): a question that asks *when*
  (:func:`asks_when`) lifts the records that say when (:func:`has_time_anchor`);
- **period** (``PERIOD_BONUS``, one whole signal): a question that names a time (*in May 2023*,
  *the week before 16 November*; ``timeframe.question_period``) lifts the records about that time
  (their day, and the days their words point at: ``timeframe.record_spans``). The question states
  the period outright, so it counts as much as each of the other two signals;
- **speaker** (``SPEAKER_BONUS``, a quarter of one signal): a record written as a transcript line,
  ``Name: words``, is that person's own account; a question naming the person lifts it over lines
  of others that only mention them;
- **episode** (``EPISODE_WEIGHT``, a quarter of one signal): records captured from the same source
  (one conversation session, ``rows.source_of``) share an episode: each record gains a quarter of
  its episode's best score, normalised over the episodes in the pool, so the turns of the episode a
  question is about rank together;
- **reply** (``REPLY_WEIGHT``, a quarter of one signal): a record that is a question (its last
  sentence asks, bracketed notes after it aside) is answered by the next record of its source, the
  other half of the dialogue's adjacency pair (as in the source context, ``rows``): that record, when
  it is in the pool, gains a quarter of the question's score, normalised over the pool.

A quarter is the weight of a cue that should reorder near-ties but never outweigh a record that
matches clearly better. None of these values was chosen by trying values on an evaluation set.
The cues are English, like the rest of the query handling.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence

from commonkeep.recall.search import timeframe

TIME_ANCHOR_BONUS = 0.25
PERIOD_BONUS = 1.0
SPEAKER_BONUS = 0.25
EPISODE_WEIGHT = 0.25
REPLY_WEIGHT = 0.25

_ASKS_WHEN = re.compile(r"^\W*(?:when\b|what (?:year|month|day|date|time)\b|which (?:year|month|day|date)\b|"
                        r"how long (?:ago|before|after|since)\b|since when\b)|\bon what (?:date|day)\b", re.I)
_MONTHS = "|".join(timeframe.MONTHS)
_TIME_ANCHOR = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|last|next|this) (?:night|week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\b(?:yesterday|today|tonight|tomorrow|recently|ago)\b|"
    rf"\b(?:in|on|of|since|until|by|last|next|this|early|late|mid|mid-) (?:{_MONTHS})\b|\b(?:{_MONTHS}),? \d|\d(?:st|nd|rd|th)? (?:of )?(?:{_MONTHS})\b|"
    r"\b(?:19|20)\d\d\b|\b\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}\b|\b\d{4}-\d{2}-\d{2}\b|"
    r"\b(?:on|last|next|this) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\b(?:a|one|two|three|few|couple of) "
    r"(?:days?|weeks?|months?|years?) (?:ago|back|later|before|after)\b|\bsince\b",
    re.I,
)
# ``Name: words`` (up to three capitalised words before a colon at the start): a transcript line.
_SPEAKER = re.compile(r"^\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")
_ASIDE = re.compile(r"\s*[\[(][^\[\]()]*[\])]\s*$")  # a bracketed note at the end: "[shares a photo: ...]"
_NAME = re.compile(r"\b([A-Z][\w-]*)(?:['\u2019]s)?\b")


def asks_when(query: str) -> bool:
    """Whether ``query`` asks when something happened (an English question word for a time)."""
    return bool(_ASKS_WHEN.search(query))


def has_time_anchor(text: str) -> bool:
    """Whether ``text`` says when (a date, a month, a year, a weekday, or a relative time)."""
    return bool(_TIME_ANCHOR.search(text))


def speaker_of(statement: str) -> str:
    """The speaker of a transcript line (``"Caroline: I went..."`` -> ``"Caroline"``), else ``""``."""
    m = _SPEAKER.match(statement)
    return m.group(1) if m else ""


def names_in(query: str) -> frozenset[str]:
    """The capitalised words of ``query`` after its first word (names, as English writes them)."""
    words = _NAME.findall(query)
    first = re.match(r"\W*([\w-]+)", query)
    if words and first and words[0] == first.group(1):
        words = words[1:]
    return frozenset(words)


class Cues:
    """What one question asks about time and people (computed once per search)."""

    def __init__(self, query: str) -> None:
        self.when = asks_when(query)
        self.period = timeframe.question_period(query)
        self.names = names_in(query)

    @property
    def needs_facts(self) -> bool:
        """Whether the records' days are needed (a question that names a period)."""
        return self.period is not None

    def bonuses(self, statement: str, day: int | None) -> dict[str, float]:
        """The cues a record with ``statement`` and ``day`` earns for this question, by name."""
        out: dict[str, float] = {}
        if self.when and has_time_anchor(statement):
            out["time_anchor"] = TIME_ANCHOR_BONUS
        if self.period is not None and self.period.overlaps(timeframe.record_spans(statement, day)):
            out["period"] = PERIOD_BONUS
        if self.names:
            speaker = speaker_of(statement)
            if speaker and self.names.intersection(speaker.split()):
                out["speaker"] = SPEAKER_BONUS
        return out


def episode_lifts(scores: Mapping[str, float], sources: Mapping[str, str]) -> dict[str, float]:
    """Each record's share of its episode's best score (see the module doc); records without a
    source, or a pool of one episode, get none."""
    best: dict[str, float] = {}
    for rid, score in scores.items():
        src = sources.get(rid, "")
        if src:
            best[src] = max(best.get(src, score), score)
    if len(best) < 2:
        return {}
    top, bottom = max(best.values()), min(best.values())
    if top <= bottom:
        return {}
    return {rid: EPISODE_WEIGHT * (best[src] - bottom) / (top - bottom)
            for rid in scores if (src := sources.get(rid, ""))}


def is_question(statement: str) -> bool:
    """Whether ``statement`` ends by asking (a bracketed note after the question aside)."""
    text = statement.rstrip()
    while True:
        bare = _ASIDE.sub("", text)
        if bare == text:
            return text.endswith("?")
        text = bare


def reply_lifts(scores: Mapping[str, float], facts: Mapping[str, Facts], statements: Mapping[str, str]) -> dict[str, float]:
    """What each record that answers a question in the pool gains (see the module doc)."""
    if len(scores) < 2:
        return {}
    top, bottom = max(scores.values()), min(scores.values())
    if top <= bottom:
        return {}
    at = {(f[1], f[2]): rid for rid, f in facts.items() if f[1] and rid in scores}
    out: dict[str, float] = {}
    for rid, score in scores.items():
        _, source, ord_ = facts.get(rid, (None, "", -1))
        reply = at.get((source, ord_ + 1)) if source else None
        if reply is not None and is_question(statements.get(rid, "")):
            out[reply] = max(out.get(reply, 0.0), REPLY_WEIGHT * (score - bottom) / (top - bottom))
    return out


Facts = tuple[int | None, str, int]  # a record's day, source and store order


def record_facts(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, Facts]:
    """``(day, source, ord)`` of each indexed id (``records.day``, ``records.source``, ``records.ord``)."""
    from commonkeep.recall.search.shifts import ORD, load

    out: dict[str, Facts] = {}
    own = not conn.in_transaction  # the rows and the shifts of their store order (``shifts.py``) of one sync
    if own:
        conn.execute("BEGIN")
    try:
        tab = load(conn)
        for i in range(0, len(ids), 500):
            chunk = list(ids[i : i + 500])
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id, day, source, ord FROM records WHERE id IN ({marks})"  # noqa: S608
            for rid, day, source, ord_ in conn.execute(sql, chunk):
                out[str(rid)] = (None if day is None else int(day), str(source), tab.true(ORD, "", int(ord_)))
    finally:
        if own:
            conn.execute("COMMIT")
    return out
