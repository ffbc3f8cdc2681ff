"""CLI commands of governance: ``curate``, ``apply``, ``ratify``, ``review``, ``forget``,
``reinforce``, ``inquiries``, ``patches``.

Every command that changes the store runs the role gate first (exit 3 when refused) and takes
the writer lock (exit 4 when another live writer holds it past ``--wait`` seconds).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from commonkeep.errors import EXIT_FINDINGS, BadInput
from commonkeep.gate.writer import acting_role
from commonkeep.patches.show import op_lines, patch_lines
from commonkeep.store.root import resolve_root
from commonkeep.util.jsonout import print_json
from commonkeep.util.repeated_options import ListOption

if TYPE_CHECKING:
    from commonkeep.store.layout import Layout

_PATCH_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")

from commonkeep.patches.report import apply_text as _apply_text  # noqa: E402
from commonkeep.patches.report import safe as _safe  # noqa: E402


def _root(args: argparse.Namespace) -> str:
    """The resolved root, which must already exist: a typo'd ``--root`` must not become a fresh,
    empty root on which ``curate`` finds nothing, ``review`` shows an empty queue and a failing
    ``apply`` leaves a whole layout behind."""
    path = resolve_root(explicit=getattr(args, "root", None)).path
    if path.exists() and not path.is_dir():
        raise BadInput(f"the memory root {path} is a file, not a folder",
                       hint="point --root (or $OMP_MEMORY_ROOT) at a folder; `commonkeep init` creates it")
    if not (path / "memory").is_dir():
        raise BadInput(f"no memory root at {path} (run `commonkeep init` or check --root / $OMP_MEMORY_ROOT)")
    return str(path)


def _role(args: argparse.Namespace) -> str | None:
    return acting_role(getattr(args, "role", None))


def _out(args: argparse.Namespace, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        print_json(data)
    else:
        print(text)


def _seconds(text: str) -> float:
    """``--wait``: a number of seconds, zero or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be zero or more seconds, got {text}")
    return value


def _ops_list(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    ops = [o.strip() for v in values for o in v.split(",") if o.strip()]
    if not ops:
        raise BadInput("--ops is empty: name the op ids to apply, comma-separated (e.g. --ops op_001,op_002)",
                       hint="see a patch's op ids with `commonkeep patches --show ID`; leave out --ops to apply the default-selected ones")
    return ops


def run_curate(args: argparse.Namespace) -> int:
    from commonkeep.patches.curate import auto_curate, curate

    root, role = _root(args), _role(args)
    if args.auto:
        done = auto_curate(root, role=role, policy=args.policy)
        p = done.proposal.patch if done.proposal else None
        _out(args, {"policy": done.policy, "patch_id": p and p["patch_id"], "applied_ops": done.applied,
                    "skipped": done.skipped, "pending": done.proposal.pending if done.proposal else [],
                    "held": done.held}, done.describe())
        return 0
    prop = curate(root, role=role, min_confidence=args.min_confidence, min_evidence=args.min_evidence, wait=args.wait)
    data = {"patch_id": prop.patch["patch_id"], "path": str(prop.path), "summary": prop.patch["summary"],
            "ops": [{k: o.get(k) for k in ("op_id", "op", "target_id", "candidate_id", "risk", "default_selected", "reason")} for o in prop.ops],
            "pending": prop.pending, "inquiries": len(prop.inquiries), "already_proposed": prop.already_proposed}
    waiting = [f"  already proposed: {what} in patch {pid} (apply it: {prop.apply_commands.get(pid, f'commonkeep apply {pid}')})"
               for what, pid in prop.already_proposed.items()]
    if not prop.ops:
        data["patch_id"], data["path"] = None, None
        if prop.already_proposed:
            text = "nothing to propose: nothing new, everything curation found already waits in a patch; no patch written"
            text += f"; {len(prop.pending)} candidate(s) below the curator's gate wait in `commonkeep review`" if prop.pending else ""
        else:
            text = "nothing to propose: no pending candidate passes the curator's gate"
            text += f"; {len(prop.pending)} candidate(s) below it wait in `commonkeep review`" if prop.pending else ""
        _out(args, data, "\n".join([text, *waiting]))
        return 0
    lines = [f"proposed {prop.patch['patch_id']} ({prop.patch['summary']})", f"  {prop.path}"]
    records, candidates = _rows_for_show(root)
    for o in prop.ops:
        lines += ["  " + line for line in op_lines(o, records=records, candidates=candidates)]
    if prop.ops:
        example = ",".join(o["op_id"] for o in prop.ops[:2])
        lines.append(f"apply the [x] ops: commonkeep apply {prop.patch['patch_id']}   (or choose: --ops {example})")
    lines += waiting
    if prop.pending:
        lines.append(f"{len(prop.pending)} candidate(s) below the gate wait in `commonkeep review`")
    _out(args, data, "\n".join(lines))
    return 0


def _rows_for_show(root: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Records (any status) and candidates by id, for showing what an op replaces and where it came from."""
    from commonkeep.store.core import Store

    store = Store(root, warn=False)
    records = {str(r["id"]): r for r in store.records(active_only=False)}
    return records, {str(c.get("id")): c for c in store.candidates()}


def run_apply(args: argparse.Namespace) -> int:
    from commonkeep.patches.patch import apply_patch
    from commonkeep.util import progress

    if args.json:
        progress.set_quiet()  # the output is for a program: no bar on stderr either
    if args.patch and args.latest:
        raise BadInput("give a patch or --latest, not both")
    from commonkeep.gate.agent_shell import refuse_inside_agent

    refuse_inside_agent("applying a patch")  # apply_patch refuses too; said before --latest looks for a patch
    root = _root(args)
    if not args.patch:
        from commonkeep.patches.latest import latest_proposed

        print(f"applying the latest proposed patch: {(patch := latest_proposed(root))}", file=sys.stderr)
    else:
        patch = args.patch
    res = apply_patch(root, patch, role=_role(args), op_ids=_ops_list(args.ops), wait=args.wait)
    _out(args, res.to_json(), _apply_text(res))
    return 0 if res.applied else EXIT_FINDINGS


def run_ratify(args: argparse.Namespace) -> int:
    from commonkeep.patches.patch import apply_patch
    from commonkeep.reviews.review import approve

    root, role = _root(args), _role(args)
    if args.id.startswith("cap_"):
        res = approve(root, [args.id], role=role, ratify=True)
    else:
        ops = _ops_list(args.ops)
        if not ops:
            raise BadInput(f"{args.id!r} is not a candidate id (cap_…), and ratifying a patch needs --ops (the L1 ops to ratify)",
                           hint="ratify a candidate: commonkeep ratify cap_…; or a patch's L1 ops: commonkeep ratify PATCH_ID --ops op_001 "
                                "(see them with `commonkeep patches --show PATCH_ID`)")
        res = apply_patch(root, args.id, role=role, op_ids=ops, ratify=True, wait=args.wait)
    _out(args, res.to_json(), _apply_text(res))
    return 0


def run_review(args: argparse.Namespace) -> int:
    from commonkeep.gate.writer import require_writer
    from commonkeep.reviews import terminal as review_terminal
    from commonkeep.reviews.review import approve, pending, reject

    for flag in ("approve", "reject", "undo"):
        if getattr(args, flag) == []:  # `--approve ""`: not the same as no --approve (which lists the queue)
            raise BadInput(f"--{flag} is empty: name the candidate id(s), comma-separated (e.g. --{flag} cap_…)",
                           hint="`commonkeep review --list` shows the pending ids")
    lone = [flag for flag, needs in (("--text", args.approve), ("--choice", args.approve),
                                     ("--reason", args.reject or args.undo))
            if getattr(args, flag[2:]) is not None and not needs]
    if lone:  # an edit or a reason with no decision to carry it would be dropped in silence
        raise BadInput(f"{' and '.join(lone)} given without a decision to go with it; nothing was decided",
                       hint="--text and --choice go with --approve ID, --reason with --reject ID or --undo ID")
    if args.text is not None and args.approve and len(args.approve) > 1:
        raise BadInput(f"--text edits one candidate, but --approve names {len(args.approve)} ({', '.join(args.approve)}); "
                       "nothing was decided", hint="approve the one to edit with its own `review --approve ID --text ...`")
    root, role = _root(args), _role(args)
    if args.approve or args.reject or args.undo or not (args.list or args.json or not (args.interactive or sys.stdin.isatty())):
        from commonkeep.gate.agent_shell import refuse_inside_agent

        # a person decides, never an agent's tool: the decision functions refuse too; said here before an
        # interactive review starts
        refuse_inside_agent("`review` (approve, reject, undo)")
        require_writer("review", role, root)  # deciding is the writer's; reading the queue is for everyone
    if args.undo:
        from commonkeep.reviews.undo import undo

        done = undo(root, args.undo, role=role, reason=args.reason or "")
        _out(args, done.to_json(), done.sentence())
        return 0
    if args.approve or args.reject:
        from commonkeep.patches.after_apply import embedding_deferred

        results = []
        with embedding_deferred(), _no_cycle_collection():  # a search embeds the new record: no model loaded for one decision
            if args.approve:
                if args.text is not None and not args.text.strip():
                    raise BadInput("--text is empty: give the edited statement to store, or leave --text out to store the candidate's own text")
                edits = {args.approve[0]: args.text} if args.text else None
                if args.replace and args.choice not in (None, "replace"):
                    raise BadInput(f"--replace and --choice {args.choice} say two different things; nothing was decided",
                                   hint="give one: --replace to replace the existing record, or --choice")
                results.append(approve(root, args.approve, role=role, edits=edits, choice="replace" if args.replace else args.choice))
            if args.reject:
                results.append(reject(root, args.reject, reason=args.reason or "", role=role))
        _out(args, [r.to_json() for r in results], "\n".join(_apply_text(r) for r in results))
        return 0
    if args.limit is not None and args.limit < 0:
        raise BadInput(f"--limit must be 0 (all) or more, got {args.limit}")
    if args.list or args.json or not (args.interactive or sys.stdin.isatty()):
        if args.limit:  # the first N only, each planned when reached: at 10,000 pending the whole queue costs seconds
            return review_terminal.list_first(root, args.limit, (lambda rows: _out(args, rows, "")) if args.json else None)
        items = pending(root, role=role)
        if args.json:
            _out(args, [i.to_json() for i in items], "")
        elif not items:
            print("review queue empty: no new candidates")
        else:
            for item in items:
                review_terminal.print_item(item)
            print(f"{len(items)} pending. Decide with --approve ID / --reject ID --reason R, or run `commonkeep review` in a terminal.")
        return 0
    return review_terminal.interactive(root, role)


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Within: Python's cyclic garbage collector paused. A decision reads every record and the
    decided candidates' lines (some 100,000 short-lived objects, freed by reference counting as
    ever); the collector walking them again and again cost a ``review --approve`` process ~40 ms
    of its ~350. Only for one bounded command; collection resumes after it."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def run_forget(args: argparse.Namespace) -> int:
    from commonkeep.patches.forget import forget
    from commonkeep.store.core import Store
    from commonkeep.store.ids import memory_id_for

    root = _root(args)
    target = memory_id_for(args.id) if args.id.startswith("cap_") else args.id
    store = Store(root)
    was_purged = any(t.get("deleted_record_id") == target and t.get("deletion_mode") == "privacy_purge"
                     for t in store.rows(store.layout.tombstones))
    res = forget(root, args.id, reason=args.reason, role=_role(args), purge=args.purge)
    head = f"forgot {args.id}" + (" (privacy purge)" if args.purge else "")
    if res.finished and not res.tombstones:
        head = f"forgot {args.id}: finished the interrupted deletion (its tombstone was already written)"
    elif args.purge and was_purged and not res.tombstones:
        head = f"purged {args.id} again: the scrub ran once more (its tombstone already recorded privacy_purge)"
    elif args.purge and not res.tombstones:
        head = f"purged {args.id}: it was already forgotten; its one tombstone now records privacy_purge"
    _out(args, res.to_json(), head + "\n" + _apply_text(res))
    return 0


def run_reinforce(args: argparse.Namespace) -> int:
    from commonkeep.patches.reinforce import reinforce

    done = reinforce(_root(args), args.id, outcome=args.outcome, role=_role(args), notes=args.notes, evidence_id=args.evidence_id)
    _out(args, {"event": done.event, "score": done.score, "suggested_stability": done.suggested_stability,
                "current_stability": done.current_stability},
         f"recorded {done.event['id']} ({args.outcome}); score {done.score}, suggests {done.suggested_stability} "
         f"(now {done.current_stability})" + ("; the next curate proposes update_stability" if done.suggested_stability != done.current_stability else ""))
    return 0


def run_inquiries(args: argparse.Namespace) -> int:
    from commonkeep.gate.writer import require_writer
    from commonkeep.store.inquiries import close_inquiry, list_inquiries

    root = _root(args)
    for flag, value in (("--answer", args.answer), ("--withdraw", args.withdraw), ("--memory", args.memory)):
        if value is not None and not value.strip():
            raise BadInput(f"{flag} is empty: give an id; nothing was changed", hint="list the inquiries with `commonkeep inquiries --status all`")
    if args.memory and not args.answer:
        raise BadInput("--memory only goes with --answer (the record that answers the inquiry); nothing was changed",
                       hint="commonkeep inquiries --answer INQ --memory MEM")
    if args.answer or args.withdraw:
        require_writer("inquiries", _role(args), root)
        row = close_inquiry(root, args.answer or args.withdraw, status="answered" if args.answer else "withdrawn",
                            answer_memory_id=args.memory)
        _out(args, row, _safe(f"{row['id']}: {row['status']}"))
        return 0
    rows = list_inquiries(root, None if args.status == "all" else args.status)
    _out(args, rows, "\n".join(_safe(f"{r['id']} [{r.get('status')}] {r.get('question')}") for r in rows) or "no inquiries")
    return 0


def _show_target(lay: Layout, ref: str) -> Path:
    """The file ``patches --show REF`` may read: a patch id, a file name in ``patches/``, or a path
    that resolves into ``patches/`` — never any other file."""
    base = lay.patches_dir.resolve()
    if "/" in ref or "\\" in ref:
        path = Path(ref).expanduser().resolve()
        if path.parent != base:
            raise BadInput(f"{ref} is not a file in {lay.patches_dir}: --show prints only patches",
                           hint="give a patch id; list them with `commonkeep patches`")
        return path
    if not _PATCH_NAME.fullmatch(ref) or ".." in ref:
        raise BadInput(f"{ref!r} is not a patch id (letters, digits, '_', '-', '.')", hint="list patches with `commonkeep patches`")
    return base / (ref if ref.endswith(".json") else f"{ref}.json")


def _read_patch_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """A patch file's JSON object, or what is wrong with it (with the line, for invalid JSON)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno})"
    except (OSError, UnicodeDecodeError, RecursionError, MemoryError) as exc:
        return None, f"unreadable ({exc})"
    except ValueError as exc:  # e.g. an integer of more digits than Python converts (not a JSONDecodeError)
        return None, f"not valid JSON ({exc})"
    if not isinstance(doc, dict):
        kind = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(doc), "a number")
        return None, f"not a patch: the file holds {kind}, not a JSON object"
    missing = [k for k in ("patch_id", "status", "ops") if k not in doc]
    if missing:
        return doc, f"not a patch: no {', '.join(missing)}"
    return doc, None


def run_patches(args: argparse.Namespace) -> int:
    from commonkeep.store.layout import Layout
    from commonkeep.store.render import terminal_safe

    lay = Layout(_root(args))
    if args.show is not None and not args.show.strip():
        raise BadInput("--show is empty: give a patch id", hint="list patches with `commonkeep patches`")
    if args.show:
        path = _show_target(lay, args.show)
        if not path.is_file():
            raise BadInput(f"no patch {args.show!r} in {lay.patches_dir}", hint="list patches with `commonkeep patches`")
        doc, problem = _read_patch_file(path)
        if doc is None:
            raise BadInput(f"{path}: {problem}", hint="fix or remove the file")
        if args.json:
            print_json(doc)
        else:
            records, candidates = _rows_for_show(str(lay.root))
            print("\n".join(patch_lines(doc, records=records, candidates=candidates)))
        return 0
    rows: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    for path in sorted(lay.patches_dir.glob("*.json")) if lay.patches_dir.is_dir() else []:
        doc, problem = _read_patch_file(path)
        if problem:
            problems.append({"patch_id": path.stem, "status": "problem", "file": str(path), "problem": problem})
        if doc is not None and not problem:
            rows.append({k: doc.get(k) for k in ("patch_id", "created_at", "generated_by", "status", "summary")})
    if args.json:
        _out(args, rows + problems, "")
    else:
        lines = [terminal_safe(f"{r['patch_id']}  {r.get('status')}  {r.get('summary') or ''}") for r in rows]
        lines += [terminal_safe(f"problem: {p['file']}: {p['problem']}") for p in problems]
        if problems:
            lines.append(f"{len(problems)} patch file(s) cannot be read as patches: fix or remove them (apply refuses them)")
        print("\n".join(lines) or "no patches")
    return EXIT_FINDINGS if problems else 0


def configure(parser: argparse.ArgumentParser) -> None:
    """Configure whichever governance subcommand ``parser`` is (its ``prog`` ends with the name)."""
    name = parser.prog.split()[-1]
    parser.add_argument("--json", action="store_true", help="machine-readable output")

    def wait_option() -> None:
        parser.add_argument("--wait", type=_seconds, default=None, metavar="SECONDS",
                            help="how long to wait for the writer lock (default 5, $COMMONKEEP_LOCK_WAIT)")

    if name == "curate":
        parser.add_argument("--min-confidence", type=float, default=0.75, help="curator gate (contract §6.6; default 0.75)")
        parser.add_argument("--min-evidence", type=int, default=2, help="evidence refs needed (default 2)")
        parser.add_argument("--auto", action="store_true", help="session-end auto-curation: curate, then apply per --policy")
        parser.add_argument("--policy", default=None, choices=["high-only", "propose", "off"],
                            help="auto-curation policy (default: config.json curator.autoCurate, else high-only)")
        wait_option()
        parser.set_defaults(run=run_curate)
    elif name == "apply":
        parser.add_argument("patch", nargs="?", help="patch id (patch_…) or path to a patch file "
                            "(default: the latest proposed patch)")
        parser.add_argument("--latest", action="store_true", help="apply the latest proposed patch (the same as no patch)")
        parser.add_argument("--ops", action=ListOption, metavar="OP_IDS",
                            help="op ids to apply, comma-separated, repeatable (default: the default-selected ones)")
        wait_option()
        parser.set_defaults(run=run_apply)
    elif name == "ratify":
        parser.add_argument("id", help="an L1 candidate id (cap_…), or a patch id with --ops")
        parser.add_argument("--ops", action=ListOption, metavar="OP_IDS", help="L1 op ids of the patch to ratify, comma-separated, repeatable")
        wait_option()
        parser.set_defaults(run=run_ratify)
    elif name == "review":
        parser.add_argument("--list", action="store_true", help="print the queue and exit")
        parser.add_argument("--limit", type=int, metavar="N",
                            help="with --list or --json: the first N pending only (oldest first), quick at any queue size; 0: all")
        parser.add_argument("--approve", action=ListOption, metavar="ID", help="approve candidates (comma-separated, repeatable)")
        parser.add_argument("--text", help="with one --approve: the edited statement to store instead")
        parser.add_argument("--reject", action=ListOption, metavar="ID", help="reject candidates (comma-separated, repeatable; needs --reason)")
        parser.add_argument("--reason", help="why the candidates are rejected (or a decision undone)")
        parser.add_argument("--choice", choices=["add", "reinforce", "replace", "keep_both"],
                            help="with --approve: what approving does (a duplicate: reinforce or replace the existing record; "
                                 "a conflict: replace it or keep_both, marked contested); default: the candidate's own; "
                                 "a replace is never a default: without --replace (or --choice replace) approving says "
                                 "what it would replace and changes nothing")
        parser.add_argument("--replace", action="store_true",
                            help="with --approve: yes, replace the existing record the candidate matches (the old text stays "
                                 "in the history)")
        parser.add_argument("--undo", action=ListOption, metavar="ID",
                            help="undo the decision on a candidate: a reversing patch, and the candidate back in the queue "
                                 "(comma-separated, repeatable)")
        parser.add_argument("--interactive", action="store_true", help="prompt even when standard input is not a terminal")
        parser.set_defaults(run=run_review)
    elif name == "forget":
        parser.add_argument("id", help="record id (mem_…) or unpromoted candidate id (cap_…)")
        parser.add_argument("--reason", required=True, help="user_requested, privacy_sensitive, poisoned, invalid, other, or free text")
        parser.add_argument("--purge", action="store_true", help="privacy purge: also scrub linked evidence, the source candidate and every copy of the statement "
                            "(patches, daily logs, runtime, reports); search indexes are rebuilt")
        parser.set_defaults(run=run_forget)
    elif name == "reinforce":
        parser.add_argument("id", help="record id (mem_…)")
        parser.add_argument("--outcome", default="explicit_reinforcement",
                            choices=["explicit_reinforcement", "implicit_success", "neutral_exposure", "explicit_correction"])
        parser.add_argument("--notes", help="short note (≤ 300 chars; longer is refused)")
        parser.add_argument("--evidence-id")
        parser.set_defaults(run=run_reinforce)
    elif name == "inquiries":
        parser.add_argument("--status", default="open", choices=["open", "answered", "withdrawn", "stale", "all"])
        parser.add_argument("--answer", metavar="INQ", help="mark an inquiry answered")
        parser.add_argument("--memory", metavar="MEM", help="with --answer: the record that answers it")
        parser.add_argument("--withdraw", metavar="INQ", help="withdraw an inquiry")
        parser.set_defaults(run=run_inquiries)
    elif name == "patches":
        parser.add_argument("--show", metavar="ID", help="print one patch")
        parser.set_defaults(run=run_patches)
    else:  # pragma: no cover - the CLI table routes only the names above here
        raise BadInput(f"unknown governance command {name}")
