"""The line an audit-preserving deletion keeps, through every merge (``settle``'s record files).

An audit-preserving deletion (``deletion_mode: audit_preserving``) keeps the record's line with
``status: "deleted"`` (the store contract: deleted records stay in the JSONL; only ``status ==
"deleted"`` is left out of the renders). After a merge, for every such record:

- the line the deletion wrote stays, byte for byte, once (two machines deleted it: the smaller
  line, which is what the merge driver keeps too, so every machine keeps the same);
- every other line of the record (an old active version a merge brought back, another machine's
  edit) is dropped;
- a deletion line the merged files lack (a machine that dropped it, or a merge that took the
  other side's file) is put back from the two commits being merged, in the file it was in, or
  else from the history (a sync of an older commonkeep dropped it everywhere; each id is looked
  for once per clone).

A privacy purge (``privacy_purge``) keeps nothing: every line of the record is dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.share.git import run_git
from commonkeep.share.merge import PURGE_MODE, record_id
from commonkeep.store import jsonl
from commonkeep.store.layout import Layout

_GREP_CHUNK = 400  # ids per `git grep` (its argument list stays short)
HISTORY_COMMITS = 200  # the newest commits that name a lacking id, searched for its deletion line
SEARCHED_NAME = "commonkeep-deleted-lines.json"


def is_deleted_line(line: bytes) -> bool:
    """A record line with ``status: "deleted"`` (what an audit-preserving deletion keeps)."""
    try:
        obj: Any = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and obj.get("status") == "deleted"


@dataclass
class Plan:
    """What to do with the record lines of tombstoned ids in the working tree."""

    kept: dict[str, tuple[Path, bytes]] = field(default_factory=dict)  # id -> (file, the deletion line kept)
    drop: list[tuple[Path, str]] = field(default_factory=list)  # (file, id) of each line dropped
    lacking: set[str] = field(default_factory=set)  # audit-deleted ids with no deletion line here
    purged_lines: list[bytes] = field(default_factory=list)  # the lines of purged ids (their texts get scrubbed)


def id_lines(lay: Layout) -> Iterator[tuple[Path, str, bytes]]:
    """``(file, record id, line bytes)`` of every line of the record files that names a record."""
    for path in lay.canonical_files():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for line in data.split(b"\n"):
            rid = record_id(line) if line.strip() else None
            if rid is not None:
                yield path, rid, line


def plan(lay: Layout, dead: set[str], purged: set[str]) -> Plan:
    """Which line of each tombstoned id stays (see the module docstring)."""
    out = Plan()
    audit = dead - purged
    lines: list[tuple[Path, str, bytes]] = []
    for path, rid, line in id_lines(lay):
        if rid not in dead:
            continue
        lines.append((path, rid, line))
        if rid in purged:
            out.purged_lines.append(line)
        if rid in audit and is_deleted_line(line) and (rid not in out.kept or line < out.kept[rid][1]):
            out.kept[rid] = (path, line)
    taken: set[str] = set()
    for path, rid, line in lines:
        if rid in out.kept and rid not in taken and out.kept[rid] == (path, line):
            taken.add(rid)  # the first copy of the kept line, in its file
            continue
        out.drop.append((path, rid))
    out.lacking = audit - set(out.kept)
    return out


def keeper(kept: dict[str, tuple[Path, bytes]], dead: set[str], path: Path) -> Callable[[bytes], bytes | None]:
    """A line filter for ``path``: the kept deletion line of each id once, no other line of a dead id."""
    done: set[str] = set()

    def keep(line: bytes) -> bytes | None:
        rid = record_id(line) if line.strip() else None
        if rid is None or rid not in dead:
            return line
        if rid in kept and rid not in done and kept[rid] == (path, line):
            done.add(rid)
            return line
        return None

    return keep


def with_content(lay: Layout, ids: set[str]) -> set[str]:
    """The ids of ``ids`` whose audit-preserving tombstone says a record line was deleted (it has a
    ``content_hash``; a deleted candidate that was never promoted has none, and no line to keep)."""
    try:
        data = lay.tombstones.read_bytes()
    except OSError:
        return set()
    out: set[str] = set()
    for line in data.split(b"\n"):
        try:
            t: Any = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            continue
        if (isinstance(t, dict) and t.get("deleted_record_id") in ids and t.get("content_hash")
                and t.get("deletion_mode") != PURGE_MODE):
            out.add(str(t["deleted_record_id"]))
    return out


def found_at(root: Path, rev: str, ids: set[str]) -> dict[str, tuple[str, bytes]]:
    """id -> (file, line) of the deletion lines of ``ids`` that commit ``rev`` holds (record files)."""
    out: dict[str, tuple[str, bytes]] = {}
    todo = sorted(ids)
    for start in range(0, len(todo), _GREP_CHUNK):
        chunk = todo[start:start + _GREP_CHUNK]
        pats = [x for i in chunk for x in ("-e", i)]
        found = run_git(root, "grep", "-l", "-F", *pats, rev, "--", "memory", check=False)
        for name in found.out.splitlines():
            path = name.split(":", 1)[1] if ":" in name else name
            if not is_record_file(path):
                continue
            shown = run_git(root, "show", f"{rev}:{path}", check=False)
            if shown.code != 0:
                continue
            for line in shown.out.encode("utf-8", "surrogateescape").split(b"\n"):
                rid = record_id(line) if line.strip() else None
                if (rid is not None and rid in ids and is_deleted_line(line)
                        and (rid not in out or line < out[rid][1])):
                    out[rid] = (path, line)
    return out


def _searched_file(root: Path) -> Path | None:
    res = run_git(root, "rev-parse", "--absolute-git-dir", check=False)
    return Path(res.out.strip()) / SEARCHED_NAME if res.code == 0 and res.out.strip() else None


def _searched(path: Path) -> set[str]:
    try:
        doc: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return set()
    ids = doc.get("searched") if isinstance(doc, dict) else None
    return {x for x in ids if isinstance(x, str)} if isinstance(ids, list) else set()


def in_history(root: Path, ids: set[str]) -> dict[str, tuple[str, bytes]]:
    """The deletion lines of ``ids`` found in the history of ``HEAD`` (newest first, the commits
    whose changes name one of them; at most ``HISTORY_COMMITS``). Each id is searched once per
    clone: the ids searched are kept in ``<git dir>/commonkeep-deleted-lines.json`` (ids only)."""
    marker = _searched_file(root)
    if marker is None:
        return {}
    done = _searched(marker)
    todo = {i for i in ids if re.fullmatch(r"[\w.:-]+", i)} - done
    out: dict[str, tuple[str, bytes]] = {}
    if not todo:
        return out
    ordered = sorted(todo)
    for start in range(0, len(ordered), _GREP_CHUNK):
        chunk = set(ordered[start:start + _GREP_CHUNK])
        pattern = "|".join(re.escape(i) for i in sorted(chunk))
        log = run_git(root, "log", "--format=%H", "-E", f"-G{pattern}", f"-{HISTORY_COMMITS}", "HEAD", "--",
                      "memory", check=False)
        for commit in log.out.split():
            out.update(found_at(root, commit, chunk - set(out)))
            if not chunk - set(out):
                break
    jsonl.atomic_write_bytes(marker, (json.dumps({"searched": sorted(done | todo)}) + "\n").encode("utf-8"))
    return out


def recover(lay: Layout, lacking: set[str], revs: list[str]) -> dict[str, tuple[str, bytes]]:
    """id -> (file, line): the deletion lines the working tree lacks, from the commits being
    merged (``revs``), else from the history (an older sync dropped them)."""
    wanted = with_content(lay, lacking) if lacking and (revs or (lay.root / ".git").exists()) else set()
    found: dict[str, tuple[str, bytes]] = {}
    for rev in revs if wanted else ():
        found.update(found_at(lay.root, rev, wanted - set(found)))
    if wanted - set(found) and (lay.root / ".git").exists():
        found.update(in_history(lay.root, wanted - set(found)))
    return found


def put_back(lay: Layout, lines: dict[str, tuple[str, bytes]]) -> list[str]:
    """Append each deletion line to its file; returns ``"file#id"`` of what was put back."""
    by_file: dict[str, list[tuple[str, bytes]]] = {}
    for rid, (rel, line) in sorted(lines.items()):
        by_file.setdefault(rel, []).append((rid, line))
    done: list[str] = []
    for rel, items in sorted(by_file.items()):
        path = lay.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with jsonl.file_lock(path):
            data = path.read_bytes() if path.is_file() else b""
            if data and not data.endswith(b"\n"):
                data += b"\n"
            jsonl.atomic_write_bytes(path, data + b"".join(line + b"\n" for _, line in items))
        done += [f"{rel}#{rid}" for rid, _ in items]
    return done


from commonkeep.store.layout import is_record_file  # noqa: E402,F401  (moved there in 0.3; the old name keeps working)
