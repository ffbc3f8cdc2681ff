"""``commonkeep bench apply``: one small decision on a large store, as a person makes it: a new
``commonkeep`` process, the sync of the search index included (issue 38).

A root of ``--records`` generated records (``bench search``'s), indexed, every record's vector
present with its text's hash (so the sync after a change finds every vector current, as on a store
that was embedded; the vectors' values are zeros: they never enter an apply's cost). Then, each as
a new process, timed by wall clock and by the CPU time of the child:

- ``confidence``: ``commonkeep apply`` of a one-op patch changing a record's confidence;
- ``deprecate``: the same, a status change;
- ``approve``: ``commonkeep review --approve`` of a new candidate (an ``add``, which compares its
  statement with every active record's).

``--against REV…`` runs the same steps with the package of each revision (``git archive``) on its
own copy of the root, alternating with this code. The first apply on each root is timed apart
(``first_*``): it works out what later ones remember (the record files' validity, the projection).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from commonkeep.bench import positive_int, print_report

STEPS = ("confidence", "deprecate", "approve")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=positive_int, default=100_000, help="records in the store (default 100000)")
    parser.add_argument("--repeat", type=positive_int, default=5, help="decisions timed per step and version (default 5)")
    parser.add_argument("--against", nargs="*", default=[], metavar="REV",
                        help="git revisions (or checkout folders) to run beside this code, each on its own copy of the root")
    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print_report(bench(args.records, args.repeat, list(args.against)), args.json)
    return 0


def build_root(root: Path, n: int) -> list[str]:
    """A store of ``n`` generated records, indexed, every vector current; returns the record ids."""
    from commonkeep.bench.search import synthetic_records
    from commonkeep.recall.search import index
    from commonkeep.store.jsonl import append_jsonl
    from commonkeep.store.layout import ensure_layout

    records, _ = synthetic_records(n)
    ensure_layout(root)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", records, fsync=False)
    index.sync_root(root, embed=False)
    _vectors_current(root)
    return [str(r["id"]) for r in records]


def _vectors_current(root: Path) -> None:
    """Every record's vector row, with its text's hash (zeros for values), and the index marked current."""
    from commonkeep.recall.search import index, models
    from commonkeep.recall.search.semantic import DIM, MODEL_ID, embed_text, text_hash

    mid = models.embedder(root).id
    conn = index.connect_recall(index.recall_db_path(root))
    try:
        zeros = bytes(4 * DIM)
        rows = conn.execute("SELECT id, statement, context FROM records").fetchall()
        with conn:
            conn.executemany("INSERT OR REPLACE INTO vectors (id, model, text_hash, dim, vec) VALUES (?, ?, ?, ?, ?)",
                             ((rid, mid, text_hash(embed_text(s, c), mid), DIM, zeros) for rid, s, c in rows))
            fp = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0]
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('vectors_fingerprint', ?)",
                         (fp if mid == MODEL_ID else f"{mid}:{fp}",))
    finally:
        conn.close()


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _cli(root: Path, env: dict[str, str], *args: str) -> tuple[float, float]:
    """Run ``commonkeep ARGS --root ROOT --role librarian`` as a new process; (wall ms, CPU ms)."""
    cmd = [sys.executable, "-m", "commonkeep.cli", *args, "--root", str(root), "--role", "librarian"]
    t0, c0 = time.perf_counter(), _child_cpu()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False)
    wall, cpu = (time.perf_counter() - t0) * 1000, (_child_cpu() - c0) * 1000
    if done.returncode != 0:
        raise SystemExit(f"`commonkeep {' '.join(args)}` failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return wall, cpu


def _one_op(root: Path, rng: random.Random, ids: list[str], step: str) -> str:
    """A one-op patch for ``step`` written into ``root``; its id."""
    from commonkeep.patches.patch import write_patch
    from commonkeep.store.layout import Layout

    rid = rng.choice(ids)
    # the shape ``ids.patch_id`` gives (a run of twelve digits after a letter would send the patch's
    # id to the maintained scanner, as no id commonkeep or OMP makes does)
    pid = "patch_202612050000_ck" + "".join(rng.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(6))
    op: dict[str, Any] = {"op_id": "op_1", "op": "update", "target_id": rid,
                          "updates": {"confidence": round(rng.uniform(0.5, 0.99), 3)}, "risk": "low", "default_selected": True}
    if step == "deprecate":
        op = {"op_id": "op_1", "op": "deprecate", "target_id": rid, "risk": "low", "default_selected": True}
    ids.remove(rid)  # a deprecated record takes no later op
    write_patch(Layout(root), {"patch_id": pid, "created_at": "2026-12-05T00:00:00.000Z", "generated_by": "manual",
                               "mode": "supervised", "summary": f"bench {step}", "ops": [op], "status": "proposed",
                               "applied_at": None, "applied_ops": [], "skipped_ops": []})
    return pid


def _word(rng: random.Random) -> str:
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))


def _candidate(root: Path, n: int) -> str:
    """A new candidate about its own subject (made-up words: it matches no record, so the approve is a plain add)."""
    from commonkeep.gate.capture import capture

    rng = random.Random(n)
    text = (f"The {_word(rng)} {_word(rng)} job hands its {_word(rng)} report to the {_word(rng)} team "
            f"every {rng.choice(['Monday', 'Tuesday', 'Thursday'])} at {rng.randrange(7, 11)}:{rng.randrange(60):02d}.")
    got = capture(root, text, tags=["bench"], evidence_refs=[f"daily/2026-12-05.md#{n}", f"runbook/{_word(rng)}.md"])
    return str(got.candidate["id"])


def _step(root: Path, env: dict[str, str], rng: random.Random, ids: list[str], step: str, n: int) -> tuple[float, float]:
    if step == "approve":
        return _cli(root, env, "review", "--approve", _candidate(root, n))
    return _cli(root, env, "apply", _one_op(root, rng, ids, step))


def bench(n: int, repeat: int, against: list[str]) -> dict[str, Any]:
    from commonkeep.bench.capture import _checkout

    with tempfile.TemporaryDirectory(prefix="ck-bench-apply-") as tmp:
        base = Path(tmp)
        t0 = time.perf_counter()
        ids = build_root(base / "this", n)
        report: dict[str, Any] = {"records": n, "build_s": round(time.perf_counter() - t0, 1)}
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(base / "pycache")
        versions: dict[str, tuple[Path, dict[str, str], list[str]]] = {"this": (base / "this", env, list(ids))}
        for k, rev in enumerate(against):
            path = _checkout(rev, base / f"against-{k}")
            shutil.copytree(base / "this", base / f"root-{k}", symlinks=True)
            versions[rev] = (base / f"root-{k}", env | {"PYTHONPATH": os.pathsep.join([str(path), *filter(None, [env.get("PYTHONPATH")])]),
                                                       "COMMONKEEP_PLUGIN_CACHE": str(base / f"against-{k}" / "entry-points.json")},
                             list(ids))
        rng = random.Random(5)
        for name, (root, venv, vids) in versions.items():
            report[f"first_apply_ms[{name}]"] = round(_step(root, venv, rng, vids, "confidence", 0)[0])
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
        count = 1
        for step in STEPS:
            for _ in range(repeat):
                for name, (root, venv, vids) in versions.items():  # alternated: load on the box hits every version alike
                    runs.setdefault((step, name), []).append(_step(root, venv, rng, vids, step, count))
                    count += 1
        for (step, name), r in runs.items():
            report[f"{step}_p50_ms[{name}]"] = round(statistics.median(w for w, _ in r))
            report[f"{step}_cpu_p50_ms[{name}]"] = round(statistics.median(c for _, c in r))
        report["load_average"] = round(os.getloadavg()[0], 1)
    return report
