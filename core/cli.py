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
from typing import Any, NoReturn

from commonkeep.errors import EXIT_INTERRUPTED, EXIT_USAGE, CommonkeepError
from commonkeep.util.repeated_options import RepeatCheckingParser

# name -> (module exposing configure(parser), one-line help). Keep sorted by workflow, not alphabet.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("commonkeep.store.cli", "create the memory root layout (idempotent)"),
    "root": ("commonkeep.store.cli", "print the memory root and the rule that chose it"),
    "write": ("commonkeep.gate.cli", "write a daily log entry or a long-term candidate"),
    "inbox": ("commonkeep.store.cli", "list capture candidates"),
    "render": ("commonkeep.store.cli", "re-render rendered/MEMORY.md and project projections"),
    "curate": ("commonkeep.governance.cli", "propose a patch from the inbox (writer only); --auto applies per policy"),
    "apply": ("commonkeep.governance.cli", "apply a patch's selected ops (writer only)"),
    "ratify": ("commonkeep.governance.cli", "ratify L1 identity candidates or ops (writer only)"),
    "review": ("commonkeep.governance.cli", "review pending candidates (anyone may list them); approve, reject, edit (writer only)"),
    "forget": ("commonkeep.governance.cli", "delete a record for good: tombstone, optional privacy purge (writer only)"),
    "reinforce": ("commonkeep.governance.cli", "record that a memory helped or was corrected (writer only)"),
    "inquiries": ("commonkeep.governance.cli", "list, answer or withdraw open inquiries"),
    "patches": ("commonkeep.governance.cli", "list patch files, or --show one"),
    "audit": ("commonkeep.patches.audit", "list record lines no patch explains; --apply-edited PATCH applies an edited patch"),
    "share": ("commonkeep.share.cli", "share the root through a git remote: init [--remote URL] | sync (merge by id, writer only)"),
    "doctor": ("commonkeep.doctor", "check the root: resolution, files, quarantine, index"),
    "search": ("commonkeep.recall.search.cli", "search memory by keyword (by meaning too with --mode): QUERY [--mode MODE] [--limit N] [--json]"),
    "reindex": ("commonkeep.recall.search.cli", "rebuild search/memory-fts.db and search/recall.db from the canonical files"),
    "select": ("commonkeep.recall.cli", "select memory for a prompt (writes runtime/context.md and friends)"),
    "project": ("commonkeep.recall.cli", "print the budgeted projection of memory in a host's format (hermes §)"),
    "handoff": ("commonkeep.recall.cli", "write a handoff snapshot (reports/handoff/), --goal for a goal snapshot"),
    "mcp": ("commonkeep.tools.mcp", "serve every agent tool over MCP on stdio: commonkeep mcp --as ROLE"),
    "dossier": ("commonkeep.dossier.cli", "the wiki memory (Dossier-compatible): ingest|query|gardener|doctor in --project DIR (default: here)"),
    "serve": ("commonkeep.web.cli", "the local web review app: inbox, decisions, patches, memory, wiki (extra [web])"),
    "demo": ("commonkeep.demo", "run the whole loop on a throwaway root and narrate it"),
    "bench": ("commonkeep.bench", "benchmarks: store, capture, apply, curate, gate, userturn, locomo, search, notes, hydra9, wiki, web, secrets, startup"),
}


class UsageError(Exception):
    """Bad usage found by argparse, raised instead of printing and exiting (see ``main``)."""

    def __init__(self, prog: str, usage: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.prog, self.usage, self.message, self.hint = prog, usage, message, hint


class Parser(RepeatCheckingParser):
    """An ``ArgumentParser`` whose errors reach ``main``, which prints them plainly or, with
    ``--json``, as a JSON object (the same shape as every other error). A repeated option never
    loses a value: see ``commonkeep.util.repeated_options``."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, self.format_usage(), message, _near_choice(self.prog, message))


def _near_choice(prog: str, message: str) -> str | None:
    """``share snyc`` -> did you mean ``share sync``? (argparse names the choices, never the nearest)."""
    import re

    found = re.search(r"argument ([^:]*): invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return None
    import difflib

    option = found.group(1).split("/")[-1] if found.group(1).startswith("-") else None
    choices = re.findall(r"'([^']*)'", found.group(3))
    near = difflib.get_close_matches(found.group(2), choices, n=2, cutoff=0.6)
    if not near:
        return f"`{prog} --help` lists them"
    return "did you mean " + " or ".join(f"`{option} {n}`" if option else f"`{prog} {n}`" for n in near) + "?"


def _common_options(p: argparse.ArgumentParser) -> None:
    """``--root`` and ``--role``, added only to commands that use them: a command that has no
    use for one sets ``root_unused`` / ``role_unused`` (the reason) in its defaults instead."""
    if not p.get_default("root_unused"):
        p.add_argument("--root", metavar="DIR", help="memory root (overrides the resolution rules)")
    if not p.get_default("role_unused"):
        p.add_argument("--role", metavar="ROLE", help="acting role (default: $COMMONKEEP_ROLE)")


def _plugin_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    from commonkeep.plugins import plugin_manager

    return plugin_manager().cli_commands()


def build_parser(only: str | None = None, *, alone: bool = False) -> argparse.ArgumentParser:
    """Build the parser; with ``only`` set, configure just that subcommand (fast path).

    Only the sub-parser of the command being run is configured (its module imported); the others
    are names and one-line help, or, with ``alone`` (a built-in ``only`` that is certainly the
    command: nothing but common options before it), not made at all (26 parsers a process).
    Plugin commands are looked up only for a name that is not built in, or for the full listing
    (``--help``, no command)."""
    parser = Parser(
        prog="commonkeep",
        description="One governed long-term memory shared by the agents on this host.",
        epilog="Exit codes: 0 ok, 1 findings, 2 bad usage or input, 3 refused by the role gate, 4 writer lock held, "
               "130 interrupted (Ctrl-C).",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    extra: dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]] = {}
    if only is not None and only not in COMMANDS:
        try:
            extra = _plugin_commands()
        except Exception as exc:  # a broken plugin must not take the CLI down
            print(f"commonkeep: warning: plugin commands unavailable: {exc}", file=sys.stderr)
    elif only is None:
        extra = _listing_of_plugin_commands()
    for name, (module, help_text) in COMMANDS.items():
        if alone and name != only:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only == name:
            importlib.import_module(module).configure(p)
            _common_options(p)
    for name, (configure, help_text) in extra.items():
        if name in COMMANDS:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        if only == name:
            configure(p)
            _common_options(p)
    return parser


def _listing_of_plugin_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    """Plugin commands for the top-level listing (``--help``, or no command); a broken plugin is
    a warning, never a crash."""
    try:
        return _plugin_commands()
    except Exception as exc:
        print(f"commonkeep: warning: plugin commands unavailable: {exc}", file=sys.stderr)
        return {}


def _version() -> str:
    from commonkeep import __version__

    return f"commonkeep {__version__}"


# Options every command that uses them takes, accepted before the command too (``commonkeep
# --root DIR inbox``): name -> whether it takes a value.
GLOBAL_OPTIONS = {"--root": True, "--role": True, "--json": False}
# What the short help (``commonkeep`` alone) names, in the order a newcomer needs them.
FIRST_COMMANDS = ("demo", "init", "write", "inbox", "curate", "review", "apply", "search", "doctor")


def _first_command(argv: Sequence[str]) -> str | None:
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in GLOBAL_OPTIONS:
            skip = GLOBAL_OPTIONS[arg]
        elif arg == "--":
            return None
        elif not arg.startswith("-"):
            return arg
    return None


def _globals_end(argv: Sequence[str]) -> int:
    """How many leading arguments are common options (``--root DIR``, ``--json`` …)."""
    i = 0
    while i < len(argv):
        name = argv[i].split("=", 1)[0]
        if name not in GLOBAL_OPTIONS:
            break
        width = 2 if GLOBAL_OPTIONS[name] and "=" not in argv[i] else 1
        if i + width > len(argv):
            break
        i += width
    return i


def _hoist(argv: list[str]) -> list[str]:
    """``--root DIR`` / ``--role ROLE`` / ``--json`` given before the command, moved to just after it
    (where the command's own parser reads them); anything else stays where it is."""
    i = _globals_end(argv)
    if not i or i >= len(argv) or argv[i].startswith("-"):
        return argv
    return [argv[i], *argv[:i], *argv[i + 1:]]


def _short_help() -> int:
    """``commonkeep`` alone: what to type first, not the whole reference."""
    width = max(map(len, FIRST_COMMANDS))
    lines = ["usage: commonkeep [--root DIR] [--role ROLE] [--json] COMMAND [ARGS]",
             "One governed long-term memory shared by the agents on this host.", "", "Start with:"]
    lines += [f"  {name:<{width}}  {COMMANDS[name][1]}" for name in FIRST_COMMANDS]
    lines += ["", "Every command: commonkeep --help; one command: commonkeep COMMAND --help"]
    print("\n".join(lines))
    return 0


def _unknown_command(command: str, choices: set[str], as_json: bool) -> int:
    """A name that is no command: the nearest ones, not a list of thirty."""
    import difflib

    near = difflib.get_close_matches(command, sorted(choices), n=3, cutoff=0.6)
    hint = (f"did you mean {' or '.join(f'`commonkeep {n}`' for n in near)}? " if near else "") + \
        "`commonkeep --help` lists every command"
    return _fail(None, f"{command!r} is not a commonkeep command", EXIT_USAGE, as_json=as_json, kind="usage", hint=hint)


def _near_options(parser: argparse.ArgumentParser, unknown: list[str]) -> str | None:
    """For each unknown ``--option`` (a typo: ``--aprove``), the command's options nearest to it."""
    import difflib

    known = sorted({o for a in parser._actions for o in a.option_strings if o.startswith("--")})
    hints = []
    for arg in unknown:
        name = arg.split("=", 1)[0]
        if name.startswith("--") and name not in known:
            near = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
            if near:
                hints.append(f"{name}: did you mean {' or '.join(near)}?")
    return "; ".join(hints) + f" `{parser.prog} --help` lists the options" if hints else None


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


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv[: argv.index("--") if "--" in argv else len(argv)]


def _fail(command: str | None, message: str, code: int, *, as_json: bool, hint: str | None = None,
          kind: str = "error", usage: str | None = None) -> int:
    """Report a failure: ``PROG: error: MESSAGE`` (and its hint) on stderr; with ``--json`` also
    ``{"ok": false, "error": {...}}`` on stdout, so a script reading stdout sees the failure too."""
    prog = f"commonkeep {command}" if command else "commonkeep"
    if kind == "usage":  # argparse echoes what it refused, which may be a secret typed into the wrong flag
        from commonkeep.secrets import redact

        message = redact(message).text
    if as_json:
        from commonkeep.util.jsonout import print_json

        error: dict[str, Any] = {"kind": kind, "message": message, "exit_code": code}
        if hint:
            error["hint"] = hint
        if command:
            error["command"] = command
        print_json({"ok": False, "error": error})
    if usage and not as_json:
        sys.stderr.write(usage)
    print(f"{prog}: error: {message}" + (f"\n  hint: {hint}" if hint else ""), file=sys.stderr)
    return code


#: Commands that decide and end: in a process of their own (:func:`run_as_process`) they run without
#: the cyclic garbage collector and the process ends without tearing the interpreter down (every
#: file they write is written, synced and closed before they return; nothing is left to free).
ONE_SHOT = frozenset({"review", "apply", "ratify"})
_process: dict[str, Any] = {"own": False, "command": None}


def run_as_process() -> int:
    """:func:`main` in a process of its own (the console script, ``python -m commonkeep.cli``).

    Python's cyclic garbage collector is paused while the command line is imported and parsed (it
    only walks the new modules' objects) and stays paused through a command of ``ONE_SHOT``: a
    decision makes some 100,000 short-lived objects, freed by reference counting as ever, and no
    cycle worth a pass. Once such a command returns, its output is flushed and the process exits
    at once (``os._exit``): freeing every object of the interpreter one by one took a
    ``review --approve`` process 40-50 ms after its work was done. That is skipped only when
    nothing else could still need the interpreter: no other thread, no ``atexit`` handler, no
    ``weakref.finalize`` waiting for the exit; otherwise the exit is Python's own."""
    import gc

    gc.disable()
    _process["own"] = True
    try:
        code = main()
    finally:
        if _process["command"] not in ONE_SHOT:
            gc.enable()
    return _end(code)


def _one_shot(args: argparse.Namespace) -> bool:
    """Whether ``args`` run a command of ``ONE_SHOT`` that decides and ends (``review`` on a
    terminal with no decision to make is an interactive session, not one)."""
    if args.command not in ONE_SHOT:
        return False
    if args.command != "review" or any(getattr(args, k, None) for k in ("approve", "reject", "undo", "list", "json")):
        return True
    return not (getattr(args, "interactive", False) or sys.stdin.isatty())


def _end(code: int) -> int:
    """Exit now with ``code`` after a command of ``ONE_SHOT`` (see :func:`run_as_process`), or
    return it for Python's own exit."""
    import atexit
    import os
    import threading
    import weakref

    release = sys.modules.get("commonkeep.store.release")
    if release is not None:  # descriptors of replaced files still being closed (``store/release.py``)
        release.settle()
    if _process["command"] not in ONE_SHOT or threading.active_count() != 1 \
            or getattr(atexit, "_ncallbacks", lambda: 1)() or getattr(weakref.finalize, "_registered_with_atexit", True):
        return code
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe: Python's own exit says so as ever
        return code
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (see ``commonkeep --help``)."""
    try:
        if sys.stdout is None:  # started with standard output closed (`commonkeep inbox >&-`)
            if sys.stderr is not None:
                print("commonkeep: standard output is closed, so nothing could be printed; nothing was done\n"
                      "  hint: send it somewhere (`>/dev/null` to discard it)", file=sys.stderr)
            return EXIT_USAGE
        for stream in (sys.stdout, sys.stderr):
            _escape_what_cannot_be_encoded(stream)
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C, however early: the shell's code, no traceback
        return EXIT_INTERRUPTED


def _escape_what_cannot_be_encoded(stream: Any) -> None:
    """What a stream's encoding cannot write (``PYTHONIOENCODING=ascii``, or a byte of a file that
    was not UTF-8, kept as a lone surrogate) is written as a backslash escape (``\\xe9``) instead of
    ending in a ``UnicodeEncodeError``: nothing is lost."""
    if stream is not None and getattr(stream, "errors", "strict") == "strict":
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _main(argv: Sequence[str] | None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    as_json = _wants_json(args_list)
    bad = _not_utf8(args_list)
    if bad:
        return _fail(None, f"{bad}; nothing was done", EXIT_USAGE, as_json=as_json, kind="usage",
                     hint="pass text as UTF-8 (check the terminal's or the caller's encoding)")
    args_list = _hoist(args_list)
    command = _first_command(args_list)
    if command is None and args_list and args_list[0] == "--version":
        print(_version())  # no parser, no plugins: the cheapest answer there is
        return 0
    if _globals_end(args_list) == len(args_list):  # no command at all (common options alone)
        return _short_help()
    # a built-in command after the common options alone (never `--help` before it, which lists them all)
    alone = command in COMMANDS and _globals_end(args_list) == args_list.index(str(command))
    parser = build_parser(only=command, alone=alone)
    if command is not None and command not in COMMANDS and command not in _choices(parser):
        return _unknown_command(command, _choices(parser), as_json)
    sub = _subparser(parser, command)
    before_dashes = args_list[: args_list.index("--")] if "--" in args_list else args_list
    for flag in ("--root", "--role"):
        unused = sub.get_default(f"{flag[2:]}_unused") if sub is not None else None
        if unused and any(a == flag or a.startswith(f"{flag}=") for a in before_dashes):
            # a command with no use for the option says why instead of a bare "unrecognized"
            return _fail(command, f"{flag} does not apply here: {unused}; nothing was done", EXIT_USAGE,
                         as_json=as_json, kind="usage")
    try:
        args, unknown = parser.parse_known_args(args_list)
        if unknown:
            sub = _subparser(parser, getattr(args, "command", None)) or parser
            raise UsageError(sub.prog, sub.format_usage(), f"unrecognized arguments: {' '.join(unknown)}; nothing was done",
                             _near_options(sub, unknown))
    except UsageError as exc:
        return _fail(command if command in (COMMANDS.keys() | _choices(parser)) else None, exc.message, EXIT_USAGE,
                     as_json=as_json, kind="usage", usage=exc.usage, hint=exc.hint)
    run: Callable[[Any], int] | None = getattr(args, "run", None)
    if run is None:
        return _short_help()
    if _process["own"]:
        _process["command"] = args.command if _one_shot(args) else None
        if _process["command"] is None:  # a server, an interactive review: cycles collected as ever
            import gc

            gc.enable()
    role = getattr(args, "role", None)
    if isinstance(role, str) and not role.strip():  # never a silent fall-back to $COMMONKEEP_ROLE
        return _fail(args.command, "--role is empty; nothing was done", EXIT_USAGE, as_json=as_json, kind="usage",
                     hint="name the role (e.g. --role librarian), or leave --role out to act as $COMMONKEEP_ROLE")
    as_json = bool(getattr(args, "json", False)) or as_json
    if as_json:  # the output is for a program: no progress bar on stderr either
        from commonkeep.util import progress

        progress.set_quiet()
    import contextlib

    from commonkeep.util.terminal import guarded_stdout

    # stored text never drives the terminal, whatever path printed it; JSON (escaped by
    # util.jsonout) and the MCP protocol stream are for programs and stay as they are, and
    # roundtable rooms keep their own rule (exact words in a pipe, escaped on a terminal)
    exact = as_json or args.command in ("mcp", "roundtable")
    if argv is None and args.command not in ("mcp", "serve", "bench", "demo", "roundtable"):
        # a short-lived process run from the command line: the secret gate asks the scanner service
        # instead of loading Kingfisher (commonkeep.secrets.scanner_service); long-lived ones load it
        import os

        os.environ["COMMONKEEP_SCANNER_CLIENT"] = str(os.getpid())  # provider.SERVICE_CLIENT; not a child's pid
    guard = contextlib.nullcontext() if exact else guarded_stdout()
    try:
        with guard:
            return int(run(args) or 0)
    except CommonkeepError as exc:
        return _fail(args.command, exc.message, exc.exit_code, as_json=as_json, hint=exc.hint, kind=type(exc).__name__)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except OSError as exc:  # the file system said no (permissions, a file where a folder should be, disk full)
        message = str(exc.strerror or exc) + (f": {exc.filename}" if exc.filename else "")
        hint = "check that the path exists, is the right kind (file or folder) and that you may write it" if exc.filename else None
        return _fail(args.command, message, EXIT_USAGE, as_json=as_json, hint=hint, kind="OSError")
    except RuntimeError as exc:  # Python 3.11's pathlib: a symlink loop anywhere under the root
        if "Symlink loop" not in str(exc):
            raise
        return _fail(args.command, f"{exc}: a symlink points back at itself; nothing was done", EXIT_USAGE,
                     as_json=as_json, hint="fix or remove that symlink, then run the command again", kind="SymlinkLoop")
    except Exception as exc:  # a database the file system or SQLite refuses (read-only root, corrupt file)
        if not _is_sqlite_error(exc):
            raise
        message, hint = _index_failure(args, exc)
        return _fail(args.command, message, EXIT_USAGE, as_json=as_json, hint=hint, kind="IndexUnusable")


def _is_sqlite_error(exc: BaseException) -> bool:
    sqlite3 = sys.modules.get("sqlite3")  # never imported here for nothing: only a command that used it fails so
    return sqlite3 is not None and isinstance(exc, sqlite3.Error)


def _index_failure(args: argparse.Namespace, exc: BaseException) -> tuple[str, str]:
    """What to tell a person when SQLite refused the search index: which folder, and that the
    canonical files were not touched (the index is derived from them)."""
    where = "the root's search/ folder"
    try:
        from commonkeep.store.root import resolve_root

        where = str(resolve_root(explicit=getattr(args, "root", None)).path / "search")
    except Exception:  # the root itself is the problem: the message still says what SQLite said
        pass
    return (f"the search index in {where} could not be used ({type(exc).__name__}: {exc}); "
            "the memory files themselves were not changed",
            f"check that {where} and its files are writable by this account (a read-only root can be "
            "searched only after a writable copy is indexed), then run `commonkeep reindex`")


def _choices(parser: argparse.ArgumentParser) -> set[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    return set()


def _subparser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    """The sub-parser of command ``name`` (for its own usage line in an error)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return None


if __name__ == "__main__":
    raise SystemExit(run_as_process())
