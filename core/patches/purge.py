"""The privacy purge's scrub: every copy of a purged statement outside the canonical records.

A ``delete`` with ``deletion_mode: privacy_purge`` (``commonkeep.patches.patch``) drops the
record and appends a content-free tombstone; this module removes what still holds the text: the
derived search databases (rebuilt later), daily logs, runtime files, reports, session summaries
and older patch files. Daily-log lines it changes are recorded by sha256 only (a patch's
``scrubbed_lines``), so a line that git's ``union`` merge brings back from another machine is
found and scrubbed again (``rescrub_lines``) without the text being kept anywhere.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from commonkeep.store import jsonl
from commonkeep.store.ids import is_record_of, memory_id_for
from commonkeep.store.jsonjs import dumps_pretty
from commonkeep.store.layout import Layout, is_record_file

DELETED = "[deleted]"
# the notes of evidence whose memory was purged, OmpKeep's words (contracts/ompkeep-store.md §4.4)
EVIDENCE_NOTE = "Linked memory was privacy-purged."
MIN_SCRUB_CHARS = 12  # shorter statements are too likely to match unrelated text to scrub by value
DERIVED_TEXT_DIRS = ("daily", "runtime", "reports", "sessions/summaries", "quarantine")
ROOT_TEXT_FILES = ("scratchpad.md",)  # copies a person or an agent keeps at the top of the root
SHARED_TEXT_DIR = "daily"  # shared and merged with git's ``union``: its scrubbed lines are recorded by hash
_HEX64 = re.compile(r"[0-9a-f]{64}")


def drop_search(layout: Layout) -> None:
    """Remove the search databases (rebuilt from the canonical files): SQLite keeps deleted text
    in free pages and FTS segments."""
    if layout.search_dir.is_dir():
        for path in layout.search_dir.iterdir():
            if path.is_file():
                path.unlink()


def line_hash(line: str | bytes) -> str:
    """sha256 (hex) of one line without its newline (a trailing ``\\r`` is part of the newline)."""
    data = line.encode("utf-8") if isinstance(line, str) else line
    return hashlib.sha256(data[:-1] if data.endswith(b"\r") else data).hexdigest()


def scrub_derived(layout: Layout, texts: list[str],
                   record_lines: Callable[[list[str]], None] | None = None) -> None:
    """Privacy purge beyond the canonical files.

    The search databases are derived (``DESIGN.md`` principle 2) and SQLite keeps deleted text in
    free pages and FTS segments, so they are removed here and rebuilt by the ``after_apply``
    listener. In daily logs, runtime files, reports, session summaries, the quarantine
    (``quarantine/lines.jsonl`` and its spilled lines) and ``scratchpad.md`` every occurrence of
    the purged statement (and of the 80-character brief handoffs use) becomes ``[deleted]``.

    Daily logs are shared and merged with git's ``union`` driver, which can bring a scrubbed line
    back from another machine; the sha256 of each daily-log line the scrub changes is handed to
    ``record_lines`` (the patch's ``scrubbed_lines``) before any file is written, so
    ``rescrub_lines`` can find such a line again without its content being kept anywhere.
    """
    drop_search(layout)
    needles = sorted({n for t in texts for n in (t, t[:80]) if len(n.strip()) >= MIN_SCRUB_CHARS}, key=len, reverse=True)
    if not needles:
        return
    writes: list[tuple[str, Path, str]] = []
    hashes: set[str] = set()
    files = [(rel, p) for rel in DERIVED_TEXT_DIRS if (layout.root / rel).is_dir() for p in sorted((layout.root / rel).rglob("*"))]
    files += [("", layout.root / name) for name in ROOT_TEXT_FILES]
    for rel, path in files:
        if not path.is_file() or path.suffix not in (".md", ".json", ".jsonl", ".txt"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = _replaced(text, needles)
        if new != text:
            writes.append((rel, path, new))
            if rel == SHARED_TEXT_DIR:
                kept = set(new.split("\n"))
                hashes.update(line_hash(ln) for ln in text.split("\n")
                              if ln not in kept and len(ln.strip()) >= MIN_SCRUB_CHARS)
    if hashes and record_lines is not None:
        record_lines(sorted(hashes))

    def scrub(data: bytes) -> bytes:  # applied again to the content at rewrite time: OMP may have appended
        return _replaced(data.decode("utf-8", "surrogateescape"), needles).encode("utf-8", "surrogateescape")

    for rel, path, new in writes:
        if rel == SHARED_TEXT_DIR or path.suffix == ".jsonl":
            jsonl.rewrite_bytes(path, scrub)  # others append here (OMP): never lose a line appended meanwhile
        else:  # whole documents only commonkeep writes (reports, runtime JSON, summaries)
            jsonl.atomic_write_bytes(path, new.encode("utf-8"))


def _replaced(text: str, needles: list[str]) -> str:
    """``text`` with every needle, as written and JSON-escaped once or twice (a quarantined line), ``[deleted]``."""
    for n in needles:
        for form in _escaped_forms(n):
            text = text.replace(form, DELETED)
    return text


def _escaped_forms(text: str) -> list[str]:
    once = json.dumps(text, ensure_ascii=False)[1:-1]
    twice = json.dumps(once, ensure_ascii=False)[1:-1]
    ascii_once = json.dumps(text)[1:-1]
    return list(dict.fromkeys([text, once, twice, ascii_once, json.dumps(ascii_once)[1:-1]]))


def _rescrubbed(data: bytes, hashes: set[str]) -> bytes:
    lines = data.split(b"\n")
    for i, ln in enumerate(lines):
        if ln.strip() and line_hash(ln) in hashes:
            lines[i] = DELETED.encode("utf-8") + (b"\r" if ln.endswith(b"\r") else b"")
    return b"\n".join(lines)


def scrubbed_line_hashes(layout: Layout) -> set[str]:
    """The ``scrubbed_lines`` of every patch file (hashes of daily-log lines a purge scrubbed)."""
    out: set[str] = set()
    for path in sorted(layout.patches_dir.glob("*.json")) if layout.patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        found = doc.get("scrubbed_lines") if isinstance(doc, dict) else None
        if isinstance(found, list):
            out.update(x for x in found if isinstance(x, str) and _HEX64.fullmatch(x))
    return out


def scrub_local_copies(layout: Layout, statements: list[str]) -> None:
    """The purge's scrub of everything derived (search databases, daily logs, runtime files,
    reports, session summaries) for ``statements``; ``share sync`` runs it for a purge that came
    from another machine, whose copies here were never shared."""
    scrub_derived(layout, statements)


def rescrub_lines(layout: Layout) -> int:
    """Replace every daily-log line whose sha256 is in a patch's ``scrubbed_lines`` by ``[deleted]``
    (a line a purge scrubbed that a ``union`` merge brought back); returns how many lines.

    Each changed file is rewritten atomically; when any line changed, the search databases are
    removed too (rebuilt from the canonical files), as the purge's own scrub does."""
    base = layout.root / SHARED_TEXT_DIR
    if not base.is_dir():
        return 0
    hashes = scrubbed_line_hashes(layout)
    if not hashes:
        return 0
    count = 0
    for path in sorted(base.rglob("*")):
        if not path.is_file() or path.suffix not in (".md", ".json", ".jsonl", ".txt"):
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        hit = sum(1 for ln in data.split(b"\n") if ln.strip() and line_hash(ln) in hashes)
        if hit:
            jsonl.rewrite_bytes(path, lambda now: _rescrubbed(now, hashes))  # keeps lines appended meanwhile
            count += hit
    if count:
        drop_search(layout)
    return count


def patch_ops(doc: object) -> list[dict[str, Any]]:
    """The ops of a patch file that are objects (none when the file is not a patch of that shape:
    a hand edit, another machine's file)."""
    ops = doc.get("ops") if isinstance(doc, dict) else None
    return [op for op in ops if isinstance(op, dict)] if isinstance(ops, list) else []


def scrub_patches(layout: Layout, ids: set[str], keep: str) -> None:
    """Privacy purge: blank the statement of deleted records in older patch files."""
    for path in sorted(layout.patches_dir.glob("*.json")):
        if path.stem == keep:
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        touched = False
        for op in patch_ops(doc):
            for key in ("record", "to_record"):
                rec = op.get(key)
                if isinstance(rec, dict) and isinstance(rec.get("id"), str) and rec["id"] in ids:
                    rec["statement"], rec["tags"] = DELETED, []
                    touched = True
            upd = op.get("updates")
            if isinstance(op.get("target_id"), str) and op["target_id"] in ids and isinstance(upd, dict) and "statement" in upd:
                upd["statement"] = DELETED
                touched = True
            before = op.get("before")  # what a decision replaced, kept for its undo
            if isinstance(op.get("target_id"), str) and op["target_id"] in ids and isinstance(before, dict) and "statement" in before:
                before["statement"], before["tags"] = DELETED, []
                touched = True
        if touched:
            jsonl.atomic_write_bytes(path, dumps_pretty(doc).encode("utf-8"))


def texts_in(name: str, data: bytes, ids: set[str]) -> dict[str, set[str]]:
    """record id -> the statements of ``ids`` that file ``name`` (its bytes ``data``) holds: record
    lines, candidates about them, patch ops."""
    out: dict[str, set[str]] = {}

    def put(rid: str, text: Any) -> None:
        if isinstance(text, str) and text != DELETED and len(text.strip()) >= MIN_SCRUB_CHARS:
            out.setdefault(rid, set()).add(text)

    if is_record_file(name):
        for r in _objects(data):
            if _named(r.get("id"), ids):
                put(str(r["id"]), r.get("statement"))
    elif name == INBOX:
        for c in _objects(data):
            if _candidate_about(c, ids):
                put(_about_id(c, ids), c.get("text"))
    elif name.startswith("patches/") and name.endswith(".json"):
        try:
            doc: Any = json.loads(data)
        except (ValueError, RecursionError):
            return out
        ops = doc.get("ops") if isinstance(doc, dict) else None
        for op in ops if isinstance(ops, list) else []:
            if not isinstance(op, dict):
                continue
            for key in ("record", "to_record"):
                rec = op.get(key)
                if isinstance(rec, dict) and _named(rec.get("id"), ids):
                    put(str(rec["id"]), rec.get("statement"))
            upd = op.get("updates")
            if _named(op.get("target_id"), ids) and isinstance(upd, dict):
                put(str(op["target_id"]), upd.get("statement"))
    return out


def _needles(texts: Iterable[str]) -> list[str]:
    keep = {n for t in texts for n in (t, t[:80]) if len(n.strip()) >= MIN_SCRUB_CHARS and n != DELETED}
    forms = set(keep)
    for n in keep:
        forms.add(json.dumps(n, ensure_ascii=False)[1:-1])
        forms.add(json.dumps(n, ensure_ascii=True)[1:-1])
    return sorted(forms, key=len, reverse=True)


def _derived_hit(lay: Layout, needles: list[str]) -> bool:
    for rel in DERIVED_TEXT_DIRS:
        base = lay.root / rel
        for path in base.rglob("*") if base.is_dir() else []:
            if path.is_file() and path.suffix in (".md", ".json", ".jsonl", ".txt"):
                try:
                    text = path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if any(n in text for n in needles):
                    return True
    return False


INBOX = "inbox/captured.jsonl"


def _objects(data: bytes) -> Iterable[dict[str, Any]]:
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            obj: Any = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            yield obj


def _named(value: Any, ids: set[str]) -> bool:
    """``value`` is one of ``ids`` (an id that is not a string names none, and never raises)."""
    return isinstance(value, str) and value in ids


def _candidate_about(c: dict[str, Any], ids: set[str]) -> bool:
    """A candidate that holds a statement of one of ``ids``: its source candidate, or a
    contested candidate ``share sync`` made of another machine's version of it."""
    cid = c.get("id")
    if isinstance(cid, str) and (memory_id_for(cid) in ids or any(is_record_of(cid, i) for i in ids)):
        return True
    contested = c.get("contested")
    if isinstance(contested, dict) and _named(contested.get("id"), ids):
        return True
    return "contested" in _strs(c.get("tags")) and bool(ids & _strs(c.get("matched_memory_ids")))


def _about_id(c: dict[str, Any], ids: set[str]) -> str:
    """The record id (of ``ids``) candidate ``c`` holds a statement of."""
    con = c.get("contested")
    if isinstance(con, dict) and _named(con.get("id"), ids):
        return str(con["id"])
    rid = memory_id_for(str(c.get("id")))
    return rid if rid in ids else next(iter(sorted(ids & _strs(c.get("matched_memory_ids")))), rid)


def _strs(value: Any) -> set[str]:
    """The strings of a JSON list (a line from another machine or a hand edit may hold anything)."""
    return {x for x in value if isinstance(x, str)} if isinstance(value, list) else set()
