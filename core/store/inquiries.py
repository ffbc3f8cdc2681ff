"""Inquiries (``memory/inquiries.jsonl``, ``contracts/ompkeep-store.md`` §4.7): open questions.

Curation opens one for every ``potential_conflict`` / ``ambiguous`` candidate (§14.2; stamped
with ``now``, not the wall clock); the librarian answers (pointing at the record that settles
it) or withdraws them. Ids are content addresses of the question, so asking again touches the
same inquiry (``last_seen``, ``sessions_touched``) instead of adding a line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.secrets import redact
from commonkeep.store.core import Store
from commonkeep.store.ids import inquiry_id
from commonkeep.util.timeutil import now_iso

Row = dict[str, Any]
STATUSES = ("open", "answered", "withdrawn", "stale")
# the questions commonkeep itself writes: ids only, nothing quoted (``curate.propose``)
_OWN_QUESTION = re.compile(r"Which holds: candidate cap_[\w-]+ or (?:mem_[\w-]+(?:, mem_[\w-]+)*|the matching memory)\?")


def describe(inquiry: Row) -> str:
    """An inquiry as an agent may see it (``select``, handoffs): never unvetted text verbatim.

    A question commonkeep wrote (ids only) is shown as it is; any other question (an older one
    quoting a candidate, or one another tool wrote) is named by its id and the records it concerns,
    and read in full with ``commonkeep inquiries`` by a person.
    """
    question = " ".join(str(inquiry.get("question", "")).split())
    if _OWN_QUESTION.fullmatch(question):
        return question
    related = [str(r) for r in inquiry.get("related_memory_ids") or [] if re.fullmatch(r"[\w.:-]{1,80}", str(r))]
    about = f" about {', '.join(related[:5])}" if related else ""
    return f"open inquiry {inquiry.get('id')}{about} (its question is not shown here; a person reads it with `commonkeep inquiries`)"


def upsert_inquiries(root: Path | str, asks: list[Row], *, session: str | None = None) -> list[str]:
    """Open (or touch) one inquiry per ask: ``{question, context, tags?, related_memory_ids?, priority?}``."""
    if not asks:
        return []
    store = Store(root)
    store.ensure()
    when = now_iso()
    fresh: dict[str, Row] = {}
    for ask in asks:
        question = redact(str(ask["question"])).text
        profile = ask.get("profile_id")
        iid = inquiry_id(question, profile)
        row: Row = {"id": iid}
        if profile:
            row["profile_id"] = profile
        row.update({
            "question": question,
            "context": redact(str(ask.get("context", ""))).text,
            "tags": list(ask.get("tags") or []),
            "related_memory_ids": list(ask.get("related_memory_ids") or []),
            "sessions_touched": [session] if session else [],
            "first_seen": when,
            "last_seen": when,
            "status": "open",
            "priority": ask.get("priority", "medium"),
        })
        fresh.setdefault(iid, row)

    def merge(rows: list[Row]) -> list[Row]:
        seen: set[str] = set()
        for r in rows:
            iid = r.get("id")
            if isinstance(iid, str) and iid in fresh:
                seen.add(iid)
                r["last_seen"] = when
                if session and session not in (r.get("sessions_touched") or []):
                    r["sessions_touched"] = [*(r.get("sessions_touched") or []), session]
        return rows + [r for i, r in fresh.items() if i not in seen]

    store.rewrite(store.layout.inquiries, merge)
    return list(fresh)


def list_inquiries(root: Path | str, status: str | None = "open") -> list[Row]:
    rows = Store(root).rows(Store(root).layout.inquiries)
    return [r for r in rows if status is None or r.get("status") == status]


def close_inquiry(root: Path | str, iid: str, *, status: str, answer_memory_id: str | None = None) -> Row:
    """Mark an inquiry ``answered`` (optionally with the record that answers it), ``withdrawn`` or ``stale``."""
    if status not in STATUSES[1:]:
        raise BadInput(f"inquiry status {status!r} is not one of {', '.join(STATUSES[1:])}")
    store = Store(root)
    found: list[Row] = []

    def close(rows: list[Row]) -> list[Row]:
        for r in rows:
            if r.get("id") == iid:
                r["status"] = status
                r["last_seen"] = now_iso()
                if answer_memory_id:
                    r["answer_memory_id"] = answer_memory_id
                found.append(r)
        return rows

    if not any(r.get("id") == iid for r in store.rows(store.layout.inquiries)):
        raise BadInput(f"no inquiry {iid} in {store.layout.inquiries}", hint="list them with `commonkeep inquiries`")
    if answer_memory_id and answer_memory_id not in {r["id"] for r in store.records(active_only=False)}:
        raise BadInput(f"no record {answer_memory_id} in {store.layout.memory_dir} to answer {iid} with; nothing was changed",
                       hint="find record ids with `commonkeep search WORDS`, or answer without --memory")
    store.rewrite(store.layout.inquiries, close)
    return found[0]
