"""``commonkeep bench store``: append and capture throughput, rewrite time, doctor on a large
inbox, CLI cold start.

Everything runs on a throwaway root in a temp folder. Numbers are wall-clock on this machine,
each beside a baseline from the same run; the README table gives the command that reproduced
them. ``--inbox FILE`` runs the doctor figure on a copy of a real ``captured.jsonl``.
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


def _capture_rates(root: Path, n: int) -> dict[str, float]:
    """``capture()`` per second, beside ``Store.append_candidate`` (one store, no scoring) and the
    old capture path (a new ``Store`` and a layout check per call), in the same run."""
    from commonkeep.gate.capture import capture, score
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store
    from commonkeep.store.layout import ensure_layout

    ensure_layout(root)
    text = "fact {}: the service on port {} restarts nightly"

    def rate(fn: Any) -> float:
        t0 = time.perf_counter()
        for i in range(n):
            fn(i)
        return n / (time.perf_counter() - t0)

    store = Store(root)
    base = new_candidate("fact: the service restarts nightly", tags=["bench"])

    def old_path(i: int) -> None:
        fresh = Store(root)
        fresh.ensure()
        fresh.append_candidate(score(fresh, new_candidate(text.format(i, 8000 + i % 1000), tags=["bench"])))

    return {
        "capture_per_s": rate(lambda i: capture(root, text.format(i, 8000 + i % 1000), tags=["bench"])),
        "capture_unscored_per_s": rate(lambda i: store.append_candidate(new_candidate(text.format(i, 8000 + i % 1000), tags=["bench"]))),
        "append_candidate_per_s": rate(lambda i: store.append_candidate({**base, "id": f"{base['id']}{i}"})),
        "capture_old_path_per_s": rate(old_path),
    }


def _synthetic_inbox(path: Path, n: int) -> None:
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.jsonl import encode_rows

    rows = [new_candidate(f"fact {i}: the service on port {8000 + i % 1000} restarts nightly", tags=["bench", f"t{i % 50}"],
                          evidence_refs=["daily/2026-12-02.md", "pyproject.toml"]) for i in range(n)]
    path.write_bytes(encode_rows(rows))


def _doctor_seconds(root: Path, inbox: Path, cli: list[str]) -> dict[str, float]:
    """``commonkeep doctor`` on a root holding ``inbox``, beside reading the same file once
    with plain ``json.loads`` per line (the floor) and the store checks alone (no plugins)."""
    import json
    import shutil

    from commonkeep.doctor import diagnose
    from commonkeep.store.layout import ensure_layout

    lay = ensure_layout(root)
    shutil.copyfile(inbox, lay.inbox)
    t0 = time.perf_counter()
    n = 0
    with open(lay.inbox, "rb") as fh:
        for line in fh:
            if line.strip():
                try:
                    json.loads(line)
                except ValueError:  # a real inbox may hold bad lines: doctor reports them, the floor skips them
                    continue
                n += 1
    parse = time.perf_counter() - t0
    t0 = time.perf_counter()
    diagnose(str(root), plugins=False)
    store_only = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([*cli, "doctor", "--root", str(root)], stdout=subprocess.DEVNULL, check=False)
    whole = time.perf_counter() - t0
    return {"doctor_candidates": n, "doctor_cli_s": whole, "doctor_store_checks_s": store_only, "parse_once_s": parse}


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
        results.update({k: round(v, 1) for k, v in _capture_rates(base / "cap", args.captures).items()})
        inbox = Path(args.inbox) if args.inbox else base / "inbox.jsonl"
        if not args.inbox:
            _synthetic_inbox(inbox, args.doctor_candidates)
        results.update({k: round(v, 3) for k, v in _doctor_seconds(base / "doc", inbox, cli).items()})
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
        print(f"capture(), 1 process:     {results['capture_per_s']:>10.1f} candidates/s "
              f"(old path, new Store per call: {results['capture_old_path_per_s']:.1f}/s; "
              f"without governance scoring: {results['capture_unscored_per_s']:.1f}/s; "
              f"Store.append_candidate: {results['append_candidate_per_s']:.1f}/s)")
        print(f"`doctor`, {results['doctor_candidates']} cands: {results['doctor_cli_s']:>7.3f} s "
              f"(store checks alone {results['doctor_store_checks_s']:.3f} s; "
              f"reading the inbox once with json.loads: {results['parse_once_s']:.3f} s)")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--appends", type=int, default=4000, help="candidates appended in each throughput run")
    parser.add_argument("--rewrite", type=int, nargs="+", default=[10_000, 100_000], help="record counts to rewrite")
    parser.add_argument("--runs", type=positive_int, default=15, help="cold-start runs (median reported)")
    parser.add_argument("--captures", type=int, default=2000, help="capture() calls in the capture throughput run")
    parser.add_argument("--doctor-candidates", type=int, default=45_000, help="synthetic candidates for the doctor run")
    parser.add_argument("--inbox", metavar="FILE", help="a captured.jsonl to run doctor on instead of synthetic candidates")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
