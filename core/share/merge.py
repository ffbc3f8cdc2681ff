"""The ``commonkeep-jsonl`` git merge driver: a 3-way merge of JSONL files by record ``id``.

Git calls ``python -m commonkeep.share.merge %O %A %B %P`` (base, ours, theirs, path); the result
is written into OURS and the exit code is 0. Rules, per id:

- present on one side only (new there): kept;
- changed on one side only: that side's line; changed identically: once;
- changed differently on both sides: ours stays, theirs goes to the side file;
- deleted on one side and changed on the other: the deletion wins, the changed line goes to the
  side file;
- deleted on one side, unchanged on the other: deleted.

Order: ours' lines in their order, then theirs' new lines in theirs' order. Lines are copied
byte for byte. Lines that do not parse or carry no ``id`` (and a second line with an id already
seen in the same file) are kept verbatim from both sides, de-duplicated by exact bytes. Blank
lines are dropped. The side file is ``<git dir>/commonkeep-contested.jsonl``: one JSON object per
line (``path``, ``id``, ``kind``, ``line`` = the displaced line, ``kept`` = the line that stays
or ``null``); ``commonkeep share sync`` turns each into a candidate. The driver exits non-zero
(git then reports a conflict and keeps every version) only when a file cannot be read or the
side file cannot be written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
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


def merge_bytes(base: bytes, ours: bytes, theirs: bytes) -> MergeResult:
    """Merge three versions of a JSONL file (pure)."""
    b, o, t = parse(base), parse(ours), parse(theirs)
    out: list[bytes] = []
    seen_plain: set[bytes] = set()
    contested: list[Contested] = []

    def plain(line: bytes) -> None:
        if line not in seen_plain:
            seen_plain.add(line)
            out.append(line)

    for rid, oline in o.order:
        if rid is None:
            plain(oline)
            continue
        tline = t.keyed.get(rid)
        bline = b.keyed.get(rid)
        if tline is not None:
            out.append(oline)
            if tline != oline and bline != tline and bline != oline:
                contested.append(Contested(rid, BOTH_CHANGED, tline, oline))
            elif tline != oline and bline == oline:
                out[-1] = tline  # changed on their side only
        elif bline is None:
            out.append(oline)  # new on our side
        elif bline != oline:
            contested.append(Contested(rid, DELETED_THEIRS, oline, None))  # deletion wins
    for rid, tline in t.order:
        if rid is None:
            plain(tline)
            continue
        if rid in o.keyed:
            continue
        bline = b.keyed.get(rid)
        if bline is None:
            out.append(tline)  # new on their side
        elif bline != tline:
            contested.append(Contested(rid, DELETED_OURS, tline, None))  # deletion wins
    data = b"".join(line + b"\n" for line in out)
    return MergeResult(data, contested)


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
    return {
        "path": path,
        "id": c.id,
        "kind": c.kind,
        "line": c.line.decode("utf-8", "surrogateescape"),
        "kept": None if c.kept is None else c.kept.decode("utf-8", "surrogateescape"),
    }


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
    result = merge_bytes(base, ours, theirs)
    try:
        append_side(side_file(), path, result.contested)  # first: a contested line is never lost
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
