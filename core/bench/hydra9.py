"""``commonkeep bench hydra9``: the wiki on Hydra9 Hard Mode, scored by a deterministic judge.

Protocol (``contracts/dossier.md §7.5, §8.3``): each turn's ``text`` - never its
``description``, which gives the answer away - becomes its own source ``raw/turn-NN.md`` dated
by its ``day_offset``; each is ingested and followed by a gardener pass; then the Hard Mode query
runs once with the context capped at 2,000 characters. Scores: gold-fact recall and gold-turn
recall, ID-based context precision (average precision over the ranked evidence), plain precision,
and lexical faithfulness. Labelled "RAGAS-style, deterministic judge": not LLM-judged RAGAS.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.util.jsonout import print_json
from commonkeep.wiki import judge
from commonkeep.wiki.gardener import gardener
from commonkeep.wiki.ingest import ingest
from commonkeep.wiki.query import query

MAX_CONTEXT_CHARS = 2000
ANCHOR = date(2025, 12, 31)  # day 0; turns carry negative day offsets


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, metavar="FILE", help="hydra9_hard_mode.json")
    parser.add_argument("--gold", metavar="FILE", help="hydra9_gold.json (default: next to --data)")
    parser.add_argument("--project", metavar="DIR", help="keep the wiki here (default: a temporary folder)")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    parser.set_defaults(run=run)


def _load(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{what} file {path} does not exist", hint="pass the path of the shared data file") from None
    except ValueError as exc:
        raise BadInput(f"{what} file {path} is not valid JSON ({exc})") from None


def load_turns(data: Any, path: Path) -> tuple[list[dict[str, Any]], str]:
    """The Hard Mode turns (only ``turn``, ``day_offset`` and ``text`` are kept) and the query."""
    try:
        variant = data["variants"]["hard_mode"]
        turns = [{"turn": int(t["turn"]), "day_offset": int(t["day_offset"]), "text": str(t["text"])} for t in variant["turns"]]
        return turns, str(variant["query"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BadInput(f"{path} has no usable variants.hard_mode turns/query ({exc})",
                       hint="use shared/data/hydra9_hard_mode.json") from None


def run_protocol(turns: list[dict[str, Any]], question: str, project: Path) -> dict[str, Any]:
    """Ingest each turn as its own source with a gardener pass after each, then query once."""
    (project / "raw").mkdir(parents=True, exist_ok=True)
    sources: dict[str, int] = {}
    t0 = time.perf_counter()
    from commonkeep.util import progress

    for t in progress.track(turns, len(turns), "ingest turns", unit="turn"):
        rel = f"raw/turn-{t['turn']:02d}.md"
        day = ANCHOR + timedelta(days=t["day_offset"])
        (project / rel).write_text(f"---\ndate: {day.isoformat()}\n---\n{t['text']}\n", encoding="utf-8")
        ingest(project, rel)
        gardener(project)
        sources[rel] = t["turn"]
    t1 = time.perf_counter()
    result = query(project, question, limit=10, max_chars=MAX_CONTEXT_CHARS)
    t2 = time.perf_counter()
    return {"result": result, "sources": sources, "ingest_s": t1 - t0, "query_s": t2 - t1}


def score(run: dict[str, Any], gold: Any, project: Path) -> dict[str, Any]:
    """Apply the deterministic judge to one protocol run."""
    result = run["result"]
    context = result.context()
    ranked = [run["sources"].get(e.source) for e in result.evidence]
    gold_turns = set(int(t) for t in gold["gold_turns"])
    facts = [f for group in gold["gold_facts"].values() for f in group]
    fact_recall, missing = judge.fact_recall(context, facts)
    claims = [(e.text.replace("…", " "), (project / e.source).read_text(encoding="utf-8")) for e in result.evidence]
    relevant = sum(1 for r in ranked if r in gold_turns)
    return {
        "judge": "RAGAS-style, deterministic judge",
        "context_chars": len(context),
        "context_cap": MAX_CONTEXT_CHARS,
        "evidence_items": len(ranked),
        "context_recall_facts": round(fact_recall, 4),
        "missing_facts": missing,
        "context_recall_turns": round(judge.id_recall(ranked, gold_turns), 4),
        "missing_turns": sorted(gold_turns - set(r for r in ranked if r is not None)),
        "context_precision_id": round(judge.average_precision(ranked, gold_turns), 4),
        "precision_share": round(relevant / len(ranked), 4) if ranked else 0.0,
        "faithfulness": round(judge.faithfulness(claims), 4),
        "retrieved_turns": ranked,
        "ingest_and_gardener_s": round(run["ingest_s"], 2),
        "query_ms": round(run["query_s"] * 1000, 1),
    }


def bench(data_path: Path, gold_path: Path, project: Path | None = None) -> dict[str, Any]:
    """Run the whole bench; returns the measurements."""
    turns, question = load_turns(_load(data_path, "Hydra9 data"), data_path)
    gold = _load(gold_path, "Hydra9 gold")
    if project is not None:
        project.mkdir(parents=True, exist_ok=True)
        return score(run_protocol(turns, question, project), gold, project)
    with tempfile.TemporaryDirectory(prefix="ck-hydra9-") as tmp:
        return score(run_protocol(turns, question, Path(tmp)), gold, Path(tmp))


def run(args: argparse.Namespace) -> int:
    data = Path(args.data)
    gold = Path(args.gold) if args.gold else data.with_name("hydra9_gold.json")
    out = bench(data, gold, Path(args.project) if args.project else None)
    if args.json:
        print_json(out)
        return 0
    print(f"hydra9 hard mode — {out['judge']}; context {out['context_chars']}/{out['context_cap']} chars, {out['evidence_items']} items")
    for key in ("context_recall_facts", "context_recall_turns", "context_precision_id", "precision_share", "faithfulness"):
        print(f"  {key:<22} {out[key]:.3f}")
    if out["missing_facts"] or out["missing_turns"]:
        print(f"  missing facts: {out['missing_facts']}  missing turns: {out['missing_turns']}")
    print(f"  retrieved turns (ranked): {out['retrieved_turns']}")
    print(f"  21 ingests + 21 gardener passes: {out['ingest_and_gardener_s']} s; final query: {out['query_ms']} ms")
    print("  published (not like-for-like, see contracts/dossier.md §10): Dossier precision 0.938, HMLR test-12 0.23")
    return 0
