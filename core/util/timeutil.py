"""Clock access in one place, so tests and the demo can pin time with ``COMMONKEEP_NOW``."""

from __future__ import annotations

import os
from datetime import UTC, datetime


def now() -> datetime:
    """The current UTC time, or ``$COMMONKEEP_NOW`` (ISO 8601) when set."""
    pinned = os.environ.get("COMMONKEEP_NOW")
    if pinned:
        return datetime.fromisoformat(pinned.replace("Z", "+00:00")).astimezone(UTC)
    return datetime.now(UTC)


def iso(dt: datetime) -> str:
    """JS ``Date#toISOString()``: millisecond precision, ``Z`` suffix."""
    if dt.tzinfo is not UTC:
        dt = dt.astimezone(UTC)
    # formatted by hand: strftime is three times slower, and every capture stamps two of these
    return (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}."
            f"{dt.microsecond // 1000:03d}Z")


def now_iso() -> str:
    return iso(now())


def today() -> str:
    """UTC date ``YYYY-MM-DD`` (the daily-log file name and the curator's date stamps)."""
    return now().strftime("%Y-%m-%d")
