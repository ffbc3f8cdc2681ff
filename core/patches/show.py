"""A patch's ops as a person reads them, the way ``git add -p`` shows a hunk.

``curate`` and ``patches --show`` print through here: each op's header (selected or not, id, op,
target, risk, reason, and once applied its outcome), then the text it writes — ``+`` the new
statement, ``-`` the one it replaces or deletes, ``~`` fields it changes without touching the
statement — and the candidate it came from when that says something else. Every line goes
through ``terminal_safe``: stored text can neither move the cursor nor hide itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Row = dict[str, Any]
_SHOWN_FIELDS = ("statement", "tags", "evidence", "related_memory_ids")


def _statement(row: Mapping[str, Any] | None) -> str | None:
    value = row.get("statement") if isinstance(row, Mapping) else None
    return value if isinstance(value, str) else None


def _scope(scope: Any) -> str:
    if isinstance(scope, Mapping):
        where = str(scope.get("type") or "global")
        name = scope.get("project_name") or scope.get("name") or scope.get("path")
        return f"{where} {name}" if name else where
    return str(scope or "global")


def _changes(updates: Mapping[str, Any], before: Mapping[str, Any] | None) -> list[str]:
    """``field old -> new`` for the fields an update changes, other than the statement."""
    out: list[str] = []
    for key, new in updates.items():
        if key == "statement":
            continue
        old = before.get(key) if isinstance(before, Mapping) else None
        if isinstance(new, list):
            added = len(new) - (len(old) if isinstance(old, list) else 0)
            out.append(f"{key}: {len(new)} item(s)" + (f" ({added:+d})" if added else ""))
        else:
            out.append(f"{key}: {old if old is not None else '(unset)'} -> {new}")
    return out


def op_lines(op: Mapping[str, Any], *, records: Mapping[str, Row], candidates: Mapping[str, Row],
             outcome: str | None = None) -> list[str]:
    """The lines that show one op: its header, then ``+``/``-``/``~`` lines of what it writes.

    ``records`` and ``candidates`` map ids to the current rows (for the statement an op replaces
    and the text it was proposed from); ``outcome`` is ``applied`` or a skip reason, once known."""
    mark = "x" if op.get("default_selected") else " "
    record = op.get("record") if isinstance(op.get("record"), Mapping) else None
    target = op.get("target_id") or (record or {}).get("id") or op.get("candidate_id") or ""
    head = f"[{mark}] {op.get('op_id')} {op.get('op')} {target}  risk {op.get('risk')}"
    if op.get("reason"):
        head += f"  ({op['reason']})"
    if outcome:
        head += f"  -> {outcome}"
    lines = [head]
    before = records.get(str(op.get("target_id"))) if op.get("target_id") else None
    kind = op.get("op")
    if kind == "add" and record is not None:
        lines.append(f"    + {_statement(record) or ''}")
        lines.append(f"      {record.get('layer', '')}, {_scope(record.get('scope'))}")
    elif kind == "supersede":
        new = op.get("to_record") if isinstance(op.get("to_record"), Mapping) else None
        lines.append(f"    - {_statement(before) or '(record not found)'}")
        lines.append(f"    + {_statement(new) or ''}")
    elif kind == "update":
        updates: Mapping[str, Any] = op["updates"] if isinstance(op.get("updates"), Mapping) else {}
        if isinstance(updates.get("statement"), str):
            lines.append(f"    - {_statement(before) or '(record not found)'}")
            lines.append(f"    + {updates['statement']}")
        else:
            lines.append(f"      {_statement(before) or '(record not found)'}")
        lines += [f"    ~ {c}" for c in _changes(updates, before)]
    elif kind == "delete":
        mode = op.get("deletion_mode") or "audit_preserving"
        lines.append(f"    - {_statement(before) or '(record not found or already gone)'}")
        lines.append(f"      deleted ({mode}, reason {op.get('deletion_reason') or 'other'})")
    elif kind == "reject_candidate":
        cand = candidates.get(str(op.get("candidate_id")))
        lines.append(f"    x {cand.get('text', '') if cand else '(candidate not found)'}")
    else:
        lines.append(f"      {_statement(before) or '(record not found)'}")
        extra = {k: v for k, v in op.items() if k not in {"op_id", "op", "target", "target_id", "candidate_id", "reason",
                                                          "risk", "default_selected", "record", "updates"}}
        lines += [f"    ~ {k}: {v}" for k, v in extra.items()]
    cand = candidates.get(str(op.get("candidate_id"))) if op.get("candidate_id") else None
    proposed = (record or {}).get("statement") or ((op.get("updates") or {}).get("statement") if isinstance(op.get("updates"), Mapping) else None)
    if cand and kind != "reject_candidate" and cand.get("text") and cand.get("text") != proposed:
        lines.append(f"      from candidate {cand.get('id')}: {cand.get('text')}")
    from commonkeep.store.render import terminal_safe  # here: an apply imports it while it waits for the disk

    return [terminal_safe(line) for line in lines]


def patch_lines(patch: Mapping[str, Any], *, records: Mapping[str, Row], candidates: Mapping[str, Row]) -> list[str]:
    """A whole patch: who proposed it and when, its status, then every op with its outcome."""
    lines = [f"patch {patch.get('patch_id')}  {patch.get('status', 'proposed')}  {patch.get('summary') or ''}".rstrip()]
    lines.append(f"  created {patch.get('created_at')} by {patch.get('generated_by') or 'unknown'}"
                 + (f"; applied {patch['applied_at']}" if patch.get("applied_at") else "")
                 + (f" by {patch['applied_by']}" if patch.get("applied_by") else ""))
    # a hand-edited file may hold anything in these lists: shown as far as it reads, never a traceback
    lists: list[list[Any]] = [v if isinstance(v := patch.get(k), list) else [] for k in ("applied_ops", "skipped_ops", "ops")]
    applied, skipped = ({x for x in lst if isinstance(x, str)} for lst in lists[:2])
    ops = lists[2]
    reasons: Mapping[str, Any] = patch["skip_reasons"] if isinstance(patch.get("skip_reasons"), Mapping) else {}
    for op in ops:
        if not isinstance(op, Mapping):
            continue
        oid = str(op.get("op_id"))
        outcome = "applied" if oid in applied else (f"skipped: {reasons.get(oid, 'not selected')}" if oid in skipped else None)
        lines += ["  " + line for line in op_lines(op, records=records, candidates=candidates, outcome=outcome)]
    return lines


def written_lines(op: Mapping[str, Any]) -> list[str]:
    """What an applied op wrote, for ``apply``'s report: its id and kind, and the statement it
    stored (``+``) or the record it deleted (``-``)."""
    record = op.get("record") if isinstance(op.get("record"), Mapping) else None
    updates: Mapping[str, Any] = op["updates"] if isinstance(op.get("updates"), Mapping) else {}
    to_record = op.get("to_record") if isinstance(op.get("to_record"), Mapping) else None
    target = op.get("target_id") or (record or {}).get("id") or op.get("candidate_id") or ""
    head = f"{op.get('op_id')} {op.get('op')} {target}"
    kind = op.get("op")
    if kind == "add" and record is not None:
        body = [f"+ {_statement(record) or ''}"]
    elif kind == "supersede" and to_record is not None:
        body = [f"+ {_statement(to_record) or ''}  (replaces {target})"]
    elif kind == "update" and isinstance(updates.get("statement"), str):
        body = [f"+ {updates['statement']}"]
    elif kind == "update":
        body = [f"~ {', '.join(sorted(k for k in updates if k != 'statement')) or 'no field'} changed"]
    elif kind == "delete":
        body = [f"- deleted ({op.get('deletion_mode') or 'audit_preserving'})"]
    else:
        body = []
    from commonkeep.store.render import terminal_safe

    return [terminal_safe(line) for line in [head, *("    " + b for b in body)]]
