"""How large a capture candidate may be, on the write path and on the read path alike.

Our writers refuse a candidate over these limits (``candidates.new_candidate``); a candidate
another program wrote over them is refused on read (``Store.candidates``): reported with its
file and line, kept in the quarantine, and never proposed by curate. No pydantic, no secrets
scanner: the read path stays cheap.
"""

from __future__ import annotations

from typing import Any

MAX_TEXT_CHARS = 4000
# One line of the inbox stays small enough for every reader (OMP reads the whole file per session).
MAX_TAGS, MAX_TAG_CHARS = 64, 200
MAX_EVIDENCE_REFS, MAX_REF_CHARS = 64, 2000
MAX_PROVENANCE_CHARS = 500  # each provenance value (agent, role, host, session, turn, tool call, target)
MAX_PATH_CHARS = 4096  # source cwd (PATH_MAX)
# One daily-log write (`commonkeep write --daily`): a note, not a file dump; a day's log stays
# searchable and `select` reads only its end either way.
MAX_DAILY_ENTRY_CHARS = 100_000


def list_problem(name: str, values: Any, max_items: int, max_chars: int) -> str | None:
    if not values or not isinstance(values, list):
        return None
    if len(values) > max_items:
        return f"{len(values)} {name}; the limit is {max_items}"
    for i, value in enumerate(values, 1):
        if isinstance(value, str) and len(value) > max_chars:
            return f"{name} #{i} is {len(value)} characters; the limit is {max_chars}"
    return None


def _within(c: dict[str, Any]) -> bool:
    """The common case in one expression (C-level ``len``/``max``): a candidate well inside every limit."""
    text: Any = c.get("text")
    tags: Any = c.get("tags")
    refs: Any = c.get("evidence_refs")
    source: Any = c.get("source")
    prov: Any = c.get("provenance")
    try:
        return (
            len(text) <= MAX_TEXT_CHARS
            and len(tags) <= MAX_TAGS and (not tags or max(map(len, tags)) <= MAX_TAG_CHARS)
            and len(refs) <= MAX_EVIDENCE_REFS and (not refs or max(map(len, refs)) <= MAX_REF_CHARS)
            and len(source["ref"]) <= MAX_REF_CHARS and len(source.get("cwd") or "") <= MAX_PATH_CHARS
            and (not prov or all(len(v) <= MAX_PROVENANCE_CHARS for v in prov.values() if isinstance(v, str)))
        )
    except (TypeError, KeyError, AttributeError, ValueError):
        return False  # an odd shape: the exact checks below say what, if anything, is over


def candidate_limit_problem(c: dict[str, Any]) -> str | None:
    """What makes a (structurally valid) candidate larger than the write path allows, or ``None``."""
    if _within(c):
        return None
    text = c.get("text")
    if isinstance(text, str) and len(text) > MAX_TEXT_CHARS:
        return f"text is {len(text)} characters; the limit is {MAX_TEXT_CHARS}"
    for problem in (list_problem("tags", c.get("tags"), MAX_TAGS, MAX_TAG_CHARS),
                    list_problem("evidence refs", c.get("evidence_refs"), MAX_EVIDENCE_REFS, MAX_REF_CHARS)):
        if problem:
            return problem
    source = c.get("source")
    if isinstance(source, dict):
        ref, cwd = source.get("ref"), source.get("cwd")
        if isinstance(ref, str) and len(ref) > MAX_REF_CHARS:
            return f"source ref is {len(ref)} characters; the limit is {MAX_REF_CHARS}"
        if isinstance(cwd, str) and len(cwd) > MAX_PATH_CHARS:
            return f"source cwd is {len(cwd)} characters; the limit is {MAX_PATH_CHARS}"
    prov = c.get("provenance")
    if isinstance(prov, dict):
        for key, value in prov.items():
            if isinstance(value, str) and len(value) > MAX_PROVENANCE_CHARS:
                return f"provenance {key} is {len(value)} characters; the limit is {MAX_PROVENANCE_CHARS}"
    return None
