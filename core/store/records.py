"""Fast structural checks on record dicts, without pydantic (the read paths stay cheap).

``memory_record_problem`` mirrors upstream's ``isMemoryRecord`` (pi-PI 0.12.0, ``src/types.ts``;
contract §4.1, §14.8): the required fields must be present with the right JSON types and a
non-empty ``id``; of the enum fields exactly the two upstream checks are checked, ``layer``
(L1/L2/L3) and ``stability`` (low/semi-stable/stable), so a ``volatile`` record is hidden as OMP
hides it. ``status``, ``scope.type`` and ``evidence[].type`` are *not* enum-checked, because
upstream renders an unknown status as is and we must not hide what OMP shows. Two checks are
stricter than upstream because our code reads these fields: ``ruleType``, ``memory_kind`` and
``normalized_key``, when present (and not null), must be strings, and the supersession lists must
hold strings.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

LAYERS = ("L1", "L2", "L3")
STABILITIES = ("low", "semi-stable", "stable")
STATUSES = ("active", "contested", "deprecated", "superseded", "promoted", "deleted")
CANDIDATE_STATUSES = ("new", "patched", "rejected")
# optional fields that, when present and not null, must be strings (§4.1); their values are not enum-checked
OPTIONAL_STRINGS = ("ruleType", "memory_kind", "normalized_key")
_REQUIRED_STRINGS = ("id", "layer", "statement", "stability", "created_at", "updated_at", "status")
_STRING_LISTS = ("tags", "supersedes", "superseded_by")


def _strings(value: Any) -> bool:
    """A list of strings (checked in C: ``reindex`` validates every record of the root)."""
    return isinstance(value, list) and all(map(isinstance, value, repeat(str)))


def memory_record_problem(r: Any) -> str | None:
    """``None`` when ``r`` passes ``isMemoryRecord``, else what is wrong (for doctor and errors)."""
    if not isinstance(r, dict):
        return "not an object"
    for key in _REQUIRED_STRINGS:
        if not isinstance(r.get(key), str):
            return f"field {key!r} missing or not a str"
    if not r["id"]:
        return "field 'id' is empty"
    if not r["statement"].strip():
        return "field 'statement' is empty"
    if r["layer"] not in LAYERS:
        return f"field 'layer' is {r['layer']!r}, not one of {', '.join(LAYERS)}"
    if r["stability"] not in STABILITIES:
        return f"field 'stability' is {r['stability']!r}, not one of {', '.join(STABILITIES)}"
    scope = r.get("scope")
    if not isinstance(scope, dict) or not isinstance(scope.get("type"), str):
        return "field 'scope' missing or without a string 'type'"
    for key in _STRING_LISTS:
        if not _strings(r.get(key)):
            return f"field {key!r} missing or not a list of strings"
    ev = r.get("evidence")
    if not isinstance(ev, list) or not ev:
        return "field 'evidence' missing or empty"
    for e in ev:
        if not isinstance(e, dict) or not isinstance(e.get("ref"), str) or not isinstance(e.get("note"), str):
            return "an 'evidence' entry lacks string 'ref' and 'note'"
    conf = r.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0 <= conf <= 1:
        return "field 'confidence' missing or not a number in [0, 1]"
    review = r.get("review")
    if not isinstance(review, dict):
        return "field 'review' missing"
    if not isinstance(review.get("cadence_days"), int | float) or not isinstance(review.get("next_review"), str):
        return "field 'review' lacks 'cadence_days' or 'next_review'"
    if not isinstance(review.get("change_condition"), str) or not review["change_condition"].strip():
        return "field 'review.change_condition' missing or empty"
    if "vault_ref" not in r or not (r["vault_ref"] is None or isinstance(r["vault_ref"], str)):
        return "field 'vault_ref' must be present (null or a string)"
    for key in OPTIONAL_STRINGS:
        if r.get(key) is not None and not isinstance(r[key], str):
            return f"field {key!r} must be a string when present (got {type(r[key]).__name__})"
    return None


def candidate_problem(c: Any) -> str | None:
    """``None`` when ``c`` has the required CaptureCandidate fields (§4.2), else what is wrong."""
    if not isinstance(c, dict):
        return "not an object"
    for key in ("id", "created_at", "text", "status"):
        if not isinstance(c.get(key), str):
            return f"field {key!r} missing or not a string"
    src = c.get("source")
    if not isinstance(src, dict) or not isinstance(src.get("type"), str) or not isinstance(src.get("ref"), str):
        return "field 'source' missing or without string 'type' and 'ref'"
    for key in ("tags", "evidence_refs"):
        value = c.get(key)
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            return f"field {key!r} missing or not a list of strings"
    return None
