"""The ``commonkeep`` command line.

Hosts shell out to this CLI on every tool call, so start-up must stay cheap: the table below
names each subcommand's module, and only the module of the command being run is imported.
A command module exposes ``configure(parser)`` which adds its arguments and sets
``parser.set_defaults(run=...)``; ``run(args)`` returns the exit code.
Commands contributed by plugins (hook ``commonkeep_cli_commands``) are looked up only when the
name is not built in, or for the full ``--help`` listing.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from commonkeep.errors import EXIT_USAGE, CommonkeepError

# name -> (module exposing configure(parser), one-line help). Keep sorted by workflow, not alphabet.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("commonkeep.store.cli", "create the memory root layout (idempotent)"),
    "root": ("commonkeep.store.cli", "print the memory root and the rule that chose it"),
    "write": ("commonkeep.store.cli", "write a daily log entry or a long-term candidate"),
    "inbox": ("commonkeep.store.cli", "list capture candidates"),
    "render": ("commonkeep.store.cli", "re-render rendered/MEMORY.md and project projections"),
    "curate": ("commonkeep.governance.cli", "propose a patch from the inbox (writer only); --auto applies per policy"),
    "apply": ("commonkeep.governance.cli", "apply a patch's selected ops (writer only)"),
    "ratify": ("commonkeep.governance.cli", "ratify L1 identity candidates or ops (writer only)"),
    "review": ("commonkeep.governance.cli", "review pending candidates: approve, reject, edit (writer only)"),
    "forget": ("commonkeep.governance.cli", "delete a record for good: tombstone, optional privacy purge (writer only)"),
    "reinforce": ("commonkeep.governance.cli", "record that a memory helped or was corrected (writer only)"),
    "inquiries": ("commonkeep.governance.cli", "list, answer or withdraw open inquiries"),
    "patches": ("commonkeep.governance.cli", "list patch files, or --show one"),
    "share": ("commonkeep.share.cli", "share the root through a git remote: init [--remote URL] | sync (merge by id, writer only)"),
    "doctor": ("commonkeep.doctor", "check the root: resolution, files, quarantine, index"),
    "search": ("commonkeep.recall.search.cli", "search memory by keyword and by meaning: QUERY [--mode MODE] [--limit N] [--json]"),
    "reindex": ("commonkeep.recall.search.cli", "rebuild search/memory-fts.db and search/recall.db from the canonical files"),
    "select": ("commonkeep.recall.cli", "select memory for a prompt (writes runtime/context.md and friends)"),
    "project": ("commonkeep.recall.cli", "print the budgeted projection of memory in a host's format (hermes §)"),
    "handoff": ("commonkeep.recall.cli", "write a handoff snapshot (reports/handoff/), --goal for a goal snapshot"),
    "mcp": ("commonkeep.tools.mcp", "serve every agent tool over MCP on stdio: commonkeep mcp --as ROLE"),
    "dossier": ("commonkeep.dossier.cli", "the wiki memory, Dossier-compatible: --project DIR ingest|query|gardener|doctor"),
    "demo": ("commonkeep.demo", "run the whole loop on a throwaway root and narrate it"),
    "bench": ("commonkeep.bench", "benchmarks: store, curate, search, locomo, hydra9, wiki"),
}


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", metavar="DIR", help="memory root (overrides the resolution rules)")
    common.add_argument("--role", metavar="ROLE", help="acting role (default: $COMMONKEEP_ROLE)")
    return common


def _plugin_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    from commonkeep.plugins import plugin_manager

    return plugin_manager().cli_commands()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """Build the parser; with ``only`` set, configure just that subcommand (fast path)."""
    parser = argparse.ArgumentParser(
        prog="commonkeep",
        description="One governed long-term memory shared by the agents on this host.",
        epilog="Exit codes: 0 ok, 1 findings, 2 bad usage or input, 3 refused by the role gate, 4 writer lock held.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _common_options()
    extra: dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]] = {}
    if only is None or only not in COMMANDS:
        try:
            extra = _plugin_commands()
        except Exception as exc:  # a broken plugin must not take the CLI down
            print(f"commonkeep: warning: plugin commands unavailable: {exc}", file=sys.stderr)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, parents=[common])
        if only == name:
            importlib.import_module(module).configure(p)
    for name, (configure, help_text) in extra.items():
        if name in COMMANDS:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text, parents=[common])
        if only is None or only == name:
            configure(p)
    return parser


def _version() -> str:
    from commonkeep import __version__

    return f"commonkeep {__version__}"


def _first_command(argv: Sequence[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def _not_utf8(argv: Sequence[str]) -> str | None:
    """What is wrong with the first argument that is not valid UTF-8 (Python hands such bytes over
    as lone surrogates, which would be stored as ``\\udcXX`` escapes), or ``None``."""
    for n, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            raw = arg.encode("utf-8", "surrogateescape") if all(0xDC80 <= ord(c) <= 0xDCFF for c in arg[exc.start:exc.end]) else None
            shown = repr(raw[:60]) if raw is not None else repr(arg[:60])
            return f"argument {n} ({shown}) is not valid UTF-8 (at character {exc.start + 1})"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see ``commonkeep --help``)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    bad = _not_utf8(args_list)
    if bad:
        print(f"commonkeep: error: {bad}; nothing was done\n  hint: pass text as UTF-8 (check the terminal's or the caller's encoding)", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser(only=_first_command(args_list))
    args = parser.parse_args(args_list)
    run: Callable[[Any], int] | None = getattr(args, "run", None)
    if run is None:
        parser.print_help()
        return EXIT_USAGE
    unused = getattr(args, "root_unused", None)
    if getattr(args, "root", None) and unused:
        # every command takes --root; one that has no use for it says so instead of ignoring it
        print(f"commonkeep {args.command}: error: --root does not apply here: {unused}; nothing was done", file=sys.stderr)
        return EXIT_USAGE
    try:
        return int(run(args) or 0)
    except CommonkeepError as exc:
        print(f"commonkeep {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the file system said no (permissions, a file where a folder should be, disk full)
        message = f"commonkeep {args.command}: error: {exc.strerror or exc}"
        if exc.filename:
            message += f": {exc.filename}\n  hint: check that the path exists, is the right kind (file or folder) and that you may write it"
        print(message, file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
