"""CLI commands of the shared store: ``init``, ``root``, ``inbox``, ``render`` (``write`` is the gate's).

``inbox --json`` and ``write`` sit on hosts' hot path (a subprocess per tool call): they import
only the JSONL layer, never pydantic.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.store.root import RootChoice, resolve_root
from commonkeep.util.jsonout import print_json


def root_of(args: argparse.Namespace) -> RootChoice:
    """The root for a command: ``--root`` beats the resolution rules (contract §1.3)."""
    return resolve_root(explicit=getattr(args, "root", None))


def _print_json(data: Any) -> None:
    print_json(data)


def run_init(args: argparse.Namespace) -> int:
    from commonkeep.store.layout import ensure_layout

    choice = root_of(args)
    existed = (choice.path / "memory").is_dir()
    lay = ensure_layout(choice.path)
    from commonkeep.store.curators import configure_curators

    curators = configure_curators(lay.root)  # OmpKeep's own curator applies nothing; commonkeep's policy runs (issue 22)
    if args.json:
        _print_json({"root": str(lay.root), "rule": choice.rule, "created": not existed, "curators": curators})
    else:
        print(f"{'ready' if existed else 'created'}: {lay.root}  (chosen by {choice.rule})")
        for note in choice.notes:
            print(f"commonkeep: warning: {note}", file=sys.stderr)
        if curators["changed"]:
            print(f"  config.json: OmpKeep's session-end curation off (curator.autoCurate \"off\"); commonkeep's own: "
                  f"commonkeep.autoCurate \"{curators['commonkeep']['autoCurate']}\"")
    return 0


def run_root(args: argparse.Namespace) -> int:
    choice = root_of(args)
    if args.json:
        out: dict[str, Any] = {"root": str(choice.path), "rule": choice.rule, "exists": choice.path.is_dir()}
        if choice.notes:
            out["notes"] = list(choice.notes)
        _print_json(out)
    else:
        print(f"{choice.path}\t{choice.rule}")
    for note in choice.notes:
        print(f"commonkeep: warning: {note}", file=sys.stderr)
    return 0


def _read_text(value: str) -> str:
    if value != "-":
        return value
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a text stream (tests, embedding hosts): already decoded
        return str(sys.stdin.read())
    data: bytes = buffer.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"standard input is not valid UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start}); nothing was written",
                       hint="pass the text as UTF-8") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # what text-mode stdin did (universal newlines)


def run_inbox(args: argparse.Namespace) -> int:
    from commonkeep.store.core import Store

    choice = root_of(args)
    if not (choice.path / "memory").is_dir():
        what = "a file, not a folder" if choice.path.exists() and not choice.path.is_dir() else "not initialised"
        raise BadInput(f"no memory root at {choice.path} (chosen by {choice.rule}): {what}; no inbox to list",
                       hint="check --root / $OMP_MEMORY_ROOT, or create the root with `commonkeep init`")
    from commonkeep.store import exitgate

    exitgate.sweep_inbox(choice.path, reason="inbox")  # lines OmpKeep appended raw: redacted in place first
    store = Store(choice.path)
    cands = store.candidates(status=None if args.all else args.status)
    invalid = [pr for pr in store.problems if pr.message.startswith("not a valid candidate")]
    if invalid:
        print(f"commonkeep: warning: {len(invalid)} line(s) of {invalid[0].file} are not valid candidates and are not "
              f"listed (first: line {invalid[0].line}: {invalid[0].message}); `commonkeep doctor` lists them all",
              file=sys.stderr)
    if args.json:
        _print_json(cands)
        return 0
    if not cands:
        print(f"inbox empty ({args.status if not args.all else 'any'} status) in {store.layout.inbox}")
        return 0
    from commonkeep.store.render import terminal_safe

    for c in cands:
        prov = c.get("provenance") or {}
        who = prov.get("agent") or c.get("source", {}).get("type", "?")
        risk = c.get("poisoning_risk", "-")
        print(terminal_safe(f"{c['id']}  [{c['status']}] by {who}  conf {c.get('confidence', '-')}  risk {risk}"))
        print(f"    {terminal_safe(c['text'][:160])}")
    return 0


def run_render(args: argparse.Namespace) -> int:
    from commonkeep.store.layout import ensure_layout
    from commonkeep.store.render import render_all

    choice = root_of(args)
    if not choice.path.is_dir():
        raise BadInput(
            f"no memory root at {choice.path} (chosen by {choice.rule}); nothing to render",
            hint="check --root / $OMP_MEMORY_ROOT, or create the root with `commonkeep init`",
        )
    lay = ensure_layout(choice.path)
    written = render_all(lay)
    if args.json:
        _print_json({"written": [str(p) for p in written]})
    else:
        print(f"rendered {len(written)} file(s) changed" + "".join(f"\n  {lay.rel(p)}" for p in written))
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    """Configure whichever store subcommand ``parser`` is (its ``prog`` ends with the name)."""
    name = parser.prog.split()[-1]
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    if name == "init":
        parser.set_defaults(run=run_init)
    elif name == "root":
        parser.set_defaults(run=run_root)
    elif name == "inbox":
        parser.add_argument("--status", default="new", choices=["new", "patched", "rejected"],
                            help="list candidates with this status (default: new, the ones waiting)")
        parser.add_argument("--all", action="store_true", help="every status")
        parser.set_defaults(run=run_inbox)
    elif name == "render":
        parser.set_defaults(run=run_render)
    else:  # pragma: no cover - the CLI table only routes the names above here
        raise BadInput(f"unknown store command {name}")


