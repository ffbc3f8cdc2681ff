"""The ``write`` command: a daily-log entry, or a candidate through the gate's one write path.

It sits with the gate, not the store, because a candidate's provenance is decided by the gate's
write path (``capture``): a write from inside an agent's shell is marked so, and never earns the
writer's own stamp.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.store.cli import _print_json, _read_text, root_of
from commonkeep.store.vocabulary import DURABILITIES, RULE_TYPES, TRUST_CLASSES
from commonkeep.util.repeated_options import ListOption


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
        from commonkeep.gate.capture import capture
        from commonkeep.store.candidates import default_provenance

        tags = args.tags or []  # repeats add up: util.repeated_options.ListOption
        prov = default_provenance(agent=args.agent, role=args.role, host=args.host, session_id=args.session)
        from commonkeep.gate.agent_shell import inside_agent, shell_tool

        shell_of = inside_agent()
        if shell_of is not None:  # for the reviewer: which agent's tool wrote it (capture also refuses the writer's stamp)
            prov = {**(prov or {}), "tool": shell_tool(shell_of)}
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
        if shell_of or done.agent_shell:  # an agent's tool ran it: the writer's own stamp was not earned
            result["agent_shell"] = shell_of or done.agent_shell
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


def configure(parser: argparse.ArgumentParser) -> None:
    """Configure ``write``."""
    parser.add_argument("--json", action="store_true", help="machine-readable output")
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
