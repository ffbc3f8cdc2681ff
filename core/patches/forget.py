"""``commonkeep forget ID --reason R [--purge]``: delete a record for good, through a patch.

Deletion is a ``delete`` op in its own patch file (so it is audited like every other change),
which writes one content-free tombstone (``contracts/ompkeep-store.md`` §4.5: id, when, mode,
reason, a hash of the content — never the content) and keeps the record's line with ``status:
"deleted"``, as OmpKeep does (audit-preserving: reads, search and the projection skip it). A
tombstoned id can never be added again: curation rejects its candidate and ``apply`` refuses it.

``--purge`` (``privacy_purge``) removes the line and scrubs what points at the content: linked evidence
(summary ``[deleted]``, excerpt and hash removed, §4.4), the source candidate's text in the inbox,
and every copy of the statement in older patch files, daily logs, runtime files and reports; the
derived search databases are dropped and rebuilt (see ``commonkeep.patches.patch``). A paraphrase in a
daily log cannot be found by value and stays.

``--purge`` of a record forgotten earlier without it writes no second tombstone (one per record,
§4.5): the existing tombstone's mode becomes ``privacy_purge`` and the same scrub runs, finding
the statement in the patches that added it and in its source candidate. ``--purge`` of a record
already purged runs the scrub again (a purge cut off part-way, or a copy made since): the copies
are scrubbed before those sources, so the statement can still be found until the end.

An ID may also be a candidate id (``cap_…``) that was never promoted: its record id is
tombstoned in advance and the candidate rejected, so it cannot come back through curation.

A deletion interrupted after its tombstone was written (disk full, kill -9 before the record's
file was rewritten) leaves the record's line on disk. Forgetting the id again finishes it, with no
second tombstone, and says so on stderr ("finishing an interrupted deletion of ID"): the
interrupted patch itself is applied when it is still there (so it does not linger as pending),
otherwise a new patch marks the line deleted (drops it for a purge); when ``--purge`` asks for more than that patch's op
promised, a second patch then purges. The scrub runs when ``--purge`` is given or the tombstone
already records ``privacy_purge``. ``commonkeep doctor`` lists such lines with the command that
finishes them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.gate.agent_shell import refuse_inside_agent
from commonkeep.gate.writer import require_writer
from commonkeep.patches.patch import ApplyResult, apply_patch, leftover_lines
from commonkeep.secrets import redact
from commonkeep.store.core import Store
from commonkeep.store.ids import memory_id_for, patch_id
from commonkeep.util.timeutil import now, now_iso

REASONS = ("user_requested", "privacy_sensitive", "poisoned", "invalid", "other")
MAX_REASON_CHARS = 500


def forget(root: Path | str, record_id: str, *, reason: str, role: str | None, purge: bool = False) -> ApplyResult:
    """Tombstone ``record_id`` (a ``mem_…`` or unpromoted ``cap_…`` id); returns the apply result.

    The last selection (``runtime/selected_memory.json``, which a plain ``handoff`` reads) no
    longer lists the record afterwards."""
    refuse_inside_agent("forgetting a record")
    target = memory_id_for(record_id) if record_id.startswith("cap_") else record_id
    earlier = _versions(Path(root), target) if purge else []
    result = _forget(root, record_id, reason=reason, role=role, purge=purge)
    _drop_from_selection(Path(root), {target})
    if earlier:
        _scrub_earlier_versions(Path(root), earlier, result)
    if purge and (Path(root) / ".git").exists():
        print("commonkeep forget: this root is a git repository: its history (and its remote's, once synced) still "
              "holds the purged text. Run `commonkeep share sync`, then `commonkeep share purge-history` to rewrite "
              "the history without it; it prints what every other clone must do", file=sys.stderr)
    return result


def _versions(root: Path, target: str) -> list[str]:
    """Every statement ``target`` has had that the root still holds (its record line, its source
    and contested candidates, the ops of every patch that added or changed it), read before the
    purge blanks them: a runtime file or a log may quote any of them, not only the last."""
    from commonkeep.patches.purge import texts_in
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    files = [*lay.canonical_files(), lay.inbox, *(sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else [])]
    out: set[str] = set()
    for path in files:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if target.encode("utf-8") in data:
            for texts in texts_in(lay.rel(path), data, {target}).values():
                out |= texts
    return sorted(out)


def _scrub_earlier_versions(root: Path, texts: list[str], result: ApplyResult) -> None:
    """The purge scrubs the record's last statement; earlier versions quoted in this machine's
    copies (runtime files, reports, session summaries, daily logs) are scrubbed here, the daily-log
    lines recorded by hash in the purge's patch file as the purge itself does."""
    from commonkeep.patches import purge as scrub
    from commonkeep.patches.purge import _derived_hit, _needles
    from commonkeep.store import jsonl
    from commonkeep.store.jsonjs import dumps_pretty
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    if not _derived_hit(lay, _needles(texts)):
        return

    def record(hashes: list[str]) -> None:
        try:
            doc = json.loads(result.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        doc["scrubbed_lines"] = sorted({*(doc.get("scrubbed_lines") or []), *hashes})
        jsonl.atomic_write_bytes(result.path, dumps_pretty(doc).encode("utf-8"))

    scrub.scrub_derived(lay, texts, record)
    scrub.scrub_local_copies(lay, texts)
    from commonkeep.recall.search.index import sync_root

    sync_root(root)  # the search databases were dropped with the scrub: rebuilt now


def _drop_from_selection(root: Path, ids: set[str]) -> None:
    """Filter forgotten records out of the last selection file (the next ``select`` rewrites it)."""
    from commonkeep.store import jsonl
    from commonkeep.store.jsonjs import dumps_pretty
    from commonkeep.store.layout import Layout

    path = Layout(root).runtime_dir / "selected_memory.json"
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return
    if not isinstance(rows, list):
        return
    kept = [r for r in rows if not (isinstance(r, dict) and r.get("id") in ids)]
    if len(kept) != len(rows):
        jsonl.atomic_write_bytes(path, dumps_pretty(kept).encode("utf-8"))


def _forget(root: Path | str, record_id: str, *, reason: str, role: str | None, purge: bool) -> ApplyResult:
    require_writer("forget", role, root)
    if not reason or not reason.strip():
        raise BadInput("forget needs --reason", hint=f"one of {', '.join(REASONS)}, or a short free-text reason")
    if len(reason) > MAX_REASON_CHARS:
        raise BadInput(f"--reason is {len(reason)} characters; the limit is {MAX_REASON_CHARS}; nothing was forgotten",
                       hint=f"one of {', '.join(REASONS)}, or a short free-text reason")
    store = Store(root)
    dead = store.tombstoned_ids()
    candidate_id = None
    target = record_id
    if record_id.startswith("cap_"):
        candidate_id, target = record_id, memory_id_for(record_id)
    known = {str(r["id"]) for r in store.records(active_only=False)}
    finishing = False
    if target in dead:
        tomb = next((t for t in store.rows(store.layout.tombstones) if t.get("deleted_record_id") == target), {})
        where = f"tombstone {tomb.get('id', '?')} at {tomb.get('deleted_at', '?')}"
        left = leftover_lines(store, {target})
        if left:
            finishing = True
            purge = purge or tomb.get("deletion_mode") == "privacy_purge"  # the tombstone already claims the scrub
            lines = ", ".join(f"{store.layout.rel(x.path)}:{x.line}" for x in left)
            print(f"commonkeep forget: finishing an interrupted deletion of {target} ({where}; its line is still in {lines})",
                  file=sys.stderr)
        elif tomb.get("deletion_mode") == "privacy_purge" and not purge:
            raise BadInput(f"{target} is already forgotten and purged ({where})",
                           hint=f"to run the scrub again (a purge cut off part-way, or a copy made since): "
                                f"commonkeep forget {record_id} --reason privacy_sensitive --purge")
        elif not purge:
            raise BadInput(f"{target} is already forgotten ({where})",
                           hint=f"to scrub what still points at it: commonkeep forget {record_id} --reason privacy_sensitive --purge")
        candidate_id = None  # the purge finds the source candidate by its record id
    elif target not in known:
        if candidate_id is None:
            cands = {str(c["id"]) for c in store.candidates()}
            hint_id = "cap_" + record_id[4:] if record_id.startswith("mem_") else None
            if hint_id and hint_id in cands:
                candidate_id = hint_id
            else:
                raise BadInput(f"no record {record_id} in {store.layout.memory_dir}", hint="find record ids with `commonkeep search WORDS`, or run `commonkeep render` and read rendered/MEMORY.md "
                                "(unpromoted candidates: `commonkeep review --list`)")
        elif candidate_id not in {str(c["id"]) for c in store.candidates()}:
            raise BadInput(f"no record {target} and no candidate {candidate_id} in this root")
    if finishing:
        stuck = _interrupted_patch(store, target)
        if stuck is not None:
            result = apply_patch(root, stuck[0], role=role, op_ids=[stuck[1]])
            if result.skipped:
                raise BadInput(f"could not finish the deletion of {target}: {result.skipped[stuck[1]]}")
            if not purge or stuck[2] == "privacy_purge" or tomb.get("deletion_mode") == "privacy_purge":
                return result
            # --purge asks for more than the interrupted patch promised: its line is gone now, and
            # the purge below upgrades the one tombstone and scrubs, in a patch of its own.
            finishing = False
    enum_reason = reason if reason in REASONS else "other"
    op: dict[str, Any] = {
        "op_id": "op_001",
        "op": "delete",
        "target_id": target,
        "reason": redact(reason).text,
        "risk": "high" if purge else "medium",
        "default_selected": True,
    }
    if candidate_id:
        op["candidate_id"] = candidate_id
    op["deletion_mode"] = "privacy_purge" if purge else "audit_preserving"
    op["deletion_reason"] = enum_reason
    patch = {
        "patch_id": patch_id(now()),
        "created_at": now_iso(),
        "generated_by": "manual",
        "mode": "supervised",
        "summary": ("finish the interrupted deletion of " if finishing else "forget ") + target + (" (privacy purge)" if purge else ""),
        "ops": [op],
        "status": "proposed",
        "applied_at": None,
        "applied_ops": [],
        "skipped_ops": [],
    }
    result = apply_patch(root, patch, role=role, op_ids=["op_001"])
    if result.skipped:
        raise BadInput(f"could not forget {target}: {result.skipped['op_001']}")
    return result


def _interrupted_patch(store: Store, target: str) -> tuple[str, str, str] | None:
    """``(patch id, op id, deletion mode)`` of a pending patch whose delete op of ``target`` was
    not applied: the one a failure stopped after writing the tombstone."""
    from commonkeep.patches.waiting import waiting_in

    for path in sorted(store.layout.patches_dir.glob("*.json"), reverse=True):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict):
            continue
        for op in waiting_in(doc):  # a patch file of another shape (hand edit, another machine) holds none
            if op.get("op") == "delete" and op.get("target_id") == target:
                return str(doc.get("patch_id") or path.stem), str(op.get("op_id")), str(op.get("deletion_mode", ""))
    return None
