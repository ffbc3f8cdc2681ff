"""What the read-only pages show: patches with diffs, memory records and their history, the wiki, health.

Pure reads of the store files through the same helpers the CLI uses; nothing here writes.
"""

from __future__ import annotations

import contextlib
import difflib
import json
from pathlib import Path
from typing import Any

from commonkeep.store.core import Store
from commonkeep.store.layout import Layout
from commonkeep.store.render import render_record

Row = dict[str, Any]
MAX_ID_CHARS = 120  # patch, record and candidate ids are far shorter; longer asks are answered "not found"


def _read_patch(lay: Layout, path: Path) -> Row | None:
    """One patch file; an unreadable one as a row naming its problem; ``None`` for JSON that is not a patch."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        return {"patch_id": path.stem, "status": "problem", "summary": f"{lay.rel(path)}: {exc}", "ops": []}
    return doc if isinstance(doc, dict) and "patch_id" in doc else None


def read_patches(root: Path | str) -> list[Row]:
    """Every patch file, newest first by the time it was made (``created_at``, else the file's
    time, then its id); an unreadable one is listed with its problem."""
    lay = Layout(root)
    found = []
    for path in lay.patches_dir.glob("*.json") if lay.patches_dir.is_dir() else []:
        doc = _read_patch(lay, path)
        if doc is not None:
            found.append((str(doc.get("created_at") or _mtime_iso(path)), str(doc.get("patch_id") or ""), doc))
    return [doc for *_key, doc in sorted(found, key=lambda t: (t[0], t[1]), reverse=True)]


def _mtime_iso(path: Path) -> str:
    """When a patch file without ``created_at`` (hand-made) was written, as an ISO time."""
    from datetime import UTC, datetime

    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except OSError:
        return ""


def patch_by_id(root: Path | str, patch_id: str) -> Row | None:
    """The patch ``patch_id``: its own file ``patches/<id>.json`` (patches are written there), else
    any patch file that says it is that patch."""
    lay = Layout(root)
    if not patch_id or len(patch_id) > MAX_ID_CHARS:  # a 300-character id is no patch (and no file name: ENAMETOOLONG)
        return None
    if "/" not in patch_id and "\\" not in patch_id and not patch_id.startswith("."):
        own = lay.patches_dir / f"{patch_id}.json"
        is_file = False
        with contextlib.suppress(OSError):
            is_file = own.is_file()
        if is_file:
            found = _read_patch(lay, own)
            if found is not None and found.get("patch_id") == patch_id:
                return found
    return next((p for p in read_patches(root) if p.get("patch_id") == patch_id), None)


NOTHING = ("(no record)", "(nothing)", "(record not found)")


def diff(before: str, after: str) -> list[tuple[str, str]]:
    """A line diff as ``(kind, line)`` pairs, kind one of ``same``, ``del``, ``add``, ``note``.

    "(no record)" and its kin are not lines of a record: they are shown as a note, never as a
    deletion (an ``add`` is all additions)."""
    out: list[tuple[str, str]] = []
    if before in NOTHING:
        out.append(("note", before))
        before = ""
    if after in NOTHING:
        out.append(("note", after))
        after = ""
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        tag, text = line[:2], line[2:]
        if tag == "? ":
            continue
        out.append(({"- ": "del", "+ ": "add"}.get(tag, "same"), text))
    return out


def op_views(patch: Row, records: dict[str, Row], root: Path | str | None = None) -> list[Row]:
    """Each op of a patch with its before/after diff (as the record stands now for a proposed patch)."""
    from commonkeep.patches.waiting import applied_op_ids
    from commonkeep.reviews.review import _before_after  # the same rendering `review` shows

    applied = applied_op_ids(patch)
    views = []
    earlier: list[Row] | None = None
    for op in patch.get("ops") or []:
        try:
            if patch.get("status") == "proposed" or op.get("op_id") not in applied:
                before, after = _before_after(op, records)
            else:
                if earlier is None and op.get("target_id"):
                    earlier = patches_before(root, patch) if root is not None else []
                before, after = applied_before_after(op, records, earlier or [])
        except Exception as exc:  # a malformed op is shown, not fatal to the page
            before, after = "(cannot render)", str(exc)
        lines = diff(before, after)
        views.append({"op": op, "applied": op.get("op_id") in applied, "diff": lines, "summary": op_summary(op, lines)})
    return views


def op_summary(op: Row, lines: list[tuple[str, str]]) -> str:
    """One line saying what an op is about (the patch page's line): the statement it writes, else
    the first changed line of its diff that is not a heading, else its reason."""
    for key in ("record", "to_record", "fields"):
        part = op.get(key)
        if isinstance(part, dict) and isinstance(part.get("statement"), str) and part["statement"]:
            return str(part["statement"])
    if isinstance(op.get("statement"), str) and op["statement"]:
        return str(op["statement"])
    for kind in ("add", "del"):
        for k, text in lines:
            if k == kind and text.strip() and not text.lstrip().startswith("#"):
                return text.strip()
    return str(op.get("reason") or "")


def patches_before(root: Path | str, patch: Row) -> list[Row]:
    """The patches made before ``patch``, oldest first (to recall what a record said then)."""
    when = str(patch.get("created_at") or "")
    return [p for p in reversed(read_patches(root)) if str(p.get("created_at") or "") < when]


def statement_then(record_id: str, earlier: list[Row]) -> str | None:
    """What record ``record_id`` said after the ``earlier`` patches (oldest first): the last applied
    op that wrote its statement (an add, a supersede's new record, an update of the statement)."""
    from commonkeep.patches.purge import patch_ops
    from commonkeep.patches.waiting import applied_op_ids

    said: str | None = None
    for p in earlier:
        done = applied_op_ids(p)
        for op in patch_ops(p):
            if op.get("op_id") not in done:
                continue
            for key in ("record", "to_record"):
                rec = op.get(key)
                if isinstance(rec, dict) and rec.get("id") == record_id and isinstance(rec.get("statement"), str):
                    said = rec["statement"]
            updates = op.get("updates")
            if op.get("target_id") == record_id and isinstance(updates, dict) and isinstance(updates.get("statement"), str):
                said = updates["statement"]
    return said


def applied_before_after(op: Row, records: dict[str, Row], earlier: list[Row]) -> tuple[str, str]:
    """An applied op as the statements it changed: the old one (from the patches before it) and the new one."""
    kind = str(op.get("op"))
    rec = op.get("record") if isinstance(op.get("record"), dict) else None
    if kind == "add" and rec is not None:
        return "(no record)", render_record(rec)
    if kind == "reject_candidate":
        return f"candidate {op.get('candidate_id')}: new", f"candidate {op.get('candidate_id')}: rejected ({op.get('reason')})"
    target = str(op.get("target_id") or "")
    old = statement_then(target, earlier)
    if old is None:
        old = str((records.get(target) or {}).get("statement") or "(statement not known: written before patches were kept)")
    raw = op.get("updates")
    updates: Row = raw if isinstance(raw, dict) else {}
    new_rec = op.get("to_record") if isinstance(op.get("to_record"), dict) else None
    if new_rec is not None:
        return f"{target}: {old}", f"{new_rec.get('id')}: {new_rec.get('statement', '')}\n({target} is superseded by it)"
    if kind == "update" and "statement" in updates:
        return f"{target}: {old}", f"{target}: {updates['statement']}"
    what = ", ".join(f"{k}: {v}" for k, v in updates.items() if k != "statement")
    return f"{target}: {old}", f"{target}: {old}\n({kind}{': ' + what if what else ''})"


def memory(records: list[Row], layer: str = "", project: str = "", q: str = "") -> tuple[list[Row], list[str], list[str]]:
    """Records (all statuses), filtered; plus the layers and projects there are."""
    rows = records
    layers = sorted({str(r.get("layer", "")) for r in rows if r.get("layer")})
    projects = sorted({str(r.get("project")) for r in rows if r.get("project")})
    if layer:
        rows = [r for r in rows if r.get("layer") == layer]
    if project:
        rows = [r for r in rows if r.get("project") == project]
    if q:
        words = q.casefold().split()
        rows = [r for r in rows if all(w in f"{r.get('statement', '')} {r.get('id')} {' '.join(map(str, r.get('tags') or []))}".casefold()
                                       for w in words)]
    return rows, layers, projects


def search(root: Path | str, q: str, records: dict[str, Row], mode: str = "auto") -> tuple[list[Row], list[str]]:
    """``commonkeep search``: keyword, and by meaning when the embed extra is installed; each hit as
    its record in ``records`` (every record by id, e.g. the server's cached :meth:`Queue.records`)."""
    from commonkeep.recall.search.hybrid import search as run_search

    resp = run_search(root, q, mode=mode, limit=30)
    hits = []
    for hit in resp.results:
        if hit.id in records:
            hits.append(records[hit.id])
    return hits, [str(n) for n in resp.notices]


def history(root: Path | str, record_id: str) -> list[Row]:
    """The patches with an op that touched ``record_id`` (oldest first)."""
    from commonkeep.patches.purge import patch_ops
    from commonkeep.patches.waiting import applied_op_ids

    out = []
    for p in reversed(read_patches(root)):
        applied = applied_op_ids(p)
        for op in patch_ops(p):  # a hand-edited file of another shape names no op
            ids = {op.get("target_id"), *(r.get("id") for r in (op.get("record"), op.get("to_record")) if isinstance(r, dict))}
            if record_id in ids:
                out.append({"patch_id": p.get("patch_id"), "status": p.get("status"), "created_at": p.get("created_at"),
                            "applied_at": p.get("applied_at"), "generated_by": p.get("generated_by"), "op": op.get("op"),
                            "applied": op.get("op_id") in applied})
    return out


def tombstones(root: Path | str) -> list[Row]:
    """Tombstones as stored: id, when, mode, reason, hash — they never hold content."""
    store = Store(root, warn=False)
    keep = ("id", "deleted_record_id", "deleted_at", "deletion_mode")
    # the file says ``deletion_reason`` (contract ompkeep-store §4.9); ``reason`` is an older spelling
    return [{**{k: t.get(k) for k in keep}, "reason": t.get("deletion_reason") or t.get("reason") or ""}
            for t in store.rows(store.layout.tombstones)]


def scrub_preview(root: Path | str, record: Row, purge: bool, how_to_purge: str = "tick purge to scrub them") -> list[str]:
    """What ``forget`` (and ``--purge``) will do to this record, file by file, before it is done."""
    lay = Layout(root)
    statement = str(record.get("statement", ""))
    kept = ("is removed from its file" if purge else
            "stays in its file marked deleted (hidden from search, context and MEMORY.md, as OMP keeps it)")
    lines = [f"{record['id']} {kept} and a content-free tombstone is written "
             "(id, time, mode, reason, a hash of the content)."]
    if not purge:
        lines.append("Copies of the statement elsewhere (patches, daily logs, the source candidate) stay; "
                     f"{how_to_purge}.")
        return lines
    lines.append("The privacy purge also scrubs every copy of the statement it can find by value:")
    found = []
    for folder in (lay.patches_dir, lay.daily_dir, lay.runtime_dir, lay.reports_dir, lay.inbox.parent):
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            try:
                if path.is_file() and path.stat().st_size < 20_000_000 and statement and statement in path.read_text("utf-8", "replace"):
                    found.append(lay.rel(path))
            except OSError:
                continue
    lines.extend(f"  - {f}" for f in found) if found else lines.append("  - (no other copy found by value)")
    ev = [str(e.get("ref") or e.get("id")) for e in record.get("evidence") or [] if isinstance(e, dict)]
    if ev:
        lines.append(f"Linked evidence ({len(ev)}) is marked [deleted]; its excerpt and hash are removed.")
    lines.append("The search databases are dropped and rebuilt. A paraphrase in a daily log cannot be found by value and stays.")
    return lines


def health(root: Path | str) -> dict[str, Any]:
    """``commonkeep doctor``'s report for this root."""
    from commonkeep.doctor import diagnose

    return diagnose(str(root))


def outcome(root: Path | str, candidate_id: str) -> list[Row]:
    """What deciding a candidate did, newest first: each applied op naming it, with its patch, the
    record it wrote (if any), the reason (of a rejection) and when."""
    from commonkeep.patches.purge import patch_ops
    from commonkeep.patches.waiting import applied_op_ids

    out = []
    for p in read_patches(root):
        done = applied_op_ids(p)
        for op in patch_ops(p):
            if op.get("candidate_id") != candidate_id or op.get("op_id") not in done:
                continue
            rec = op.get("record") or op.get("to_record")
            out.append({"patch_id": p.get("patch_id"), "op": op.get("op"), "when": p.get("applied_at") or p.get("created_at"),
                        "record_id": rec.get("id") if isinstance(rec, dict) else op.get("target_id"),
                        "statement": rec.get("statement") if isinstance(rec, dict) else (op.get("updates") or {}).get("statement"),
                        "reason": op.get("reason") if op.get("op") == "reject_candidate" else ""})
    return out


def decided_elsewhere(queue: Any, patch: Row) -> dict[str, str]:
    """Ops of a waiting patch whose candidate has been decided since: op id -> what became of it."""
    if patch.get("status") not in ("proposed", "partially_applied"):
        return {}
    out = {}
    for op in patch.get("ops") or []:
        cid = op.get("candidate_id") if isinstance(op, dict) else None
        if cid:
            status = (queue.stored(str(cid)) or {}).get("status")
            if status and status != "new":
                out[str(op.get("op_id"))] = f"candidate {cid} was already decided ({'approved' if status == 'patched' else status})"
    return out
