"""``commonkeep bench locomo --data FILE``: retrieval quality on any LoCoMo-format file.

For each conversation a fresh memory root is made; every turn becomes a memory record in
``memory/L2.playbooks.jsonl`` whose evidence keeps its ``dia_id`` (``ref:
locomo/<sample_id>/session_<n>#<dia_id>``) and whose ``created_at`` is its session's day; the indexes are built by the same ``sync_root`` the
store uses. Every question of categories 1–4 is asked through :func:`commonkeep.recall.search.hybrid.search`
and scored against its ``evidence`` ids (read back from the returned records' provenance):
hit@1/5/10, recall@5/10, MRR (first relevant rank within 10), overall and per category, and
per-query latency (p50/p95). In the same run a plain BM25 baseline asks the contract table
``memory_fts`` with every word of the question OR-ed together (stopwords included, no source
context).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.util.repeated_options import ListOption

KS = (1, 5, 10)
BOOTSTRAP_RESAMPLES = 1000
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_SAFE = re.compile(r"[^A-Za-z0-9_]+")


def turn_records(conv: dict[str, Any], created: str) -> list[dict[str, Any]]:
    """One contract-shaped record per turn, in conversation order."""
    c = conv["conversation"]
    sample = str(conv.get("sample_id", "conv"))
    sessions = sorted(
        (int(k.split("_")[1]), k) for k in c if re.fullmatch(r"session_\d+", k) and isinstance(c[k], list)
    )
    out = []
    for n, key in sessions:
        when = str(c.get(f"{key}_date_time", ""))
        said = session_day(when) or created
        for turn in c[key]:
            dia = str(turn["dia_id"])
            text = f"{turn.get('speaker', '')}: {turn.get('text', '')}".strip()
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            out.append(
                {
                    "id": "mem_locomo_" + _SAFE.sub("_", f"{sample}_{dia}").strip("_"),
                    "layer": "L2",
                    "scope": {"type": "global"},
                    "tags": ["locomo"],
                    "statement": text,
                    "evidence": [
                        {
                            "type": "conversation",
                            "ref": f"locomo/{sample}/session_{n}#{dia}",
                            "note": f"LoCoMo turn {dia} ({when})",
                        }
                    ],
                    "confidence": 0.8,
                    "stability": "semi-stable",
                    "created_at": said,
                    "updated_at": said,
                    "review": {
                        "cadence_days": 30,
                        "next_review": created,
                        "change_condition": "Benchmark record.",
                    },
                    "status": "active",
                    "supersedes": [],
                    "superseded_by": [],
                    "vault_ref": None,
                }
            )
    return out


def session_day(when: str) -> str | None:
    """The ``YYYY-MM-DD`` of a LoCoMo session time (``"1:56 pm on 8 May, 2023"``), else ``None``:
    a memory captured from a conversation carries the day it was said as its ``created_at``."""
    from datetime import date

    from commonkeep.recall.search.timeframe import dates_in

    for _, _, period, _ in dates_in(when):
        if period.spans and period.spans[0][0] == period.spans[0][1]:
            return date.fromordinal(period.spans[0][0]).isoformat()
    return None


def dia_of(record: dict[str, Any]) -> str:
    """The ``dia_id`` kept in a record's provenance."""
    return str(record["evidence"][0]["ref"]).rsplit("#", 1)[1]


class Scores:
    """Accumulates hit@k, recall@k, MRR and latencies, overall and per category."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, list[str], set[str], float]] = []

    def add(self, category: int, ranked: list[str], gold: set[str], seconds: float) -> None:
        self.rows.append((category, ranked, gold, seconds))

    @staticmethod
    def _summary(rows: list[tuple[int, list[str], set[str], float]]) -> dict[str, Any]:
        n = len(rows)
        if n == 0:
            return {"questions": 0}
        out: dict[str, Any] = {"questions": n}
        for k in KS:
            out[f"hit@{k}"] = round(sum(1 for _, r, g, _ in rows if g & set(r[:k])) / n, 4)
        for k in (5, 10):
            out[f"recall@{k}"] = round(sum(len(g & set(r[:k])) / len(g) for _, r, g, _ in rows) / n, 4)
        mrr = 0.0
        for _, r, g, _ in rows:
            for i, d in enumerate(r[:10]):
                if d in g:
                    mrr += 1 / (i + 1)
                    break
        out["mrr"] = round(mrr / n, 4)
        lat = sorted(s for *_, s in rows)
        out["p50_ms"] = round(lat[n // 2] * 1000, 3)
        out["p95_ms"] = round(lat[min(n - 1, int(n * 0.95))] * 1000, 3)
        return out

    def hit5_interval(self, resamples: int = BOOTSTRAP_RESAMPLES) -> list[float]:
        """95 % bootstrap interval of the overall hit@5 (questions resampled with replacement,
        fixed seed, percentile method): how much the figure could move on another sample of
        questions like these."""
        hits = [1 if g & set(r[:5]) else 0 for _, r, g, _ in self.rows]
        if not hits:
            return [0.0, 0.0]
        rng = random.Random(0)
        n = len(hits)
        means = sorted(sum(hits[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
        return [round(means[int(0.025 * resamples)], 4), round(means[int(0.975 * resamples) - 1], 4)]

    def summary(self) -> dict[str, Any]:
        out = {"overall": {**self._summary(self.rows), "hit@5_ci95": self.hit5_interval()}}
        for cat, name in CATEGORIES.items():
            out[f"{cat}:{name}"] = self._summary([r for r in self.rows if r[0] == cat])
        return out


def run_bench(
    data: Path, modes: list[str], *, log: Callable[[str], None] | None = None, models: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Run the benchmark on a LoCoMo-format file; returns the report (see module docstring).

    ``models``: a ``config.json`` ``commonkeep`` section (``embedder``, ``reranker``) written into
    every conversation's root, to score a model of the user's own."""
    from commonkeep.errors import BadInput
    from commonkeep.recall.search import fts, index, sync
    from commonkeep.recall.search.hybrid import search
    from commonkeep.store.jsonl import append_jsonl
    from commonkeep.store.layout import ensure_layout
    from commonkeep.util.timeutil import today

    try:
        convs = json.loads(Path(data).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"cannot read LoCoMo data {data}: {exc}") from exc
    if isinstance(convs, dict):
        convs = [convs]
    if not isinstance(convs, list) or not all(
        isinstance(c, dict) and "conversation" in c and "qa" in c for c in convs
    ):
        raise BadInput(f"{data} is not in LoCoMo format (a list of {{conversation, qa}} objects)")
    scores = {"bm25-baseline": Scores(), **{m: Scores() for m in modes}}
    used: dict[str, set[str]] = {m: set() for m in modes}
    resolved: dict[str, set[str]] = {m: set() for m in modes}
    turns = 0
    index_s = 0.0
    with tempfile.TemporaryDirectory(prefix="commonkeep-locomo-") as tmp:
        for ci, conv in enumerate(convs):
            root = ensure_layout(Path(tmp) / f"conv{ci}").root
            if models:
                (root / "config.json").write_text(json.dumps({"commonkeep": models}), encoding="utf-8")
            records = turn_records(conv, today())
            turns += len(records)
            append_jsonl(root / "memory" / "L2.playbooks.jsonl", records)
            started = time.perf_counter()
            sync.sync_root(root, full=True, embed=any(split_mode(m)[0] != "keyword" for m in modes))
            index_s += time.perf_counter() - started
            dia = {r["id"]: dia_of(r) for r in records}
            questions = [q for q in conv["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]
            if log:
                log(f"{conv.get('sample_id', ci)}: {len(records)} turns, {len(questions)} questions")
            from commonkeep.util import progress

            with index._closing(fts.connect(root / "search" / "memory-fts.db")) as conn:
                for q in progress.track(questions, len(questions), f"conversation {ci + 1}/{len(convs)}", unit="question"):
                    gold = {str(e) for e in q["evidence"]}
                    t0 = time.perf_counter()
                    expr = fts.match_any(str(q["question"]), drop_stopwords=False)
                    hits = fts.run_match(conn, expr, 10) if expr else []
                    scores["bm25-baseline"].add(
                        int(q["category"]), [dia[h.id] for h in hits], gold, time.perf_counter() - t0
                    )
            for spec in modes:
                mode, expand = split_mode(spec)
                for q in questions:
                    gold = {str(e) for e in q["evidence"]}
                    t0 = time.perf_counter()
                    resp = search(root, str(q["question"]), mode, 10, expand=expand)
                    elapsed = time.perf_counter() - t0
                    used[spec].add(resp.used)
                    resolved[spec].add(resp.resolved)
                    scores[spec].add(int(q["category"]), [dia[r.id] for r in resp.results], gold, elapsed)
    return {
        "data": str(data),
        "conversations": len(convs),
        "turns": turns,
        "index_seconds": round(index_s, 3),
        "systems": {name: s.summary() for name, s in scores.items()},
        "used": {m: sorted(u) for m, u in used.items()},
        "resolved": {m: sorted(r) for m, r in resolved.items()},
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo retrieval: {report['data']} — {report['conversations']} conversation(s), {report['turns']} turns (indexing {report['index_seconds']} s)"
    ]
    head = f"{'system':<40} {'slice':<16} {'n':>5} {'hit@1':>6} {'hit@5':>6} {'hit@10':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'p50ms':>7} {'p95ms':>7}"
    lines.append(head)
    for name, summary in report["systems"].items():
        label = name
        if name != "bm25-baseline":
            label += "".join(
                f" ->{r}" for r in report.get("resolved", {}).get(name, []) if r != split_mode(name)[0]
            )
            label += f" ({'/'.join(report['used'].get(name, []))})"
        for slice_, s in summary.items():
            if not s.get("questions"):
                continue
            lines.append(
                f"{label[:40]:<40} {slice_:<16} {s['questions']:>5} {s['hit@1']:>6.3f} {s['hit@5']:>6.3f} {s['hit@10']:>6.3f} "
                f"{s['recall@5']:>6.3f} {s['recall@10']:>6.3f} {s['mrr']:>6.3f} {s['p50_ms']:>7.2f} {s['p95_ms']:>7.2f}"
            )
    lines.append("hit@5, 95 % bootstrap interval over the questions (1,000 resamples, seed 0):")
    for name, summary in report["systems"].items():
        lo, hi = summary["overall"].get("hit@5_ci95", [0.0, 0.0])
        lines.append(f"  {name:<38} {summary['overall'].get('hit@5', 0.0):.3f}  [{lo:.3f}, {hi:.3f}]")
    return "\n".join(lines)


EXPAND = ":expand"


def split_mode(spec: str) -> tuple[str, bool]:
    """``"rerank:expand"`` -> ``("rerank", True)``; ``"keyword"`` -> ``("keyword", False)``."""
    if spec.endswith(EXPAND):
        return spec[: -len(EXPAND)], True
    return spec, False


def run(args: argparse.Namespace) -> int:
    from commonkeep.recall.search.hybrid import MODES

    modes = list(args.modes)  # comma-separated, repeats add up: util.repeated_options.ListOption
    for m in modes:
        if split_mode(m)[0] not in MODES:
            from commonkeep.errors import BadInput

            raise BadInput(
                f"unknown mode {m!r} in --modes; use {', '.join(MODES)}, each optionally with {EXPAND}"
            )
    models = None
    if args.models:
        from commonkeep.errors import BadInput
        from commonkeep.recall.search.models import KINDS, ModelError, resolve

        try:
            loaded = json.loads(Path(args.models).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BadInput(f"cannot read --models {args.models}: {exc}") from exc
        models = loaded.get("commonkeep", loaded) if isinstance(loaded, dict) else None
        if not isinstance(models, dict) or not any(isinstance(models.get(k), dict) for k in KINDS):
            raise BadInput(f"--models {args.models} must hold an object with \"embedder\" and/or \"reranker\"")
        for kind in KINDS:
            if isinstance(models.get(kind), dict):
                try:
                    resolve(kind, models[kind])
                except ModelError as exc:
                    raise BadInput(str(exc)) from exc
    report = run_bench(
        Path(args.data), modes, log=None if args.json else lambda s: print(s, file=sys.stderr), models=models
    )
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        print(format_report(report))
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data",
        required=True,
        metavar="FILE",
        help="a LoCoMo-format JSON file (the LoCoMo data set's locomo10.json, or a split of it in the same format)",
    )
    parser.add_argument(
        "--modes",
        action=ListOption,
        default=["keyword"],
        help="comma-separated search modes (repeatable: they add up) to score besides the BM25 baseline (auto, keyword, semantic, deep, "
        "rerank, llm; default keyword); append :expand to score one with pseudo-relevance feedback "
        "(e.g. keyword,keyword:expand); llm asks the LLM at $COMMONKEEP_RERANK_LLM_URL once per question "
        "(unset or failing: auto's results, and the table's used column says so)",
    )
    parser.add_argument(
        "--models",
        metavar="FILE",
        help="a JSON file with your own models, as in config.json's \"commonkeep\" section "
        "({\"embedder\": {...}, \"reranker\": {...}}), used in every conversation's root",
    )
    parser.add_argument("--json", action="store_true", help="machine-readable report")
    parser.set_defaults(run=run)
