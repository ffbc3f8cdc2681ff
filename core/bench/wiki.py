"""``commonkeep bench wiki --sources N``: ingest and query throughput on generated sources.

Sources are generated from a fixed seed (projects, components with codenames and renames,
versioned rules with limits, volume estimates and filler prose), so runs are comparable. Each
ingest is a real pass with its git commit; one gardener pass runs at the end; then a batch of
queries about random components runs against the full wiki.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import print_json
from commonkeep.wiki.gardener import gardener
from commonkeep.wiki.ingest import ingest
from commonkeep.wiki.query import query

_SYLLABLES = ["ka", "lo", "mi", "ra", "te", "vu", "zen", "dor", "pha", "qui", "sol", "bri", "nax", "tor", "vel", "gam"]
_FILLER = [
    "The team met on Tuesday to review the rollout plan.",
    "Several dashboards were updated after the last incident review.",
    "Please file any questions in the usual tracker before Friday.",
    "The migration checklist now lives in the shared drive.",
]


class _Names:
    """Pronounceable names, each used once (accidental collisions would merge alias chains)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def __call__(self, parts: int = 3) -> str:
        while True:
            name = "".join(self.rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()
            if name not in self.used:
                self.used.add(name)
                return name


def generate(n: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """``n`` sources as (relative path, date, text), plus the component names used in them."""
    rng = random.Random(seed)
    _name = _Names(rng)
    projects = [_name(3) for _ in range(max(5, n // 20))]
    components = [f"{_name(2)}-{i + 2}" for i in range(max(10, n // 10))]
    out = []
    for i in range(n):
        p, c = rng.choice(projects), rng.choice(components)
        old = _name(4)
        version = 1 + i * 20 // max(n, 1)  # one policy, a new version every n/20 sources
        lines = [
            f"Project {p} will use the {c} service (internal codename {old}).",
            f"{old} is the same as the old '{_name(4)}' module from {2015 + i % 9}.",
            f"Policy v{version}: {c} may process up to {rng.randint(1, 90) * 1000:,} requests per second.",
            f"{p} expects {rng.randint(1, 9)}.{rng.randint(0, 9)} million events per day.",
            *rng.sample(_FILLER, 2),
        ]
        day = f"2025-{1 + i * 12 // max(n, 1):02d}-{1 + i % 28:02d}"
        out.append((f"raw/gen-{i:05d}.md", day, " ".join(lines)))
    return out


def bench(n: int, queries: int, project: Path) -> dict[str, Any]:
    sources = generate(n)
    (project / "raw").mkdir(parents=True, exist_ok=True)
    per: list[float] = []
    t0 = time.perf_counter()
    from commonkeep.util import progress

    for rel, day, text in progress.track(sources, len(sources), "ingest sources", unit="source"):
        (project / rel).write_text(f"---\ndate: {day}\n---\n{text}\n", encoding="utf-8")
        s = time.perf_counter()
        ingest(project, rel)
        per.append(time.perf_counter() - s)
    ingest_total = time.perf_counter() - t0
    g0 = time.perf_counter()
    gardener(project)
    garden_s = time.perf_counter() - g0
    rng = random.Random(11)
    texts = [t for _, _, t in sources]
    lat: list[float] = []
    found = 0
    for _ in range(queries):
        comp = rng.choice(texts).split(" the ", 1)[1].split(" service", 1)[0]
        s = time.perf_counter()
        result = query(project, f"What limits apply to {comp} and what else is it called?", limit=10)
        lat.append(time.perf_counter() - s)
        found += any(comp in e.text for e in result.evidence)
    per_ms = sorted(x * 1000 for x in per)
    lat_ms = sorted(x * 1000 for x in lat)
    return {
        "sources": n,
        "ingest_total_s": round(ingest_total, 2),
        "ingest_per_s": round(n / ingest_total, 2) if ingest_total else 0.0,
        "ingest_ms_p50": round(statistics.median(per_ms), 1),
        "ingest_ms_p95": round(per_ms[int(0.95 * (len(per_ms) - 1))], 1),
        "gardener_s": round(garden_s, 2),
        "queries": queries,
        "query_ms_p50": round(statistics.median(lat_ms), 1) if lat_ms else 0.0,
        "query_ms_p95": round(lat_ms[int(0.95 * (len(lat_ms) - 1))], 1) if lat_ms else 0.0,
        "queries_with_the_component_in_evidence": found,
    }


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sources", type=int, default=1000, help="number of generated sources (default 1000)")
    parser.add_argument("--queries", type=int, default=50, help="number of queries after ingest (default 50)")
    parser.add_argument("--project", metavar="DIR", help="keep the wiki here (default: a temporary folder)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.project:
        out = bench(args.sources, args.queries, Path(args.project))
    else:
        with tempfile.TemporaryDirectory(prefix="ck-wikibench-") as tmp:
            out = bench(args.sources, args.queries, Path(tmp))
    if args.json:
        print_json(out, ensure_ascii=True)
        return 0
    print(f"wiki bench — {out['sources']} generated sources, one git commit per ingest")
    print(f"  ingest: {out['ingest_per_s']} sources/s (p50 {out['ingest_ms_p50']} ms, p95 {out['ingest_ms_p95']} ms, total {out['ingest_total_s']} s)")
    print(f"  gardener (one pass over everything): {out['gardener_s']} s")
    print(f"  query: p50 {out['query_ms_p50']} ms, p95 {out['query_ms_p95']} ms over {out['queries']} queries; "
          f"{out['queries_with_the_component_in_evidence']} had the asked component in the evidence")
    return 0
