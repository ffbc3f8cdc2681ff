"""``commonkeep bench store``: append throughput, rewrite time and CLI cold start.

Everything runs on a throwaway root in a temp folder. Numbers are wall-clock on this machine;
the README table gives the command that reproduced them.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import print_json


def _record(i: int) -> dict[str, Any]:
    return {
        "id": f"mem_20261202105616_{i:08d}",
        "layer": "L2",
        "scope": {"type": "global"},
        "tags": ["bench", f"t{i % 50}"],
        "statement": f"Benchmark fact number {i}: the service on port {8000 + i % 1000} restarts nightly.",
        "evidence": [{"type": "artifact", "ref": "daily/2026-12-02.md", "note": "Captured evidence reference"}],
        "confidence": 0.88,
        "stability": "semi-stable",
        "created_at": "2026-12-02",
        "updated_at": "2026-12-02",
        "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "The fact changes."},
        "status": "active",
        "supersedes": [],
        "superseded_by": [],
        "vault_ref": None,
    }


def _append_worker(root: str, worker: int, count: int) -> None:
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store

    store = Store(root)
    for i in range(count):
        store.append_candidate(new_candidate(f"worker {worker} fact {i}: deploys run on Tuesdays", tags=["bench"]))


def _appends_per_second(root: Path, procs: int, per_proc: int) -> float:
    from commonkeep.store.layout import ensure_layout

    ensure_layout(root)
    ctx = mp.get_context("fork")
    workers = [ctx.Process(target=_append_worker, args=(str(root), w, per_proc)) for w in range(procs)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return procs * per_proc / (time.perf_counter() - t0)


def _rewrite_seconds(root: Path, n: int) -> float:
    from commonkeep.store.core import Store
    from commonkeep.store.jsonl import encode_rows
    from commonkeep.store.layout import ensure_layout

    lay = ensure_layout(root)
    lay.l2.write_bytes(encode_rows([_record(i) for i in range(n)]))
    store = Store(root)
    t0 = time.perf_counter()
    store.rewrite_records(lay.l2, lambda rows: [*rows[:-1], {**rows[-1], "confidence": 0.9}])
    return time.perf_counter() - t0


def _median_wall(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(args: argparse.Namespace) -> int:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="ck-bench-") as tmp:
        base = Path(tmp)
        results["append_1proc_per_s"] = round(_appends_per_second(base / "a1", 1, args.appends), 1)
        results["append_4proc_per_s"] = round(_appends_per_second(base / "a4", 4, args.appends // 4), 1)
        for n in args.rewrite:
            results[f"rewrite_{n}_s"] = round(_rewrite_seconds(base / f"rw{n}", n), 3)
        exe = str(Path(sys.executable).with_name("commonkeep"))
        cli = [exe] if os.path.exists(exe) else [sys.executable, "-m", "commonkeep.cli"]
        cold_root = base / "a1"
        results["inbox_candidates"] = args.appends
        results["cli_inbox_json_ms"] = round(1000 * _median_wall([*cli, "inbox", "--json", "--root", str(cold_root)], args.runs), 1)
        results["bare_python_ms"] = round(1000 * _median_wall([sys.executable, "-c", "pass"], args.runs), 1)
        small = base / "small"
        _append_worker(str(small), 0, 10)
        results["cli_inbox_json_10_ms"] = round(1000 * _median_wall([*cli, "inbox", "--json", "--root", str(small)], args.runs), 1)
    if args.json:
        print_json(results, ensure_ascii=True)
    else:
        print(f"append, 1 process:        {results['append_1proc_per_s']:>10.1f} candidates/s")
        print(f"append, 4 processes:      {results['append_4proc_per_s']:>10.1f} candidates/s (total)")
        for n in args.rewrite:
            print(f"rewrite {n:>7} records:   {results[f'rewrite_{n}_s']:>10.3f} s")
        print(f"`inbox --json`, 10 cands: {results['cli_inbox_json_10_ms']:>10.1f} ms (median of {args.runs})")
        print(f"`inbox --json`, {args.appends} cands: {results['cli_inbox_json_ms']:>7.1f} ms")
        print(f"bare `python -c pass`:    {results['bare_python_ms']:>10.1f} ms")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--appends", type=int, default=4000, help="candidates appended in each throughput run")
    parser.add_argument("--rewrite", type=int, nargs="+", default=[10_000, 100_000], help="record counts to rewrite")
    parser.add_argument("--runs", type=int, default=15, help="cold-start runs (median reported)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
