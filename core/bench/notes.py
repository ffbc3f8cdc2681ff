"""``commonkeep bench notes --notes-mb 10``: ``search --notes`` and ``select`` over big daily logs.

Generates a throwaway root whose ``daily/`` holds ``--notes-mb`` MB of logs (deterministic: seeded
sentences over a 5,000-word vocabulary, one file per day, today's log the largest), with the two
shapes that were slow: a paragraph repeating the query phrase thousands of times, and one line
of hundreds of KB with no line break. Then measures:

- the first ``search --notes`` (builds ``notes_fts`` from every log: cold);
- ``search_notes`` p50/p95 for a few queries (the phrase, common words, a rare word) once built;
- the same after appending one entry to today's log (the re-sync of that one file);
- ``select_for_prompt`` p50 (reads the end of today's log);
- the old path beside it: SQLite's ``snippet()`` over the repeated paragraph as one row (how a
  block was indexed before rows were cut at ``notes.CHUNK_CHARS``), on ``--old-kb`` KB of it,
  once (it grows with the square of the hits).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

PHRASE = "staging check"
QUERIES = (PHRASE, "deploy pipeline tests", "zyxwvut")


def _words(rng: random.Random, n: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: set[str] = set()
    while len(out) < n:
        out.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(out)


def write_logs(root: Path, megabytes: float, seed: int = 7) -> dict[str, int]:
    """Fill ``root/daily`` with about ``megabytes`` MB of logs; returns ``{file: bytes}``."""
    rng = random.Random(seed)
    vocab = [*_words(rng), "deploy", "pipeline", "tests", "staging", "check"]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    total = int(megabytes * 1_000_000)
    days = max(1, min(30, total // 300_000))
    today = date.today()
    sizes: dict[str, int] = {}
    for d in range(days):
        day = today - timedelta(days=d)
        budget = total // 2 if d == 0 else (total - total // 2) // max(1, days - 1)
        parts: list[str] = []
        used = 0
        if d == 0:  # the two shapes that were slow, in today's log
            parts.append(" ".join([f"the deploy pipeline runs the {PHRASE}"] * 4000))
            parts.append(" ".join(rng.choices(vocab, weights=weights, k=40_000)))
            used = sum(len(p) + 2 for p in parts)
        while used < budget:
            para = "\n".join(" ".join(rng.choices(vocab, weights=weights, k=rng.randint(6, 18))).capitalize() + "."
                             for _ in range(rng.randint(1, 5)))
            parts.append(f"<!-- {day.isoformat()}T10:00:00Z -->\n{para}")
            used += len(parts[-1]) + 2
        path = root / "daily" / f"{day.isoformat()}.md"
        path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
        sizes[path.name] = path.stat().st_size
    return sizes


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def old_snippet_seconds(kb: int) -> float:
    """``snippet()`` over one row made of the repeated paragraph (``kb`` KB), as before chunks."""
    text = " ".join([f"the deploy pipeline runs the {PHRASE}"] * max(1, kb * 1000 // 44))
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.execute("INSERT INTO t (rowid, text) VALUES (1, ?)", (text,))
    start = time.perf_counter()
    conn.execute("SELECT snippet(t, 0, '', '', '…', 32) FROM t WHERE t MATCH ?", ('"staging" OR "check"',)).fetchall()
    return time.perf_counter() - start


def run_bench(megabytes: float, runs: int = 20, old_kb: int = 200) -> dict[str, Any]:
    from commonkeep.recall.search.notes import search_notes
    from commonkeep.recall.select import select_for_prompt
    from commonkeep.store.layout import ensure_layout

    with tempfile.TemporaryDirectory(prefix="ck-bench-notes-") as tmp:
        root = ensure_layout(Path(tmp) / "root").root
        sizes = write_logs(root, megabytes)
        report: dict[str, Any] = {"daily_mb": round(sum(sizes.values()) / 1e6, 2), "daily_files": len(sizes),
                                  "largest_file_mb": round(max(sizes.values()) / 1e6, 2)}
        start = time.perf_counter()
        search_notes(root, PHRASE)
        report["first_search_build_s"] = round(time.perf_counter() - start, 2)
        for query in QUERIES:
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                search_notes(root, query)
                times.append(time.perf_counter() - start)
            report[f"search_notes_ms p50/p95 {query!r}"] = f"{_p(times, 0.5)} / {_p(times, 0.95)}"
        today = root / "daily" / f"{date.today().isoformat()}.md"
        with open(today, "a", encoding="utf-8") as fh:
            fh.write("\n\nOne more note about the staging check.\n")
        start = time.perf_counter()
        search_notes(root, PHRASE)
        report["search_notes_after_append_ms"] = round(1000 * (time.perf_counter() - start), 1)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            select_for_prompt(root, "How does the deploy pipeline run the staging check?", write=False)
            times.append(time.perf_counter() - start)
        report["select_ms p50/p95"] = f"{_p(times, 0.5)} / {_p(times, 0.95)}"
        report.update(_as_commands(root, min(runs, 5)))
    report[f"old_path_snippet_one_row_{old_kb}kb_s"] = round(old_snippet_seconds(old_kb), 2)
    return report


def _as_commands(root: Path, runs: int) -> dict[str, str]:
    """``commonkeep search --notes QUERY`` as a person runs it: a new process each time (its start-up,
    imports and the index opened included), beside a bare Python start in the same runs."""
    import subprocess
    import sys

    cli = [sys.executable, "-m", "commonkeep.cli", "search", "--root", str(root), "--notes"]
    bare: list[float] = []
    out: dict[str, str] = {}
    for query in QUERIES:
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - start)
            start = time.perf_counter()
            done = subprocess.run([*cli, query], capture_output=True, check=False)
            times.append(time.perf_counter() - start)
            if done.returncode != 0:  # a crash is not a timing
                raise RuntimeError(f"search --notes {query!r} exited {done.returncode}: {done.stderr[-300:]!r}")
        out[f"command_ms p50/p95 {query!r}"] = f"{_p(times, 0.5)} / {_p(times, 0.95)}"
    out["bare_python_ms p50"] = str(_p(bare, 0.5))
    return out


def run(args: argparse.Namespace) -> int:
    report = run_bench(args.notes_mb, args.runs, args.old_kb)
    from commonkeep.bench import print_report

    print_report(report, args.json)
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--notes-mb", type=float, default=10.0, help="MB of daily logs to generate (default 10)")
    parser.add_argument("--runs", type=positive_int, default=20, help="timed runs per query (default 20)")
    parser.add_argument("--old-kb", type=positive_int, default=200,
                        help="KB of the repeated paragraph for the old path (one snippet() call; default 200)")
    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.set_defaults(run=run)
