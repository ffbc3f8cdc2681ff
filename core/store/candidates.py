"""Making capture candidates: what every agent writes instead of editing memory directly.

A candidate carries the contract's fields (§4.2) in upstream key order, plus commonkeep's
``provenance`` object (who wrote it: agent, role, host, session, turn, tool call, target,
whether it came from a background review), stamped by the host plugin, not the model.
Secrets are redacted before the candidate exists, so no code path can write them.
"""

from __future__ import annotations

import os
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.secrets import redact_obj
from commonkeep.secrets.fields import strict
from commonkeep.store.ids import candidate_id
from commonkeep.store.limits import (
    MAX_EVIDENCE_REFS as MAX_EVIDENCE_REFS,  # re-exported: callers import them from here
)
from commonkeep.store.limits import MAX_PATH_CHARS as MAX_PATH_CHARS
from commonkeep.store.limits import MAX_PROVENANCE_CHARS as MAX_PROVENANCE_CHARS
from commonkeep.store.limits import MAX_REF_CHARS as MAX_REF_CHARS
from commonkeep.store.limits import MAX_TAG_CHARS as MAX_TAG_CHARS
from commonkeep.store.limits import MAX_TAGS as MAX_TAGS
from commonkeep.store.limits import MAX_TEXT_CHARS as MAX_TEXT_CHARS
from commonkeep.util.timeutil import iso, now


def _check_list(name: str, values: list[str] | None, max_items: int, max_chars: int) -> None:
    if not values:
        return
    if not isinstance(values, list | tuple):  # a lone string would be split into one-letter entries
        raise BadInput(f"{name} must be a list of strings, got a {type(values).__name__}")
    if len(values) > max_items:
        raise BadInput(f"{len(values)} {name}; a candidate takes at most {max_items}",
                       hint=f"keep the {name} that identify the fact; the rest belong in the text or the wiki")
    for i, value in enumerate(values, 1):
        if not isinstance(value, str):
            raise BadInput(f"{name} #{i} is a {type(value).__name__}, not text")
        if len(value) > max_chars:
            raise BadInput(f"{name} #{i} is {len(value)} characters; the limit is {max_chars}",
                           hint="an evidence ref names a file, URL or anchor; it does not carry the content")


def new_candidate(
    text: str,
    *,
    source_type: str = "manual",
    source_ref: str | None = None,
    cwd: str | None = None,
    tags: list[str] | None = None,
    evidence_refs: list[str] | None = None,
    confidence: float | None = None,
    provenance: dict[str, Any] | None = None,
    findings: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Build a candidate dict; ``findings`` (if given) receives the kinds of secrets redacted."""
    if not isinstance(text, str) or not text.strip():
        raise BadInput("a candidate needs non-empty text")
    if len(text) > MAX_TEXT_CHARS:
        raise BadInput(
            f"candidate text is {len(text)} characters; the limit is {MAX_TEXT_CHARS}",
            hint="write one durable fact per candidate; put long material in the wiki (commonkeep dossier ingest)",
        )
    _check_list("tags", tags, MAX_TAGS, MAX_TAG_CHARS)
    _check_list("evidence refs", evidence_refs, MAX_EVIDENCE_REFS, MAX_REF_CHARS)
    if provenance is not None and not isinstance(provenance, dict):
        raise BadInput(f"provenance must be an object of names to values, got {type(provenance).__name__}")
    if not isinstance(source_type, str):
        raise BadInput(f"source type must be a string, got {type(source_type).__name__}")
    for name, value in (("source ref", source_ref), ("source cwd", cwd)):
        if value is not None and not isinstance(value, str):
            raise BadInput(f"{name} must be a string, got {type(value).__name__}")
    for key, value in (provenance or {}).items():
        if isinstance(value, str) and len(value) > MAX_PROVENANCE_CHARS:
            raise BadInput(f"provenance {key} is {len(value)} characters; the limit is {MAX_PROVENANCE_CHARS}")
    if source_ref is not None and len(source_ref) > MAX_REF_CHARS:
        raise BadInput(f"source ref is {len(source_ref)} characters; the limit is {MAX_REF_CHARS}")
    if cwd is not None and len(cwd) > MAX_PATH_CHARS:
        raise BadInput(f"source cwd is {len(cwd)} characters; the limit is {MAX_PATH_CHARS}")
    if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, int | float)):
        raise BadInput(f"confidence must be a number from 0 to 1, got {confidence!r}")
    if confidence is not None and not 0 <= confidence <= 1:
        raise BadInput(f"confidence {confidence} is outside [0, 1]")
    when = now()
    created = iso(when)
    date = created[:10]
    ref = source_ref or f"daily/{date}.md"
    source: dict[str, Any] = {"type": source_type, "ref": ref}
    if cwd:
        source["cwd"] = cwd
    cand: dict[str, Any] = {
        "id": (made_id := candidate_id(when)),
        "created_at": created,
        "source": source,
        "text": text.strip(),
        "tags": [t.strip() for t in tags or [] if t.strip()],
        # a blank ref names nothing; the same ref twice is one piece of evidence (the two-evidence gate counts them)
        "evidence_refs": list(dict.fromkeys(r.strip() for r in evidence_refs or [] if r.strip())) or [ref],
        "status": "new",
    }
    if confidence is not None:
        cand["confidence"] = confidence
    for key, value in extra.items():
        if value is not None:
            cand[key] = value
    if provenance:
        cand["provenance"] = {k: v for k, v in provenance.items() if v is not None}
    # Every field at once (text, tags, refs, source, provenance, extras): the maintained provider rules
    # scan the candidate's strings joined, once; scoring derives ``normalized_key`` from them, and a
    # slug of a secret no longer looks like one. Then the single-value fields are held to their
    # stricter rule (``fields.strict``): a token there goes whole, and so do both halves of a split one.
    found: list[str] = []
    # the id and the time were made here, from the clock: no secret can be in them, and they are new at
    # every capture (each a miss of the redactor's cache); anything else, an extra field of the same name too, is read
    made = {key: value for key, value in (("id", made_id), ("created_at", created)) if cand.get(key) is value}
    read = redact_obj({k: v for k, v in cand.items() if k not in made}, found)
    cand = {k: made[k] if k in made else read[k] for k in cand}
    strict(cand, found)
    cand["tags"] = [t.strip() for t in cand["tags"] if t.strip()]
    if findings is not None:
        findings.extend(found)
    if cand["text"] != text.strip():
        cand["tags"].append("redacted")
    from commonkeep.store.controls import visible_candidate

    return visible_candidate(cand)  # terminal controls shown as \xNN, never stored raw (issue 22)


def default_provenance(agent: str | None = None, role: str | None = None, **more: Any) -> dict[str, Any]:
    """Provenance from the environment a host gives its tools (``COMMONKEEP_AGENT`` etc.)."""
    prov: dict[str, Any] = {
        "agent": agent or os.environ.get("COMMONKEEP_AGENT"),
        "role": role or os.environ.get("COMMONKEEP_ROLE"),
        "session_id": os.environ.get("COMMONKEEP_SESSION"),
    }
    prov.update(more)
    return {k: v for k, v in prov.items() if v is not None}
