"""A record's day, as the search index stores it (``timeframe`` re-exports it).

Its own module so that an apply's search-index sync (``rows``, ``delta``) does not compile the
date expressions of ``timeframe``, which only a search's question needs.
"""

from __future__ import annotations

from datetime import date


def record_day(created_at: object) -> int | None:
    """The day of a record's ``created_at`` (``YYYY-MM-DD`` or a full ISO time), else ``None``."""
    if not isinstance(created_at, str) or len(created_at) < 10:
        return None
    try:
        return date.fromisoformat(created_at[:10]).toordinal()
    except ValueError:
        return None
