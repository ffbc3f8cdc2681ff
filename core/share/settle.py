"""After a merge, every tombstone wins over every other version of its record (``settle``).

A merge can bring back what a deletion removed: the other machine promoted the same candidate,
edited the record through a patch, or kept its own copy of the candidate, the patch or a daily
log. ``settle`` runs on the merged working tree before the merge is committed (and again by the
next sync when one was cut off). For every tombstoned record it drops the record's lines from the
record files, all but the line an audit-preserving deletion keeps (``status: "deleted"``, byte
for byte, once; put back when the merge lost it: :mod:`commonkeep.share.deleted_lines`); for
every record purged for privacy (``deletion_mode: privacy_purge``) it drops every line and also
scrubs what still holds the text: candidates in the inbox (their text, and contested candidates
about the record), the ops of every patch file, linked evidence, daily logs, and this machine's
own copies (runtime files, reports, session summaries, the search databases). Duplicate
tombstones of one record (both machines deleted it) collapse to one, ``privacy_purge`` when
either was.

The texts to scrub are the record's statements wherever they are still found: the merged files
and the two commits being merged (which git never changes, so a settle cut off part-way finds
them again). Daily-log lines it scrubs are recorded by sha256 in a patch file of their own
(``scrubbed_lines``), so a ``union`` merge that brings one back is scrubbed again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.patches import purge
from commonkeep.patches.purge import (  # moved there in 0.3 (forget scrubs with them); the old names keep working
    _about_id,
    _candidate_about,
    _derived_hit,
    _named,
    _needles,
    _objects,
    _strs,
    texts_in,
)
from commonkeep.share import deleted_lines
from commonkeep.share.git import run_git
from commonkeep.share.merge import PURGE_MODE
from commonkeep.store import jsonl
from commonkeep.store.layout import Layout

TOMBSTONES = "memory/tombstones.jsonl"


@dataclass
class Tombs:
    tombstoned: set[str] = field(default_factory=set)
    purged: set[str] = field(default_factory=set)

    def __or__(self, other: Tombs) -> Tombs:
        return Tombs(self.tombstoned | other.tombstoned, self.purged | other.purged)


def tombs_in(data: bytes) -> Tombs:
    out = Tombs()
    for t in _objects(data):
        rid = t.get("deleted_record_id")
        if isinstance(rid, str) and rid:
            out.tombstoned.add(rid)
            if t.get("deletion_mode") == PURGE_MODE:
                out.purged.add(rid)
    return out


def tombs_here(lay: Layout) -> Tombs:
    try:
        return tombs_in(lay.tombstones.read_bytes())
    except OSError:
        return Tombs()


def _show(root: Path, rev: str, path: str) -> bytes:
    res = run_git(root, "show", f"{rev}:{path}", check=False)
    return res.out.encode("utf-8", "surrogateescape") if res.code == 0 else b""


def tombs_at(root: Path, rev: str) -> Tombs:
    return tombs_in(_show(root, rev, TOMBSTONES))


def statements_at(root: Path, rev: str, ids: set[str]) -> list[str]:
    """The statements of ``ids`` that commit ``rev`` holds (record files, inbox, patch files);
    only the files that name one of the ids are read (``git grep``)."""
    if not ids:
        return []
    pats = [x for i in sorted(ids) for x in ("-e", i)]
    found = run_git(root, "grep", "-l", "-F", *pats, rev, "--", "memory", "inbox", "patches", check=False)
    out: list[str] = []
    for line in found.out.splitlines():
        name = line.split(":", 1)[1] if ":" in line else line
        for texts in texts_in(name, _show(root, rev, name), ids).values():
            out += sorted(texts)
    return out


@dataclass
class Settled:
    dropped: list[str] = field(default_factory=list)  # "path#id" of record lines dropped
    restored: list[str] = field(default_factory=list)  # "path#id" of deletion lines put back (audit-preserving)
    scrubbed: list[str] = field(default_factory=list)  # files whose copies of purged text were scrubbed
    texts: int = 0  # how many distinct statements were scrubbed (never the text)
    tombstones_merged: int = 0


def _rewrite_lines(path: Path, fn: Callable[[bytes], bytes | None]) -> bool:
    """Rewrite ``path`` line by line (``fn`` returns the new line, or ``None`` to drop it), byte
    for byte elsewhere, atomically under its lock; ``True`` when something changed."""
    if not path.is_file():
        return False
    with jsonl.file_lock(path):
        data = path.read_bytes()
        out: list[bytes] = []
        changed = False
        lines = data.split(b"\n")
        for i, line in enumerate(lines):
            if i == len(lines) - 1 and line == b"":
                out.append(line)
                continue
            new = fn(line)
            if new != line:
                changed = True
            if new is not None:
                out.append(new)
        if changed:
            jsonl.atomic_write_bytes(path, b"\n".join(out))
        return changed


def _replace_text(data: bytes, needles: list[str]) -> bytes:
    if not needles:
        return data
    text = data.decode("utf-8", "surrogateescape")
    new = text
    for n in needles:
        new = new.replace(n, purge.DELETED)
    return data if new == text else new.encode("utf-8", "surrogateescape")


def traces(lay: Layout, purged: set[str]) -> list[tuple[str, str, str]]:
    """``(file, id, text)`` of every copy of a purged record's text in the inbox and the patch
    files (the record files' lines are ``leftover_lines``' business)."""
    found: list[tuple[str, str, str]] = []
    if not purged:
        return found
    try:
        inbox = lay.inbox.read_bytes()
    except OSError:
        inbox = b""
    for c in _objects(inbox):
        if _candidate_about(c, purged) and isinstance(c.get("text"), str) and c["text"] != purge.DELETED:
            found.append((lay.rel(lay.inbox), _about_id(c, purged), c["text"]))
    marks = [i.encode("utf-8") for i in purged]
    for path in sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else []:
        try:
            data = path.read_bytes()
            if not any(m in data for m in marks):
                continue  # names none of the purged records (the common case: no JSON parse)
            doc: Any = json.loads(data)
        except (OSError, ValueError, RecursionError):
            continue
        ops = doc.get("ops") if isinstance(doc, dict) else None
        for op in ops if isinstance(ops, list) else []:
            if not isinstance(op, dict):
                continue
            for key in ("record", "to_record"):
                rec = op.get(key)
                if isinstance(rec, dict) and _named(rec.get("id"), purged) and rec.get("statement") not in (None, purge.DELETED):
                    found.append((lay.rel(path), str(rec["id"]), str(rec.get("statement"))))
            upd = op.get("updates")
            if (_named(op.get("target_id"), purged) and isinstance(upd, dict)
                    and upd.get("statement") not in (None, purge.DELETED)):
                found.append((lay.rel(path), str(op["target_id"]), str(upd.get("statement"))))
    return found


def _record_hashes(lay: Layout, hashes: list[str]) -> None:
    """Daily-log lines this scrub changed, by sha256, in a patch file of their own (no op, no text)."""
    from commonkeep.patches.patch import write_patch
    from commonkeep.store.ids import patch_id
    from commonkeep.util.timeutil import now, now_iso

    when = now_iso()
    write_patch(lay, {
        "patch_id": patch_id(now()), "created_at": when, "generated_by": "maintainer", "mode": "supervised",
        "summary": "share sync: daily-log copies of records purged for privacy were scrubbed (line hashes only)",
        "ops": [], "status": "applied", "applied_at": when, "applied_ops": [], "skipped_ops": [],
        "scrubbed_lines": sorted(set(hashes)),
    })


def settle(lay: Layout, tombs: Tombs, extra_texts: Iterable[str] = (), *, held_here: bool = False,
           revs: Iterable[str] = ()) -> Settled:
    """Make every tombstone in ``tombs`` win in the working tree (see the module docstring).
    ``held_here``: this machine held a record purged elsewhere, so its own copies (the search
    databases too) are scrubbed even where no text is found by value. ``revs``: the commits being
    merged, where a deletion line the merged files lack is found first (then in the history)."""
    revs = list(dict.fromkeys(revs))
    done = Settled()
    dead, purged = tombs.tombstoned, tombs.purged
    lines = deleted_lines.plan(lay, dead, purged)
    texts = [str(json.loads(line).get("statement", "")) for line in lines.purged_lines]
    copies = traces(lay, purged)
    texts += [t for _, _, t in copies]
    texts += list(extra_texts)
    needles = _needles(texts)
    done.texts = len({t for t in texts if len(t.strip()) >= purge.MIN_SCRUB_CHARS and t != purge.DELETED})
    # copies first, sources last: a settle cut off part-way still finds the text next time
    if needles and (held_here or _derived_hit(lay, needles)):
        plain = [t for t in texts if t != purge.DELETED]
        purge.scrub_derived(lay, plain, lambda hs: _record_hashes(lay, hs))  # daily-log lines recorded by hash
        purge.scrub_local_copies(lay, plain)  # and whatever else a purge scrubs on this machine
        done.scrubbed.append("daily logs and this machine's copies (runtime, reports, sessions, search)")
    if any(f.startswith("patches/") for f, _, _ in copies):
        purge.scrub_patches(lay, purged, "")
    if needles:
        for path in sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else []:
            data = path.read_bytes()
            new = _replace_text(data, needles)
            if new != data:
                jsonl.atomic_write_bytes(path, new)
                done.scrubbed.append(lay.rel(path))
    if purged:

        def candidate(line: bytes) -> bytes | None:
            if not line.strip():
                return line
            try:
                c: Any = json.loads(line)
            except (ValueError, RecursionError):
                return _replace_text(line, needles)
            if isinstance(c, dict) and _candidate_about(c, purged) and c.get("text") != purge.DELETED:
                c = {**c, "text": purge.DELETED, "tags": [], "evidence_refs": []}
                if isinstance(c.get("contested"), dict):
                    c["contested"] = {k: v for k, v in c["contested"].items() if k != "updates"}
                from commonkeep.store.jsonjs import encode_line

                return encode_line(c)
            return _replace_text(line, needles)

        if _rewrite_lines(lay.inbox, candidate):
            done.scrubbed.append(lay.rel(lay.inbox))

        def evidence(line: bytes) -> bytes | None:
            try:
                e: Any = json.loads(line) if line.strip() else None
            except (ValueError, RecursionError):
                return _replace_text(line, needles)
            if (isinstance(e, dict) and purged & _strs(e.get("related_memory_ids"))
                    and e.get("redaction_status") != "deleted"):
                from commonkeep.store.jsonjs import encode_line

                e = {k: v for k, v in e.items() if k not in ("source_excerpt", "excerpt_hash")}
                e["source_summary"], e["redaction_status"] = purge.DELETED, "deleted"
                return encode_line(e)
            return _replace_text(line, needles)

        for path in (lay.evidence, lay.inquiries, lay.reinforcement):
            if _rewrite_lines(path, evidence if path == lay.evidence else (lambda ln: _replace_text(ln, needles))):
                done.scrubbed.append(lay.rel(path))
    if lines.drop:  # every line of a purged record; of an audit-preserving deletion, all but its deletion line
        for path in sorted({p for p, _ in lines.drop}):
            _rewrite_lines(path, deleted_lines.keeper(lines.kept, dead, path))
        done.dropped = [f"{lay.rel(p)}#{rid}" for p, rid in lines.drop]
    done.restored = deleted_lines.put_back(lay, deleted_lines.recover(lay, lines.lacking, revs))
    if needles and (lay.root / ".git").is_dir():  # this clone's audit copies of versions that lost a merge
        for local in sorted((lay.root / ".git").glob("commonkeep-contested*.jsonl")):
            data = local.read_bytes()
            new_data = _replace_text(data, needles)
            if new_data != data:
                jsonl.atomic_write_bytes(local, new_data)
    done.tombstones_merged = _one_tombstone_each(lay)
    if needles:
        purge.rescrub_lines(lay)
    return done


def _one_tombstone_each(lay: Layout) -> int:
    """Both machines deleted one record: keep one tombstone (the smallest id, so every machine
    keeps the same one), ``privacy_purge`` when either was; returns how many were merged."""
    try:
        rows = list(_objects(lay.tombstones.read_bytes()))
    except OSError:
        return 0
    by_rid: dict[str, list[dict[str, Any]]] = {}
    for t in rows:
        rid = t.get("deleted_record_id")
        if isinstance(rid, str):
            by_rid.setdefault(rid, []).append(t)
    extra = {rid: ts for rid, ts in by_rid.items() if len(ts) > 1}
    if not extra:
        return 0
    keep = {rid: min(ts, key=lambda t: str(t.get("id"))) for rid, ts in extra.items()}
    purged_any = {rid for rid, ts in extra.items() if any(t.get("deletion_mode") == PURGE_MODE for t in ts)}
    from commonkeep.store.jsonjs import encode_line

    def one(line: bytes) -> bytes | None:
        try:
            t: Any = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            return line
        rid = t.get("deleted_record_id") if isinstance(t, dict) else None
        if not isinstance(rid, str) or rid not in keep:
            return line
        if t.get("id") != keep[rid].get("id"):
            return None
        if rid in purged_any and t.get("deletion_mode") != PURGE_MODE:
            return encode_line({**t, "deletion_mode": PURGE_MODE})
        return line

    _rewrite_lines(lay.tombstones, one)
    return sum(len(ts) - 1 for ts in extra.values())


