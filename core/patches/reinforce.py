"""Reinforcement events (``memory/reinforcement.jsonl``, ``contracts/ompkeep-store.md`` §4.6).

``reinforce`` records that a memory helped (or was corrected); the events never change a record
by themselves. Curation sums them per record and proposes an ``update_stability`` op when the
suggested stability (any correction or a negative sum → ``low``; a sum ≥ 1 → ``stable``; else
``semi-stable``) differs from the record's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.gate.agent_shell import refuse_inside_agent
from commonkeep.gate.writer import require_writer
from commonkeep.patches.curate import suggested_stability
from commonkeep.secrets import redact
from commonkeep.store import jsonl
from commonkeep.store.core import Store
from commonkeep.store.ids import reinforcement_id
from commonkeep.util.timeutil import now_iso

MAX_NOTES = 300
OUTCOMES = {"explicit_reinforcement": 1.0, "implicit_success": 0.2, "neutral_exposure": 0.0, "explicit_correction": -1.0}


@dataclass
class Reinforced:
    """The event written and what the record's events now suggest."""

    event: dict[str, Any]
    score: float
    suggested_stability: str
    current_stability: str


def reinforce(
    root: Path | str, memory_id: str, *, outcome: str, role: str | None, notes: str | None = None,
    evidence_id: str | None = None,
) -> Reinforced:
    """Append one reinforcement event for an existing record (a person's word on it: refused inside an agent)."""
    refuse_inside_agent("reinforcing a record")
    require_writer("reinforce", role, root)
    if outcome not in OUTCOMES:
        raise BadInput(f"unknown outcome {outcome!r}; use one of {', '.join(OUTCOMES)}")
    store = Store(root)
    rec = next((r for r in store.records(active_only=False) if r["id"] == memory_id), None)
    if rec is None:
        raise BadInput(f"no record {memory_id} in {store.layout.memory_dir}", hint="record ids are in rendered/MEMORY.md")
    when = now_iso()
    clean_notes = redact(notes).text if notes else None
    if notes and clean_notes and max(len(notes), len(clean_notes)) > MAX_NOTES:
        raise BadInput(f"--notes is {len(notes)} characters; a reinforcement note holds at most {MAX_NOTES} (contract §4.6); nothing was recorded",
                       hint="shorten the note; put longer context in evidence and pass --evidence-id")
    event: dict[str, Any] = {"id": reinforcement_id(memory_id, outcome, when, clean_notes)}
    for key in ("resource_id", "profile_id", "thread_id"):
        if isinstance(rec.get(key), str):
            event[key] = rec[key]
    event.update({"memory_id": memory_id, "timestamp": when, "outcome": outcome})
    if evidence_id:
        event["evidence_id"] = evidence_id
    if clean_notes:
        event["notes"] = clean_notes
    jsonl.append_jsonl(store.layout.reinforcement, [event])
    events = [e for e in store.rows(store.layout.reinforcement) if e.get("memory_id") == memory_id]
    score = round(sum(OUTCOMES.get(str(e.get("outcome")), 0.0) for e in events), 4)
    return Reinforced(event, score, suggested_stability(events), str(rec.get("stability")))
