"""Verify a patch against its sources before ``apply_patch`` writes a byte of it.

A patch file is plain JSON in ``patches/``: anyone who can write there can change an op's
``statement``, ``risk`` or ``default_selected`` between ``curate`` and ``apply``. So every
selected op that writes text is checked against where that text comes from:

- its **candidate** (``candidate_id``): the statement must be the candidate's text;
- or a **recorded edit**: ``review --text`` (the librarian's edit, recorded in the op as
  ``edited`` when its patch is applied) or ``commonkeep audit --apply-edited PATCH`` (a person
  who saw the diff and confirmed; ``edited.by`` names them). An ``edited`` block binds the exact
  text by its SHA-256, so a later change to the text is caught again; and it counts only when the
  stamp journal holds that edit, recorded as the person made it (``stamps.record_edit``): an
  ``edited`` block a file tool wrote, with the hash of its own text, is no edit.

An op with a candidate also writes the rest of its record from it: the scope (its folder), layer,
tags, evidence, conditions, exceptions and kind of rule must be what the candidate makes
(``curate.record_from_candidate``), unless a person's bound edit covers the op; an ``update`` a
curator proposed changes only a statement, evidence and confidence.

Then what it would write is **re-scored** (``poisoning.assess_text``): an op whose text scores a
higher risk than the op records is refused, and so is a recorded edit that scores ``high``
unless a person confirmed it with ``--apply-edited``. A refused op is skipped with the reason
(``skip_reasons``), never half-applied; the rest of the patch applies.

This catches a patch changed by hand or by a tool; like the role gate it is not proof against
someone who forges the ``edited`` block as well (``docs/security.md``): ``commonkeep audit``
lists every canonical line and the patch that explains it.
"""

from __future__ import annotations

import getpass
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.gate.trust import RISK_ORDER

Row = dict[str, Any]
TEXT_FIELDS = ("statement", "applies_when", "does_not_apply_when", "known_exceptions")
CONTENT_OPS = ("add", "supersede", "update", "add_exception")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def written_text(op: Row) -> dict[str, str]:
    """The texts ``op`` would write into a record: ``{field: text}`` (list fields joined by newlines)."""
    kind = op.get("op")
    body: Any = None
    if kind == "add":
        body = op.get("record")
    elif kind == "supersede":
        body = op.get("to_record")
    elif kind in ("update", "add_exception"):
        body = op.get("updates")
    out: dict[str, str] = {}
    if isinstance(body, dict):
        for key in TEXT_FIELDS:
            value = body.get(key)
            if isinstance(value, str):
                out[key] = value
            elif isinstance(value, list):
                out[key] = "\n".join(str(v) for v in value)
    if kind == "add_exception" and "known_exceptions" not in out and isinstance(op.get("reason"), str):
        out["known_exceptions"] = op["reason"]
    return out


def statement_of(op: Row) -> str | None:
    return written_text(op).get("statement")


@dataclass
class Check:
    """The verdict on one op: ``refusal`` (``None`` when it may be applied) and what it writes."""

    op_id: str
    refusal: str | None = None
    statement: str | None = None
    source: str = ""
    risk: str = "low"
    reasons: list[str] = field(default_factory=list)


#: What of an add's (or a supersede's) record comes from its candidate, beside the statement.
RECORD_FIELDS = ("id", "layer", "scope", "tags", "evidence", "applies_when", "does_not_apply_when", "known_exceptions",
                 "memory_kind", "ruleType")
#: What an ``update`` a curator proposed may change (``curate``: strengthens and updates an existing record).
CURATOR_UPDATES = frozenset({"statement", "evidence", "confidence"})


@dataclass(frozen=True)
class Where:
    """The patch an op is verified in: its root and id (for edits bound in the stamp journal), who wrote it,
    and whether it was read from ``patches/`` (a file anyone may have changed) rather than handed over."""

    root: Path | str | None = None
    patch_id: str = ""
    curator: bool = False
    from_file: bool = False


def _recorded_edit(op: Row, statement: str | None, where: Where | None = None) -> Row | None:
    edit = op.get("edited")
    if not (isinstance(edit, dict) and statement is not None and edit.get("sha256") == sha256(statement)):
        return None
    if where is not None:
        from commonkeep.gate import stamps

        if not stamps.edit_bound(where.root, where.patch_id, str(op.get("op_id")), sha256(statement)):
            return None
    return edit


def _bind_edit(op: Row, where: Where | None) -> None:
    """Record the edit a person is making now (``op["edited"]``) in the stamp journal."""
    edit = op.get("edited")
    if where is None or where.root is None or not isinstance(edit, dict):
        return
    from commonkeep.gate import stamps

    stamps.record_edit(where.root, where.patch_id, str(op.get("op_id")), str(edit.get("sha256")))


def record_differences(op: Row, cand: Row) -> list[str]:
    """The fields of ``op``'s record (an add's, a supersede's) that its candidate does not make."""
    from commonkeep.gate.scoring import proposed_layer
    from commonkeep.patches.curate import record_from_candidate

    body = op.get("record") if op.get("op") == "add" else op.get("to_record") if op.get("op") == "supersede" else None
    if not isinstance(body, dict):
        return []
    made = record_from_candidate(cand, layer=proposed_layer(cand))
    return [k for k in RECORD_FIELDS if body.get(k) != made.get(k)]


def check_op(op: Row, cands: dict[str, Row], *, unsaved_manual: bool = False, writer: str = "",
             where: Where | None = None) -> Check:
    """Verify one op (see the module doc). ``unsaved_manual``: the op is part of a ``manual`` patch
    handed to ``apply_patch`` by the caller (``review --approve --text``), not read from ``patches/``:
    a statement that differs from its candidate is the librarian's edit, and is recorded as one.
    ``where``: the patch's root and id (``None``: an ``edited`` block is taken as written)."""
    oid = str(op.get("op_id"))
    texts = written_text(op)
    if op.get("op") not in CONTENT_OPS or not texts:
        return Check(oid)
    statement = texts.get("statement")
    from commonkeep.gate.poisoning import assess_text  # here: an op without text never loads the rules

    found = assess_text("\n".join(texts.values()))
    out = Check(oid, statement=statement, risk=found.risk, reasons=found.reasons)
    cid = op.get("candidate_id")
    cand = cands.get(str(cid)) if cid else None
    edit = _recorded_edit(op, statement, where)
    if edit is not None:
        out.source = f"edit recorded by {edit.get('by')} ({edit.get('via')})"
        if found.risk == "high" and edit.get("via") != "apply --edited":
            out.refusal = (f"the edited text scores high risk ({', '.join(found.reasons)}); a person applies it with "
                           f"`commonkeep audit --apply-edited PATCH`, which shows the diff and records who did")
        return out
    if statement is not None and cand is not None and not _same_text(statement, str(cand.get("text", ""))):
        if unsaved_manual:
            op["edited"] = {"by": writer, "actor": _actor(), "via": "review --text", "sha256": sha256(statement),
                            "candidate_sha256": sha256(str(cand.get("text", "")))}
            _bind_edit(op, where)
            out.source = f"edit recorded by {writer} (review --text)"
            if found.risk == "high":
                out.refusal = (f"the edited text scores high risk ({', '.join(found.reasons)}); a person applies it with "
                               f"`commonkeep audit --apply-edited PATCH`, which shows the diff and records who did")
            return out
        out.refusal = (f"its statement differs from candidate {cid}'s text and no edit is recorded (was the patch file "
                       f"changed by hand?); to apply an edited patch use `commonkeep audit --apply-edited PATCH`")
        return out
    if cid and cand is None and op.get("op") in ("add", "supersede"):
        out.refusal = f"its source candidate {cid} is not in the inbox: nothing to verify its text against"
        return out
    if not cid and statement is not None:
        if unsaved_manual:
            op["edited"] = {"by": writer, "actor": _actor(), "via": "manual patch", "sha256": sha256(statement)}
            _bind_edit(op, where)
        else:
            out.refusal = ("it writes a statement without a source candidate and no edit is recorded; "
                           "to apply it use `commonkeep audit --apply-edited PATCH`")
            return out
    out.source = f"candidate {cid}" if cid else "manual patch"
    pending = cand is not None and cand.get("status") == "new"  # a decided one's op is refused as stale anyway
    differs = record_differences(op, cand) if pending and cand and where is not None and where.from_file else []
    if differs:
        verb = "differs" if len(differs) == 1 else "differ"
        out.refusal = (f"its record's {', '.join(differs)} {verb} from what candidate {cid} makes and no edit is recorded "
                       "(was the patch file changed?); to apply an edited patch use `commonkeep audit --apply-edited PATCH`")
        return out
    curated = where is not None and where.curator and where.from_file
    extra = sorted(set(op.get("updates") or {}) - CURATOR_UPDATES) if curated and op.get("op") == "update" else []
    if extra:
        out.refusal = f"a curator's update changes only a statement, evidence and confidence, not {', '.join(extra)}"
        return out
    recorded = str(op.get("risk") or "low")
    if RISK_ORDER.get(found.risk, 0) > RISK_ORDER.get(recorded, 0):
        out.refusal = (f"re-scored: its text is {found.risk} risk ({', '.join(found.reasons)}) but the op records "
                       f"{recorded}; the patch was changed, or the rules found more since curation")
    return out


def refusals(root: Path | str, patch: Row, op_ids: set[str], *, unsaved: bool,
             cands: dict[str, Row] | None = None) -> dict[str, str]:
    """Why each of ``op_ids`` of ``patch`` may not be applied (``op id -> reason``); see the module doc.

    ``unsaved``: the patch is not (yet) a file in ``patches/`` (handed over by the caller).
    ``cands``: the inbox by candidate id, when the caller read it already (``apply_patch`` does)."""
    from commonkeep.gate.writer import configured_writer_role
    from commonkeep.store.core import Store

    todo = [op for op in patch.get("ops") or [] if isinstance(op, dict) and str(op.get("op_id")) in op_ids]
    if not any(op.get("op") in CONTENT_OPS for op in todo):
        return {}
    if cands is None:
        cands = {str(c.get("id")): c for c in Store(root, warn=False).candidates()}
    manual = unsaved and patch.get("generated_by") == "manual"
    writer = configured_writer_role(root)
    where = Where(root, str(patch.get("patch_id") or ""), patch.get("generated_by") == "curator", not unsaved)
    out: dict[str, str] = {}
    for op in todo:
        verdict = check_op(op, cands, unsaved_manual=manual, writer=writer, where=where)
        if verdict.refusal:
            out[verdict.op_id] = verdict.refusal
    return out


def _same_text(statement: str, source: str) -> bool:
    """The statement is the source text, or what today's secret rules make of it (patch files are
    redacted when written, so a secret an older rule missed is redacted in the patch only)."""
    if statement == source:
        return True
    from commonkeep.secrets import redact

    return bool(statement == str(redact(source).text))


def _actor() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


def diff_of(op: Row, cands: dict[str, Row]) -> list[str]:
    """A unified diff of ``op``'s statement against its candidate's text, and each other field of its
    record the candidate does not make (empty when they agree)."""
    statement = statement_of(op)
    cand = cands.get(str(op.get("candidate_id"))) if op.get("candidate_id") else None
    fields = record_differences(op, cand) if cand is not None else []
    before = str(cand.get("text", "")) if cand else ""
    if (statement is None or statement == before) and not fields:
        return []
    src = f"candidate {op.get('candidate_id')}" if cand else "(no source candidate)"
    import difflib  # only for a statement that differs from its candidate's text

    out = [] if statement is None or statement == before else list(
        difflib.unified_diff(before.splitlines(), statement.splitlines(), src, f"patch op {op.get('op_id')}", lineterm=""))
    if fields and cand is not None:
        from commonkeep.gate.scoring import proposed_layer
        from commonkeep.patches.curate import record_from_candidate

        made = record_from_candidate(cand, layer=proposed_layer(cand))
        body = op.get("record") if op.get("op") == "add" else op.get("to_record")
        assert isinstance(body, dict)
        out += [f"{k}: {json.dumps(made.get(k), ensure_ascii=False)} (from {src}) -> "
                f"{json.dumps(body.get(k), ensure_ascii=False)} (patch op {op.get('op_id')})" for k in fields]
    return out
