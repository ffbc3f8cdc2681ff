"""Quantities with units: ``500 TiB/day``, ``10,000 objects per second``, ``4.2 million records daily``.

A number only counts as a quantity when a unit follows it (a byte or time unit, a percent sign,
a currency sign, or a counted noun); bare years and ordinals are left alone. Rates are
normalised to ``<unit>/<period>`` so that "records per day", "records/day" and "records daily"
compare equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from commonkeep.wiki.text import STOPWORDS

_NUMBER = re.compile(r"(?<![\w.,$€£-])([$€£])?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)")
_MULTIPLIERS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mm": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12}
_BYTE_UNITS = {u.casefold(): u for u in ["B", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB"]}
_TIME_UNITS = {
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms", "s": "s", "sec": "s", "secs": "s", "second": "s",
    "seconds": "s", "min": "min", "mins": "min", "minute": "min", "minutes": "min", "h": "h", "hr": "h", "hrs": "h",
    "hour": "h", "hours": "h", "day": "day", "days": "day", "week": "week", "weeks": "week",
    "month": "month", "months": "month", "year": "year", "years": "year",
}
_PERIODS = {
    "second": "s", "sec": "s", "s": "s", "minute": "min", "min": "min", "hour": "h", "hr": "h", "h": "h",
    "day": "day", "d": "day", "week": "week", "wk": "week", "month": "month", "mo": "month", "year": "year", "yr": "year",
}
_ADVERB_RATES = {"daily": "day", "hourly": "h", "weekly": "week", "monthly": "month", "yearly": "year", "annually": "year", "nightly": "day"}
_RATE = re.compile(
    r"^\s*(?:/\s*|per\s+|a\s+|an\s+|each\s+|every\s+)(second|sec|s|minute|min|hour|hr|h|day|d|week|wk|month|mo|year|yr)\b"
    r"|^\s*(daily|hourly|weekly|monthly|yearly|annually|nightly)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"^[\s-]*([A-Za-z]+)")
_NOT_UNITS = frozenset({"am", "pm", "st", "nd", "rd", "th", "percent"}) | STOPWORDS


@dataclass(frozen=True)
class Quantity:
    """A number with its unit, as written (``text``) and normalised (``number``, ``unit``)."""

    text: str
    number: float
    unit: str

    @property
    def display(self) -> str:
        n = self.number
        shown = f"{int(n):,}" if n == int(n) else f"{n:,.3f}".rstrip("0").rstrip(".")
        return f"{shown} {self.unit}"


def _rate(rest: str) -> tuple[str | None, int]:
    m = _RATE.match(rest)
    if not m:
        return None, 0
    if m.group(1):
        return _PERIODS[m.group(1).casefold()], m.end()
    return _ADVERB_RATES[m.group(2).casefold()], m.end()


def find_quantities(text: str) -> list[Quantity]:
    """Every number-with-unit in ``text``, in order."""
    out: list[Quantity] = []
    for m in _NUMBER.finditer(text):
        currency, digits = m.group(1), m.group(2)
        number = float(digits.replace(",", ""))
        pos = m.end()
        rest = text[pos:]
        mult = re.match(r"^\s?(thousand|million|billion|trillion|bn|mm|m|k)\b", rest, re.IGNORECASE)
        if mult and not (mult.group(1).casefold() == "m" and re.match(r"^\s?m\s*/", rest) is None and rest[:1] == " "):
            number *= _MULTIPLIERS[mult.group(1).casefold()]
            pos += mult.end()
            rest = text[pos:]
        if currency:
            out.append(Quantity(text[m.start() : pos].strip(), number, {"$": "USD", "€": "EUR", "£": "GBP"}[currency]))
            continue
        if rest.startswith("%"):
            out.append(Quantity(text[m.start() : pos + 1], number, "%"))
            continue
        unit_m = re.match(r"^\s?([A-Za-z]+)\b", rest)
        unit: str | None = None
        consumed = 0
        if unit_m and unit_m.group(1).casefold() in _BYTE_UNITS:
            unit, consumed = _BYTE_UNITS[unit_m.group(1).casefold()], unit_m.end()
        elif unit_m and unit_m.group(1).casefold() in _TIME_UNITS and not _RATE.match(rest):
            unit, consumed = _TIME_UNITS[unit_m.group(1).casefold()], unit_m.end()
        else:
            unit, consumed = _counted_noun(rest)
        if unit is None:
            continue
        period, extra = _rate(rest[consumed:])
        if period:
            unit = f"{unit}/{period}"
            consumed += extra
        out.append(Quantity(text[m.start() : pos + consumed].strip(), number, unit))
    return out


def _singular(word: str) -> str:
    """``records`` -> ``record``, ``entries`` -> ``entry``; units compare in the singular."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _counted_noun(rest: str) -> tuple[str | None, int]:
    """``client records daily`` -> ``record``: up to three lowercase words, the noun before a rate
    or the first plural-looking word."""
    pos = 0
    seen: list[tuple[str, int]] = []
    for _ in range(3):
        wm = _WORD.match(rest[pos:])
        if not wm or not wm.group(1).islower():
            break
        word = wm.group(1)
        if word in _NOT_UNITS or word in _ADVERB_RATES or len(word) < 3:
            break
        pos += wm.end()
        seen.append((word, pos))
        if _rate(rest[pos:])[0]:
            return _singular(word), pos
        if rest[pos : pos + 1] not in (" ", "-"):
            break
    for word, end in seen:
        if word.endswith("s") and not word.endswith("ss"):
            return _singular(word), end
    return None, 0
