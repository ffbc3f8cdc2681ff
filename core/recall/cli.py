"""CLI commands of the recall part: ``select``, ``project``, ``handoff``.

``search`` and ``reindex`` live in ``commonkeep.recall.search.cli``. Each command imports its module
only when it runs, so the CLI's cold start stays small.
"""

from __future__ import annotations

import argparse
import sys

from commonkeep.util.jsonout import print_json


def _root(args: argparse.Namespace) -> str:
    from commonkeep.store.cli import root_of

    return str(root_of(args).path)


def run_select(args: argparse.Namespace) -> int:
    from commonkeep.recall.select import select_for_prompt

    sel = select_for_prompt(_root(args), args.prompt, write=not args.dry_run)
    if args.json:
        out = {
            "skipped": sel.skipped,
            "mode": sel.mode,
            "stats": sel.stats,
            "files": [str(p) for p in sel.paths],
            "context": sel.text,
        }
        print_json(out)
    elif sel.skipped:
        print(f"nothing selected: {sel.skipped}")
    else:
        sys.stdout.write(sel.text)
    return 0


def run_project(args: argparse.Namespace) -> int:
    from commonkeep.recall.projection import build_projection

    proj = build_projection(
        _root(args), args.budget, fmt=args.format, target=args.target, max_entry_chars=args.max_entry_chars
    )
    if args.json:
        out = {
            "budget": proj.budget,
            "chars": len(proj.text),
            "entries": [e.id for e in proj.entries],
            "omitted": proj.omitted,
            "text": proj.text,
        }
        print_json(out)
    else:
        sys.stdout.write(proj.text + ("\n" if proj.text else ""))
    return 0


def run_handoff(args: argparse.Namespace) -> int:
    from commonkeep.recall.handoff import DEFAULT_MAX_CHARS, write_handoff

    if args.max_chars is not None and args.goal is None:
        from commonkeep.errors import BadInput

        raise BadInput("--max-chars bounds a goal snapshot; add --goal GOAL (a plain snapshot has no budget)")
    path = write_handoff(_root(args), goal=args.goal, max_chars=DEFAULT_MAX_CHARS if args.max_chars is None else args.max_chars)
    if args.json:
        print_json({"json": str(path), "markdown": str(path.with_suffix(".md"))}, indent=None, ensure_ascii=True)
    else:
        print(path)
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    """Configure ``select``, ``project`` or ``handoff`` (whichever ``parser`` is)."""
    name = parser.prog.split()[-1]
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    if name == "select":
        parser.add_argument("prompt", help="the user's prompt")
        parser.add_argument(
            "--dry-run", action="store_true", help="print the block without writing runtime/ files"
        )
        parser.set_defaults(run=run_select)
    elif name == "project":
        parser.add_argument(
            "--format",
            choices=["hermes", "markdown", "plain"],
            default="hermes",
            help="hermes: entries joined by \\n§\\n (default)",
        )
        parser.add_argument(
            "--target",
            choices=["memory", "user"],
            default="memory",
            help="memory: L2 records (MEMORY.md); user: L1 (USER.md)",
        )
        parser.add_argument(
            "--budget", type=int, help="character budget (default: Hermes' 2200 for memory, 1375 for user)"
        )
        parser.add_argument("--max-entry-chars", type=int, help="cut longer entries to this many characters")
        parser.set_defaults(run=run_project)
    else:
        parser.add_argument(
            "--goal",
            metavar="GOAL",
            help="write a goal snapshot (reports/handoff/goal-<stamp>.{json,md}) with the memory relevant to GOAL",
        )
        parser.add_argument(
            "--max-chars", type=int, default=None, help="bound of the goal snapshot's markdown (default 4000; only with --goal)"
        )
        parser.set_defaults(run=run_handoff)
