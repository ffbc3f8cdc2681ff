"""The apply journal: what an ``apply`` decided, on disk before any canonical byte moves.

``apply_patch`` first decides every op against the store as it is (nothing written yet), then
writes that decision here — ``runtime/journal/<patch_id>.apply``, one JSON document, fsynced,
mode 0600 — and only then changes files: tombstones, each record file, evidence, the scrubs of a
privacy purge, the inbox, the patch file. Every one of those steps is idempotent when run from
the journal (a tombstone already there is not appended twice; a record file is rewritten to hold
exactly the journal's versions of its ids; a candidate gets the journal's status), so when the
disk fills or the process dies between two of them, the next ``apply`` (of any patch) runs the
journal again from the start and finishes exactly what was left: the same ops applied, the same
skip reasons, no candidate rejected whose record is live. The journal is removed when the patch
file says what was applied.

It holds the records the patch writes and, for a privacy purge, the purged statements (the
scrub needs them to find their copies): it lives under ``runtime/`` (machine-local, never shared,
its ``.apply`` suffix outside what a scrub rewrites) and only while an apply is unfinished.

The next writer runs it without asking, so a file written there by another hand (a model's file
tool) would write records unseen: its exact bytes are bound in the stamp journal outside the root
when ``apply`` writes it (``commonkeep.gate.stamps``), and one that is not bound is not run.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.patches import purge
from commonkeep.store import jsonl
from commonkeep.store.core import Store
from commonkeep.store.ids import is_record_of
from commonkeep.store.layout import Layout
from commonkeep.store.line_edit import RecordChanges

Row = dict[str, Any]
FORMAT = "commonkeep-apply-journal-1"
SUFFIX = ".apply"


def journal_dir(layout: Layout) -> Path:
    return layout.runtime_dir / "journal"


def journal_path(layout: Layout, patch_id: str) -> Path:
    return journal_dir(layout) / f"{patch_id}{SUFFIX}"


@dataclass
class Journal:
    """One apply's decision: what to write, and what the patch file says afterwards."""

    patch_id: str
    when: str
    applied: list[str] = field(default_factory=list)  # op ids this apply applies
    skipped: dict[str, str] = field(default_factory=dict)  # op id -> why
    patch_fields: Row = field(default_factory=dict)  # status, applied_ops, skipped_ops, … after it
    tombstones: list[Row] = field(default_factory=list)
    tomb_updates: dict[str, Row] = field(default_factory=dict)
    changed: dict[str, dict[str, Row | None]] = field(default_factory=dict)  # file (relative) -> id -> row or None
    purge: list[str] = field(default_factory=list)
    purged_texts: list[str] = field(default_factory=list)
    cand_status: dict[str, str] = field(default_factory=dict)
    purge_cands: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)

    def to_json(self) -> Row:
        return {"format": FORMAT, **{k: getattr(self, k) for k in self.__dataclass_fields__}}

    @classmethod
    def from_json(cls, data: Any, where: str) -> Journal:
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("patch_id"), str):
            raise ValueError(f"not a {FORMAT} document")
        kw = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**kw)


def write(layout: Layout, journal: Journal) -> Path:
    """Write the journal atomically (temp file, fsync, rename, fsync of the folder), mode 0600."""
    path = journal_path(layout, journal.patch_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    jsonl.refuse_symlink(path.parent)
    # ensure_ascii: records may hold lone surrogates (JS strings); escaped, they round-trip.
    data = json.dumps(journal.to_json(), separators=(",", ":")).encode("ascii")
    _bind(layout, journal.patch_id, data)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)  # 0600
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with suppress(OSError):
            os.unlink(tmp)
        raise
    jsonl.fsync_dir(path.parent)
    return path


def _bind(layout: Layout, patch_id: str, data: bytes) -> None:
    """Bind the journal's bytes in the stamp journal; when that cannot be written the apply goes on
    (only a resume of it, after an interruption, is then refused and left to a person)."""
    from commonkeep.gate import stamps

    try:
        stamps.record_apply(layout.root, patch_id, data)
    except (OSError, stamps.KeyUnsafe) as exc:
        import logging

        logging.getLogger("commonkeep").warning("the apply journal of %s could not be bound in the stamp journal (%s); "
                                                "if this apply is interrupted, a person finishes it", patch_id, exc)


def remove(layout: Layout, patch_id: str) -> None:
    path = journal_path(layout, patch_id)
    with suppress(FileNotFoundError):
        path.unlink()
        jsonl.fsync_dir(path.parent)


def pending(layout: Layout) -> list[Path]:
    """The journals of applies that did not finish, oldest first. Called under the writer lock:
    a temp file left by a journal write that was killed is removed (its apply never started)."""
    folder = journal_dir(layout)
    if not folder.is_dir():
        return []
    for stale in folder.glob(f".*{SUFFIX}.tmp-*"):
        with suppress(FileNotFoundError):
            stale.unlink()
    found = [p for p in folder.iterdir() if p.name.endswith(SUFFIX) and not p.name.startswith(".")]
    return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))


def read(layout: Layout, path: Path) -> Journal:
    from commonkeep.gate import stamps

    try:
        data = path.read_bytes()
        journal = Journal.from_json(json.loads(data), layout.rel(path))
    except (OSError, ValueError, RecursionError, TypeError) as exc:
        raise BadInput(
            f"the apply journal {layout.rel(path)} cannot be read ({exc}); an apply of patch {path.stem} "
            "was interrupted and what it decided is lost, so nothing more is applied until this is resolved",
            hint=f"check the files the patch touches, then move {layout.rel(path)} away and apply the patch again",
        ) from None
    if not stamps.apply_bound(layout.root, journal.patch_id, data):
        raise BadInput(
            f"the apply journal {layout.rel(path)} was not written by commonkeep's apply (the stamp journal does not "
            f"hold it): written by hand or by a tool, it could write records unseen, so it was not run and nothing more "
            "is applied until it is resolved",
            hint=f"look at it, then move {layout.rel(path)} away; `commonkeep doctor` and `commonkeep audit` say what it "
                 f"would change; apply patch {journal.patch_id} again if it is yours",
        )
    return journal


def refuse_targets(store: Store, j: Journal) -> None:
    """Check every file ``j`` will write, so a refusal (a symlinked store file) comes before the
    first byte moves (and before the journal exists), not after the tombstone is appended."""
    layout = store.layout
    targets = [*([layout.tombstones] if j.tombstones or j.tomb_updates else []), *(layout.root / r for r in j.changed)]
    if j.purge:
        targets.append(layout.evidence)
    if j.cand_status or j.purge_cands:
        targets.append(layout.inbox)
    for path in targets:
        jsonl.refuse_symlink(path)


def execute(store: Store, j: Journal, record_lines: Callable[[list[str]], None] | None = None,
            step: Callable[[], None] | None = None) -> list[str]:
    """Make the files hold what ``j`` decided. Idempotent: running it again after any failure
    part-way ends in the same files. ``step`` is called after each file written (progress).
    Returns the ids of the tombstones it appended (none already there)."""
    layout = store.layout
    tick = step or (lambda: None)
    changed = {layout.root / rel: rows for rel, rows in j.changed.items()}
    refuse_targets(store, j)
    fresh: list[Row] = []
    if j.tombstones:
        have = store.tombstoned_ids()  # a run cut off after the append must not append twice
        fresh = [t for t in j.tombstones if str(t.get("deleted_record_id")) not in have]
        if fresh:
            jsonl.append_jsonl(layout.tombstones, fresh, fsync=True)
        tick()
    if j.tomb_updates:
        updates = j.tomb_updates

        def upgrade(rows: list[Row]) -> list[Row]:
            return [{**t, **updates[str(t.get("deleted_record_id"))]} if t.get("deleted_record_id") in updates else t
                    for t in rows]

        store.rewrite(layout.tombstones, upgrade)
        tick()
    for path, changes in changed.items():
        store.rewrite_records(path, RecordChanges(changes))  # only the changed records' lines are rewritten
        tick()
    purged = set(j.purge)
    if purged:

        def scrub(rows: list[Row]) -> list[Row]:
            out = []
            for e in rows:
                if purged & set(e.get("related_memory_ids") or []):
                    e = {k: v for k, v in e.items() if k not in ("source_excerpt", "excerpt_hash")}
                    e["source_summary"] = purge.DELETED
                    e["redaction_status"] = "deleted"
                    e["notes"] = purge.EVIDENCE_NOTE  # as OmpKeep's redactEvidenceForMemory writes it
                out.append(e)
            return out

        store.rewrite(layout.evidence, scrub)
        # Copies first, sources last: the statements are found again in the older patches and
        # the source candidate, so a scrub cut off part-way can be run again to the end.
        purge.scrub_derived(layout, j.purged_texts, record_lines)
        purge.scrub_patches(layout, purged, j.patch_id)
        purge.rescrub_lines(layout)  # a line an earlier purge scrubbed that a union merge brought back
        tick()
    purge_cands = set(j.purge_cands)
    if j.cand_status or purge_cands:
        status = j.cand_status

        def mark(rows: list[Row]) -> list[Row]:
            out = []
            for c in rows:
                cid = c.get("id")
                if cid in status:
                    c = {**c, "status": status[str(cid)]}
                if cid in purge_cands:
                    c = {**c, "text": purge.DELETED, "tags": [], "evidence_refs": []}
                out.append(c)
            return out

        store.update_candidates(mark, ids={str(c) for c in status} | purge_cands)  # only their lines change
        tick()
    return [str(t["id"]) for t in fresh]


def purge_candidates(cands: dict[str, Row], purged: list[str]) -> list[str]:
    """The candidates whose text a purge of ``purged`` blanks (their record id is purged)."""
    ids = set(purged)
    return [cid for cid in cands if any(is_record_of(cid, i) for i in ids)] if ids else []


def records_after(files: dict[Path, list[Row]], changed: dict[Path, dict[str, Row | None]]) -> dict[Path, list[Row]]:
    """Every record file's records after ``execute`` wrote ``changed``, from ``files`` as read
    before (under the writer lock): what rendering would read again, without reading it."""
    return {**files, **{p: RecordChanges(c)(files.get(p, [])) for p, c in changed.items()}}
