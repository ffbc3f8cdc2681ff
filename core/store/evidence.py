"""Evidence records (``memory/evidence.jsonl``, ``contracts/ompkeep-store.md`` §4.4).

Evidence rides with candidates (``evidence_ids``), so any role may append it, like a candidate.
Summary and excerpt are redacted before the line is written; an excerpt that had a secret is
stored redacted with ``redaction_status: "redacted"`` (upstream blocks persistence instead;
keeping the redacted excerpt keeps the audit trail, and ``apply`` refuses records citing it).
Ids are content addresses: writing the same evidence twice adds nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.secrets import redact
from commonkeep.store import jsonl
from commonkeep.store.core import Store
from commonkeep.store.ids import evidence_id, h
from commonkeep.util.timeutil import now_iso

SOURCE_KINDS = ("conversation", "tool_result", "file", "patch", "test_result", "generated_content", "external_document",
                "codebase_analysis")


def add_evidence(
    root: Path | str,
    *,
    summary: str,
    source_kind: str,
    trust_class: str,
    excerpt: str | None = None,
    source_ref: str | None = None,
    profile_id: str = "project:default",
    resource_id: str = "user:default",
    thread_id: str | None = None,
    polarity: str = "supports",
    related_memory_ids: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Append one evidence record (or return the existing one with the same content address)."""
    if source_kind not in SOURCE_KINDS:
        raise BadInput(f"unknown evidence source_kind {source_kind!r}; use one of {', '.join(SOURCE_KINDS)}")
    if not summary.strip():
        raise BadInput("evidence needs a non-empty summary")
    red_summary = redact(summary.strip()[:300])
    red_excerpt = redact(excerpt[:1000]) if excerpt else None
    found = red_summary.findings + (red_excerpt.findings if red_excerpt else [])
    body = red_excerpt.text if red_excerpt else red_summary.text
    eid = evidence_id(profile_id, thread_id or extra.get("source_session_id"), source_kind, source_ref, body)
    store = Store(root)
    store.ensure()
    existing = next((e for e in store.rows(store.layout.evidence) if e.get("id") == eid), None)
    if existing is not None:
        return existing
    row: dict[str, Any] = {"id": eid, "resource_id": resource_id, "profile_id": profile_id}
    if thread_id:
        row["thread_id"] = thread_id
    row.update({"created_at": now_iso(), "source_kind": source_kind})
    if source_ref:
        row["source_ref"] = redact(source_ref).text
    row["source_summary"] = red_summary.text
    if red_excerpt is not None:
        row["source_excerpt"] = red_excerpt.text
        row["excerpt_hash"] = h(red_excerpt.text, 32)
    row.update({
        "redaction_status": "redacted" if found else "none",
        "trust_class": trust_class,
        "polarity": polarity,
        "related_memory_ids": list(related_memory_ids or []),
    })
    row.update({k: redact(v).text if isinstance(v, str) else v for k, v in extra.items() if v is not None})
    from commonkeep.store.models import validate_as

    validate_as("evidence", row, where=str(store.layout.evidence))
    jsonl.append_jsonl(store.layout.evidence, [row])
    return row
