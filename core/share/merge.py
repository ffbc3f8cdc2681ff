"""The ``commonkeep-jsonl`` git merge driver: a 3-way merge of JSONL files by record ``id``.

Git calls ``python -m commonkeep.share.merge %O %A %B %P`` (base, ours, theirs, path); the result
is written into OURS and the exit code is 0. Rules, per id:

- present on one side only (new there): kept;
- changed on one side only: that side's line; changed identically: once;
- changed differently on both sides (or new on both): merged field by field (JSON objects,
  nested objects too): a field changed on one side only takes that side's value; a field both
  sides set to dates takes the later moment (``created_at`` the earlier; ``_instant``), so dates alone never
  contest; a tombstone's ``deletion_mode`` is ``privacy_purge`` when either side says so; only
  fields changed differently on both sides conflict: ours stays for those, and theirs' line goes
  to the side file with the conflicting fields' other values (``updates``);
- deleted on one side and changed on the other: the deletion wins, the changed line goes to the
  side file;
- deleted on one side, unchanged on the other: deleted.

An id the running sync lists as purged (``<git dir>/commonkeep-sync.json``, written before the
merge) is dropped from every side and never set aside: a tombstone wins over every version. An id
it lists as deleted but not purged (an audit-preserving deletion) keeps the one line the deletion
wrote (``status: "deleted"``, byte for byte; both machines deleted it: the smaller line, so every
machine keeps the same) wherever a side still has it; the other side's changed version goes to
the side file (``deleted_ours``/``deleted_theirs``), as for a deletion that removed the line.

Order: ours' lines in their order, then theirs' new lines in theirs' order. Lines are copied
byte for byte. Lines that do not parse or carry no ``id`` (and a second line with an id already
seen in the same file) are kept verbatim from both sides, de-duplicated by exact bytes. Blank
lines are dropped. The side file is ``<git dir>/commonkeep-contested.jsonl``: one JSON object per
line (``path``, ``id``, ``kind``, ``line`` = the displaced line, ``kept`` = the line that stays
or ``null``, ``updates`` = the displaced values of the fields in conflict, when merged by field); ``commonkeep share sync`` turns each into a candidate. The driver exits non-zero
(git then reports a conflict and keeps every version) only when a file cannot be read or the
side file cannot be written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SIDE_FILE_NAME = "commonkeep-contested.jsonl"

# kinds of side-file entries
BOTH_CHANGED = "both_changed"  # theirs' line lost to ours'
DELETED_OURS = "deleted_ours"  # we deleted it, they changed it: their changed line
DELETED_THEIRS = "deleted_theirs"  # they deleted it, we changed it: our changed line


@dataclass
class Side:
    """One version of the file: keyed lines (id -> line) in order, and the lines without an id."""

    keyed: dict[str, bytes] = field(default_factory=dict)
    order: list[tuple[str | None, bytes]] = field(default_factory=list)  # (id or None, line)


@dataclass
class Contested:
    id: str
    kind: str
    line: bytes
    kept: bytes | None
    updates: dict[str, Any] | None = None  # theirs' values of the fields in conflict (a field-by-field merge)


@dataclass
class MergeResult:
    data: bytes
    contested: list[Contested]


def record_id(line: bytes) -> str | None:
    """The string ``id`` of a JSON object line, or ``None``."""
    try:
        obj: Any = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(obj, dict):
        rid = obj.get("id")
        if isinstance(rid, str) and rid:
            return rid
    return None


def parse(data: bytes) -> Side:
    side = Side()
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        rid = record_id(line)
        if rid is not None and rid not in side.keyed:
            side.keyed[rid] = line
            side.order.append((rid, line))
        else:
            side.order.append((None, line))
    return side


_MISSING: Any = object()
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?")
PURGE_MODE = "privacy_purge"


def _is_date(value: Any) -> bool:
    return isinstance(value, str) and _DATE.fullmatch(value) is not None and _instant(value) is not None


def _instant(value: str) -> datetime | None:
    """The moment a date string names (a date alone: its midnight UTC; no offset: UTC), so that
    ``…T10:00+05:00`` is earlier than ``…T06:00Z`` and ``.5Z`` later than ``Z``, which string
    order gets wrong. ``None`` for a date that does not exist (``2026-02-30``)."""
    text = value.replace(" ", "T", 1)
    text = text[:-1] + "+00:00" if text.endswith("Z") else text
    if len(text) > 19 and text[-5] in "+-" and text[-3] != ":":  # +0500 -> +05:00
        text = f"{text[:-2]}:{text[-2:]}"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _instant_key(value: str) -> tuple[datetime, str]:
    moment = _instant(value)
    assert moment is not None  # ``_is_date`` checked it
    return moment, value


def merge_fields(base: Any, ours: dict[str, Any], theirs: dict[str, Any],
                 prefix: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """3-way merge of two JSON objects field by field: ``(merged, conflicts)``, where
    ``conflicts`` maps each field changed differently on both sides (dotted path) to theirs'
    value; ours' value stays for it. ``base`` is ``None`` (or not an object) when the line is new
    on both sides: every differing field is then changed on both."""
    b: dict[str, Any] = base if isinstance(base, dict) else {}
    merged: dict[str, Any] = {}
    conflicts: dict[str, Any] = {}
    for key in [*ours, *(k for k in theirs if k not in ours)]:
        bv, ov, tv = b.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if ov == tv or tv == bv:
            value = ov
        elif ov == bv:
            value = tv
        elif isinstance(ov, dict) and isinstance(tv, dict) and (bv is _MISSING or isinstance(bv, dict)):
            value, sub = merge_fields(bv if isinstance(bv, dict) else None, ov, tv, f"{prefix}{key}.")
            conflicts.update(sub)
        elif _is_date(ov) and _is_date(tv):
            # dates alone never contest: the earlier creation, the later of any other date (the
            # string as that side wrote it)
            value = min(ov, tv, key=_instant_key) if key == "created_at" else max(ov, tv, key=_instant_key)
        elif key == "deletion_mode" and PURGE_MODE in (ov, tv):
            value = PURGE_MODE  # a privacy purge wins over an audit-preserving deletion
        else:
            value = ov
            conflicts[prefix + key] = None if tv is _MISSING else tv
        if value is not _MISSING:
            merged[key] = value
    return merged, conflicts


def _as_object(line: bytes | None) -> dict[str, Any] | None:
    if line is None:
        return None
    try:
        obj: Any = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _merge_line(bline: bytes | None, oline: bytes, tline: bytes) -> tuple[bytes, dict[str, Any] | None]:
    """Both sides changed one id differently (or added it with different lines): the merged line
    and, when some field conflicts, theirs' values of the conflicting fields."""
    from commonkeep.store.jsonjs import encode_line

    o, t = _as_object(oline), _as_object(tline)
    if o is None or t is None:
        return oline, {}
    merged, conflicts = merge_fields(_as_object(bline), o, t)
    if merged == o:
        return oline, conflicts or None
    if merged == t and not conflicts:
        return tline, None
    return encode_line(merged), conflicts or None


def _is_deleted(line: bytes | None) -> bool:
    obj = _as_object(line)
    return obj is not None and obj.get("status") == "deleted"


def _deletion_kept(rid: str, bline: bytes | None, oline: bytes | None,
                   tline: bytes | None) -> tuple[bytes, list[Contested]] | None:
    """An audit-preserving deletion of ``rid``: the line it wrote (``status: "deleted"``) wins over
    every other version, and a side's changed version is set aside; ``None`` when neither side has
    such a line (the ordinary rules apply, and the sync drops what is left)."""
    deleted = sorted({x for x in (oline, tline) if x is not None and _is_deleted(x)})
    if not deleted:
        return None
    kept = deleted[0]  # both machines deleted it: the smaller line, the same on every machine
    contested = [Contested(rid, kind, line, kept) for kind, line in ((DELETED_THEIRS, oline), (DELETED_OURS, tline))
                 if line is not None and line != bline and not _is_deleted(line) and not _held_by(line, kept)]
    return kept, contested


def _held_by(line: bytes, kept: bytes) -> bool:
    """``line`` says nothing the deletion line does not: they differ in ``status`` and
    ``updated_at`` only (e.g. both machines promoted the same candidate, then one deleted it)."""
    a, b = _as_object(line), _as_object(kept)
    skip = ("status", "updated_at")
    return a is not None and b is not None and ({k: v for k, v in a.items() if k not in skip}
                                                == {k: v for k, v in b.items() if k not in skip})


def merge_bytes(base: bytes, ours: bytes, theirs: bytes, purged: frozenset[str] = frozenset(),
                deleted: frozenset[str] = frozenset()) -> MergeResult:
    """Merge three versions of a JSONL file (pure); ids in ``purged`` are dropped from every side,
    ids in ``deleted`` (and not in ``purged``) keep the line their deletion wrote."""
    b, o, t = parse(base), parse(ours), parse(theirs)
    out: list[bytes] = []
    seen_plain: set[bytes] = set()
    contested: list[Contested] = []
    kept_only = deleted - purged

    def plain(line: bytes) -> None:
        if line not in seen_plain:
            seen_plain.add(line)
            out.append(line)

    def deletion(rid: str, oline: bytes | None, tline: bytes | None) -> bool:
        won = _deletion_kept(rid, b.keyed.get(rid), oline, tline) if rid in kept_only else None
        if won is not None:
            out.append(won[0])
            contested.extend(won[1])
        return won is not None

    for rid, oline in o.order:
        if rid is None:
            plain(oline)
            continue
        if rid in purged:
            continue  # a tombstone wins over every version, and nothing of it is set aside
        tline = t.keyed.get(rid)
        if deletion(rid, oline, tline):
            continue
        bline = b.keyed.get(rid)
        if tline is not None:
            if tline == oline or bline == tline:
                out.append(oline)
            elif bline == oline:
                out.append(tline)  # changed on their side only
            else:
                line, conflicts = _merge_line(bline, oline, tline)
                out.append(line)
                if conflicts is not None:
                    contested.append(Contested(rid, BOTH_CHANGED, tline, line, conflicts or None))
        elif bline is None:
            out.append(oline)  # new on our side
        elif bline != oline:
            contested.append(Contested(rid, DELETED_THEIRS, oline, None))  # deletion wins
    for rid, tline in t.order:
        if rid is None:
            plain(tline)
            continue
        if rid in o.keyed or rid in purged or deletion(rid, None, tline):
            continue
        bline = b.keyed.get(rid)
        if bline is None:
            out.append(tline)  # new on their side
        elif bline != tline:
            contested.append(Contested(rid, DELETED_OURS, tline, None))  # deletion wins
    data = b"".join(line + b"\n" for line in out)
    return MergeResult(data, contested)


JOURNAL_NAME = "commonkeep-sync.json"


def journal_ids(gitdir: Path, key: str) -> frozenset[str]:
    """The record ids the running sync lists under ``key`` (``purged``, ``tombstoned``) in its
    journal; no journal: none."""
    try:
        doc: Any = json.loads((gitdir / JOURNAL_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return frozenset()
    ids = doc.get(key) if isinstance(doc, dict) else None
    return frozenset(x for x in ids if isinstance(x, str)) if isinstance(ids, list) else frozenset()


def purged_ids(gitdir: Path) -> frozenset[str]:
    """The record ids the running sync lists as purged (its journal; no journal: none)."""
    return journal_ids(gitdir, "purged")


def side_file(cwd: Path | None = None) -> Path:
    """``<git dir>/commonkeep-contested.jsonl`` of the repository at ``cwd`` (git runs drivers at the top)."""
    here = cwd or Path.cwd()
    try:
        proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=here, capture_output=True,
                              text=True, check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            return Path(proc.stdout.strip()) / SIDE_FILE_NAME
    except OSError:
        pass
    return here / ".git" / SIDE_FILE_NAME


def side_entry(path: str, c: Contested) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "path": path,
        "id": c.id,
        "kind": c.kind,
        "line": c.line.decode("utf-8", "surrogateescape"),
        "kept": None if c.kept is None else c.kept.decode("utf-8", "surrogateescape"),
    }
    if c.updates:
        entry["updates"] = c.updates
    return entry


def append_side(side: Path, path: str, contested: list[Contested]) -> None:
    if not contested:
        return
    text = "".join(json.dumps(side_entry(path, c), ensure_ascii=True) + "\n" for c in contested)
    side.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(side, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 4:
        print("usage: python -m commonkeep.share.merge BASE OURS THEIRS PATH", file=sys.stderr)
        return 2
    base_p, ours_p, theirs_p, path = args
    try:
        base, ours, theirs = (Path(p).read_bytes() for p in (base_p, ours_p, theirs_p))
    except OSError as exc:
        print(f"commonkeep-jsonl: cannot read {exc.filename}: {exc.strerror}; git keeps every version as a conflict",
              file=sys.stderr)
        return 1
    side = side_file()
    result = merge_bytes(base, ours, theirs, purged_ids(side.parent), journal_ids(side.parent, "tombstoned"))
    try:
        append_side(side, path, result.contested)  # first: a contested line is never lost
        Path(ours_p).write_bytes(result.data)
    except OSError as exc:
        print(f"commonkeep-jsonl: cannot write {exc.filename}: {exc.strerror}; git keeps every version as a conflict",
              file=sys.stderr)
        return 1
    if result.contested:
        print(f"commonkeep-jsonl: {path}: {len(result.contested)} contested record(s) set aside for review",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
