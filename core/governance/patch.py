"""Patch files and ``apply_patch``: the only path that changes L1, L2 and project records.

``apply_patch`` follows ``contracts/ompkeep-store.md`` §4.3, under the writer lock:

1. write the patch file (secrets redacted) before any canonical byte changes, so every change
   has a patch that explains it;
2. apply the selected ops (explicit ``op_ids``, else the ``default_selected`` ones) that pass the
   checks, in patch order, each seeing the effect of the ones before; append tombstones first,
   then rewrite each touched record file once (re-read under its lock, unknown keys and other
   records untouched), then evidence and the inbox (candidates become ``patched``/``rejected``);
3. rewrite the patch file with ``status``, ``applied_at``, ``applied_ops``, ``skipped_ops`` (and
   ``skip_reasons``, a commonkeep extension naming why each op was skipped);
4. re-render the projection, then fire ``after_apply``.

Checks (an op that fails one is skipped, never half-applied): an ``add`` of an existing or
tombstoned id, or of a record citing redacted/deleted evidence; a missing, tombstoned or
wrong-status target; any op on an L1 record without ``ratify`` (L1 is never auto-applied) except
``delete``; a record that would not pass ``isMemoryRecord``; an op on a record whose candidate
another patch already promoted (the same ``update`` waiting in two patches applies once). ``reject_candidate`` really rejects
(upstream lists it as applied and does nothing, §14.1). A refused op that carries a candidate id
because the id exists or is tombstoned rejects that candidate, as upstream does.

``delete`` writes one content-free tombstone and drops the record; with
``deletion_mode: privacy_purge`` it also scrubs linked evidence (§4.4), the source candidate's
text, the record's statement in older patch files, daily logs, runtime files, reports and
session summaries, and drops the derived search databases so they are rebuilt without it.

The tombstone is appended before the record's file is rewritten, so a deletion that dies in
between never lets the record come back, but leaves its line on disk (``leftover_lines``). A
``delete`` of such a tombstoned id finishes it: the line is dropped (and, when either the op or
the tombstone says ``privacy_purge``, the scrub runs) with no second tombstone; so does any
patch that rewrites a file holding such a line (listed in the patch's ``finished_deletions``,
a commonkeep extension), since the rewrite drops it anyway. An ``OSError``
after a tombstone was appended is raised as ``DeletionInterrupted``, naming the lines left and
the command that finishes them; ``commonkeep doctor`` reports such lines too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput, CommonkeepError
from commonkeep.governance import purge
from commonkeep.governance.curate import route
from commonkeep.governance.secrets import redact_obj
from commonkeep.governance.writer import LockInfo, require_writer, writer_lock
from commonkeep.store import jsonl
from commonkeep.store.core import Store
from commonkeep.store.ids import h, memory_id_for, tombstone_id
from commonkeep.store.jsonjs import dumps_line, dumps_pretty
from commonkeep.store.layout import Layout
from commonkeep.store.records import memory_record_problem
from commonkeep.util.timeutil import now_iso, today

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
DECAY = {"semi-stable": 0.15, "stable": 0.05, "low": 0.15}  # config.json maintainer defaults (§4.12)


class DeletionInterrupted(CommonkeepError):
    """A tombstone was appended but writing the rest of the patch failed: the record's line is
    still on disk. The message names the lines and the command that finishes the deletion."""


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

    Such a line is a deletion interrupted between its tombstone and the rewrite of the file, or a
    line another writer kept (OMP's own delete leaves ``status: "deleted"`` with the content).
    The files are read as they are, without quarantining anything.
    """
    dead = store.tombstoned_ids()
    if ids is not None:
        dead &= ids
    out: list[Leftover] = []
    if not dead:
        return out
    for path in store.layout.canonical_files() if paths is None else paths:
        read = jsonl.read_jsonl(path)
        for row, line_no in zip(read.rows, read.line_nos, strict=True):
            rid = row.get("id")
            if isinstance(rid, str) and rid in dead:
                out.append(Leftover(path, line_no, rid, str(row.get("status", "")), str(row.get("statement", ""))))
    return out


def finish_command(record_id: str, tombstone: Row) -> str:
    """The command that finishes an interrupted deletion of ``record_id`` (its tombstone's reason and mode)."""
    reason = str(tombstone.get("deletion_reason") or "other")
    flag = " --purge" if tombstone.get("deletion_mode") == "privacy_purge" else ""
    return f"commonkeep forget {record_id} --reason {reason}{flag}"


_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


def patch_path(layout: Layout, patch_id: str) -> Path:
    """``patches/<patch_id>.json``; an id that is not a plain file name is refused (no path escape)."""
    if not _SAFE_ID.fullmatch(patch_id) or ".." in patch_id:
        raise BadInput(f"patch id {patch_id!r} is not a plain name (letters, digits, '_', '-', '.'); nothing was applied")
    return layout.patches_dir / f"{patch_id}.json"


def write_patch(layout: Layout, patch: Row) -> tuple[Path, list[str]]:
    """Write ``patches/<patch_id>.json`` (pretty JSON + newline), secrets redacted; returns path and findings."""
    findings: list[str] = []
    clean = redact_obj(patch, findings)
    patch.clear()
    patch.update(clean)
    path = patch_path(layout, str(patch["patch_id"]))
    jsonl.atomic_write_bytes(path, dumps_pretty(patch).encode("utf-8"))
    return path, findings


def load_patch(layout: Layout, ref: str) -> tuple[Row, Path]:
    """A patch by id (``patch_…``) or by file path; validated against the contract's schema."""
    candidates = [Path(ref), layout.patches_dir / f"{ref}.json", layout.patches_dir / ref]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise BadInput(
            f"no patch {ref!r}: not a file and not in {layout.patches_dir}",
            hint="list patches with `commonkeep patches`; propose one with `commonkeep curate`",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise BadInput(f"cannot read patch {path}: {exc}", hint="fix or remove the file; nothing was applied") from None
    if not isinstance(data, dict):
        raise BadInput(f"patch {path} is not a JSON object; nothing was applied")
    from commonkeep.store.models import validate_as

    validate_as("patch", data, where=str(path))
    return data, path


@dataclass
class ApplyResult:
    """What ``apply_patch`` did."""

    patch: Row
    path: Path
    applied: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    candidates: dict[str, str] = field(default_factory=dict)
    tombstones: list[str] = field(default_factory=list)
    rendered: list[Path] = field(default_factory=list)
    hook_errors: list[str] = field(default_factory=list)
    redacted: list[str] = field(default_factory=list)
    recovered_lock: LockInfo | None = None
    already_applied: list[str] = field(default_factory=list)
    not_selected: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)  # ids whose interrupted deletion this apply finished

    def to_json(self) -> dict[str, Any]:
        return {
            "patch_id": self.patch["patch_id"],
            "path": str(self.path),
            "status": self.patch["status"],
            "applied_ops": self.applied,
            "skipped": self.skipped,
            "already_applied": self.already_applied,
            "not_selected": self.not_selected,
            "candidates": self.candidates,
            "tombstones": self.tombstones,
            "finished_deletions": self.finished,
            "rendered": [str(p) for p in self.rendered],
            "hook_errors": self.hook_errors,
            "redacted": self.redacted,
            "recovered_lock": self.recovered_lock.describe() if self.recovered_lock else None,
        }


class _State:
    """The store as the ops see it while a patch is applied (re-read under the writer lock)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.root = store.layout.root
        self.recs: dict[str, Row] = {}
        self.where: dict[str, Path] = {}
        for path, rows in store.records_by_file(active_only=False).items():
            for r in rows:
                self.recs.setdefault(str(r["id"]), r)
                self.where.setdefault(str(r["id"]), path)
        self.tombstoned_lines = list(store.tombstoned_lines)  # leftovers of interrupted deletions
        self.tomb = store.tombstoned_ids()
        self.cands = {str(c["id"]): c for c in store.candidates()}
        self.bad_evidence = {
            str(e.get("id")) for e in store.rows(store.layout.evidence) if e.get("redaction_status") in ("redacted", "deleted")
        }
        self.changed: dict[Path, dict[str, Row | None]] = {}
        self.cand_status: dict[str, str] = {}
        self.new_tombstones: list[Row] = []
        self.purge: list[str] = []
        self.purged_texts: list[str] = []
        self.tomb_updates: dict[str, Row] = {}
        self.promoted_elsewhere: set[str] = set()  # candidates another patch already promoted
        self.finished: list[str] = []  # tombstoned ids whose leftover lines this patch drops

    def put(self, rec: Row) -> None:
        rid = str(rec["id"])
        path = self.root / route(rec)
        old = self.where.get(rid)
        if old is not None and old != path:
            self.changed.setdefault(old, {})[rid] = None
        self.recs[rid] = rec
        self.where[rid] = path
        self.changed.setdefault(path, {})[rid] = rec

    def drop(self, rid: str) -> None:
        path = self.where.pop(rid, None)
        self.recs.pop(rid, None)
        if path is not None:
            self.changed.setdefault(path, {})[rid] = None


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
        return _delete(op, st, target, when)
    if target in st.tomb:
        return f"target {target} is tombstoned"
    old = st.recs.get(target)
    if old is None:
        return f"target {target or '(none)'} not found"
    if old.get("status") not in TARGET_STATUS.get(str(kind), frozenset()):
        return f"target {target} is {old.get('status')}; {kind} needs {' or '.join(sorted(TARGET_STATUS.get(str(kind), ())))}"
    if old.get("layer") == "L1" and not ratify:
        return f"{target} is an L1 record: changes need `commonkeep ratify`"
    if cid and str(cid) in st.promoted_elsewhere:  # e.g. the same update in two patches: never applied twice
        return f"its candidate {cid} was already promoted by another patch"
    new = json.loads(json.dumps(old))
    updates = op.get("updates") or {}
    if kind == "supersede":
        to = op.get("to_record")
        why = _refuse_new_record(to, st, ratify)
        if why:
            return why
        rec = dict(to)  # type: ignore[arg-type]
        if target not in rec["supersedes"]:
            rec["supersedes"] = [*rec["supersedes"], target]
        new["status"] = "superseded"
        new["superseded_by"] = [*new.get("superseded_by", []), rec["id"]]
        new["updated_at"] = day
        st.put(new)
        st.put(rec)
        return None
    if kind in ("update", "update_stability"):
        if not isinstance(updates, dict) or not updates:
            return "op has no updates"
        if "id" in updates and updates["id"] != target:
            return "an update cannot change a record's id"
        if kind == "update_stability" and set(updates) - {"stability"}:
            return "update_stability may only change stability"
        if updates.get("layer") == "L1" and not ratify:
            return "moving a record to L1 needs `commonkeep ratify`"
        new.update(updates)
    elif kind == "flag_for_review":
        new["review"] = {**new["review"], "next_review": day}
    elif kind == "deprecate":
        new["status"] = "deprecated"
    elif kind == "decay":
        if isinstance(updates.get("confidence"), int | float):
            new["confidence"] = updates["confidence"]
        else:
            new["confidence"] = round(max(0.1, float(new["confidence"]) - DECAY.get(str(new["stability"]), 0.15)), 4)
    elif kind == "contest":
        new["status"] = "contested"
    elif kind == "uncontest":
        new["status"] = "active"
    elif kind == "add_exception":
        items = updates.get("known_exceptions") or ([op["reason"]] if op.get("reason") else [])
        if not items:
            return "add_exception needs updates.known_exceptions or a reason"
        have = list(new.get("known_exceptions") or [])
        new["known_exceptions"] = have + [x for x in items if x not in have]
    else:
        return f"unknown op {kind!r}"
    new["updated_at"] = day
    problem = memory_record_problem(new)
    if problem:
        return f"the result would not be a valid memory record: {problem}"
    st.put(new)
    return None


def _delete(op: Row, st: _State, target: str, when: str) -> str | None:
    if not target:
        return "delete needs a target_id"
    if target in st.tomb:
        fresh = target in st.finished or any(t.get("deleted_record_id") == target for t in st.new_tombstones)
        left = [] if fresh else leftover_lines(st.store, {target})
        if left:
            return _finish_interrupted(op, st, target, left)
        if op.get("deletion_mode") == "privacy_purge":
            return _purge_tombstoned(op, st, target)
        return f"{target} is already deleted (tombstoned)"
    old = st.recs.get(target)
    cid = str(op.get("candidate_id") or "")
    if old is None and not (cid in st.cands and memory_id_for(cid) == target):
        return f"target {target} not found"
    content = {"statement": old.get("statement"), "evidence": old.get("evidence"), "tags": old.get("tags")} if old else None
    tomb: Row = {"id": tombstone_id(target, when)}
    for key in ("resource_id", "profile_id"):
        if old and isinstance(old.get(key), str):
            tomb[key] = old[key]
    tomb.update({
        "deleted_record_id": target,
        "deleted_at": when,
        "deletion_mode": op.get("deletion_mode") or "audit_preserving",
        "deletion_reason": op.get("deletion_reason") or "other",
    })
    if content is not None:
        tomb["content_hash"] = h(dumps_line(content), 32)
    tomb["content_removed"] = True
    st.new_tombstones.append(tomb)
    st.tomb.add(target)
    if old is not None:
        st.drop(target)
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


def _finish_interrupted(op: Row, st: _State, target: str, left: list[Leftover]) -> str | None:
    """Finish a deletion whose tombstone exists but whose record lines are still on disk.

    No second tombstone (§4.5): the lines are dropped by the rewrite of their files. When the op
    or the existing tombstone says ``privacy_purge`` the scrub runs too (the tombstone already
    claims it, or is upgraded to it as ``_purge_tombstoned`` does).
    """
    st.finished.append(target)
    for item in left:
        st.changed.setdefault(item.path, {})[target] = None
    tomb = _tombstone_of(st, target)
    if op.get("deletion_mode") == "privacy_purge" or tomb.get("deletion_mode") == "privacy_purge":
        if tomb.get("deletion_mode") != "privacy_purge":
            st.tomb_updates[target] = {"deletion_mode": "privacy_purge",
                                       "deletion_reason": op.get("deletion_reason") or tomb.get("deletion_reason") or "other"}
        st.purge.append(target)
        texts = [item.statement for item in left] + _copied_texts(st, target)
        st.purged_texts += [t for t in dict.fromkeys(texts) if len(t.strip()) >= purge.MIN_SCRUB_CHARS and t != purge.DELETED]
    return None


def _finish_swept(st: _State) -> None:
    """Rewriting a file drops every tombstoned line in it (§4.5). A leftover of an interrupted
    deletion in a file this patch rewrites anyway is finished here, on the record (the patch's
    ``finished_deletions``), with the scrub its tombstone promises when that says ``privacy_purge``,
    instead of vanishing silently with the scrub never run."""
    if not st.changed or not st.tombstoned_lines:
        return  # the common case: no leftover anywhere (known from the read at the start, no re-read)
    new = {str(t.get("deleted_record_id")) for t in st.new_tombstones}
    swept = {str(row["id"]) for path, _, row in st.tombstoned_lines if path in st.changed} - new - set(st.finished)
    by_id: dict[str, list[Leftover]] = {}
    for path, line_no, row in st.tombstoned_lines:  # all of their lines, in any file
        rid = str(row["id"])
        if rid in swept:
            by_id.setdefault(rid, []).append(
                Leftover(path, line_no, rid, str(row.get("status", "")), str(row.get("statement", ""))))
    for rid, left in by_id.items():
        _finish_interrupted({}, st, rid, left)


def _purge_tombstoned(op: Row, st: _State, target: str) -> str | None:
    """A privacy purge of a record forgotten earlier: no second tombstone (§4.5, one per record);
    its tombstone's mode becomes ``privacy_purge`` (if it was not already) and what still points
    at the content is scrubbed.
    The statement is gone from the record files, so it is looked up where it was copied: the
    patches that added or changed the record and its source candidate."""
    tomb = _tombstone_of(st, target)
    if target in st.purge:
        return f"{target} is already purged by this patch"
    # Already ``privacy_purge``: the scrub runs again (it finds what a scrub cut off part-way, or a
    # copy made since, left behind); the tombstone stays as it is.
    if tomb.get("deletion_mode") != "privacy_purge":
        st.tomb_updates[target] = {"deletion_mode": "privacy_purge",
                                   "deletion_reason": op.get("deletion_reason") or tomb.get("deletion_reason") or "other"}
    st.purge.append(target)
    texts = _copied_texts(st, target)
    st.purged_texts += [t for t in dict.fromkeys(texts) if len(t.strip()) >= purge.MIN_SCRUB_CHARS and t != purge.DELETED]
    return None


def _copied_texts(st: _State, target: str) -> list[str]:
    """The statements of ``target`` where they were copied: its source candidate and the patches
    that added or changed it."""
    texts = [str(c.get("text", "")) for cid, c in st.cands.items() if memory_id_for(cid) == target]
    layout = st.store.layout
    for path in sorted(layout.patches_dir.glob("*.json")) if layout.patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        for o in doc.get("ops") or [] if isinstance(doc, dict) else []:
            if not isinstance(o, dict):
                continue
            for key in ("record", "to_record"):
                rec = o.get(key)
                if isinstance(rec, dict) and rec.get("id") == target:
                    texts.append(str(rec.get("statement", "")))
            upd = o.get("updates")
            if o.get("target_id") == target and isinstance(upd, dict) and isinstance(upd.get("statement"), str):
                texts.append(upd["statement"])
    return texts


def _selection_text(already: list[str], not_selected: list[str], *, explicit: bool) -> str:
    parts = []
    if already:
        parts.append(f"{', '.join(already)} already applied by an earlier run")
    if not_selected:
        what = "not selected" if explicit else "not selected by default"
        parts.append(f"{', '.join(not_selected)} {what}")
    return "; ".join(parts) or "the patch has no ops"


def apply_patch(
    root: Path | str,
    ref: str | Row,
    *,
    role: str | None,
    op_ids: list[str] | None = None,
    ratify: bool = False,
    wait: float | None = None,
    fire_hooks: bool = True,
) -> ApplyResult:
    """Apply a patch (an id, a path, or a patch dict) to ``root`` as ``role``; see the module doc."""
    require_writer("ratify" if ratify else "apply", role, root)
    store = Store(root)
    layout = store.ensure()
    with writer_lock(root, str(role), "apply", wait) as got:
        if isinstance(ref, dict):
            from commonkeep.store.models import validate_as

            patch = json.loads(json.dumps(ref))
            validate_as("patch", patch, where=f"patch {patch.get('patch_id')}")
            path = patch_path(layout, str(patch["patch_id"]))
            if path.exists():
                raise BadInput(f"a patch with id {patch['patch_id']} already exists in {layout.patches_dir}; nothing was applied",
                               hint=f"apply the stored one with `commonkeep apply {patch['patch_id']}`, or give the new patch its own id")
        else:
            patch, path = load_patch(layout, ref)
            if path.parent.resolve() != layout.patches_dir.resolve() or path.stem != patch["patch_id"]:
                if patch_path(layout, str(patch["patch_id"])).exists():
                    raise BadInput(f"a patch with id {patch['patch_id']} already exists in {layout.patches_dir}; nothing was applied")
                path = patch_path(layout, str(patch["patch_id"]))
        if patch["status"] == "applied":
            raise BadInput(f"patch {patch['patch_id']} was already applied at {patch.get('applied_at')}; nothing to do")
        ops_by_id = {str(o["op_id"]): o for o in patch["ops"]}
        if op_ids is not None:
            unknown = [o for o in op_ids if o not in ops_by_id]
            if unknown:
                raise BadInput(
                    f"patch {patch['patch_id']} has no op {', '.join(unknown)}; its ops are {', '.join(ops_by_id) or '(none)'}"
                )
            selected = set(op_ids)
        else:
            selected = {i for i, o in ops_by_id.items() if o.get("default_selected")}
        done_before = set(patch.get("applied_ops") or [])
        already = [o for o in ops_by_id if o in done_before and (o in selected or op_ids is None)]
        not_selected = [o for o in ops_by_id if o not in selected and o not in done_before]
        if not selected - done_before:
            raise BadInput(
                f"nothing to apply in patch {patch['patch_id']}: " + _selection_text(already, not_selected, explicit=op_ids is not None),
                hint=f"select ops: commonkeep apply {patch['patch_id']} --ops {','.join(not_selected)}" if not_selected else f"see the patch with `commonkeep patches --show {patch['patch_id']}`",
            )
        result = ApplyResult(patch, path, recovered_lock=got.recovered_from, already_applied=already, not_selected=not_selected)
        path, result.redacted = write_patch(layout, patch)  # step 1: the explanation exists first
        st = _State(store)
        own = {str(ops_by_id[o].get("candidate_id")) for o in done_before if o in ops_by_id}
        st.promoted_elsewhere = {cid for cid, c in st.cands.items() if c.get("status") == "patched"} - own
        when, day = now_iso(), today()
        for op in patch["ops"]:
            oid = str(op["op_id"])
            if oid in done_before or oid not in selected:
                continue
            why = _apply_op(op, st, ratify=ratify, day=day, when=when)
            cid = op.get("candidate_id")
            if why is None:
                result.applied.append(oid)
                if cid and op["op"] not in ("reject_candidate", "delete") and str(cid) in st.cands:
                    st.cand_status[str(cid)] = "patched"
            else:
                result.skipped[oid] = why
                fresh = str(cid) in st.cands and st.cands[str(cid)].get("status") == "new"
                if fresh and op["op"] in ("add", "supersede") and ("tombstoned" in why or "already exists" in why):
                    st.cand_status.setdefault(str(cid), "rejected")
        _finish_swept(st)
        if st.finished:
            patch["finished_deletions"] = list(dict.fromkeys([*(patch.get("finished_deletions") or []), *st.finished]))
        try:
            _write_state(store, st, patch["patch_id"], record_lines=lambda hashes: _record_scrubbed(layout, patch, hashes))
        except OSError as exc:
            interrupted = _interruption(store, st, exc)
            if interrupted is None:
                raise
            from commonkeep.store.render import render_all

            with suppress(OSError):  # reads already skip the tombstoned record: so should the projection
                render_all(layout)
            raise interrupted from exc
        applied_all = [o for o in ops_by_id if o in done_before or o in result.applied]
        patch["applied_ops"] = applied_all
        patch["skipped_ops"] = [o for o in ops_by_id if o not in applied_all]
        reasons = {**(patch.get("skip_reasons") or {}), **result.skipped}
        patch["skip_reasons"] = {k: v for k, v in reasons.items() if k in patch["skipped_ops"]}
        if not patch["skip_reasons"]:
            patch.pop("skip_reasons")
        if applied_all:
            patch["status"] = "applied" if not patch["skipped_ops"] else "partially_applied"
            if result.applied:
                patch["applied_at"] = when
        path, more = write_patch(layout, patch)
        result.redacted += more
        result.path = path
        result.candidates = dict(st.cand_status)
        result.tombstones = [t["id"] for t in st.new_tombstones]
        result.finished = list(st.finished)
        from commonkeep.store.render import render_all

        result.rendered = render_all(layout)
    if fire_hooks:
        from commonkeep.plugins import plugin_manager

        result.hook_errors = plugin_manager().after_apply(str(layout.root), patch, list(result.applied))
    return result


def _interruption(store: Store, st: _State, exc: OSError) -> DeletionInterrupted | None:
    """When a write failed after a tombstone was appended and a record line it hides is still on
    disk: the error that says so and how to finish. ``None`` when no such line is left."""
    ids = {str(t["deleted_record_id"]) for t in st.new_tombstones} | set(st.finished)
    try:
        left = leftover_lines(store, ids) if ids else []
        tombs = {str(t.get("deleted_record_id")): t for t in store.rows(store.layout.tombstones)} if left else {}
    except OSError:
        return None
    if not left:
        return None
    lay = store.layout
    where: dict[str, list[str]] = {}
    for item in left:
        where.setdefault(item.record_id, []).append(f"{lay.rel(item.path)}:{item.line}")
    parts = [f"{rid} (still in {', '.join(places)})" for rid, places in where.items()]
    commands = [finish_command(rid, tombs.get(rid, {})) for rid in where]
    return DeletionInterrupted(
        f"deletion interrupted: {exc}; the tombstone is written (reads skip the record and it can never be "
        f"re-added), but its line, content included, is still on disk: {'; '.join(parts)}",
        hint="finish it with " + " and ".join(f"`{c}`" for c in commands) + " (`commonkeep doctor` lists what is left)",
    )


def _record_scrubbed(layout: Layout, patch: Row, hashes: list[str]) -> None:
    """Write the patch file with ``scrubbed_lines`` (sorted, deduplicated) before the scrub changes
    a daily log, so a scrub cut off part-way never leaves a line scrubbed but not recorded."""
    patch["scrubbed_lines"] = sorted({*(patch.get("scrubbed_lines") or []), *hashes})
    write_patch(layout, patch)


def _write_state(store: Store, st: _State, patch_id: str,
                 record_lines: Callable[[list[str]], None] | None = None) -> None:
    layout = store.layout
    # Every file this apply will write is checked first, so a refusal (a symlinked store file)
    # comes before the first byte moves, not after the tombstone is already appended.
    targets = [*([layout.tombstones] if st.new_tombstones or st.tomb_updates else []), *st.changed]
    if st.purge:
        targets.append(layout.evidence)
    if st.cand_status or st.purge:
        targets.append(layout.inbox)
    for path in targets:
        jsonl.refuse_symlink(path)
    if st.new_tombstones:
        jsonl.append_jsonl(layout.tombstones, st.new_tombstones, fsync=True)
    if st.tomb_updates:

        def upgrade(rows: list[Row]) -> list[Row]:
            return [{**t, **st.tomb_updates[str(t.get("deleted_record_id"))]} if t.get("deleted_record_id") in st.tomb_updates else t
                    for t in rows]

        store.rewrite(layout.tombstones, upgrade)
    for path, changes in st.changed.items():

        def transform(rows: list[Row], changes: dict[str, Row | None] = changes) -> list[Row]:
            out: list[Row] = []
            seen: set[str] = set()
            for r in rows:
                rid = r.get("id")
                if isinstance(rid, str) and rid in changes:
                    if rid in seen:
                        continue
                    seen.add(rid)
                    repl = changes[rid]
                    if repl is not None:
                        out.append(repl)
                else:
                    out.append(r)
            out.extend(r for rid, r in changes.items() if r is not None and rid not in seen)
            return out

        store.rewrite_records(path, transform)
    purged = set(st.purge)
    if purged:

        def scrub(rows: list[Row]) -> list[Row]:
            out = []
            for e in rows:
                if purged & set(e.get("related_memory_ids") or []):
                    e = {k: v for k, v in e.items() if k not in ("source_excerpt", "excerpt_hash")}
                    e["source_summary"] = purge.DELETED
                    e["redaction_status"] = "deleted"
                out.append(e)
            return out

        store.rewrite(layout.evidence, scrub)
        # Copies first, sources last: the statements are found again in the older patches and
        # the source candidate, so a scrub cut off part-way can be run again to the end.
        purge.scrub_derived(layout, st.purged_texts, record_lines)
        purge.scrub_patches(layout, purged, patch_id)
        purge.rescrub_lines(layout)  # a line an earlier purge scrubbed that a union merge brought back
    purge_cands = {cid for cid in st.cands if memory_id_for(cid) in purged}
    if st.cand_status or purge_cands:

        def mark(rows: list[Row]) -> list[Row]:
            out = []
            for c in rows:
                cid = c.get("id")
                if cid in st.cand_status:
                    c = {**c, "status": st.cand_status[str(cid)]}
                if cid in purge_cands:
                    c = {**c, "text": purge.DELETED, "tags": [], "evidence_refs": []}
                out.append(c)
            return out

        store.update_candidates(mark)
