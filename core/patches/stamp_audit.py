"""Stamps no journal explains: what ``audit`` and ``doctor`` name beside unexplained record lines.

A stamp earns auto-apply only when the stamp journal binds it (``commonkeep.gate.stamps``), so a
forged one applies nothing; it is still named, so a person sees that something wrote around the
gate (``docs/security.md``):

- ``forged``: an inbox line claiming a stamp (``autoapply.claimed_stamp``: a host's ``stamped_by`` /
  ``origin``, or the writer's ``--trust``) that the journal does not hold for that candidate id,
  its exact text and this root; a ``stamped_by`` no adapter sets counts as a claim too. Each
  names the patches' ops that used the candidate;
- ``ticked``: an op of a waiting patch commonkeep's curator wrote, marked ``default_selected``, that
  curation never selects (a change of memory from a candidate without a bound stamp; a supersede, a
  contest, an L1 add or a changed statement, which wait for a person whoever stamped them): the file
  was edited. ``apply`` without ``--ops`` skips it (``commonkeep.patches.patch``);
- ``edited``: an op's ``edited`` block (a person's edit, ``patches.verify``) the journal does not hold,
  and an op whose record's scope, layer, tags, conditions or evidence are not what its candidate
  makes, with no bound edit: the patch file was changed; ``apply`` refuses it;
- ``journal``: lines of the journal whose MAC does not verify, and a key that is not private;
- ``apply``: an apply journal (``runtime/journal/*.apply``) that ``apply`` did not write: the next
  writer would have run it, writing records unseen; it is refused (``apply_journal.read``).

A stamp set before commonkeep bound stamps (0.3 and older) is in no journal either: it is named
the same way, and like a forged one it earns nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from commonkeep.patches.purge import DELETED

Row = dict[str, Any]
#: ops that change what memory says (a curator selects them only for a stamped candidate)
CONTENT_OPS = ("add", "update", "supersede", "add_exception", "contest")


@dataclass
class StampProblem:
    """One line or op a stamp journal does not explain."""

    kind: str  # forged | ticked | edited | journal | apply
    file: str
    line: int
    candidate: str
    why: str
    ops: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.file, "line": self.line, "candidate": self.candidate, "why": self.why,
                "ops": self.ops}

    def sentence(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        used = f" (used by {', '.join(self.ops[:5])})" if self.ops else ""
        return f"{where}: {self.candidate + ': ' if self.candidate else ''}{self.why}{used}"


def _claim_words(cand: Row, writer: str) -> str | None:
    """What ``cand`` claims, in words, when it claims a stamp (a known one or not)."""
    from commonkeep.gate.autoapply import HOST_STAMPS, claimed_stamp

    claim = claimed_stamp(cand, writer)
    if claim is not None:
        return f"stamp {claim[0]}"
    prov = cand.get("provenance")
    by = prov.get("stamped_by") if isinstance(prov, dict) else None
    if by and str(by) not in HOST_STAMPS:
        return f"stamped_by {by!r}, which no commonkeep adapter sets"
    return None


def _patches(lay: Any) -> list[tuple[str, Row]]:
    out = []
    for path in sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("ops"), list):
            out.append((lay.rel(path), doc))
    return out


def never_selected(op: Row) -> str | None:
    """Why curation never marks ``op`` selected whatever its candidate's stamp (``curate``: these wait
    for a person), else ``None``."""
    kind = op.get("op")
    if kind in ("supersede", "contest"):
        return f"a {kind} of an existing record"
    if kind == "update" and "statement" in (op.get("updates") or {}):
        return "a change of an existing record's statement"
    body = op.get("record") if kind == "add" else None
    if isinstance(body, dict) and body.get("layer") == "L1":
        return "an L1 identity record (needs commonkeep ratify)"
    return None


def ticked_ops(root: Any, patch: Row, selected: set[str], cands: dict[str, Row]) -> dict[str, str]:
    """Of the ``selected`` ops of ``patch`` (applied without ``--ops``), those a person did not choose
    and curation never selects: in a patch commonkeep's curator wrote, an op that changes memory for a
    candidate without a bound stamp (the file was edited after curation). ``apply`` skips them
    (op id -> why); a person who wants one names it with ``--ops``."""
    if patch.get("generated_by") != "curator" or "_ck" not in str(patch.get("patch_id")):
        return {}
    # the gate here only: an apply of any other patch never loads it
    from commonkeep.gate.autoapply import stamped_trust
    from commonkeep.gate.writer import configured_writer_role

    writer = configured_writer_role(root)
    out = {}
    for op in patch["ops"]:
        oid, cid = str(op.get("op_id")), str(op.get("candidate_id") or "")
        if oid not in selected or op.get("op") not in CONTENT_OPS or not cid or cands.get(cid, {}).get("status") != "new":
            continue  # an op of a decided candidate is refused as stale
        never = never_selected(op)
        if never is not None or stamped_trust(cands.get(cid, {}), writer, root) is None:
            why = (f"it is {never}, which waits for a person" if never else
                   f"its candidate {cid} carries no bound stamp")
            out[oid] = (f"marked selected in the patch file, but {why}, so curation never selected it (the file was "
                        f"edited?); a person applies it by naming it: commonkeep apply {patch['patch_id']} --ops {oid}")
    return out


def _unbound_edit(root: Any, pid: str, op: Row, cands: dict[str, Row], unapplied: bool) -> str | None:
    """Why ``op`` of patch ``pid``, not applied (waiting, or refused), was changed by hand: an ``edited``
    block no person made, or a record its candidate does not make without one (``patches.verify``);
    ``None`` when it is as written. An applied op is left to the record lines' audit: its edit may be
    another machine's (``share sync``), its candidate changed since (an undo gives it a new record id)."""
    from commonkeep.gate import stamps
    from commonkeep.patches.verify import record_differences, sha256, statement_of

    if op.get("op") not in CONTENT_OPS or not unapplied:
        return None  # an applied op may come from another machine's patch (``share sync``), whose journal it is in
    edit = op.get("edited")
    statement = statement_of(op)
    if isinstance(edit, dict):
        if statement is not None and stamps.edit_bound(root, pid, str(op.get("op_id")), sha256(statement)):
            return None
        return ("its `edited` block is not in the stamp journal for this statement: no person made this edit (the "
                "patch file was written by hand); apply refuses it")
    cand = cands.get(str(op.get("candidate_id") or ""))
    if cand is None or DELETED in str(cand.get("text", "")):
        return None
    differs = record_differences(op, cand)
    if differs:
        return (f"its record's {', '.join(differs)} {'is' if len(differs) == 1 else 'are'} not what its candidate makes, "
                "and no person recorded an edit: "
                "the patch file was changed; apply refuses it")
    return None


def _unbound_applies(lay: Any) -> list[StampProblem]:
    from commonkeep.gate import stamps
    from commonkeep.patches.apply_journal import SUFFIX, journal_dir

    folder = journal_dir(lay)
    out = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if not path.name.endswith(SUFFIX) or path.name.startswith("."):
            continue
        try:
            data = path.read_bytes()
            patch_id = str(json.loads(data).get("patch_id") or path.name[: -len(SUFFIX)])
        except (OSError, ValueError, AttributeError, RecursionError):
            data, patch_id = b"", path.name[: -len(SUFFIX)]
        if not stamps.apply_bound(lay.root, patch_id, data):
            out.append(StampProblem("apply", lay.rel(path), 0, "",
                                    "an apply journal commonkeep's apply did not write (the stamp journal does not hold "
                                    "it): the next writer would have written its records unseen; it is not run"))
    return out


def stamp_problems(lay: Any) -> list[StampProblem]:
    """Every forged stamp, ticked op and bad journal line of ``lay``'s root (module doc)."""
    from commonkeep.gate import stamps
    from commonkeep.gate.autoapply import claimed_stamp, stamped_trust
    from commonkeep.gate.writer import configured_writer_role
    from commonkeep.patches.waiting import waiting_in
    from commonkeep.store import jsonl

    writer = configured_writer_role(lay.root)
    out: list[StampProblem] = []
    read = jsonl.read_jsonl(lay.inbox) if lay.inbox.is_file() else jsonl.JsonlRead()
    cands: dict[str, Row] = {}
    forged: dict[str, StampProblem] = {}
    for n, row in enumerate(read.rows):
        if not isinstance(row, dict):
            continue
        cid = str(row.get("id", ""))
        cands[cid] = row
        if row.get("status") != "new" and DELETED in str(row.get("text", "")):
            continue  # a decided candidate whose text a purge scrubbed: its binding went with its text
        claim = claimed_stamp(row, writer)
        words = _claim_words(row, writer)
        if words is None or (claim is not None and stamps.holds(lay.root, row, *claim)):
            continue
        revoked = stamps.revoked(lay.root, row)
        prov = row.get("provenance")
        if revoked and (row.get("status") != "new" or (isinstance(prov, dict) and prov.get("requeued_by"))):
            continue  # a person decided on it: its stamp was withdrawn then, and its line says so
        line = read.line_nos[n] if n < len(read.line_nos) else n + 1
        why = (f"claims {words} and waits again, but a person decided on it (rejected it, or undid its decision): the "
               "line was set back by hand; it earns nothing" if revoked else
               f"claims {words}, but the stamp journal does not bind it to this candidate's id and what its record is "
               "made of (text, folder, layer, tags, conditions) in this root: forged, copied or edited since (or set "
               "before stamps were bound); it earns nothing")
        forged[cid] = StampProblem("forged", lay.rel(lay.inbox), line, cid, why)
    for rel, doc in _patches(lay):
        pid = str(doc.get("patch_id") or rel)
        waiting = {id(op) for op in waiting_in(doc)}
        done = doc.get("applied_ops")
        applied = {str(o) for o in done} if isinstance(done, list) else set()
        curated = doc.get("generated_by") == "curator" and "_ck" in pid
        for op in doc["ops"]:
            if not isinstance(op, dict):
                continue
            cid = str(op.get("candidate_id") or "")
            if cid in forged:
                forged[cid].ops.append(f"{pid} {op.get('op_id')}")
            never = never_selected(op)
            unapplied = id(op) in waiting or str(op.get("op_id")) not in applied  # still waiting, or refused when applied
            if (curated and unapplied and op.get("default_selected") is True and op.get("op") in CONTENT_OPS
                    and cid and (never or stamped_trust(cands.get(cid, {}), writer, lay.root) is None)):
                why = f"it is {never}" if never else "its candidate carries no bound stamp"
                out.append(StampProblem("ticked", rel, 0, cid,
                                        f"{op.get('op_id')} ({op.get('op')}) is marked selected, but {why}, so curation "
                                        "never selects it: the patch file was edited; "
                                        f"`commonkeep apply {pid}` skips it unless a person names it with --ops"))
            edited = _unbound_edit(lay.root, pid, op, cands, unapplied)
            if edited:
                body = op.get("record") if op.get("op") == "add" else op.get("to_record")
                rid = f" {body.get('id')}" if isinstance(body, dict) and body.get("id") else ""
                out.append(StampProblem("edited", rel, 0, cid, f"{op.get('op_id')} ({op.get('op')}{rid}): {edited}"))
    out[:0] = list(forged.values())
    out += _unbound_applies(lay)
    book = stamps.book()
    if book.problem:
        out.append(StampProblem("journal", str(stamps.key_path()), 0, "", book.problem))
    for n, why in book.forged:
        out.append(StampProblem("journal", str(stamps.journal_path()), n, "", f"a stamp journal line that counts for nothing: {why}"))
    return out
