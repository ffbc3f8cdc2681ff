"""CLI commands of the shared store: ``init``, ``root``, ``write``, ``inbox``, ``render``.

``inbox --json`` and ``write`` sit on hosts' hot path (a subprocess per tool call): they import
only the JSONL layer, never pydantic.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.store.root import RootChoice, resolve_root
from commonkeep.store.vocabulary import DURABILITIES, RULE_TYPES, TRUST_CLASSES
from commonkeep.util.jsonout import print_json
from commonkeep.util.repeated_options import ListOption


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
    from commonkeep.governance.autoapply import configure_curators

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


def run_write(args: argparse.Namespace) -> int:
    from commonkeep.store.core import Store

    choice = root_of(args)
    if not (choice.path / "memory").is_dir() and not args.init:
        # a mistyped --root (or $OMP_MEMORY_ROOT) must not become a fresh store nobody reads
        raise BadInput(f"no memory root at {choice.path} (chosen by {choice.rule}); nothing was written",
                       hint="check --root / $OMP_MEMORY_ROOT, or create the root: `commonkeep init` first, "
                            "or add --init to this write")
    store = Store(choice.path)
    text = _read_text(args.text)
    if args.daily:
        path, findings = store.append_daily(text)
        result: dict[str, Any] = {"target": "daily", "file": str(path), "redacted": findings}
    else:
        from commonkeep.store.candidates import default_provenance
        from commonkeep.store.capture import capture

        tags = args.tags or []  # repeats add up: util.repeated_options.ListOption
        prov = default_provenance(agent=args.agent, role=args.role, host=args.host, session_id=args.session)
        from commonkeep.governance.agent_shell import agent_host

        shell_of = agent_host()
        if shell_of is not None:  # an agent's shell tool ran this: the writer's own stamp is never earned here
            prov = {**(prov or {}), "tool": f"{shell_of} shell"}
        done = capture(
            choice.path,
            text,
            source_type=args.source_type,
            source_ref=args.source_ref,
            cwd=args.cwd,
            tags=tags,
            evidence_refs=args.evidence or None,
            confidence=args.confidence,
            provenance=prov,
            primary_trust_class=args.trust,
            durability_signal=args.durability,
            ruleType=args.rule_type,
        )
        findings = done.redacted
        result = {"target": "long_term", "candidate": done.candidate["id"], "file": str(done.inbox), "redacted": findings}
        if shell_of is not None:
            result["agent_shell"] = shell_of
    if args.json:
        _print_json(result)
    else:
        where = result.get("candidate") or result["file"]
        print(f"wrote {result['target']} entry: {where}")
        if result.get("agent_shell"):
            print(f"note: written from inside {result['agent_shell']} (an agent's shell): it waits for a person's review")
        if findings:
            print(f"redacted {len(findings)} secret(s): {', '.join(sorted(set(findings)))}")
    return 0


def run_inbox(args: argparse.Namespace) -> int:
    from commonkeep.store.core import Store

    choice = root_of(args)
    if not (choice.path / "memory").is_dir():
        what = "a file, not a folder" if choice.path.exists() and not choice.path.is_dir() else "not initialised"
        raise BadInput(f"no memory root at {choice.path} (chosen by {choice.rule}): {what}; no inbox to list",
                       hint="check --root / $OMP_MEMORY_ROOT, or create the root with `commonkeep init`")
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
    elif name == "write":
        parser.add_argument("text", help="the text, or - to read standard input")
        parser.add_argument("--daily", action="store_true", help="append to today's daily log instead of the inbox")
        parser.add_argument("--init", action="store_true",
                            help="create the memory root if it does not exist yet (else a missing root is an error)")
        parser.add_argument("--tags", action=ListOption, help="comma-separated tags (repeatable: they add up)")
        parser.add_argument("--evidence", action="append", metavar="REF", help="evidence reference (repeatable)")
        parser.add_argument("--confidence", type=float, help="0..1, how sure the writer is (default: scored by the curator)")
        parser.add_argument("--trust", choices=TRUST_CLASSES, metavar="CLASS",
                            help=f"trust class the writer claims (a claim: it never earns auto-apply); one of {', '.join(TRUST_CLASSES)}")
        parser.add_argument("--durability", choices=DURABILITIES, metavar="SIGNAL",
                            help=f"how long the fact should last; one of {', '.join(DURABILITIES)}")
        parser.add_argument("--rule-type", choices=RULE_TYPES, metavar="TYPE", help=f"ruleType; one of {', '.join(RULE_TYPES)}")
        parser.add_argument("--agent", default=os.environ.get("COMMONKEEP_AGENT"), help="writing agent (provenance)")
        parser.add_argument("--host", help="host program (provenance)")
        parser.add_argument("--session", help="session id (provenance)")
        parser.add_argument("--source-type", default="manual", help="where the fact came from (default manual)")
        parser.add_argument("--source-ref", help="reference of the source (default: today's daily log)")
        parser.add_argument("--cwd", help="project folder the fact is about (project scope)")
        parser.set_defaults(run=run_write)
    elif name == "inbox":
        parser.add_argument("--status", default="new", choices=["new", "patched", "rejected"],
                            help="list candidates with this status (default: new, the ones waiting)")
        parser.add_argument("--all", action="store_true", help="every status")
        parser.set_defaults(run=run_inbox)
    elif name == "render":
        parser.set_defaults(run=run_render)
    else:  # pragma: no cover - the CLI table only routes the names above here
        raise BadInput(f"unknown store command {name}")


