"""``commonkeep audit``: every canonical line explained by the patch that wrote it.

Patches are the only path that changes L1, L2 and project records; a line that no patch
explains was written around the gate (a raw append to ``memory/L2.playbooks.jsonl``, a hand edit)
and is rendered into ``MEMORY.md`` like any other. ``audit`` reads every record line and every
applied op of every patch file, ours or OmpKeep's (the same format, ``contracts/ompkeep-store.md``
§4.3), and lists:

- ``unexplained``: no applied op ever wrote this record id;
- ``changed``: ops wrote this id, but none wrote the statement the line holds now;
- ``held``: another curator's patch (one commonkeep did not write, e.g. OmpKeep's session-end
  curation) applied it from a candidate commonkeep's policy holds for a person (not stamped,
  flagged by detection, L1): explained by a patch, yet no person stood behind it.

And every stamp no journal explains (``commonkeep.patches.stamp_audit``): an inbox line claiming a
stamp the stamp journal does not bind to it (with the ops that used it), an op of a waiting patch
ticked by hand, a journal line whose MAC does not verify.

An op explains a record when it is applied (``applied_ops``) and it is an ``add`` or
``supersede`` of that id (``record`` / ``to_record``), or an ``update``/``add_exception`` of it
(``target_id``); the statement must be one such an op wrote. Ops that change no text (stability,
decay, contest, …) explain the id, not a new statement. ``doctor`` reports the same as
``unexplained_record_lines``.

``--apply-edited PATCH`` is the way to apply a patch whose text was edited after curation: it
shows the diff of each op against its candidate, asks for confirmation (``--yes`` for scripts),
records who did it in each op (``edited``: actor, role, time, the SHA-256 of the text) and
applies the patch; ``apply`` then verifies the edit like any other (``commonkeep.patches.verify``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput

Row = dict[str, Any]


@dataclass
class Unexplained:
    """One canonical line no patch explains."""

    file: str
    line: int
    record_id: str
    why: str
    statement: str = ""


@dataclass
class Audit:
    records: int = 0
    patches: int = 0
    problems: list[Unexplained] = field(default_factory=list)
    stamps: list[Any] = field(default_factory=list)  # ``stamp_audit.StampProblem``: stamps no journal explains

    def to_json(self) -> dict[str, Any]:
        return {"records": self.records, "patches": self.patches,
                "unexplained": [{"file": p.file, "line": p.line, "record_id": p.record_id, "why": p.why} for p in self.problems],
                "stamps": [s.to_json() for s in self.stamps]}


def _written(patches_dir: Path) -> tuple[dict[str, set[str]], dict[str, list[str]], int]:
    """From every applied op: record id -> statements written, record id -> the patches that touched it."""
    from commonkeep.patches.verify import statement_of
    from commonkeep.patches.waiting import applied_op_ids

    statements: dict[str, set[str]] = {}
    touched: dict[str, list[str]] = {}
    count = 0
    for path in sorted(patches_dir.glob("*.json")) if patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("ops"), list):
            continue
        count += 1
        applied = applied_op_ids(doc)
        pid = str(doc.get("patch_id") or path.stem)
        for op in doc["ops"]:
            if not isinstance(op, dict) or op.get("op_id") not in applied:
                continue
            body = op.get("record") if op.get("op") == "add" else op.get("to_record") if op.get("op") == "supersede" else None
            rid = body.get("id") if isinstance(body, dict) else op.get("target_id")
            if not isinstance(rid, str):
                continue
            touched.setdefault(rid, []).append(pid)
            text = statement_of(op)
            if text is not None:
                statements.setdefault(rid, set()).add(text)
    return statements, touched, count


def _commonkeep_patch(pid: str) -> bool:
    """commonkeep's patch ids end ``_ck<6 base36>`` (``commonkeep.store.ids.patch_id``); OmpKeep writes ``_001``."""
    return "_ck" in pid


def _held_but_applied(lay: Any, candidates: dict[str, Row]) -> dict[str, tuple[str, str]]:
    """Record id -> (patch id, why) for ops another curator applied though commonkeep would hold their candidate."""
    from commonkeep.gate.scoring import auto_apply_blockers, enrich_candidate
    from commonkeep.gate.writer import configured_writer_role
    from commonkeep.patches.waiting import applied_op_ids
    from commonkeep.store.curators import curator_config

    writer = configured_writer_role(lay.root)
    mode = str(curator_config(lay.root)["governanceMode"])
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        pid = str(doc.get("patch_id") or path.stem) if isinstance(doc, dict) else ""
        if not pid or _commonkeep_patch(pid) or not isinstance(doc.get("ops"), list):
            continue
        applied = applied_op_ids(doc)
        for op in doc["ops"]:
            if not isinstance(op, dict) or op.get("op_id") not in applied or op.get("op") not in ("add", "supersede", "update"):
                continue
            body = op.get("record") if op.get("op") == "add" else op.get("to_record") if op.get("op") == "supersede" else None
            rid = body.get("id") if isinstance(body, dict) else op.get("target_id")
            cand = candidates.get(str(op.get("candidate_id")))
            if not isinstance(rid, str) or cand is None:
                continue
            why = auto_apply_blockers(enrich_candidate(cand, None, mode, writer, lay.root), mode, writer, lay.root)
            if isinstance(body, dict) and body.get("layer") == "L1":
                why.insert(0, "an L1 identity record (needs `commonkeep ratify`)")
            if why:
                out[rid] = (pid, f"candidate {op.get('candidate_id')}: {why[0]}")
    return out


def audit(root: Path | str) -> Audit:
    """Check every record line of L1, L2 and the project files against the patches (module doc)."""
    from commonkeep.store import jsonl
    from commonkeep.store.layout import Layout

    lay = Layout(root)
    if not lay.memory_dir.is_dir():
        raise BadInput(f"no memory root at {lay.root} (no memory/ folder)", hint="create one with `commonkeep init`")
    statements, touched, count = _written(lay.patches_dir)
    from commonkeep.store.core import Store

    held = _held_but_applied(lay, {str(c.get("id")): c for c in Store(lay.root, warn=False, check=False).candidates()})
    out = Audit(patches=count)
    for path in lay.canonical_files():
        if not path.is_file():
            continue
        read = jsonl.read_jsonl(path)
        for n, row in enumerate(read.rows, 1):
            where = read.line_nos[n - 1] if len(read.line_nos) >= n else n
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                continue
            out.records += 1
            rid, statement = row["id"], str(row.get("statement", ""))
            if rid not in touched:
                out.problems.append(Unexplained(lay.rel(path), where, rid, "no applied patch wrote this record", statement))
            elif statement not in statements.get(rid, set()):
                out.problems.append(Unexplained(lay.rel(path), where, rid,
                                                f"its statement is not one a patch wrote (patches: {', '.join(sorted(set(touched[rid]))[:3])})",
                                                statement))
            elif rid in held:
                pid, why = held[rid]
                out.problems.append(Unexplained(lay.rel(path), where, rid,
                                                f"applied by patch {pid}, which commonkeep did not write (another curator, "
                                                f"e.g. OmpKeep at OMP session end), though commonkeep holds it for a person: {why}",
                                                statement))
    from commonkeep.patches.stamp_audit import stamp_problems

    out.stamps = stamp_problems(lay)
    return out


def apply_edited(root: Path | str, ref: str, *, role: str | None, actor: str | None = None, yes: bool = False,
                 ask: Any = input, say: Any = print) -> Any:
    """Show each edited op's diff against its source, confirm, record who did it, apply (module doc)."""
    from commonkeep.gate.agent_shell import refuse_inside_agent
    from commonkeep.gate.writer import require_writer
    from commonkeep.patches.patch import apply_patch, load_patch, write_patch
    from commonkeep.patches.verify import _actor, diff_of, sha256, statement_of
    from commonkeep.store.core import Store
    from commonkeep.util.timeutil import now_iso

    refuse_inside_agent("applying an edited patch")  # before the edit is recorded in the patch file
    require_writer("apply", role, root)
    store = Store(root)
    layout = store.ensure()
    patch, path = load_patch(layout, ref)
    cands = {str(c.get("id")): c for c in store.candidates()}
    edited = []
    for op in patch.get("ops") or []:
        diff = diff_of(op, cands) if isinstance(op, dict) else []
        if diff:
            edited.append(op)
            say(f"{op.get('op_id')} {op.get('op')} (risk {op.get('risk')}):")
            say("\n".join(f"    {d}" for d in diff))
    if not edited:
        raise BadInput(f"patch {patch['patch_id']} has no edited op: every statement is its candidate's text",
                       hint=f"apply it as it is: commonkeep apply {patch['patch_id']}")
    if not yes:
        answer = str(ask(f"apply these {len(edited)} edited op(s) as {actor or _actor()}? [y/N] ")).strip().lower()
        if answer not in ("y", "yes"):
            raise BadInput("not confirmed; nothing was applied")
    when = now_iso()
    from commonkeep.gate import stamps

    for op in edited:
        op["edited"] = {"by": actor or _actor(), "role": role, "via": "apply --edited", "at": when,
                        "sha256": sha256(str(statement_of(op)))}
        stamps.record_edit(root, str(patch["patch_id"]), str(op["op_id"]), op["edited"]["sha256"])  # a person confirmed it
    write_patch(layout, patch)
    ids = [str(op["op_id"]) for op in patch["ops"] if op.get("default_selected") or op in edited]
    return apply_patch(root, patch["patch_id"], role=role, op_ids=ids)


def run(args: argparse.Namespace) -> int:
    from commonkeep.store.root import resolve_root
    from commonkeep.util.jsonout import print_json

    root = resolve_root(explicit=getattr(args, "root", None)).path
    if args.apply_edited:
        from commonkeep.gate.writer import acting_role

        res = apply_edited(root, args.apply_edited, role=acting_role(getattr(args, "role", None)), actor=args.actor,
                           yes=args.yes)
        if args.json:
            print_json(res.to_json())
        else:
            print(f"patch {res.patch['patch_id']}: {res.patch['status']}; applied {', '.join(res.applied) or 'nothing'}")
            for k, v in res.skipped.items():
                print(f"  skipped {k}: {v}")
        return 0 if res.applied else 1
    found = audit(root)
    if args.json:
        print_json(found.to_json())
    else:
        for p in found.problems:
            print(f"{p.file}:{p.line}: {p.record_id}: {p.why}")
        for s in found.stamps:
            print(f"{s.kind} stamp: {s.sentence()}")
        print(f"{found.records} record line(s) checked against {found.patches} patch(es): "
              + (f"{len(found.problems)} not explained by a patch commonkeep's policy allows" if found.problems
                 else "every line is explained by a patch")
              + (f"; {len(found.stamps)} stamp(s) no stamp journal explains" if found.stamps else "; every stamp is bound"),
              file=sys.stdout)
    return 1 if found.problems or found.stamps else 0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--apply-edited", metavar="PATCH", help="apply a patch whose text was edited: show the diff, confirm, "
                        "record who did it (writer only)")
    parser.add_argument("--actor", help="with --apply-edited: the person to record (default: the OS user)")
    parser.add_argument("--yes", action="store_true", help="with --apply-edited: do not ask for confirmation")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
