"""What OMP's own use of ``memory_fts`` implies for commonkeep's: column filters in a query
(``tags:python``) and confidences stored as JavaScript numbers."""

from __future__ import annotations

from typing import Any

# The columns a filter may name: those both tables index as text; the others are UNINDEXED in OMP's table.
FILTER_COLUMNS = ("statement", "tags")
_UNINDEXED = ("id", "layer", "rule_type", "confidence")


def column_filter(term: str) -> tuple[str, str] | None:
    """``(column, word)`` for ``statement:word`` / ``tags:word`` (OMP's FTS5 query syntax passes them
    through); ``None`` for any other term. A filter on a column OMP's table does not index as text
    is refused by name (OMP answers nothing)."""
    col, sep, rest = term.partition(":")
    if not (sep and rest):
        return None
    if col.lower() in FILTER_COLUMNS:
        return col.lower(), rest
    if col.lower() in _UNINDEXED:
        from commonkeep.errors import BadInput

        raise BadInput(f"search: {term!r} filters on {col.lower()}, which the search table does not index as text; "
                       f"only {' and '.join(c + ':' for c in FILTER_COLUMNS)} filter a column",
                       hint="drop the filter, or search the words of the statement or tags")
    return None


def js_number(value: Any) -> int | float:
    """A confidence as JavaScript holds it: ``1`` (an SQLite INTEGER, as OmpKeep stores it) when
    integral, else the float."""
    number = float(value)
    return int(number) if number.is_integer() else number
