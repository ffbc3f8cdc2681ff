"""Argument parsing and output for the Dossier CLI, shared by ``python -m commonkeep.dossier``
and ``commonkeep dossier`` so both print the same bytes and exit with the same codes.

Exit codes: 0 ok; 1 ``doctor`` found problems; 2 bad usage or input (path refused, missing
project); 3 refused by the role gate; 4 another writer holds the lock.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from commonkeep.errors import EXIT_USAGE, CommonkeepError, RoleRefused
from commonkeep.util.jsonout import print_json
from commonkeep.util.repeated_options import RepeatCheckingParser

WRITES = frozenset({"ingest", "gardener"})
# set by `commonkeep memory` (commonkeep_roundtable.memory.BACKEND_MARK) in the backend it starts after its gate
MEMORY_BACKEND_MARK = "COMMONKEEP_MEMORY_BACKEND_OF"


class _TextArgumentParser(RepeatCheckingParser):
    """``query`` and ``ingest``: a lone argument is always the question or the source path.

    Orphus runs ``<command> query <question>`` with no ``--`` (contracts/roundtable.md §8.1), so
    a question such as ``--help`` or ``-v`` must be read as text, not as an option. With more
    than one argument (``query --json "Q"``) options are parsed as usual. Under ``commonkeep
    dossier`` (a person typing, not Orphus' ``python -m commonkeep.dossier``) a lone ``-h`` or
    ``--help`` prints the help.
    """

    text_first = False  # set on the query and ingest parsers
    help_wins = False  # set under `commonkeep dossier`

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        if (self.text_first and args is not None and len(args) == 1 and args[0].startswith("-")
                and not (self.help_wins and args[0] in ("-h", "--help"))):
            args = ["--", *args]
        return super().parse_known_args(args, namespace)


def configure(parser: argparse.ArgumentParser) -> None:
    """Add Dossier's global ``--project`` and its four subcommands to ``parser``."""
    parser.add_argument("--project", metavar="DIR", default=None, help="wiki project folder (default: the current folder)")
    parser.set_defaults(root_unused="the wiki project is --project DIR")
    sub = parser.add_subparsers(dest="dossier_command", metavar="SUBCOMMAND", parser_class=_TextArgumentParser)
    person = parser.prog != "dossier"  # `commonkeep dossier`, not the backend Orphus runs
    p = sub.add_parser("ingest", help="compile one source under raw/ into the wiki (one git commit)")
    p.text_first, p.help_wins = True, person
    p.add_argument("path", help="source path relative to the project, under raw/")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = sub.add_parser("query", help="scored candidates and grounded evidence for a question")
    p.text_first, p.help_wins = True, person
    p.add_argument("question", help="the whole question as one argument")
    p.add_argument("--limit", type=int, default=10, help="number of candidates to print (default 10)")
    p.add_argument("--max-chars", type=int, default=2000, help="evidence budget in characters (default 2000)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    sub.add_parser("gardener", help="lint and consolidate the wiki (one git commit)")
    sub.add_parser("doctor", help="check that the wiki backend is usable here")
    parser.set_defaults(run=run)


HOST_GATED = "COMMONKEEP_HOST_GATED"


def host_gate() -> str | None:
    """The host that says it ran the role gate in its own process before starting this backend,
    or ``None``.

    Said explicitly, in the backend's environment: Orphus' memory tool runs with the operator's
    ``ORPHUS_MEMORY_COMMAND`` (that is how it is pointed at this backend) and gates in its own
    process before it spawns the backend without a role; ``commonkeep memory`` marks the
    backend it starts after its gate; any other host sets ``COMMONKEEP_HOST_GATED=<its name>``.
    """
    if os.environ.get(HOST_GATED, "").strip():
        return os.environ[HOST_GATED].strip()
    if os.environ.get(MEMORY_BACKEND_MARK, "").strip():
        return "commonkeep memory"
    if os.environ.get("ORPHUS_MEMORY_COMMAND", "").strip():
        return "Orphus' memory tool (ORPHUS_MEMORY_COMMAND is set)"
    return None


def _gate(command: str, role: str | None) -> None:
    """The one rule every command that changes memory follows: only the writer role may.

    ``ingest`` and ``gardener`` write the wiki: refused for a role that is not the writer role,
    and, as ``curate`` is, when no role is set at all, unless a host says it gated in its own
    process (``host_gate``). The writer role is Orphus's when it sets one:
    ``ORPHUS_MEMORY_WRITER_ROLE`` (blank counts as unset, exact match, as Orphus's gate), else
    commonkeep's configured writer role.
    """
    from commonkeep.gate.writer import acting_role, configured_writer_role

    if command not in WRITES:
        return
    role = acting_role(role)
    writer = os.environ.get("ORPHUS_MEMORY_WRITER_ROLE", "").strip() or configured_writer_role()
    if role is None and host_gate() is None:
        raise RoleRefused(f"{command} writes the wiki and only the writer role {writer!r} may do it; no role is set",
                          hint=f"run it as {writer} (--role {writer} or COMMONKEEP_ROLE={writer}); a host that gates "
                               f"in its own process says so with {HOST_GATED}=<host> in the backend's environment")
    if role is not None and role != writer:
        raise RoleRefused(f"role {role!r} may not run {command}: only the writer role {writer!r} writes the wiki",
                          hint=f"run it as {writer} (--role {writer}), or ask the {writer} to do it")


def _run(args: argparse.Namespace) -> int:
    from commonkeep import wiki

    command = args.dossier_command
    project = args.project or os.getcwd()
    _gate(command, getattr(args, "role", None))
    if command == "ingest":
        report = wiki.ingest(project, args.path)
        if args.json:
            print_json(asdict(report))
            return 0
        print("routed: ingest_document")
        print(f"source: {report.source} -> {report.source_page} ({report.date})")
        if report.redacted or report.redacted_name:
            print(report.redaction_line())
        print(f"extracted: entities={report.entities} concepts={report.concepts} facts={report.facts} ({report.extractor})")
        p = report.pages
        print(f"pages: created={p.get('created', 0)} updated={p.get('updated', 0)} unchanged={p.get('unchanged', 0)} "
              f"human_skipped={len(report.skipped_human)}")
        print(f"commit: {report.commit}")
        return 0
    if command == "query":
        if args.limit < 0 or args.max_chars < 0:
            raise CommonkeepError("--limit and --max-chars must be zero or more", hint="e.g. --limit 5")
        if not args.question.strip():
            raise CommonkeepError("the question is empty", hint='e.g. commonkeep memory query "what did we decide about retries"')
        result = wiki.query(project, args.question, limit=args.limit, max_chars=args.max_chars)
        if args.json:
            print_json({**asdict(result), "project": os.path.abspath(project)})
        else:
            print(result.render())
            if not result.candidates and not result.evidence:  # stdout keeps Dossier's shape; say where we looked
                print(f"dossier query: nothing found in the wiki at {os.path.abspath(project)}", file=sys.stderr)
        return 0
    if command == "gardener":
        g = wiki.gardener(project)
        print(g.summary())
        print(f"pages: created={g.pages.get('created', 0)} updated={g.pages.get('updated', 0)} removed={len(g.removed)} "
              f"human_skipped={len(g.skipped_human)}")
        for ref in g.review_pages:
            print(f"review: {ref}")
        print(f"commit: {g.commit}")
        return 0
    ok, lines = wiki.doctor(project)
    print("\n".join(lines))
    return 0 if ok else 1


def run(args: argparse.Namespace) -> int:
    """Run one Dossier subcommand; user errors go to stderr with the documented exit code."""
    if not getattr(args, "dossier_command", None):
        print("dossier: error: choose a subcommand: ingest, query, gardener or doctor", file=sys.stderr)
        return EXIT_USAGE
    try:
        return _run(args)
    except CommonkeepError as exc:
        print(f"dossier {args.dossier_command}: error: {exc}", file=sys.stderr)
        return exc.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m commonkeep.dossier``."""
    parser = RepeatCheckingParser(prog="dossier", description="Dossier-compatible wiki memory (commonkeep).")
    configure(parser)
    args: Any = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.run(args))
    except BrokenPipeError:
        return 0
