"""What OmpKeep's curator writes into a proposal, for ``curate`` to write the same.

OmpKeep's ``curateInbox`` (``contracts/ompkeep-store.md`` §6.6–§6.8) proposes a ``supersede`` for
a candidate that names a record it replaces (a ``supersedes:<id>`` tag, or "supersedes <id>" in
its text) or that reads as a replacement (a contradiction cue such as "instead of", "no longer",
"avoid", plus tags shared with the record: score = 2 per shared tag + 1 per word of more than
three letters found in the record's statement, at least 2, the best record wins). Every add and
supersede op carries a ``rationale``; a conflict opens a high-priority inquiry, an ambiguous
match a medium one. This module holds those rules; :mod:`commonkeep.patches.curate` decides
which op a candidate gets and keeps its own gate (what is selected by default).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from commonkeep.store.jsonjs import js_number

Row = Mapping[str, Any]
CHANGE_CONDITION = "If future sessions contradict this pattern or it fails in 2+ projects, revise or deprecate."
_CUE = re.compile(r"\b(no longer|instead of|rather than|replace|replaces|deprecated|do not|don't|avoid|stop)\b", re.I)
_NAMED = re.compile(r"\bsupersedes\s+([a-zA-Z0-9_-]+)", re.I)
_SPLIT = re.compile(r"[^a-z0-9]+")
INQUIRY_PRIORITY = {"potential_conflict": "high", "ambiguous": "medium"}


def _tags(cand: Row) -> list[str]:
    return [str(t) for t in cand.get("tags") or [] if not str(t).startswith("supersedes:")]


def named_target(cand: Row) -> str | None:
    """The id a ``supersedes:<id>`` tag or "supersedes <id>" in the text names."""
    for tag in cand.get("tags") or []:
        if str(tag).startswith("supersedes:"):
            return str(tag)[len("supersedes:"):]
    match = _NAMED.search(str(cand.get("text", "")))
    return match.group(1) if match else None


class Targets:
    """The active records a candidate may supersede, indexed once per curation by id and by tag (the
    heuristic only looks at records sharing a tag with the candidate)."""

    def __init__(self, records: Iterable[Row]) -> None:
        self.records = list(records)
        self.live = {str(r["id"]) for r in self.records}
        self.by_tag: dict[str, list[tuple[int, Row]]] = {}
        for pos, rec in enumerate(self.records):
            for tag in dict.fromkeys(str(t) for t in rec.get("tags") or []):
                self.by_tag.setdefault(tag, []).append((pos, rec))


def heuristic_target(cand: Row, records: Iterable[Row] | Targets) -> str | None:
    """The record a candidate with a contradiction cue replaces (module doc), or ``None``."""
    text = str(cand.get("text", ""))
    if not _CUE.search(text):
        return None
    targets = records if isinstance(records, Targets) else Targets(records)
    tags = set(_tags(cand))
    terms = [t for t in _SPLIT.split(text.lower()) if len(t) > 3]
    sharing = sorted({pos: rec for tag in tags for pos, rec in targets.by_tag.get(tag, [])}.items())
    best: tuple[str, int] | None = None
    for _, rec in sharing:  # in store order, as every record was once scanned: the first best wins
        overlap = sum(1 for t in rec.get("tags") or [] if t in tags)
        statement = str(rec.get("statement", "")).lower()
        score = overlap * 2 + sum(1 for t in terms if t in statement)
        if best is None or score > best[1]:
            best = (str(rec["id"]), score)
    return best[0] if best and best[1] >= 2 else None


def supersede_target(cand: Row, records: Iterable[Row] | Targets) -> tuple[str, str] | None:
    """``(record id, reason)`` when OmpKeep would propose that ``cand`` supersedes an active record.
    Pass a ``Targets`` built once when asking for many candidates."""
    targets = records if isinstance(records, Targets) else Targets(records)
    cid = cand["id"]
    named = named_target(cand)
    if named is not None:
        return (named, f"Candidate {cid} explicitly supersedes {named}.") if named in targets.live else None
    guessed = heuristic_target(cand, targets)
    if guessed is not None:
        return guessed, f"Candidate {cid} appears to supersede {guessed} based on contradiction cues and overlapping tags."
    return None


def supersede_rationale(cand: Row, target: str) -> str:
    return f"Supersede {target} with {cand['id']}."


def add_rationale(cand: Row, *, auto: bool) -> str:
    """OmpKeep's ``rationale`` of an add: the gate it met, the match, and whether a person must look."""
    conf = cand.get("confidence")
    shown = js_number(conf) if isinstance(conf, int | float) and not isinstance(conf, bool) else "0"
    text = f"Candidate {cand['id']} meets L2 threshold ({len(cand.get('evidence_refs') or [])} evidence refs, confidence {shown})."
    kind = cand.get("match_kind")
    if kind and kind != "new":
        path = {"potential_conflict": "contest or add_exception", "supersedes_existing": "supersede after review",
                "ambiguous": "manual merge/review"}.get(str(kind), "review/update")
        matched = ", ".join(map(str, cand.get("matched_memory_ids") or [])) or "none"
        reasons = "; ".join(map(str, cand.get("match_reasons") or [])) or "none"
        text += f" Match: {kind}; matched memories: {matched}; reasons: {reasons}. Suggested path: {path}."
    if not auto:
        text += " Trust/match gate requires human review before auto-apply."
    return text


def inquiry_context(cand: Row) -> str:
    matched = ", ".join(map(str, cand.get("matched_memory_ids") or []))
    reasons = "; ".join(map(str, cand.get("match_reasons") or []))
    return f"Match kind: {cand.get('match_kind')}. Matched memories: {matched}. Reasons: {reasons}."

