"""Patch files and ``apply_patch``: the only path that changes L1, L2 and project records.

``apply_patch`` follows ``contracts/ompkeep-store.md`` §4.3, under the writer lock:

1. write the patch file (secrets redacted) before any canonical byte changes, so every change
   has a patch that explains it;
2. apply the selected ops (explicit ``op_ids``, else the ``default_selected`` ones curation could have
   selected, ``stamp_audit.ticked_ops``) that pass the checks, in patch order, each seeing the effect of
   the ones before; append tombstones first, then rewrite each touched record file once (re-read under
   its lock, unknown keys and other records untouched), then evidence and the inbox (candidates become
   ``patched``/``rejected``);
3. rewrite the patch file with ``status``, ``applied_at``, ``applied_ops``, ``skipped_ops`` (and
   ``skip_reasons``, a commonkeep extension naming why each op was skipped);
4. re-render the projection, then fire ``after_apply`` (``serve`` leaves both to ``after_apply.catch_up``).

Checks (an op that fails one is skipped, never half-applied): an ``add`` of an existing or tombstoned id, or
of a record citing redacted/deleted evidence; a missing, tombstoned or wrong-status target; any op on an L1
record without ``ratify`` (L1 is never auto-applied) except ``delete`` and ``contest`` (OmpKeep contests an
L1 record in any patch); a record that would not pass ``isMemoryRecord``; an op on a record whose candidate
another patch already promoted (the same ``update`` waiting in two patches applies once).
``reject_candidate`` really rejects (upstream lists it as applied and does nothing, §14.1). A refused op
that carries a candidate id because the id exists or is tombstoned rejects that candidate, as upstream does.

``delete`` writes one content-free tombstone and keeps the record's line with ``status: "deleted"``
(audit-preserving, as OmpKeep: §14.9); with ``deletion_mode: privacy_purge`` it removes the line and
scrubs linked evidence (§4.4), the source candidate's text, the record's statement in older patch
files, daily logs, runtime files, reports and session summaries, and drops the derived search
databases so they are rebuilt without it.

The tombstone is appended before the record's file is rewritten, so a deletion that dies in between never
lets the record come back, but leaves its line on disk, not marked deleted (``leftover_lines``). A
``delete`` of such a tombstoned id finishes it (listed in the patch's ``finished_deletions``, a commonkeep
extension): the line is marked deleted, or dropped with the scrub run when either the op or the tombstone
says ``privacy_purge``, with no second tombstone. A rewrite never drops the line of a record its patch did
not delete. An ``OSError`` after a tombstone was appended is raised as ``DeletionInterrupted``, naming the
lines left and the command that finishes them; ``commonkeep doctor`` reports such lines too.
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput, CommonkeepError
from commonkeep.gate.writer import require_writer
from commonkeep.patches import apply_journal
from commonkeep.patches.apply_journal import Journal
from commonkeep.patches.apply_state import _State, reads_by_id
from commonkeep.patches.lock import LockInfo, writer_lock
from commonkeep.patches.ops import OPS, Leftover, _apply_op, finish_command, leftover_lines
from commonkeep.patches.patch_file import load_patch, patch_bytes, patch_path, write_patch
from commonkeep.patches.stamp_audit import ticked_ops
from commonkeep.patches.waiting import SameStatement, own_candidates, stale_reason
from commonkeep.secrets import redact_obj
from commonkeep.store import jsonl
from commonkeep.store.core import Store
from commonkeep.store.layout import Layout
from commonkeep.util import progress
from commonkeep.util.listing import capped
from commonkeep.util.timeutil import now_iso, today

__all__ = ["OPS", "ApplyInterrupted", "ApplyResult", "DeletionInterrupted", "Leftover", "apply_patch", "apply_selected_by_policy", "finish_command",
           "leftover_lines", "load_patch", "patch_path", "write_patch"]
Row = dict[str, Any]


class ApplyInterrupted(CommonkeepError, OSError):
    """Writing an apply's decision failed part-way (disk full, permissions): the message names the
    real error; the apply journal keeps the decision and the next ``apply`` finishes it. An
    ``OSError`` too, so callers that handle file-system failures still do."""


class DeletionInterrupted(ApplyInterrupted):
    """A tombstone was appended but writing the rest of the patch failed: the record's line is
    still on disk. The message names the lines and the command that finishes the deletion."""


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
    resumed: bool = False  # finished from the journal of an interrupted apply
    warnings: list[str] = field(default_factory=list)
    finished_applies: list[str] = field(default_factory=list)  # other patches' interrupted applies finished first
    records_changed: bool = True  # whether a record or tombstone was written (else rendered/ is left as it is)
    records_after: dict[Path, list[Row]] | None = field(default=None, repr=False)  # every file's records if known
    #: what the apply wrote to each record file and the files' stamps before (for splicing the projection)
    spliceable: tuple[dict[Path, Any], dict[Path, dict[str, Row | None]]] | None = field(default=None, repr=False)

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
            "resumed": self.resumed,
            "warnings": self.warnings,
            "finished_applies": self.finished_applies,
        }


def _selection_text(already: list[str], not_selected: list[str], *, explicit: bool) -> str:
    parts = []
    if already:
        parts.append(f"{', '.join(already)} already applied by an earlier run")
    if not_selected:
        what = "not selected" if explicit else "not selected by default"
        parts.append(f"{', '.join(not_selected)} {what}")
    return "; ".join(parts) or "the patch has no ops"


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


_Pre = tuple[Row, Path, tuple[int, int, int] | None, Row, list[str]]


def _preload(layout: Layout, ref: str) -> _Pre | None:
    """Before the writer lock: the patch read, validated and redacted (the slow part for a large
    patch), with its file's identity; ``None`` when it cannot be read (said again under the lock)."""
    try:
        data, where = load_patch(layout, ref)
    except BadInput:
        return None
    findings: list[str] = []
    clean = redact_obj(data, findings)
    return data, where, _stamp(where), clean, findings


def _resolve(layout: Layout, ref: str | Row, pre: _Pre | None) -> tuple[Row, Path, bool, tuple[Row, list[str]] | None]:
    """The patch to apply, its file, whether the file already holds it (no step-1 write needed),
    and its redacted form when that was computed before the lock.

    ``pre``: the patch read, validated and redacted before the lock was taken; used when its file
    has not changed since, read again otherwise."""
    if isinstance(ref, dict):
        from commonkeep.store.patch_shape import validate_patch

        patch = json.loads(json.dumps(ref))
        validate_patch(patch, where=f"patch {patch.get('patch_id')}")  # pydantic only when not plainly valid
        path = patch_path(layout, str(patch["patch_id"]))
        if path.exists():
            raise BadInput(f"a patch with id {patch['patch_id']} already exists in {layout.patches_dir}; nothing was applied",
                           hint=f"apply the stored one with `commonkeep apply {patch['patch_id']}`, or give the new patch its own id")
        return patch, path, False, None
    cleaned = None
    if pre is not None and _stamp(pre[1]) == pre[2]:
        patch, path, cleaned = pre[0], pre[1], (pre[3], pre[4])
    else:
        patch, path = load_patch(layout, ref)
    in_place = True
    if path.parent.resolve() != layout.patches_dir.resolve() or path.stem != patch["patch_id"]:
        if patch_path(layout, str(patch["patch_id"])).exists():
            raise BadInput(f"a patch with id {patch['patch_id']} already exists in {layout.patches_dir}; nothing was applied")
        path = patch_path(layout, str(patch["patch_id"]))
        in_place = False
    return patch, path, in_place, cleaned


def apply_patch(root: Path | str, ref: str | Row, *, role: str | None, op_ids: list[str] | None = None, ratify: bool = False,
                wait: float | None = None, fire_hooks: bool = True) -> ApplyResult:
    """Apply a patch (an id, a path, or a patch dict) to ``root`` as ``role`` (module doc); an interrupted apply
    (its journal in ``runtime/journal/``) is finished first, and asking for it returns what finishing did.
    A person's decision: refused inside an agent (``commonkeep.gate.agent_shell``), whoever calls it."""
    from commonkeep.gate.agent_shell import refuse_inside_agent

    refuse_inside_agent("ratifying" if ratify else "applying a patch")
    return apply_selected_by_policy(root, ref, role=role, op_ids=op_ids, ratify=ratify, wait=wait, fire_hooks=fire_hooks,
                                    recheck=False)


def apply_selected_by_policy(root: Path | str, ref: str | Row, *, role: str | None, op_ids: list[str] | None = None,
                             ratify: bool = False, wait: float | None = None, fire_hooks: bool = True,
                             recheck: bool = True) -> ApplyResult:
    """:func:`apply_patch` without the agent-shell refusal, for the ops a policy chose, not a person:
    ``auto_curate`` (only what ``commonkeep.gate.autoapply`` lets apply itself) and ``share sync``'s
    deletion of records rejected for poisoning elsewhere. Never call it with a person's choice.
    ``recheck``: the chosen ops' stamps are checked again under the lock, against the inbox as apply
    reads it (``stamp_audit.ticked_ops``): a file changed since the policy chose is not applied."""
    require_writer("ratify" if ratify else "apply", role, root)
    store = Store(root)
    layout = store.ensure()
    # read, validated and redacted outside the lock; read again under it only if the file changed
    pre = None if isinstance(ref, dict) else _preload(layout, ref)
    from commonkeep.patches import apply_ahead

    apply_ahead.plan(layout, fire_hooks)
    with writer_lock(root, str(role), "apply", wait) as got:
        try:
            resumed: list[ApplyResult] = got.finished  # interrupted applies, finished on taking the lock
            patch, path, in_place, cleaned = _resolve(layout, ref, pre)
            mine = next((r for r in resumed if r.patch.get("patch_id") == patch["patch_id"]), None)
            if mine is not None:
                result = mine
            else:
                result = _apply_decided(store, patch, path, in_place, op_ids=op_ids, ratify=ratify, cleaned=cleaned,
                                        recheck=recheck)
            result.recovered_lock = got.recovered_from
            result.finished_applies = [str(r.patch["patch_id"]) for r in resumed if r is not mine]
            from commonkeep.patches.after_apply import deferring
            try:  # a reject leaves the projection as it is; a deferred apply leaves it to ``after_apply.catch_up``
                result.rendered = _render(layout, result, resumed=bool(resumed)) if (resumed or result.records_changed) and not deferring() else []
            except OSError as exc:  # the projection is derived: the apply stands, the next render catches up
                result.warnings.append(f"rendered/ was not refreshed ({exc.strerror or exc}); run `commonkeep render`")
        finally:  # pages planned ahead and not taken (an apply that failed): dropped
            apply_ahead.drop(layout)
    from commonkeep.store import ahead, line_index, release

    ahead.clear()
    if fire_hooks:
        from commonkeep.patches.after_apply import run as _after_apply

        # the line index written while the hooks run (a thread, joined here): after every write of
        # the apply, so the files' timestamps are older than the index (``line_index.flush`` waits
        # out the clock's tick itself), and checked against the files' stats as ever
        with ahead.beside(line_index.flush, layout):
            for other in resumed:
                if other is not mine:
                    result.hook_errors += _after_apply(str(layout.root), other.patch, list(other.applied))
            result.hook_errors += _after_apply(str(layout.root), result.patch, list(result.applied),
                                               records_changed=result.records_changed or bool(resumed))
    else:
        line_index.flush(layout)  # last: the files' timestamps are then older than the index (``line_index``)
    release.settle()  # the old files' descriptors closed (``store/release.py``): no thread outlives the apply
    return result


def _render(layout: Layout, result: ApplyResult, *, resumed: bool) -> list[Path]:
    """The projection after the apply: the pages spliced where only the changed records' blocks
    change (``render_splice``), else rendered from every record."""
    from commonkeep.store.render import render_all

    if resumed:
        return render_all(layout)
    if result.spliceable is not None:
        from commonkeep.store.render_splice import render_changed

        written = render_changed(layout, *result.spliceable)
        if written is not None:
            return written
    return render_all(layout, result.records_after)


def _apply_decided(store: Store, patch: Row, path: Path, in_place: bool, *, op_ids: list[str] | None,
                   ratify: bool, cleaned: tuple[Row, list[str]] | None = None, recheck: bool = False) -> ApplyResult:
    """Decide every selected op, journal the decision, then write it (under the writer lock)."""
    layout = store.layout
    if patch["status"] == "applied":
        raise BadInput(f"patch {patch['patch_id']} was already applied at {patch.get('applied_at')}; nothing to do")
    ops_by_id = {str(o["op_id"]): o for o in patch["ops"]}
    if op_ids is not None:
        unknown = [o for o in op_ids if o not in ops_by_id]
        if unknown:
            raise BadInput(f"patch {patch['patch_id']} has no op {capped(unknown)}; its ops are {capped(list(ops_by_id))}",
                           hint="`commonkeep patches --show PATCH_ID` lists every op")
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
    result = ApplyResult(patch, path, already_applied=already, not_selected=not_selected)
    # read once: the checks below use its candidates too (only those the patch names, unless it deletes)
    from commonkeep.patches.verify import refusals  # each op against its source, re-scored (issue 15 §3)
    from commonkeep.patches.waiting import candidates_for

    st = _State(store, str(patch["patch_id"]), cands=candidates_for(store.root, patch), by_id=reads_by_id(patch, selected))
    ticked = ticked_ops(store.root, patch, selected - done_before, st.cands) if op_ids is None or recheck else {}  # edited in
    selected -= set(ticked)
    vetted = refusals(layout.root, patch, selected - done_before, unsaved=not path.exists(), cands=st.cands)
    # step 1: the explanation exists before any canonical byte changes (a patch already in its
    # place with nothing to redact is not written again)
    if cleaned is not None:
        clean, findings = cleaned  # redacted before the lock was taken, the file unchanged since
    else:
        findings = []
        clean = redact_obj(patch, findings)
    if findings or not in_place or not path.exists():
        patch.clear()
        patch.update(clean)
        path, _ = write_patch(layout, patch)
    result.redacted = findings  # what was redacted from the patch itself (write_patch sees it clean already)
    own = {str(ops_by_id[o].get("candidate_id")) for o in done_before if o in ops_by_id}
    st.promoted_elsewhere = {cid for cid, c in st.cands.items() if c.get("status") == "patched"} - own
    when, day = now_iso(), today()
    before = {k: c.get("status") for k, c in st.cands.items()}  # an op whose candidate was decided since is stale
    mine = own_candidates(patch)
    todo = [op for op in patch["ops"] if str(op["op_id"]) in selected and str(op["op_id"]) not in done_before]
    same = SameStatement(st.recs if any(o.get("op") != "reject_candidate" for o in todo) else {})  # rejects read no record
    with progress.bar(len(todo), f"apply {patch['patch_id']}", unit="op") as bar:
        for op in todo:
            oid = str(op["op_id"])
            why = vetted.get(oid) or stale_reason(op, before, mine) or same.refuse(op) or _apply_op(op, st, ratify=ratify, day=day, when=when)
            cid = op.get("candidate_id")
            if why is None:
                same.took(op)
                result.applied.append(oid)
                if cid and op["op"] not in ("reject_candidate", "delete") and str(cid) in st.cands:
                    st.cand_status[str(cid)] = "patched"
            else:
                result.skipped[oid] = why
                fresh = str(cid) in st.cands and st.cands[str(cid)].get("status") == "new"
                if fresh and op["op"] in ("add", "supersede") and ("tombstoned" in why or "already exists" in why):
                    st.cand_status.setdefault(str(cid), "rejected")
            bar.update()
    result.skipped.update(ticked)
    journal = _journal_of(store, st, patch, result, done_before, when)
    apply_journal.refuse_targets(store, journal)  # a symlinked store file: refused before anything is written
    apply_journal.write(layout, journal)  # step 2: the decision, before any canonical byte changes
    from commonkeep.patches.after_apply import deferring

    stamps = st.stamps if journal.changed and not (journal.tomb_updates or journal.purge or journal.finished) else None
    if stamps is not None and not deferring():  # the pages planned and MEMORY.md copied while the record file is flushed
        from commonkeep.store import ahead, splice_ahead

        changed = st.changed
        ahead.plan(lambda: splice_ahead.prepare(layout, stamps, changed), first=True)
    done = _complete(store, journal, patch, path, result)
    if stamps is not None:
        done.spliceable = (stamps, st.changed)  # a purge renders whole: the projection cache drops the purged record
    whole = st.read_whole and not (journal.tombstones or journal.tomb_updates or journal.purge or journal.finished)
    if journal.changed and whole:
        done.records_after = apply_journal.records_after(st.files, st.changed)  # for the projection
    return done


def _journal_of(store: Store, st: _State, patch: Row, result: ApplyResult, done_before: set[str], when: str) -> Journal:
    applied_now = set(result.applied)
    ops = [str(o["op_id"]) for o in patch["ops"]]
    applied_all = [o for o in ops if o in done_before or o in applied_now]
    done = set(applied_all)
    skipped_ops = [o for o in ops if o not in done]
    reasons = {**(patch.get("skip_reasons") or {}), **result.skipped}
    fields: Row = {"applied_ops": applied_all, "skipped_ops": skipped_ops,
                   "skip_reasons": redact_obj({k: v for k, v in reasons.items() if k in set(skipped_ops)})}
    if applied_all:
        fields["status"] = "applied" if not skipped_ops else "partially_applied"
        if result.applied:
            fields["applied_at"] = when
    if st.finished:
        fields["finished_deletions"] = list(dict.fromkeys([*(patch.get("finished_deletions") or []), *st.finished]))
    lay = store.layout
    return Journal(
        patch_id=str(patch["patch_id"]), when=when, applied=list(result.applied), skipped=dict(result.skipped),
        patch_fields=fields, tombstones=st.new_tombstones, tomb_updates=st.tomb_updates,
        changed={lay.rel(path): rows for path, rows in st.changed.items()}, purge=st.purge,
        purged_texts=st.purged_texts, cand_status=st.cand_status,
        purge_cands=apply_journal.purge_candidates(st.cands, st.purge), finished=st.finished,
    )


def _complete(store: Store, j: Journal, patch: Row | None, path: Path, result: ApplyResult) -> ApplyResult:
    """Write what ``j`` decided, then the patch file's new state, then drop the journal."""
    layout = store.layout
    steps = len(j.changed) + 4
    try:
        with progress.bar(steps, f"write {j.patch_id}", unit="file") as bar:
            record = (lambda hashes: _record_scrubbed(layout, patch, hashes)) if patch is not None else None
            appended = apply_journal.execute(store, j, record, step=bar.update)
            if patch is not None:
                patch.update(j.patch_fields)
                if not patch.get("skip_reasons"):
                    patch.pop("skip_reasons", None)
                # the ops were redacted in step 1; the new fields hold op ids and redacted reasons
                jsonl.atomic_write_bytes(path, patch_bytes(patch))
            apply_journal.remove(layout, j.patch_id)
            bar.update(steps)
    except OSError as exc:
        if isinstance(exc, ApplyInterrupted):
            raise
        interrupted = _interruption(store, j, exc)
        from commonkeep.store.render import render_all

        with suppress(OSError):  # reads already skip a tombstoned record: so should the projection
            render_all(layout)
        raise interrupted from exc
    result.applied, result.skipped = list(j.applied), dict(j.skipped)
    result.candidates = dict(j.cand_status)
    result.tombstones = appended  # a resumed apply reports only those not written before
    result.finished = list(j.finished)
    result.records_changed = bool(j.changed or j.tombstones or j.tomb_updates or j.purge or j.finished)
    return result


def finish_interrupted_applies(store: Store) -> list[ApplyResult]:
    """Finish every apply whose journal is still there (under the writer lock): oldest first, each
    from its journal, so the result is what the interrupted run would have written."""
    out = []
    layout = store.layout
    for jpath in apply_journal.pending(layout):
        j = apply_journal.read(layout, jpath)
        try:
            path = patch_path(layout, j.patch_id)
        except BadInput:
            path = layout.patches_dir / f"{j.patch_id}.json"
        patch: Row | None = None
        if path.is_file():
            with suppress(OSError, ValueError, RecursionError):
                doc = json.loads(path.read_text(encoding="utf-8"))
                patch = doc if isinstance(doc, dict) else None
        result = ApplyResult(patch if patch is not None else {"patch_id": j.patch_id, "status": "applied", "ops": []},
                             path, resumed=True)
        ids = {str(t.get("deleted_record_id")) for t in j.tombstones} | set(j.finished)
        interrupted = {x.record_id for x in leftover_lines(store, ids)} if ids else set()
        out.append(_complete(store, j, patch, path, result))
        result.finished = list(dict.fromkeys([*result.finished, *sorted(interrupted)]))
    return out


def _interruption(store: Store, j: Journal, exc: OSError) -> CommonkeepError:
    """The error for a write that failed part-way: when a tombstone was appended and a record line
    it hides is still on disk, ``DeletionInterrupted`` naming the lines; else ``ApplyInterrupted``.
    Both name the real error and the command that finishes the apply from its journal."""
    lay = store.layout
    what = str(exc.strerror or exc) + (f": {lay.rel(Path(exc.filename))}" if exc.filename else "")
    journal = lay.rel(apply_journal.journal_path(lay, j.patch_id))
    again = f"commonkeep apply {j.patch_id}"
    if not os.path.exists(apply_journal.journal_path(lay, j.patch_id)):
        journal = "(journal already removed: the apply had finished)"
    ids = {str(t["deleted_record_id"]) for t in j.tombstones} | set(j.finished)
    try:
        left = leftover_lines(store, ids) if ids else []
        tombs = {str(t.get("deleted_record_id")): t for t in store.rows(lay.tombstones)} if left else {}
    except OSError:
        left, tombs = [], {}
    if left:
        where: dict[str, list[str]] = {}
        for item in left:
            where.setdefault(item.record_id, []).append(f"{lay.rel(item.path)}:{item.line}")
        parts = [f"{rid} (still in {', '.join(places)})" for rid, places in where.items()]
        commands = [finish_command(rid, tombs.get(rid, {})) for rid in where]
        return DeletionInterrupted(
            f"deletion interrupted: {what}; the tombstone is written (reads skip the record and it can never be "
            f"re-added), but its line, content included, is still on disk: {'; '.join(parts)}",
            hint="finish it with `" + again + "` or " + " and ".join(f"`{c}`" for c in commands)
            + f" (the decision is kept in {journal}; `commonkeep doctor` lists what is left)",
        )
    return ApplyInterrupted(
        f"apply of patch {j.patch_id} interrupted: {what}; nothing is lost: what it decided is kept in {journal}",
        hint=f"fix the cause (free disk space, permissions), then run `{again}`: it finishes exactly what was left",
    )


def _record_scrubbed(layout: Layout, patch: Row | None, hashes: list[str]) -> None:
    """Write the patch file with ``scrubbed_lines`` (sorted, deduplicated) before the scrub changes
    a daily log, so a scrub cut off part-way never leaves a line scrubbed but not recorded."""
    if patch is None:
        return
    patch["scrubbed_lines"] = sorted({*(patch.get("scrubbed_lines") or []), *hashes})
    write_patch(layout, patch)
