"""What each op of a patch does to the store, decided in memory before any file is written.

``_State`` is the store as the ops of one ``apply`` see it (read once under the writer lock, each
op seeing the effect of the ones before); ``_apply_op`` applies one op to it or says why it is
refused. The checks are listed in ``commonkeep.patches.patch``. Nothing here writes a file:
``apply_patch`` writes the decision to the apply journal, then ``apply_journal.execute`` makes
the files hold it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.patches import purge
from commonkeep.patches.apply_state import _State
from commonkeep.store import jsonl
from commonkeep.store.core import Store
from commonkeep.store.ids import h, is_record_of, tombstone_id
from commonkeep.store.jsonjs import dumps_line
from commonkeep.store.records import memory_record_problem

Row = dict[str, Any]
OPS = (
    "add", "update", "update_stability", "flag_for_review", "supersede", "deprecate", "decay", "contest",
    "uncontest", "add_exception", "delete", "reject_candidate", "promote_to_vault_candidate",
)
_LIVE = frozenset({"active", "contested"})
TARGET_STATUS: dict[str, frozenset[str]] = {
    "update": _LIVE, "update_stability": _LIVE, "flag_for_review": _LIVE, "supersede": _LIVE, "deprecate": _LIVE,
    "decay": _LIVE, "add_exception": _LIVE, "contest": frozenset({"active"}), "uncontest": frozenset({"contested"}),
}
# The fields of ``updates`` that ``add_exception`` merges, in the order OmpKeep writes them.
EXCEPTION_FIELDS = ("applies_when", "does_not_apply_when", "known_exceptions")
# Ops OmpKeep applies to an L1 record in any patch: contesting marks it doubtful, it changes nothing it says.
L1_WITHOUT_RATIFY = frozenset({"contest", "delete"})
DECAY = {"semi-stable": 0.15, "stable": 0.05, "low": 0.15}  # config.json maintainer defaults (§4.12)


@dataclass(frozen=True)
class Leftover:
    """A line of a canonical record file whose id is tombstoned (its content is still on disk)."""

    path: Path
    line: int
    record_id: str
    status: str
    statement: str


def leftover_lines(store: Store, ids: set[str] | None = None, paths: list[Path] | None = None) -> list[Leftover]:
    """Every line of L1, L2 and the project files (only ``paths``, if given) whose id is tombstoned
    (only ``ids``, if given).

    Such a line is a deletion interrupted between its tombstone and the rewrite of the file: its
    status is not ``deleted``, or its tombstone says ``privacy_purge`` and the line still carries
    content. The line an audit-preserving delete keeps (``status: "deleted"``, as OmpKeep keeps it)
    and the content-free stub OmpKeep's privacy purge leaves are finished deletions, not leftovers.
    The files are read as they are, without quarantining anything.
    """
    modes = {str(t.get("deleted_record_id")): t.get("deletion_mode") for t in store.rows(store.layout.tombstones)}
    dead = set(modes) if ids is None else set(modes) & ids
    out: list[Leftover] = []
    if not dead:
        return out
    for path in store.layout.canonical_files() if paths is None else paths:
        read = jsonl.read_jsonl(path)
        for row, line_no in zip(read.rows, read.line_nos, strict=True):
            rid = row.get("id")
            if isinstance(rid, str) and rid in dead and not finished_line(row, modes[rid]):
                out.append(Leftover(path, line_no, rid, str(row.get("status", "")), str(row.get("statement", ""))))
    return out


def finished_line(row: Row, mode: Any) -> bool:
    """Whether the line of a tombstoned record is what a finished deletion leaves: ``status:
    "deleted"``, and for a privacy purge no content (OmpKeep's ``[deleted]`` stub)."""
    if row.get("status") != "deleted":
        return False
    return mode != "privacy_purge" or row.get("statement") == purge.DELETED


def finish_command(record_id: str, tombstone: Row) -> str:
    """The command that finishes an interrupted deletion of ``record_id`` (its tombstone's reason and mode)."""
    reason = str(tombstone.get("deletion_reason") or "other")
    flag = " --purge" if tombstone.get("deletion_mode") == "privacy_purge" else ""
    return f"commonkeep forget {record_id} --reason {reason}{flag}"


def _refuse_new_record(rec: Any, st: _State, ratify: bool) -> str | None:
    if not isinstance(rec, dict):
        return "op carries no record"
    problem = memory_record_problem(rec)
    if problem:
        return f"record is not a valid memory record: {problem}"
    rid = str(rec["id"])
    if rid in st.tomb:
        return f"{rid} is tombstoned and can never come back"
    if rid in st.recs:
        return f"{rid} already exists"
    if rec["layer"] == "L1" and not ratify:
        return "L1 records are never auto-applied: ratify with `commonkeep ratify`"
    if rec["layer"] == "L3":
        return "L3 lives in the daily log, never in canonical files"
    bad = [e.get("ref") for e in rec["evidence"] if e.get("ref") in st.bad_evidence]
    if bad:
        return f"cites redacted or deleted evidence {', '.join(map(str, bad))}"
    return None


def _apply_op(op: Row, st: _State, *, ratify: bool, day: str, when: str) -> str | None:
    """Apply one op to the state; returns why it was refused, or ``None``."""
    kind = op.get("op")
    cid = op.get("candidate_id")
    if kind == "reject_candidate":
        cand = st.cands.get(str(cid))
        if cand is None:
            return f"candidate {cid} not found in the inbox"
        status = st.cand_status.get(str(cid), cand.get("status"))
        if status == "patched":
            return f"candidate {cid} was already patched"
        st.cand_status[str(cid)] = "rejected"
        return None
    cand_now = st.cand_status.get(str(cid), st.cands[str(cid)].get("status")) if str(cid) in st.cands else None
    if cid and kind not in ("delete", "reject_candidate") and cand_now == "rejected":
        return f"its candidate {cid} was rejected"
    if kind == "promote_to_vault_candidate":
        return "the vault is not enabled (config.json vault.enabled); nothing to promote to"
    if kind == "add":
        why = _refuse_new_record(op.get("record"), st, ratify)
        if why:
            return why
        st.put(dict(op["record"]))
        return None
    target = str(op.get("target_id") or "")
    if kind == "delete":
        return _delete(op, st, target, when, day)
    if target in st.tomb:
        return f"target {target} is tombstoned"
    old = st.recs.get(target)
    if old is None:
        return f"target {target or '(none)'} not found"
    if old.get("status") not in TARGET_STATUS.get(str(kind), frozenset()):
        return f"target {target} is {old.get('status')}; {kind} needs {' or '.join(sorted(TARGET_STATUS.get(str(kind), ())))}"
    if old.get("layer") == "L1" and not ratify and kind not in L1_WITHOUT_RATIFY:
        return f"{target} is an L1 record: {kind} needs `commonkeep ratify`"
    if cid and str(cid) in st.promoted_elsewhere:  # e.g. the same update in two patches: never applied twice
        return f"its candidate {cid} was already promoted by another patch"
    new = json.loads(json.dumps(old))
    updates = op.get("updates") or {}
    if kind == "supersede":
        to = op.get("to_record")
        why = _refuse_new_record(to, st, ratify)
        if why:
            return why
        if rec_id_of(to) == target:
            return f"a record cannot supersede itself: {target}"
        # as OmpKeep: both lists deduplicated, and the replacement dated by the apply, not by its proposal
        rec = dict(to)  # type: ignore[arg-type]
        rec["supersedes"] = list(dict.fromkeys([*rec["supersedes"], target]))
        rec["updated_at"] = day
        new["status"] = "superseded"
        new["superseded_by"] = list(dict.fromkeys([*new.get("superseded_by", []), rec["id"]]))
        new["updated_at"] = day
        st.put(new)
        st.put(rec)
        return None
    if not isinstance(updates, dict):
        return f"{kind}: updates must be an object, not {type(updates).__name__}"
    # Stamped first: an ``updated_at`` the op's updates carry wins, as when OmpKeep merges them.
    new["updated_at"] = day
    why = _change(kind, op, new, updates, st, ratify=ratify, target=target, day=day)
    if why:
        return why
    problem = memory_record_problem(new)
    if problem:
        return f"the result would not be a valid memory record: {problem}"
    st.put(new)
    return None


def rec_id_of(rec: Any) -> Any:
    return rec.get("id") if isinstance(rec, dict) else None


def _change(kind: Any, op: Row, new: Row, updates: Row, st: _State, *, ratify: bool, target: str, day: str) -> str | None:
    """Change ``new`` (a copy of the target) as ``kind`` does; returns why it is refused, or ``None``."""
    if kind in ("update", "update_stability"):
        if not updates:
            return "op has no updates"
        if "id" in updates and updates["id"] != target:
            return "an update cannot change a record's id"
        if kind == "update_stability" and set(updates) - {"stability", "updated_at"}:
            return "update_stability may only change stability"
        if updates.get("layer") == "L1" and not ratify:
            return "moving a record to L1 needs `commonkeep ratify`"
        new.update(updates)
    elif kind == "flag_for_review":
        if updates:  # OmpKeep merges the op's updates (its maintainer sends the new review)
            new.update(updates)
        else:
            new["review"] = {**new["review"], "next_review": day}
    elif kind == "deprecate":
        new["status"] = "deprecated"
    elif kind == "decay":
        if updates:
            new.update(updates)
        else:
            new["confidence"] = round(max(0.1, float(new["confidence"]) - DECAY.get(str(new["stability"]), 0.15)), 4)
    elif kind in ("contest", "uncontest"):
        new["status"] = "contested" if kind == "contest" else "active"
        if op.get("reason"):  # OmpKeep records why, as evidence citing the patch
            new["evidence"] = [*new["evidence"], {"type": "manual", "ref": st.patch_id, "note": op["reason"]}]
    elif kind == "add_exception":
        return _add_exception(new, updates, op, day)
    else:
        return f"unknown op {kind!r}"
    return None


def _add_exception(new: Row, updates: Row, op: Row, day: str) -> str | None:
    """Merge ``applies_when``, ``does_not_apply_when`` and ``known_exceptions`` (each kept once, in
    order; a list left empty is removed, as OmpKeep writes it). Any other field is refused by name.
    Without ``updates``, commonkeep takes the op's ``reason`` as one known exception."""
    other = sorted(set(updates) - {*EXCEPTION_FIELDS, "updated_at"})
    if other:
        return f"add_exception cannot change {', '.join(other)}: only {', '.join(EXCEPTION_FIELDS)}"
    if not any(updates.get(k) for k in EXCEPTION_FIELDS):
        if not op.get("reason"):
            return "add_exception needs updates with " + ", ".join(EXCEPTION_FIELDS) + " (or a reason)"
        updates = {"known_exceptions": [op["reason"]]}
    for key in EXCEPTION_FIELDS:
        given = updates.get(key) or []
        if not isinstance(given, list) or not all(isinstance(x, str) for x in given):
            return f"add_exception: updates.{key} must be a list of strings"
        merged = list(dict.fromkeys([*(new.get(key) or []), *given]))
        if merged:
            new[key] = merged
        else:
            new.pop(key, None)
    new["updated_at"] = day  # as OmpKeep: the apply's day, whatever updates.updated_at says
    return None


def _delete(op: Row, st: _State, target: str, when: str, day: str) -> str | None:
    if not target:
        return "delete needs a target_id"
    if target in st.tomb:
        fresh = target in st.finished or any(t.get("deleted_record_id") == target for t in st.new_tombstones)
        left = [] if fresh else leftover_lines(st.store, {target})
        if left:
            return _finish_interrupted(op, st, target, left, day)
        if op.get("deletion_mode") == "privacy_purge":
            return _purge_tombstoned(op, st, target)
        return f"{target} is already deleted (tombstoned)"
    old = st.recs.get(target)
    cid = str(op.get("candidate_id") or "")
    if old is None and not (cid in st.cands and is_record_of(cid, target)):
        return f"target {target} not found"
    content = {"statement": old.get("statement"), "evidence": old.get("evidence"), "tags": old.get("tags")} if old else None
    mode = op.get("deletion_mode") or "audit_preserving"
    tomb: Row = {"id": tombstone_id(target, when)}
    for key in ("resource_id", "profile_id"):
        if old and isinstance(old.get(key), str):  # a purge's tombstone names them too, as OmpKeep's does
            tomb[key] = old[key]
    tomb.update({
        "deleted_record_id": target,
        "deleted_at": when,
        "deletion_mode": mode,
        "deletion_reason": op.get("deletion_reason") or "other",
    })
    if content is not None:
        tomb["content_hash"] = h(dumps_line(content), 32)
    tomb["content_removed"] = True
    st.new_tombstones.append(tomb)
    st.tomb.add(target)
    if old is not None and mode == "privacy_purge":
        st.drop(target)  # the content goes: commonkeep removes the line (OmpKeep leaves a "[deleted]" stub)
    elif old is not None:
        st.put({**old, "status": "deleted", "updated_at": day})  # audit-preserving: the line stays, as OmpKeep keeps it
    if cid in st.cands and st.cand_status.get(cid, st.cands[cid].get("status")) == "new":
        st.cand_status[cid] = "rejected"
    if tomb["deletion_mode"] == "privacy_purge":
        st.purge.append(target)
        text = str(old.get("statement", "")) if old else str(st.cands.get(cid, {}).get("text", ""))
        if len(text.strip()) >= purge.MIN_SCRUB_CHARS:
            st.purged_texts.append(text)
    return None


def _tombstone_of(st: _State, target: str) -> Row:
    tomb = next((t for t in st.new_tombstones if t.get("deleted_record_id") == target), None)
    if tomb is None:
        tomb = next((t for t in st.store.rows(st.store.layout.tombstones) if t.get("deleted_record_id") == target), {})
    return tomb


def _finish_interrupted(op: Row, st: _State, target: str, left: list[Leftover], day: str) -> str | None:
    """Finish a deletion whose tombstone exists but whose record lines are still on disk.

    No second tombstone (§4.5): each line is kept with ``status: "deleted"`` (audit-preserving, as
    the delete would have left it), or dropped when the op or the existing tombstone says
    ``privacy_purge``; then the scrub runs too (the tombstone already claims it, or is upgraded to
    it as ``_purge_tombstoned`` does).
    """
    st.finished.append(target)
    tomb = _tombstone_of(st, target)
    purging = op.get("deletion_mode") == "privacy_purge" or tomb.get("deletion_mode") == "privacy_purge"
    rows = {(p, n): r for p, n, r in st.tombstoned_lines}
    for item in left:
        row = rows.get((item.path, item.line))
        keep = None if purging or row is None else {**row, "status": "deleted", "updated_at": day}
        st.changed.setdefault(item.path, {})[target] = keep
    if purging:
        if tomb.get("deletion_mode") != "privacy_purge":
            st.tomb_updates[target] = {"deletion_mode": "privacy_purge",
                                       "deletion_reason": op.get("deletion_reason") or tomb.get("deletion_reason") or "other"}
        st.purge.append(target)
        texts = [item.statement for item in left] + _copied_texts(st, target)
        st.purged_texts += [t for t in dict.fromkeys(texts) if len(t.strip()) >= purge.MIN_SCRUB_CHARS and t != purge.DELETED]
    return None


def _purge_tombstoned(op: Row, st: _State, target: str) -> str | None:
    """A privacy purge of a record forgotten earlier: no second tombstone (§4.5, one per record);
    its tombstone's mode becomes ``privacy_purge`` (if it was not already) and what still points
    at the content is scrubbed.
    The line an audit-preserving delete kept (``status: "deleted"``, content included) is dropped
    and its statement scrubbed; the statement is also looked up where it was copied: the patches
    that added or changed the record and its source candidate."""
    tomb = _tombstone_of(st, target)
    if target in st.purge:
        return f"{target} is already purged by this patch"
    kept = [row for _, _, row in st.tombstoned_lines if row.get("id") == target and row.get("statement") != purge.DELETED]
    for path, _, row in st.tombstoned_lines:
        if row.get("id") == target and row.get("statement") != purge.DELETED:
            st.changed.setdefault(path, {})[target] = None
    # Already ``privacy_purge``: the scrub runs again (it finds what a scrub cut off part-way, or a
    # copy made since, left behind); the tombstone stays as it is.
    if tomb.get("deletion_mode") != "privacy_purge":
        st.tomb_updates[target] = {"deletion_mode": "privacy_purge",
                                   "deletion_reason": op.get("deletion_reason") or tomb.get("deletion_reason") or "other"}
    st.purge.append(target)
    texts = [str(row.get("statement", "")) for row in kept] + _copied_texts(st, target)
    st.purged_texts += [t for t in dict.fromkeys(texts) if len(t.strip()) >= purge.MIN_SCRUB_CHARS and t != purge.DELETED]
    return None


def _copied_texts(st: _State, target: str) -> list[str]:
    """The statements of ``target`` where they were copied: its source candidate and the patches
    that added or changed it."""
    texts = [str(c.get("text", "")) for cid, c in st.cands.items() if is_record_of(cid, target)]
    layout = st.store.layout
    for path in sorted(layout.patches_dir.glob("*.json")) if layout.patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        for o in purge.patch_ops(doc):
            for key in ("record", "to_record"):
                rec = o.get(key)
                if isinstance(rec, dict) and rec.get("id") == target:
                    texts.append(str(rec.get("statement", "")))
            upd = o.get("updates")
            if o.get("target_id") == target and isinstance(upd, dict) and isinstance(upd.get("statement"), str):
                texts.append(upd["statement"])
    return texts


