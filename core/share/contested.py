"""The merge driver's side file becomes contested candidates for the librarian.

Each entry of ``<git dir>/commonkeep-contested.jsonl`` (a record version that lost the merge)
becomes one candidate tagged ``contested`` that names the record, the kind of conflict and, for
a field-by-field merge, the other machine's values of the fields in conflict
(``contested.updates``: e.g. the ``status``/``superseded_by`` of a supersession, so it can be
restored). Entries of records purged for privacy become no candidate (only the fact is kept);
entries of non-record files (a candidate, a tombstone) are kept in the local audit copy
``commonkeep-contested.done.jsonl``. Creating candidates is idempotent: an entry already in the
side file twice (a sync killed inside the merge driver, then run again) or already turned into
a candidate by a sync that died before clearing the side file makes no second candidate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.share.merge import SIDE_FILE_NAME
from commonkeep.store.layout import is_record_file

DONE_FILE_NAME = SIDE_FILE_NAME.replace(".jsonl", ".done.jsonl")


@dataclass
class FromSide:
    created: list[str] = field(default_factory=list)  # candidate ids
    failed: int = 0  # entries that could not become candidates (kept in the side file)
    notes: list[str] = field(default_factory=list)


def _statement(entry: dict[str, Any]) -> str:
    line = str(entry.get("line", ""))
    try:
        row: Any = json.loads(line)
    except (ValueError, RecursionError):
        row = None
    if isinstance(row, dict):
        for key in ("statement", "text", "question", "summary"):
            value = row.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return line


def _already(root: Path) -> set[tuple[str, str, str, str]]:
    """(path, id, kind, text) of the contested candidates already in the inbox."""
    from commonkeep.store.core import Store

    out: set[tuple[str, str, str, str]] = set()
    for c in Store(root, warn=False).candidates():
        con = c.get("contested")
        if isinstance(con, dict):
            out.add((str(con.get("path")), str(con.get("id")), str(con.get("kind")), str(c.get("text"))))
    return out


def candidates_from_side(root: Path, side: Path, remote: str | None, commit: str | None,
                         role: str | None, purged: set[str]) -> FromSide:
    from commonkeep.gate.capture import capture
    from commonkeep.secrets import redact
    from commonkeep.store.candidates import default_provenance
    from commonkeep.store.limits import MAX_TEXT_CHARS

    rep = FromSide()
    try:
        raw = side.read_text(encoding="utf-8")
    except FileNotFoundError:
        return rep
    if not raw.strip():
        return rep
    keep: list[str] = []  # entries that could not become candidates stay in the side file
    done: list[str] = []
    seen: set[tuple[str, str, str, str]] = set()
    have = _already(root)
    where = f"git:{remote or 'local'}@{commit or 'unknown'}"
    for text_line in raw.splitlines():
        if not text_line.strip():
            continue
        try:
            entry: Any = json.loads(text_line)
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            kind = str(entry.get("kind", ""))
            rid, path = str(entry.get("id", "")), str(entry.get("path", ""))
            key = (path, rid, kind, str(entry.get("line", "")))
            if key in seen:
                continue  # the same conflict set aside twice (a merge cut off and run again)
            seen.add(key)
            if rid in purged:
                # A privacy purge means the content must not come back: no candidate, and only the
                # fact (never the text) is kept in the local audit copy.
                done.append(json.dumps({"path": path, "id": rid, "kind": kind, "dropped": "privacy_purge"}))
                rep.notes.append(f"another machine's version of {rid} was dropped: the record was purged for privacy")
                continue
            if not is_record_file(path):
                # a candidate, tombstone, evidence or inquiry line both machines changed: ours
                # stays in the file; the other version is kept in the local audit copy, not turned
                # into a memory candidate (it is not a statement of memory)
                done.append(text_line)
                rep.notes.append(f"{path}: another machine's version of {rid} lost the merge; "
                                 f"it is kept in {side.with_name(DONE_FILE_NAME)}")
                continue
            statement = _statement(entry)[:MAX_TEXT_CHARS]
            stored = redact(statement.strip()).text  # the text capture writes, which ``have`` holds
            if (path, rid, kind, stored) in have:
                done.append(text_line)  # a sync that died before clearing the side file made it already
                continue
            deleted = kind in ("deleted_ours", "deleted_theirs")
            updates = entry.get("updates") if isinstance(entry.get("updates"), dict) else None
            why = ("deleted on one side, changed on the other; the deletion won" if deleted
                   else "changed differently on both sides; this version lost the merge"
                   + (f" (fields in conflict: {', '.join(sorted(updates))})" if updates else ""))
            contested: dict[str, Any] = {"path": path, "id": rid, "kind": kind, "remote": remote, "commit": commit}
            if updates:
                contested["updates"] = updates
            cand = capture(
                root, statement,
                source_type="share",
                source_ref=f"{where}:{path}#{rid}",
                tags=["contested", "share", *(["deleted"] if deleted else [])],
                evidence_refs=[f"{where}:{path}#{rid}", f"{path}#{rid}"],
                provenance=default_provenance(agent="commonkeep-share", role=role),
                match_kind="potential_conflict",
                matched_memory_ids=[rid],
                match_reasons=[f"{path}: {why} (git merge of {where})"],
                verification_status="review_required",
                contested=contested,
            )
            have.add((path, rid, kind, stored))
            rep.created.append(str(cand.candidate["id"]))
            done.append(text_line)
        except (ValueError, RecursionError, BadInput) as exc:
            keep.append(text_line)
            rep.notes.append(f"a side-file entry could not become a candidate ({exc}); it stays in {side}")
    rep.failed = len(keep)
    if done:  # an audit copy of what was turned into candidates, local to this clone
        with open(side.with_name(DONE_FILE_NAME), "a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in done))
    side.write_text("".join(line + "\n" for line in keep), encoding="utf-8")
    return rep
