"""What memory knows about time, for recall: the day a record was made, the days its words point
at, and the period a question names.

- A record's **day** is its ``created_at`` (the contract's ``YYYY-MM-DD``, or a full ISO time): the
  day it was said or written. The index keeps it (``records.day``, :func:`record_day`).
- A record's **spans** (:func:`record_spans`) are its day plus the days its words point at:
  relative times resolved against its day (*yesterday*, *last week*, *last Friday*, *two weeks
  ago*, *next month*) and dates it names (*in March*, *on 15 May, 2023*, *in 2019*; a month or
  day without a year is the latest one on or before the record's day).
- A question's **period** (:func:`question_period`) is the time it names: *in May 2023*, *on 1
  May, 2022*, *in 2022*, *the week before 16 November 2023*, *between August 11 and August 15
  2023*, *the second week of November*, *the beginning of November 2022*. A period without a year
  (*in May*) matches that month of any year.

Days are ``date.toordinal()`` numbers; a span is ``(first, last)``, both included. The cues are
English, like the rest of the query handling. Calendar words follow common usage: a week starts
on Monday; the beginning, middle and end of a month are its thirds (days 1-10, 11-20, 21-end);
its first to fourth weeks are days 1-7, 8-14, 15-21, 22-28.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from commonkeep.recall.search.days import record_day as record_day  # here as ever

Span = tuple[int, int]

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
_MONTH_ABBR = {m[:3]: i + 1 for i, m in enumerate(MONTHS)} | {"sept": 9}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2, "few": 3, "a few": 3}

_M = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_D = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_Y = r"(?:19|20)\d\d"
# One date expression: day month year, month day year, month year, day month, month day, month, year, ISO.
_DATE = re.compile(
    rf"\b(?P<iso>{_Y}-[01]\d-[0-3]\d)\b"
    rf"|\b(?P<d1>{_D})\s+(?:of\s+)?(?P<m1>{_M})\b\.?,?(?:\s+(?P<y1>{_Y}))?"
    rf"|\b(?P<m2>{_M})\b\.?\s+(?P<d2>{_D})\b(?:,?\s+(?P<y2>{_Y}))?"
    rf"|\b(?P<m3>{_M})\b\.?,?\s+(?P<y3>{_Y})\b"
    rf"|\b(?P<m4>{_M})\b"
    rf"|\b(?P<y5>{_Y})\b",
    re.I,
)
# A month word that is also an everyday word counts only as written for a date: capitalised, and
# for "May" and "March" also not first in the text (e.g. "May I...").
_EVERYDAY = {"may", "mar", "march", "jan", "sep", "dec", "oct", "nov", "aug", "jun", "jul", "apr", "feb"}
_PART = re.compile(
    r"\b(?:the\s+)?(?:(?P<nth>first|second|third|fourth|last)\s+week|(?P<third>beginning|start|early|middle|mid|end|late))"
    r"(?:\s+of|-)?\s*$", re.I)
_BEFORE = re.compile(
    r"\b(?:the\s+)?(?P<what>week|weekend|day|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+"
    r"(?P<rel>before|after|of)\s*$", re.I)


@dataclass(frozen=True)
class Period:
    """A time a question names: days of known years (``spans``), or, without a year, a month and
    a range of its days in any year (``month``, ``days``)."""

    spans: tuple[Span, ...] = ()
    month: int = 0
    days: tuple[int, int] = (1, 31)

    def overlaps(self, spans: Iterable[Span]) -> bool:
        for lo, hi in spans:
            if any(lo <= b and a <= hi for a, b in self.spans):
                return True
            if self.month and hi - lo < 400:
                for year in range(date.fromordinal(lo).year, date.fromordinal(hi).year + 1):
                    first, last = _month_span(year, self.month, self.days)
                    if lo <= last and first <= hi:
                        return True
        return False


def _month_no(word: str) -> int:
    word = word.lower().rstrip(".")
    return MONTHS.index(word) + 1 if word in MONTHS else _MONTH_ABBR.get(word[:4] if word == "sept" else word[:3], 0)


def _month_span(year: int, month: int, days: tuple[int, int] = (1, 31)) -> Span:
    end = calendar.monthrange(year, month)[1]
    lo, hi = max(1, days[0]), min(end, days[1])
    return date(year, month, min(lo, end)).toordinal(), date(year, month, max(min(hi, end), 1)).toordinal()


def _part_days(prefix: str) -> tuple[int, int] | None:
    """``the second week of`` / ``the end of`` just before a month: which of its days."""
    m = _PART.search(prefix)
    if m is None:
        return None
    if m["nth"]:
        nth = m["nth"].lower()
        return (22, 31) if nth == "last" else {"first": (1, 7), "second": (8, 14), "third": (15, 21), "fourth": (22, 28)}[nth]
    return {"beginning": (1, 10), "start": (1, 10), "early": (1, 10), "middle": (11, 20), "mid": (11, 20)}.get(
        m["third"].lower(), (21, 31))


def _is_month_word(text: str, start: int, word: str) -> bool:
    """Whether a month word alone is a month: full names other than May and March always; May,
    March and abbreviations only capitalised, and May and March not first in the text."""
    low = word.lower().rstrip(".")
    if low in MONTHS and low not in ("may", "march"):
        return True
    if not word[0].isupper():
        return False
    return not (low in ("may", "march", "mar") and not text[:start].strip(" \t\"'("))


def dates_in(text: str) -> list[tuple[int, int, Period, int | None]]:
    """Every date expression of ``text``: ``(start, end, period, year)`` (``year`` when it names
    one; a month or day without a year is a ``Period`` of any year)."""
    out: list[tuple[int, int, Period, int | None]] = []
    for m in _DATE.finditer(text):
        if m["iso"]:
            try:
                day = date.fromisoformat(m["iso"]).toordinal()
            except ValueError:
                continue
            out.append((m.start(), m.end(), Period(((day, day),)), None))
            continue
        if m["y5"]:
            year = int(m["y5"])
            out.append((m.start(), m.end(), Period(((date(year, 1, 1).toordinal(), date(year, 12, 31).toordinal()),)), year))
            continue
        mword = m["m1"] or m["m2"] or m["m3"] or m["m4"]
        if not (m["m1"] or m["m3"]) and not _is_month_word(text, m.start(), mword):
            continue  # "may" alone or "may 5": a verb (a day before or a year after it makes it a date)
        month = _month_no(mword)
        if not month:
            continue
        dtext = m["d1"] or m["d2"]
        year_text = m["y1"] or m["y2"] or m["y3"]
        days = (int(re.sub(r"\D", "", dtext)),) * 2 if dtext else (_part_days(text[: m.start()]) or (1, 31))
        if year_text:
            out.append((m.start(), m.end(), Period((_month_span(int(year_text), month, days),)), int(year_text)))
        else:
            out.append((m.start(), m.end(), Period(month=month, days=days), None))
    return out


def question_period(query: str) -> Period | None:
    """The period ``query`` names (see the module doc), or ``None``."""
    found = dates_in(query)
    if not found:
        return None
    between = re.search(r"\bbetween\b", query, re.I)
    if between and len(found) >= 2:
        (s1, _, p1, _), (_, _, p2, y2) = found[0], found[1]
        if s1 > between.start():
            a = p1 if p1.spans else _with_year(p1, y2)
            b = p2 if p2.spans else _with_year(p2, None)
            if a is not None and b is not None and a.spans and b.spans:
                return Period(((a.spans[0][0], b.spans[-1][1]),))
    start, _, period, _ = found[0]
    rel = _BEFORE.search(query[:start])
    if rel and period.spans:
        lo, hi = period.spans[0]
        what, how = rel["what"].lower(), rel["rel"].lower()
        if how == "of":
            monday = lo - date.fromordinal(lo).weekday()
            return Period(((monday, monday + 6),)) if what == "week" else period
        step = -1 if how == "before" else 1
        anchor = lo if how == "before" else hi
        if what == "day":
            return Period(((anchor + step,) * 2,))
        if what == "week":
            return Period(((anchor - 7, anchor - 1),)) if step < 0 else Period(((anchor + 1, anchor + 7),))
        if what == "weekend":
            sat = _weekday_near(anchor, 5, step)
            return Period(((sat, sat + 1),))
        day = _weekday_near(anchor, WEEKDAYS.index(what), step)
        return Period(((day, day),))
    return period


def _with_year(period: Period, year: int | None) -> Period | None:
    if year is None or not period.month:
        return None
    return Period((_month_span(year, period.month, period.days),))


def _weekday_near(day: int, weekday: int, step: int) -> int:
    """The nearest ``weekday`` (0 = Monday) strictly before (``step`` -1) or after (1) ``day``."""
    d = day + step
    while date.fromordinal(d).weekday() != weekday:
        d += step
    return d


_RELATIVE = re.compile(
    r"\b(?P<one>yesterday|last night|today|tonight|this (?:morning|afternoon|evening)|tomorrow)\b"
    r"|\b(?P<which>last|this|next|past)\s+(?P<unit>week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|(?:a )?couple of|(?:a )?few)\s+"
    r"(?P<units>days?|weeks?|weekends?|months?|years?)\s+(?P<dir>ago|back|later|from now)\b",
    re.I,
)


def _shift_month(year: int, month: int, by: int) -> tuple[int, int]:
    n = year * 12 + month - 1 + by
    return n // 12, n % 12 + 1


def _relative_span(m: re.Match[str], day: int) -> Span | None:
    d = date.fromordinal(day)
    monday = day - d.weekday()
    if m["one"]:
        word = m["one"].lower()
        off = -1 if word in ("yesterday", "last night") else 1 if word == "tomorrow" else 0
        return day + off, day + off
    if m["which"]:
        which, unit = m["which"].lower(), m["unit"].lower()
        step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
        if unit == "week":
            return monday + 7 * step, monday + 7 * step + 6
        if unit == "weekend":
            sat = monday + 5 + 7 * step
            return sat, sat + 1
        if unit == "month":
            y, mo = _shift_month(d.year, d.month, step)
            return _month_span(y, mo)
        if unit == "year":
            return date(d.year + step, 1, 1).toordinal(), date(d.year + step, 12, 31).toordinal()
        target = WEEKDAYS.index(unit)
        if step == 0:
            return monday + target, monday + target
        return (_weekday_near(day, target, step),) * 2
    raw = m["n"].lower()
    n = int(raw) if raw.isdigit() else _NUMBERS.get(raw, 1)
    sign = -1 if m["dir"].lower() in ("ago", "back") else 1
    unit = m["units"].lower().rstrip("s")
    if unit == "day":
        return (day + sign * n,) * 2
    if unit in ("week", "weekend"):
        centre = day + sign * 7 * n
        return centre - 3, centre + 3
    if unit == "month":
        y, mo = _shift_month(d.year, d.month, sign * n)
        return _month_span(y, mo)
    return date(d.year + sign * n, 1, 1).toordinal(), date(d.year + sign * n, 12, 31).toordinal()


# Every date or relative time above holds a digit or one of these words: texts without any are
# not parsed further (the rerank stage reads the spans of a whole pool of records per question).
_MAYBE_TIME = re.compile(r"\d|\b(?:jan|feb|ma[ry]|apr|ju[nl]|aug|sep|oct|nov|dec|yesterday|to(?:day|night|morrow)|"
                         r"last|this|next|past|ago|back|later|from now)", re.I)


def record_spans(text: str, day: int | None) -> list[Span]:
    """The days a record is about: its own ``day`` and what its words point at (module doc)."""
    spans: list[Span] = [] if day is None else [(day, day)]
    if not _MAYBE_TIME.search(text):
        return spans
    if day is not None:
        for m in _RELATIVE.finditer(text):
            try:
                span = _relative_span(m, day)
            except (ValueError, OverflowError):
                continue
            if span is not None:
                spans.append(span)
    for _, _, period, _ in dates_in(text):
        if period.spans:
            spans.extend(period.spans)
        elif day is not None:  # the latest such month on or before the record's day
            d = date.fromordinal(day)
            year = d.year if period.month <= d.month else d.year - 1
            spans.append(_month_span(year, period.month, period.days))
    return spans
