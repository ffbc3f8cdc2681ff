"""What still waits in ``patches/``: the ops of pending patches, so curation never proposes them twice.

Split out of ``commonkeep.patches.curate`` (which re-exports these names).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

Row = dict[str, Any]


def op_signature(op: dict[str, Any]) -> str:
    """What makes two ops the same change: kind, target and payload (not op id, risk or reason)."""
    keep = ("op", "target_id", "updates", "record", "to_record", "candidate_id", "deletion_mode")
    return json.dumps({k: op.get(k) for k in keep}, sort_keys=True, ensure_ascii=False)


def applied_op_ids(doc: dict[str, Any]) -> set[str]:
    """The op ids a patch file says were applied (anything else in ``applied_ops`` is ignored: a
    hand edit or another machine's file may hold numbers, objects or no list at all)."""
    applied = doc.get("applied_ops")
    return {a for a in applied if isinstance(a, str)} if isinstance(applied, list) else set()


def own_candidates(doc: dict[str, Any]) -> set[str]:
    """The candidates whose ops this patch already applied (a partially applied patch may apply
    the rest of their ops: an ``add`` and the ``contest`` that goes with it)."""
    done = applied_op_ids(doc)
    ops = doc.get("ops")
    return {str(o["candidate_id"]) for o in (ops if isinstance(ops, list) else [])
            if isinstance(o, dict) and o.get("op_id") in done and isinstance(o.get("candidate_id"), str)}


def stale_reason(op: dict[str, Any], status: Mapping[str, Any], own: set[str]) -> str | None:
    """Why an op of a patch no longer applies because its candidate was decided since, else ``None``.

    ``status`` is each candidate's status before this apply (candidate id -> ``new``, ``patched``,
    ``rejected``); ``own`` the candidates this patch already applied ops of (:func:`own_candidates`).
    A candidate that is no longer ``new`` was approved (possibly edited), rejected or promoted by
    another patch: an older op for it would add a second copy of what was decided, or undo it.
    ``delete`` ops are never stale (forgetting stays possible whatever happened to the candidate).
    """
    cid = op.get("candidate_id")
    if not isinstance(cid, str) or cid in own or op.get("op") == "delete":
        return None
    now = status.get(cid)
    if now in (None, "new"):
        return None
    if op.get("op") == "reject_candidate":
        return f"candidate {cid} was already {'patched' if now == 'patched' else now}"
    if now == "rejected":
        return f"its candidate {cid} was rejected"
    return f"its candidate {cid} was already promoted by another patch"


def waiting_in(doc: dict[str, Any], decided: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The ops of a patch that still wait to be applied.

    Every op of a ``proposed`` patch; of a ``partially_applied`` one, the ops neither applied nor
    refused (``skip_reasons``): they were not selected and ``commonkeep apply PATCH --ops`` still
    applies them. An ``applied`` patch, or an op that was refused, holds nothing back. With
    ``decided`` (candidate id -> status), a stale op (:func:`stale_reason`: its candidate was
    decided since) does not wait either: applying it would be skipped.
    """
    ops = doc.get("ops")
    if not isinstance(ops, list):
        return []
    ops = [op for op in ops if isinstance(op, dict)]
    if doc.get("status") == "proposed":
        pass
    elif doc.get("status") != "partially_applied":
        return []
    else:
        refused = doc.get("skip_reasons")
        done = applied_op_ids(doc) | set(refused if isinstance(refused, dict) else ())
        ops = [op for op in ops if op.get("op_id") not in done]
    if decided:
        own = own_candidates(doc)
        ops = [op for op in ops if stale_reason(op, decided, own) is None]
    return ops


@dataclass
class Waiting:
    """What the still-pending patches of ``patches/`` already propose (:func:`waiting_ops`)."""

    ops: dict[str, str] = field(default_factory=dict)  # op_signature -> patch id
    candidates: dict[str, str] = field(default_factory=dict)  # candidate id -> the (oldest) patch id holding its ops
    described: dict[str, str] = field(default_factory=dict)  # candidate id -> "add mem_…, contest mem_…"
    op_ids: dict[str, list[str]] = field(default_factory=dict)  # op signature or candidate id -> its waiting op ids
    by_default: dict[str, bool] = field(default_factory=dict)  # op signature or candidate id -> a plain apply applies it

    def apply_command(self, keys: list[str]) -> str:
        """The command that applies the waiting ops of ``keys`` (signatures or candidate ids, one patch)."""
        pid = self.ops.get(keys[0]) or self.candidates[keys[0]]
        if all(self.by_default.get(k) for k in keys):
            return f"commonkeep apply {pid}"
        return f"commonkeep apply {pid} --ops {','.join(o for k in keys for o in self.op_ids.get(k, []))}"


def waiting_ops(patches_dir: Path) -> Waiting:
    """What the ops still waiting in ``patches_dir`` (:func:`waiting_in`) already propose: by
    :func:`op_signature`, and by candidate (every op that carries a ``candidate_id``)."""
    out = Waiting()
    for path in sorted(patches_dir.glob("*.json")) if patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict):
            continue
        pid = str(doc.get("patch_id") or path.stem)
        plain = doc.get("status") == "proposed"
        for op in waiting_in(doc):
            sig = op_signature(op)
            if sig not in out.ops:
                out.ops[sig] = pid
                out.op_ids[sig] = [str(op.get("op_id"))]
                out.by_default[sig] = plain and bool(op.get("default_selected"))
            cid = op.get("candidate_id")
            if not isinstance(cid, str) or out.candidates.setdefault(cid, pid) != pid:
                continue
            rec = op.get("record") or op.get("to_record")
            what = f"{op.get('op')} {op.get('target_id') or (rec.get('id') if isinstance(rec, dict) else None) or cid}"
            out.described[cid] = f"{out.described[cid]}, {what}" if cid in out.described else what
            out.op_ids.setdefault(cid, []).append(str(op.get("op_id")))
            out.by_default[cid] = out.by_default.get(cid, True) and plain and bool(op.get("default_selected"))
    return out


class SameStatement:
    """The active records' statements while a patch is applied, so no op makes a second active
    record that says the same thing in the same scope (``decide.record_key``: spelling, case and
    spacing aside; one rule may hold in two projects).

    An older patch's ``add`` of a candidate still ``new`` is not stale, yet its statement may have
    become a record since (another candidate with the same text was approved): applying it is
    refused with the id of the record that already says it. The same for a ``supersede``'s new
    record (unless it replaces that very record) and an ``update`` that rewrites a statement.
    """

    def __init__(self, recs: Mapping[str, dict[str, Any]]) -> None:
        self._key = record_key
        self.recs = recs  # the apply's live view of the records (``ops._State.recs``)
        self._keys: dict[str, str] | None = None

    @property
    def keys(self) -> dict[str, str]:
        """Each active record's key, worked out when the first op that writes a statement asks
        (an apply of ops that write none, a confidence or a status, never reads 100,000 statements)."""
        if self._keys is None:
            self._keys = {}
            for rid, r in self.recs.items():
                if r.get("status") == "active":
                    self._keys.setdefault(record_key(r), rid)
        return self._keys

    def _new(self, op: dict[str, Any]) -> tuple[str, str, str | None] | None:
        kind = op.get("op")
        rec = op.get("record") if kind == "add" else op.get("to_record") if kind == "supersede" else None
        if isinstance(rec, dict) and rec.get("status", "active") == "active" and isinstance(rec.get("statement"), str):
            return self._key(rec), str(rec.get("id")), str(op.get("target_id") or "") or None
        upd = op.get("updates")
        target = str(op.get("target_id"))
        if kind == "update" and isinstance(upd, dict) and isinstance(upd.get("statement"), str) and target in self.recs:
            return self._key({**self.recs[target], **upd}), target, target
        return None

    def refuse(self, op: dict[str, Any]) -> str | None:
        """Why ``op`` would leave two active records with one statement, else ``None``."""
        new = self._new(op)
        if new is None:
            return None
        key, rid, replaces = new
        other = self.keys.get(key)
        if other is None or other in (rid, replaces) or (self.recs.get(other) or {}).get("status") != "active":
            return None
        return f"an active record ({other}) already says this; a second copy is not added"

    def took(self, op: dict[str, Any]) -> None:
        """Note an applied op's statement."""
        new = self._new(op)
        if new is not None:
            self.keys[new[0]] = new[1]


_KEYS: dict[int, tuple[Row, Any, Any, str]] = {}  # id(record) -> (record, its statement, its scope, its key)
# A decision works out every record's key twice (its matching context, then the apply's same-statement
# check): at 100,000 records a bound of 100,000 cleared the memo between the two (1.8 s of an approve)
_KEYS_MAX = 400_000


def record_key(rec: Row, *, text_key: str | None = None) -> str:
    """What "the same record" means: the same :func:`statement_key` in the same scope (one rule may
    hold in two projects, as two records). ``text_key``: the statement's key, already known
    (``reviews.statement_words``).

    Remembered per record object while its statement and scope are the same objects (an apply
    compares every active record; ``record_lines`` hands it the same objects each time)."""
    hit = _KEYS.get(id(rec))
    if hit is not None and hit[0] is rec and hit[1] is rec.get("statement") and hit[2] is rec.get("scope"):
        return hit[3]
    key = _record_key(rec, text_key)
    if len(_KEYS) >= _KEYS_MAX:
        _KEYS.clear()
    _KEYS[id(rec)] = (rec, rec.get("statement"), rec.get("scope"), key)  # holds ``rec``: its id is not reused
    return key


def _record_key(rec: Row, text_key: str | None = None) -> str:
    raw = rec.get("scope")
    scope: Row = raw if isinstance(raw, dict) else {}
    text = text_key if text_key is not None else statement_key(str(rec.get("statement", "")))
    return f"{scope.get('type') or 'global'}|{scope.get('project') or ''}|{text}"


@lru_cache(maxsize=65_536)  # every apply compares every active record's statement (SameStatement)
def statement_key(text: str) -> str:
    """A statement as compared for "the same text": folded spelling, case and spacing ignored."""
    from commonkeep.util.normalize import plain

    return re.sub(r"\s+", " ", plain(str(text))).strip().casefold().rstrip(".")


def candidates_named(root: Path | str, ids: list[str]) -> list[Row]:
    """The stored candidates ``ids`` (any status), found by their lines in the inbox without
    parsing the other lines (the CLI decides one candidate in an inbox of thousands); the whole
    inbox is read through ``Store`` when a line is not plainly one of them. ``apply_patch``
    reads the inbox again under the writer lock, so a status changed meanwhile is still seen."""
    from commonkeep.store.core import Store
    from commonkeep.store.jsonl import read_bytes
    from commonkeep.store.layout import Layout
    from commonkeep.store.limits import candidate_limit_problem
    from commonkeep.store.records import candidate_problem

    data = read_bytes(Layout(root).inbox)
    out: list[Row] = []
    for cid in dict.fromkeys(ids):
        at = data.find(json.dumps(cid).encode("utf-8"))
        start, end = data.rfind(b"\n", 0, max(at, 0)) + 1, data.find(b"\n", max(at, 0))
        try:
            row = json.loads(data[start:end if end >= 0 else len(data)]) if at >= 0 else None
        except (ValueError, RecursionError):
            row = None
        if not isinstance(row, dict) or row.get("id") != cid or candidate_problem(row) or candidate_limit_problem(row) \
                or data.count(json.dumps(cid).encode("utf-8")) != 1:
            return list(Store(root, warn=False).candidates())  # not plainly one line: read it all as Store does
        out.append(row)
    return out


def candidates_for(root: Path | str, patch: Row) -> dict[str, Row] | None:
    """The inbox candidates an apply of ``patch`` looks at, by id: those its ops name, found by
    their lines (:func:`candidates_named`), not the whole inbox parsed and checked; ``None``
    (read them all) when an op deletes, since a deletion also finds the record's source
    candidate and scrubs copies of its text (and for a patch naming over a hundred)."""
    ops = [o for o in patch["ops"] if isinstance(o, dict)]
    if any(o.get("op") == "delete" for o in ops):
        return None
    ids = list(dict.fromkeys(str(o["candidate_id"]) for o in ops if o.get("candidate_id")))
    if not ids:
        return {}
    if len(ids) > 100:  # each is a search of the inbox's bytes: past a hundred, one parse is cheaper
        return None
    return {str(c["id"]): c for c in candidates_named(root, ids)}
