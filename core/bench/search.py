"""``commonkeep bench search --records N``: search at scale.

Builds a throwaway root with ``N`` synthetic records (deterministic: seeded random sentences over
a 5,000-word vocabulary with a Zipf-like distribution), then measures:

- full reindex (``reindex`` without embedding: both databases from the JSONL), first into an
  empty ``search/`` and then again over the index it built: wall and CPU seconds and peak memory,
  beside the baseline from the same run, a plain FTS5 build of the same texts (one table,
  statement and tags), each in a child process of its own;
- the index sync after a one-op patch p50, by the changed lines (``delta``) beside the whole
  sync of the same change;
- ``select_for_prompt`` p50 (what ``commonkeep select`` does for one prompt, runtime files written);
- keyword query p50/p95 in process (``recall_fts`` query only, connection open), the same with
  pseudo-relevance feedback (``expand``), and the whole ``search()`` call (freshness check,
  connection, query);
- hybrid (``deep``) and ``rerank`` ``search()`` p50 with the local embedder when installed. Embedding 100k
  texts on a 2-core machine takes many minutes, so the stored vectors are seeded random unit
  vectors (registered with the right text hashes so nothing is re-embedded); the query is
  embedded for real and scored against all ``N`` vectors;
- ``commonkeep search`` wall time as a subprocess (cold start included), in the default mode
  (``keyword``) and with ``--mode auto`` (rerank, so the embedder loads, when the extra is installed).
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


def synthetic_records(n: int, seed: int = 7) -> tuple[list[dict[str, Any]], list[str]]:
    """``n`` valid records and the vocabulary they were drawn from."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = [1 / (i + 1) for i in range(len(vocab))]
    records = []
    for i in range(n):
        words = rng.choices(vocab, weights=weights, k=rng.randint(8, 24))
        records.append(
            {
                "id": f"mem_bench_{i:07d}",
                "layer": "L2",
                "scope": {"type": "global"},
                "tags": rng.sample(vocab[:200], 2),
                "statement": " ".join(words).capitalize() + ".",
                "evidence": [
                    {
                        "type": "artifact",
                        "ref": f"daily/2026-{1 + i % 12:02d}-01.md",
                        "note": "Captured evidence reference",
                    }
                ],
                "confidence": round(rng.uniform(0.5, 0.95), 2),
                "stability": "semi-stable",
                "created_at": "2026-12-02",
                "updated_at": "2026-12-02",
                "review": {
                    "cadence_days": 30,
                    "next_review": "2027-01-01",
                    "change_condition": "Benchmark record.",
                },
                "status": "active",
                "supersedes": [],
                "superseded_by": [],
                "vault_ref": None,
            }
        )
    return records, vocab


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def _seed_vectors(root: Path, rng: random.Random) -> int:
    import numpy as np

    from commonkeep.recall.search import index, semantic

    with index._closing(index.connect_recall(index.recall_db_path(root))) as conn:
        rows = conn.execute("SELECT id, statement, context FROM records ORDER BY ord").fetchall()
        gen = np.random.default_rng(rng.randint(0, 2**31))
        conn.execute("BEGIN IMMEDIATE")
        for start in range(0, len(rows), 10_000):
            chunk = rows[start : start + 10_000]
            vecs = gen.standard_normal((len(chunk), semantic.DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (id, model, text_hash, dim, vec) VALUES (?, ?, ?, ?, ?)",
                (
                    (
                        rid,
                        semantic.MODEL_ID,
                        semantic.text_hash(semantic.embed_text(st, ctx)),
                        semantic.DIM,
                        vecs[i].astype("<f4").tobytes(),
                    )
                    for i, (rid, st, ctx) in enumerate(chunk)
                ),
            )
        conn.execute("COMMIT")
        return len(rows)


SELECT_RUNS = 10

# Each build runs in a process of its own, so its peak memory (ru_maxrss) is its own.
_BUILD = """
import json, sys, time
from pathlib import Path
root, kind = Path(sys.argv[1]), sys.argv[2]
t0, c0 = time.perf_counter(), time.process_time()
if kind == "reindex":
    from commonkeep.recall.search.sync import sync_root
    sync_root(root, full=True, embed=False)
else:  # the baseline: the same texts into one plain FTS5 table, nothing else
    import sqlite3
    db = root / "plain-fts5.db"
    db.unlink(missing_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(statement, tags, tokenize='porter unicode61')")
    for path in sorted((root / "memory").rglob("*.jsonl")):
        if path.name.startswith(("L1", "L2")) or path.parent.name == "projects":
            with open(path, encoding="utf-8") as fh:
                conn.executemany("INSERT INTO t VALUES (?, ?)",
                                 ((r["statement"], " ".join(r["tags"])) for r in map(json.loads, fh) if r.get("status") == "active"))
    conn.commit()
    conn.close()
    db.unlink()
# VmHWM: this process's own peak (ru_maxrss would include the parent's pages at fork)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"s": round(time.perf_counter() - t0, 3), "cpu_s": round(time.process_time() - c0, 3),
                  "peak_mb": round(peak / 1024, 1)}))
"""


def measured(root: Path, kind: str) -> dict[str, float]:
    """``reindex`` (both databases from the JSONL) or the plain FTS5 build of the same texts, in a
    child process: wall seconds, CPU seconds, peak resident memory (MB)."""
    out = subprocess.run([sys.executable, "-c", _BUILD, str(root), kind], check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def patch_sync(root: Path, runs: int = 5) -> dict[str, float]:
    """The index sync after a one-op patch (one statement rewritten through
    ``Store.rewrite_records``, as ``apply`` does: the whole file is rewritten): p50 of ``runs``, by
    the changed lines (``delta``), beside the whole sync of the same change (its line state
    dropped first, so the delta declines). Vectors are left alone (``embed=False``)."""
    from commonkeep.recall.search.sync import sync_root
    from commonkeep.store.core import Store

    times: dict[str, list[float]] = {"delta": [], "whole": []}
    for run in range(runs):
        for label in ("delta", "whole"):
            i = 1000 + 2 * run + (label == "whole")

            def change(rs: list[dict[str, Any]], i: int = i, label: str = label) -> list[dict[str, Any]]:
                k = i % len(rs)  # a small --records run changes the records it has (was an IndexError)
                rs[k] = {**rs[k], "statement": f"Patched statement number {i}, {label}."}
                return rs

            Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", change)
            if label == "whole":
                with sqlite3.connect(root / "search" / "recall.db") as conn:
                    conn.execute("DELETE FROM file_lines")
            start = time.perf_counter()
            sync_root(root, embed=False)
            times[label].append(time.perf_counter() - start)
    return {"sync_after_one_op_patch_ms": round(statistics.median(times["delta"]) * 1000, 1),
            "sync_after_one_op_patch_whole_ms (old path)": round(statistics.median(times["whole"]) * 1000, 1)}


def run_bench(n: int, queries: int = 200, cli_runs: int = 10) -> dict[str, Any]:
    from commonkeep.errors import BadInput
    from commonkeep.recall.search import index, semantic
    from commonkeep.recall.search.hybrid import search
    from commonkeep.store.jsonl import append_jsonl
    from commonkeep.store.layout import ensure_layout
    from commonkeep.util import progress

    if n < 1 or queries < 1:
        raise BadInput(f"records and queries must be at least 1, got {n} and {queries}")
    rng = random.Random(11)
    records, vocab = synthetic_records(n)
    report: dict[str, Any] = {"records": n}
    with tempfile.TemporaryDirectory(prefix="commonkeep-bench-search-") as tmp:
        root = ensure_layout(Path(tmp) / "root").root
        for start in range(0, n, 10_000):
            append_jsonl(root / "memory" / "L2.playbooks.jsonl", records[start : start + 10_000], fsync=False)
        for key, value in measured(root, "reindex").items():
            report[f"reindex_{key}"] = value
        for key, value in measured(root, "plain").items():
            report[f"plain_fts5_build_{key}"] = value
        report["reindex_vs_plain_time"] = round(report["reindex_s"] / max(report["plain_fts5_build_s"], 1e-9), 2)
        # ``reindex`` as a user runs it: over the index already there (moving nothing aside).
        for key, value in measured(root, "reindex").items():
            report[f"reindex_again_{key}"] = value
        report["reindex_again_vs_plain_time"] = round(
            report["reindex_again_s"] / max(report["plain_fts5_build_s"], 1e-9), 2
        )
        report["index_bytes"] = sum(p.stat().st_size for p in (root / "search").iterdir())
        report["jsonl_bytes"] = (root / "memory" / "L2.playbooks.jsonl").stat().st_size
        qs = [" ".join(rng.choices(vocab[50:2000], k=rng.randint(1, 3))) for _ in range(queries)]
        with index._closing(index.connect_recall(index.recall_db_path(root))) as conn:
            index.search_recall(conn, qs[0], 8)
            lat = []
            for q in progress.track(qs, len(qs), "queries", unit="query"):
                t = time.perf_counter()
                index.search_recall(conn, q, 8)
                lat.append(time.perf_counter() - t)
        report["keyword_query_p50_ms"] = round(statistics.median(lat) * 1000, 3)
        report["keyword_query_p95_ms"] = round(_pct(lat, 0.95) * 1000, 3)
        report.update(patch_sync(root))
        with index._closing(index.connect_recall(index.recall_db_path(root))) as conn:
            index.search_recall(conn, qs[0], 8, expand=True)
            lat = []
            for q in progress.track(qs, len(qs), "queries", unit="query"):
                t = time.perf_counter()
                index.search_recall(conn, q, 8, expand=True)
                lat.append(time.perf_counter() - t)
        report["keyword_expand_query_p50_ms"] = round(statistics.median(lat) * 1000, 3)
        report["keyword_expand_query_p95_ms"] = round(_pct(lat, 0.95) * 1000, 3)
        lat = []
        for q in progress.track(qs, len(qs), "search() calls", unit="query"):
            t = time.perf_counter()
            search(root, q, "keyword", 8)
            lat.append(time.perf_counter() - t)
        report["keyword_search_call_p50_ms"] = round(statistics.median(lat) * 1000, 3)
        backend = semantic.BUILTIN_BACKENDS[0]
        why = backend.available()
        if why is None:
            report["vectors_seeded"] = _seed_vectors(root, rng)
            from commonkeep.bench.search_embed import patch_sync_embedded

            report.update(patch_sync_embedded(root))
            search(root, qs[0], "deep", 8, backends=[backend])  # loads the model and the matrix once
            lat = []
            for q in qs[:50]:
                t = time.perf_counter()
                search(root, q, "deep", 8, backends=[backend])
                lat.append(time.perf_counter() - t)
            report["hybrid_search_call_p50_ms"] = round(statistics.median(lat) * 1000, 3)
            report["hybrid_search_call_p95_ms"] = round(_pct(lat, 0.95) * 1000, 3)
            lat = []
            for q in qs[:50]:
                t = time.perf_counter()
                search(root, q, "rerank", 8, backends=[backend])
                lat.append(time.perf_counter() - t)
            report["rerank_search_call_p50_ms"] = round(statistics.median(lat) * 1000, 3)
        else:
            report["hybrid"] = f"not measured: {why}"
        # Selection for a prompt (``commonkeep select``), after the vectors exist (steady state): the
        # store has not changed since the last sync, so its hard rules, contested records and the
        # whole records of the hits come from recall.db (the JSONL is not read).
        from commonkeep.recall.select import select_for_prompt

        lat = []
        for q in qs[:SELECT_RUNS]:
            t = time.perf_counter()
            select_for_prompt(root, f"how do we handle {q} in this project", write=True)
            lat.append(time.perf_counter() - t)
        report["select_for_prompt_p50_ms"] = round(statistics.median(lat) * 1000, 1)
        exe = [sys.executable, "-m", "commonkeep.cli", "search", "--root", str(root)]
        for key, extra in (
            ("cli_auto_search_wall_p50_ms", ["--mode", "auto"]),
            ("cli_keyword_search_wall_p50_ms", []),  # the CLI's default mode
        ):
            wall = []
            for q in qs[:cli_runs]:
                t = time.perf_counter()
                subprocess.run([*exe, *extra, q], check=True, capture_output=True)
                wall.append(time.perf_counter() - t)
            report[key] = round(statistics.median(wall) * 1000, 1)
    return report


def run(args: argparse.Namespace) -> int:
    if args.json:
        from commonkeep.util import progress

        progress.set_quiet()
    report = run_bench(args.records, args.queries)
    from commonkeep.bench import print_report

    print_report(report, args.json)
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument(
        "--records", type=positive_int, default=100_000, help="how many synthetic records (default 100000; >= 1)"
    )
    parser.add_argument(
        "--queries", type=positive_int, default=200, help="how many keyword queries to time (default 200; >= 1)"
    )
    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.set_defaults(run=run)
