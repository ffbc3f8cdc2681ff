"""``commonkeep bench startup``: how long the CLI's read commands take to start, beside a bare
Python start measured in the same run.

Hosts run the CLI as a subprocess on every tool call (OMP's extension, Orphus' memory tool), so
what a read command costs over ``python -c pass`` is paid on every turn. Each command runs
``--runs`` times, interleaved with the bare start so machine load hits both alike, on a
throwaway root seeded with ``--records`` records and candidates. The figure is the median
difference (and the ratio); the goal is at most 60 ms over the bare start. Every run's exit code
is checked: a command that fails (a usage error, a crash) is reported as FAILED with what it said,
never timed as if it had worked, and the bench exits 1.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL_MS = 60.0
READ_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",), ("root",), ("inbox", "--json"), ("search", "tests"), ("select", "run the tests"),
    ("project", "--format", "hermes"), ("patches",), ("inquiries",), ("review", "--list"), ("doctor",),
)
#: exit codes that are answers, not failures (``doctor``: 1 means it found something to report)
ANSWERS: dict[str, frozenset[int]] = {"doctor": frozenset({0, 1})}


class Failed(Exception):
    """A timed command exited with a code that is not one of its answers."""


def _seed(root: Path, n: int) -> None:
    from commonkeep.gate.capture import capture
    from commonkeep.store.layout import ensure_layout

    ensure_layout(root)
    for i in range(n):
        capture(root, f"Convention {i}: run the tests with pytest -q before commit {i}.", tags=["testing"],
                evidence_refs=["a", "b"], confidence=0.9)
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    prop = curate(root, role="librarian")
    if prop.ops:  # every op: the gate holds an agent's candidates for a person, who approves them here
        apply_patch(root, prop.patch["patch_id"], role="librarian", op_ids=[str(o["op_id"]) for o in prop.ops])
    for i in range(n):
        capture(root, f"Pending note {i}: the staging port is {5400 + i}.", evidence_refs=["c"], confidence=0.5)


def _time(argv: list[str], env: dict[str, str], ok: frozenset[int] = frozenset({0})) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=120)
    took = time.perf_counter() - started
    if done.returncode not in ok:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        raise Failed(f"exit {done.returncode}: {' | '.join(said) or '(no output)'}")
    return took


def measure(runs: int = 15, records: int = 200) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="commonkeep-startup-") as tmp:
        root = Path(tmp) / "root"
        _seed(root, records)
        env = {**os.environ, "OMP_MEMORY_ROOT": str(root), "COMMONKEEP_ROLE": "coder"}
        cli = [sys.executable, "-m", "commonkeep.cli"]
        failed: dict[str, str] = {}
        for cmd in READ_COMMANDS:  # warm the index and the page cache once; a failing command is out
            try:
                _time([*cli, *cmd], env, ANSWERS.get(cmd[0], frozenset({0})))
            except Failed as exc:
                failed[" ".join(cmd)] = str(exc)
        bare: list[float] = []
        took: dict[str, list[float]] = {" ".join(c): [] for c in READ_COMMANDS if " ".join(c) not in failed}
        for _ in range(runs):
            for cmd in READ_COMMANDS:
                name = " ".join(cmd)
                if name in failed:
                    continue
                bare.append(_time([sys.executable, "-c", "pass"], env))
                try:
                    took[name].append(_time([*cli, *cmd], env, ANSWERS.get(cmd[0], frozenset({0}))))
                except Failed as exc:  # failed on a later run: reported, never half-timed
                    failed[name] = str(exc)
                    del took[name]
    base = statistics.median(bare) * 1000 if bare else 0.0
    rows: list[dict[str, Any]] = []
    for cmd in READ_COMMANDS:
        name = " ".join(cmd)
        if name in failed:
            rows.append({"command": name, "failed": failed[name]})
            continue
        ms = statistics.median(took[name]) * 1000
        rows.append({"command": name, "median_ms": round(ms, 1), "over_bare_ms": round(ms - base, 1),
                     "ratio": round(ms / base, 2) if base else None, "within_goal": ms - base <= GOAL_MS})
    return {"bare_python_ms": round(base, 1), "goal_over_bare_ms": GOAL_MS, "runs": runs, "records": records,
            "commands": rows, "ok": not failed}


def format_report(report: dict[str, Any]) -> str:
    lines = [f"bare python start: {report['bare_python_ms']} ms (median of the runs beside each command); "
             f"goal: at most {report['goal_over_bare_ms']:.0f} ms over it; {report['records']} records seeded"]
    for r in report["commands"]:
        if "failed" in r:
            lines.append(f"  commonkeep {r['command']:<32} FAILED ({r['failed']})")
            continue
        mark = "ok" if r["within_goal"] else "OVER"
        lines.append(f"  commonkeep {r['command']:<32} {r['median_ms']:>7.1f} ms  +{r['over_bare_ms']:>6.1f} ms  x{r['ratio']:<5} {mark}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = measure(runs=args.runs, records=args.records)
    if args.json:
        from commonkeep.util.jsonout import print_json

        print_json(report)
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--runs", type=positive_int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--records", type=int, default=200, help="records and candidates seeded (default 200)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.set_defaults(run=run)
