"""``commonkeep bench NAME``: the benchmarks behind the README table.

Each benchmark lives beside what it measures; this table names its module, which exposes
``configure(parser)`` (adding its own options and setting ``run``), exactly like a CLI command.
Benchmarks take their data as a file path and print what they measured (``--json`` for scripts).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

# name -> (module, one-line help)
BENCHES: dict[str, tuple[str, str]] = {
    "store": ("commonkeep.bench.store", "append throughput, rewrite time, CLI cold start"),
    "capture": ("commonkeep.bench.capture", "capture() per second on generated memory text, beside another version (--against REV) in the same run"),
    "apply": ("commonkeep.bench.apply", "one decision on a large store as a new process (apply, review --approve), sync included, beside another version"),
    "curate": ("commonkeep.bench.curate", "curate 10,000 candidates; apply a patch of 20,000 ops beside a plain JSONL rewrite"),
    "gate": ("commonkeep.bench.gate", "injections auto-applied and benign candidates held by the gate, vs the rules before issue 15"),
    "userturn": ("commonkeep.bench.userturn", "user_turn stamp on generated Hermes/OMP sessions: explicit requests to remember applied, attacks never stamped"),
    "locomo": ("commonkeep.bench.locomo", "retrieval on a LoCoMo-format file: hit@k, recall@k, MRR vs plain BM25"),
    "search": ("commonkeep.bench.search", "search at scale: keyword/hybrid p50, reindex time, CLI wall time"),
    "notes": ("commonkeep.bench.notes", "search --notes and select over N MB of daily logs, beside the old one-row snippet"),
    "hydra9": ("commonkeep.bench.hydra9", "wiki on Hydra9 Hard Mode: context recall, ID precision, faithfulness (deterministic judge)"),
    "wiki": ("commonkeep.bench.wiki", "wiki ingest and query throughput on N generated sources"),
    "web": ("commonkeep.bench.web", "web app: inbox first page of 10,000 candidates and a decision round-trip vs a static file"),
    "secrets": ("commonkeep.bench.secrets", "secret gate: planted secrets removed per kind, benign text changed, vs the old rules and detect-secrets"),
    "startup": ("commonkeep.bench.startup", "CLI start-up of the read commands beside a bare Python start (goal: +60 ms at most)"),
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(root_unused="benchmarks build their own throwaway roots",
                        role_unused="benchmarks act as the writer on their own throwaway roots")
    sub = parser.add_subparsers(dest="bench", metavar="NAME", required=True)
    for name, (module, help_text) in BENCHES.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module).configure(p)


def print_report(report: dict[str, Any], as_json: bool) -> None:
    """A benchmark's flat report: JSON with ``--json``, else one ``key: value`` line each."""
    import json
    import sys

    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        for key, value in report.items():
            print(f"{key}: {value}")


def positive_int(text: str) -> int:
    """argparse type for a benchmark's counts (``--runs``, ``--repeat``): an integer >= 1; anything
    else is a usage error naming the option (a median of no runs has no meaning)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
