"""``commonkeep bench startup``: how long the CLI's read commands take to start, beside a bare
Python start measured in the same run.

Hosts run the CLI as a subprocess on every tool call (OMP's extension, Orphus' memory tool), so
what a read command costs over ``python -c pass`` is paid on every turn. Each command runs
``--runs`` times, interleaved with the bare start so machine load hits both alike, on a
throwaway root seeded with ``--records`` records and candidates. The figure is the median
difference (and the ratio); the goal is at most 60 ms over the bare start. Every run's exit code
is checked: a command that fails (a usage error, a crash) is reported as FAILED with what it said,
never timed as if it had worked, and the bench exits 1.

``write`` is timed too, whole (goal: at most 150 ms wall): a plain text and a text holding a token,
with the scanner service (``commonkeep.secrets.scanner_service``) started by the bench in a
private directory of its own and warm, and the token text again with the service off
(``COMMONKEEP_SCANNER_SERVICE=0``: Kingfisher's rules loaded in the process), the baseline.
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
WRITE_GOAL_MS = 150.0
PLAIN_TEXT = "The build uses uv."
TOKEN_TEXT = "The CI token is ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A, rotate it monthly."
#: (name, argv, scanner service on, goal in ms wall or None for the baseline)
WRITES: tuple[tuple[str, tuple[str, ...], bool, float | None], ...] = (
    ("write (plain text, service warm)", ("write", PLAIN_TEXT), True, WRITE_GOAL_MS),
    ("write (token text, service warm)", ("write", TOKEN_TEXT), True, WRITE_GOAL_MS),
    ("write (token text, in process)", ("write", TOKEN_TEXT), False, None),
)


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


def measure(runs: int = 15, records: int = 200, writes: bool = True) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="commonkeep-startup-") as tmp:
        root = Path(tmp) / "root"
        _seed(root, records)
        env = {**os.environ, "OMP_MEMORY_ROOT": str(root), "COMMONKEEP_ROLE": "coder"}
        cli = [sys.executable, "-m", "commonkeep.cli"]
        # name -> (argv, env, exit codes that are answers)
        cases: dict[str, tuple[list[str], dict[str, str], frozenset[int]]] = {
            " ".join(cmd): ([*cli, *cmd], env, ANSWERS.get(cmd[0], frozenset({0}))) for cmd in READ_COMMANDS}
        goals: dict[str, float | None] = {name: None for name in cases}
        failed: dict[str, str] = {}
        took: dict[str, list[float]] = {}
        bare: list[float] = []
        # the writes go to a copy of the root: a read command timed after them would otherwise
        # time the exit gate reading the lines they appended (``inbox``, ``review``), not its start-up
        import shutil

        shutil.copytree(root, Path(tmp) / "root-writes", symlinks=True)
        write_env = {**env, "OMP_MEMORY_ROOT": str(Path(tmp) / "root-writes")}
        service = _start_service(Path(tmp), write_env) if writes else None
        try:
            if service is not None:
                served, why = service[1], service[2]
                for name, argv, on, goal in WRITES:
                    if on and why:
                        failed[name] = why
                        continue
                    cases[name] = ([*cli, *argv], served if on else {**write_env, "COMMONKEEP_SCANNER_SERVICE": "0"}, frozenset({0}))
                    goals[name] = goal
            failed.update(_time_all(cases, runs, took, bare))
            if service is not None and service[0] is not None and service[0].poll() is not None:
                for name, _argv, on, _goal in WRITES:  # it died: its rows may hold fall-backs
                    if on and name in took:
                        failed[name] = "the scanner service exited during the run"
        finally:
            if service is not None and service[0] is not None:
                service[0].terminate()
                service[0].wait(timeout=30)
    base = statistics.median(bare) * 1000 if bare else 0.0
    rows: list[dict[str, Any]] = []
    written = [w[0] for w in WRITES] if writes else []
    for name in [*(n for n in cases if n not in written), *written]:
        if name in failed:
            rows.append({"command": name, "failed": failed[name]})
            continue
        ms = statistics.median(took[name]) * 1000
        goal = goals.get(name)
        # a read command: over the bare start; a write: wall time, and the baseline has no goal
        within = (ms - base <= GOAL_MS) if name not in written else (None if goal is None else ms <= goal)
        rows.append({"command": name, "median_ms": round(ms, 1), "over_bare_ms": round(ms - base, 1),
                     "ratio": round(ms / base, 2) if base else None, "within_goal": within})
    return {"bare_python_ms": round(base, 1), "goal_over_bare_ms": GOAL_MS, "write_goal_ms": WRITE_GOAL_MS, "runs": runs,
            "records": records, "commands": rows, "ok": not failed}


def _time_all(cases: dict[str, tuple[list[str], dict[str, str], frozenset[int]]], runs: int,
              took: dict[str, list[float]], bare: list[float]) -> dict[str, str]:
    """Time every case ``runs`` times, each beside a bare Python start; the cases that failed."""
    failed: dict[str, str] = {}
    for name, (argv, env, ok) in cases.items():  # warm the index and the page cache once; a failing command is out
        try:
            _time(argv, env, ok)
        except Failed as exc:
            failed[name] = str(exc)
    took.update({name: [] for name in cases if name not in failed})
    for _ in range(runs):
        for name, (argv, env, ok) in cases.items():
            if name in failed:
                continue
            bare.append(_time([sys.executable, "-c", "pass"], env))
            try:
                took[name].append(_time(argv, env, ok))
            except Failed as exc:  # failed on a later run: reported, never half-timed
                failed[name] = str(exc)
                del took[name]
    return failed


def _start_service(tmp: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes] | None, dict[str, str], str | None]:
    """The scanner service of this run, in a private directory of its own: its process, the
    environment that uses it, and why it is not up (None when it answers)."""
    import socket

    from commonkeep.secrets import scanner_service

    run_dir = tmp / "run"
    run_dir.mkdir(mode=0o700)
    served = {k: v for k, v in env.items() if k != "COMMONKEEP_SCANNER_SERVICE"}
    served.update({"XDG_RUNTIME_DIR": str(run_dir), "COMMONKEEP_SCANNER_IDLE": "600"})
    name = scanner_service.socket_name()
    if name is None or not hasattr(socket, "SO_PEERCRED"):
        return None, served, "no scanner service here (Kingfisher not installed, or not Linux)"
    path = str(run_dir / "commonkeep" / name)
    if len(os.fsencode(path)) > 107:
        return None, served, f"the socket path {path} is too long (set TMPDIR shorter)"
    proc = subprocess.Popen(scanner_service.command(), env=served, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if scanner_service.query(path, b"warm up " + TOKEN_TEXT.encode()) is not None:
            return proc, served, None
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    return proc, served, "the scanner service did not answer"


def format_report(report: dict[str, Any]) -> str:
    lines = [f"bare python start: {report['bare_python_ms']} ms (median of the runs beside each command); "
             f"goal: at most {report['goal_over_bare_ms']:.0f} ms over it ({report.get('write_goal_ms', WRITE_GOAL_MS):.0f} ms "
             f"wall for write); {report['records']} records seeded"]
    for r in report["commands"]:
        if "failed" in r:
            lines.append(f"  commonkeep {r['command']:<32} FAILED ({r['failed']})")
            continue
        mark = {True: "ok", False: "OVER", None: "baseline"}[r["within_goal"]]
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
