"""What the read-only pages show: patches with diffs, memory records and their history, the wiki, health.

Pure reads of the store files through the same helpers the CLI uses; nothing here writes.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

from commonkeep.store.core import Store
from commonkeep.store.layout import Layout
from commonkeep.store.render import render_record

Row = dict[str, Any]


def _read_patch(lay: Layout, path: Path) -> Row | None:
    """One patch file; an unreadable one as a row naming its problem; ``None`` for JSON that is not a patch."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        return {"patch_id": path.stem, "status": "problem", "summary": f"{lay.rel(path)}: {exc}", "ops": []}
    return doc if isinstance(doc, dict) and "patch_id" in doc else None


def read_patches(root: Path | str) -> list[Row]:
    """Every patch file, newest first; an unreadable one is listed with its problem."""
    lay = Layout(root)
    found = (_read_patch(lay, path) for path in (sorted(lay.patches_dir.glob("*.json"), reverse=True)
                                                  if lay.patches_dir.is_dir() else []))
    return [p for p in found if p is not None]


def patch_by_id(root: Path | str, patch_id: str) -> Row | None:
    """The patch ``patch_id``: its own file ``patches/<id>.json`` (patches are written there), else
    any patch file that says it is that patch."""
    lay = Layout(root)
    if patch_id and "/" not in patch_id and "\\" not in patch_id and not patch_id.startswith("."):
        own = lay.patches_dir / f"{patch_id}.json"
        if own.is_file():
            found = _read_patch(lay, own)
            if found is not None and found.get("patch_id") == patch_id:
                return found
    return next((p for p in read_patches(root) if p.get("patch_id") == patch_id), None)


def diff(before: str, after: str) -> list[tuple[str, str]]:
    """A line diff as ``(kind, line)`` pairs, kind one of ``same``, ``del``, ``add``."""
    out: list[tuple[str, str]] = []
    for line in difflib.ndiff(before.splitlines(), after.splitlines()):
        tag, text = line[:2], line[2:]
        if tag == "? ":
            continue
        out.append(({"- ": "del", "+ ": "add"}.get(tag, "same"), text))
    return out


def op_views(patch: Row, records: dict[str, Row]) -> list[Row]:
    """Each op of a patch with its before/after diff (as the record stands now for a proposed patch)."""
    from commonkeep.governance.review import _before_after  # the same rendering `review` shows
    from commonkeep.governance.waiting import applied_op_ids

    applied = applied_op_ids(patch)
    views = []
    for op in patch.get("ops") or []:
        try:
            if patch.get("status") == "proposed" or op.get("op_id") not in applied:
                before, after = _before_after(op, records)
            else:
                rec = op.get("record") or op.get("to_record")
                before, after = "(applied)", render_record(rec) if isinstance(rec, dict) else json.dumps(
                    {k: v for k, v in op.items() if k not in ("op_id", "default_selected")}, indent=1, ensure_ascii=False)
        except Exception as exc:  # a malformed op is shown, not fatal to the page
            before, after = "(cannot render)", str(exc)
        views.append({"op": op, "applied": op.get("op_id") in applied, "diff": diff(before, after)})
    return views


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
    from commonkeep.governance.purge import patch_ops
    from commonkeep.governance.waiting import applied_op_ids

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
    keep = ("id", "deleted_record_id", "deleted_at", "deletion_mode", "reason")
    return [{k: t.get(k) for k in keep} for t in store.rows(store.layout.tombstones)]


def scrub_preview(root: Path | str, record: Row, purge: bool) -> list[str]:
    """What ``forget`` (and ``--purge``) will do to this record, file by file, before it is done."""
    lay = Layout(root)
    statement = str(record.get("statement", ""))
    kept = ("is removed from its file" if purge else
            "stays in its file marked deleted (hidden from search, context and MEMORY.md, as OMP keeps it)")
    lines = [f"{record['id']} {kept} and a content-free tombstone is written "
             "(id, time, mode, reason, a hash of the content)."]
    if not purge:
        lines.append("Copies of the statement elsewhere (patches, daily logs, the source candidate) stay; "
                     "tick purge to scrub them.")
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
