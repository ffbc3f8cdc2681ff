"""Reciprocal Rank Fusion and the one search entry point, :func:`search`.

RRF exactly as ``contracts/ompkeep-store.md`` §9.3 (``mergeHybridResults``): the keyword result
at 0-based index ``i`` scores ``0.45 / (60 + i + 1)``; the semantic id at 0-based index ``j``
scores ``0.55 / (60 + j + 1)`` but only when it is an eligible record (active, non-tombstoned,
layer L2); scores are summed, sorted descending (ties: keyword rank, then id) and cut to the
limit. Every result carries ``sources`` and ``score_provenance``.

``rerank`` (commonkeep's own mode, not in the contract) scores a pool of candidates with the
local embedder: the top ``max(5 * limit, 50)`` keyword results score
``(bm25 - min) / (max - min) + cosine`` (equal weights), and as many of the embedder's nearest
records join the pool with their cosine alone (BM25 part 0, the pool's minimum), so a record that
shares no word with the query can still be found. The cues of ``cues`` are added to that score: a
question asking *when* or naming a period, a speaker it names, the episode (source) a record shares
with the pool's best. On the LoCoMo dev split it is the best offline
setting measured (README, Benchmarks). Backends without ``similarities`` (qmd) fall back to
``deep``.

``auto`` (the default mode) is ``rerank`` when a semantic backend is available, else ``keyword``;
``SearchResponse.resolved`` says which.

``llm`` (optional, off unless ``COMMONKEEP_RERANK_LLM_URL`` is set; only when asked for by name)
reorders what ``auto`` finds with an LLM over an OpenAI-compatible endpoint
(``commonkeep.recall.search.llm_rerank``); unconfigured or failing, it answers with ``auto``'s results
and a notice.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# The rerank stage's cues (time, speaker, episode) live in ``cues``; these names stay importable here.
from commonkeep.recall.search.cues import TIME_ANCHOR_BONUS, asks_when, has_time_anchor  # noqa: F401

FTS_WEIGHT = 0.45
SEMANTIC_WEIGHT = 0.55
RRF_K = 60
MODES = ("auto", "keyword", "semantic", "deep", "rerank", "llm")
MAX_LIMIT = 10_000  # more results than anyone reads; SQLite's LIMIT overflows past 2**63


@dataclass
class Result:
    """One search result with where its score came from."""

    id: str
    layer: str
    rule_type: str
    confidence: float
    statement: str
    score: float
    sources: list[str] = field(default_factory=list)
    score_provenance: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchResponse:
    """What ``search`` answers: results, the mode asked for, the mode it resolved to, what was
    actually used (``keyword``, ``fts+<backend>``, ``fts+<backend> rerank``), notices, timing.

    ``resolved``: ``auto`` becomes ``rerank`` when a semantic backend is available, else
    ``keyword``; any other mode resolves to itself (``used`` says when it fell back; ``llm``'s
    ``used`` is its first stage's, plus ``+llm`` when the model's order was applied).
    """

    query: str
    mode: str
    used: str
    results: list[Result]
    notices: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    resolved: str = ""
    expand: bool = False
    # Daily-log and evidence hits (``notes.Note``) when asked for (``search(..., notes=True)``);
    # ``None`` otherwise, and then the JSON has no ``notes`` key (hosts parse it).
    notes: list[Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "mode": self.mode,
            "resolved": self.resolved or self.mode,
            "expand": self.expand,
            "used": self.used,
            "elapsed_ms": round(self.elapsed_ms, 3),
            "notices": self.notices,
            "results": [r.to_json() for r in self.results],
        }
        if self.notes is not None:
            out["notes"] = [n.to_json() for n in self.notes]
        return out


_TAKES_NEAREST: dict[type, bool] = {}


def _takes_nearest(backend: Any) -> bool:
    """Whether ``backend.similarities`` accepts ``nearest`` (asked once per backend class: rerank's hot path)."""
    cls = type(backend)
    if cls not in _TAKES_NEAREST:
        _TAKES_NEAREST[cls] = "nearest" in inspect.signature(backend.similarities).parameters
    return _TAKES_NEAREST[cls]


def rrf_score(rank: int, weight: float) -> float:
    """The contribution of a 1-based ``rank`` (= 0-based index + 1)."""
    return weight / (RRF_K + rank)


def fuse(
    keyword_ids: Sequence[str],
    semantic_ids: Sequence[str],
    eligible: Mapping[str, str] | set[str],
    limit: int,
    *,
    semantic_backend: str = "semantic",
) -> list[tuple[str, float, list[str], dict[str, Any]]]:
    """RRF of two ranked id lists; returns ``(id, score, sources, score_provenance)`` best first.

    ``eligible``: ids whose semantic rank may count (the contract: eligible L2 records).
    """
    scores: dict[str, float] = {}
    sources: dict[str, list[str]] = {}
    prov: dict[str, dict[str, Any]] = {}
    first_kw: dict[str, int] = {}
    for i, rid in enumerate(keyword_ids):
        if rid in first_kw:
            continue
        first_kw[rid] = i
        s = rrf_score(i + 1, FTS_WEIGHT)
        scores[rid] = scores.get(rid, 0.0) + s
        sources.setdefault(rid, []).append("fts")
        prov.setdefault(rid, {})["fts"] = {"rank": i + 1, "weight": FTS_WEIGHT, "score": s}
    seen_sem: set[str] = set()
    for j, rid in enumerate(semantic_ids):
        if rid in seen_sem or rid not in eligible:
            continue
        seen_sem.add(rid)
        s = rrf_score(j + 1, SEMANTIC_WEIGHT)
        scores[rid] = scores.get(rid, 0.0) + s
        sources.setdefault(rid, []).append(semantic_backend)
        prov.setdefault(rid, {})["semantic"] = {
            "rank": j + 1,
            "weight": SEMANTIC_WEIGHT,
            "score": s,
            "backend": semantic_backend,
        }
    order = sorted(scores, key=lambda r: (-scores[r], first_kw.get(r, len(keyword_ids)), r))
    return [(rid, scores[rid], sources[rid], prov[rid]) for rid in order[: max(0, limit)]]


def search(
    root: Path | str,
    query: str,
    mode: str = "auto",
    limit: int = 8,
    *,
    backends: Sequence[Any] | None = None,
    expand: bool = False,
    notes: bool = False,
) -> SearchResponse:
    """Search the root; :func:`_search_records` says how records are found.

    ``notes``: also search the daily logs and evidence records (``notes.search_notes``, up to
    ``limit`` hits in ``SearchResponse.notes``). Without it no daily file is looked at.
    """
    resp = _search_records(root, query, mode, limit, backends=backends, expand=expand)
    if notes:
        from commonkeep.recall.search import notes as notes_mod

        started = time.perf_counter()
        conn = notes_mod.index_conn(root)
        synced = notes_mod.sync_notes(root, conn)
        resp.notes = notes_mod.query_notes(conn, query, limit)
        resp.notices.extend(synced.notices)
        resp.elapsed_ms += (time.perf_counter() - started) * 1000
    return resp


def _search_records(
    root: Path | str,
    query: str,
    mode: str = "auto",
    limit: int = 8,
    *,
    backends: Sequence[Any] | None = None,
    expand: bool = False,
) -> SearchResponse:
    """Search the root's records. ``mode``: ``auto`` (the default: ``rerank`` when a semantic backend is
    available, else ``keyword``), ``keyword`` (FTS5), ``semantic`` (a backend), ``deep`` (RRF of
    both), ``rerank`` (keyword candidates re-scored by the backend) or ``llm`` (``auto``'s top
    results reordered by the configured LLM, ``llm_rerank.rerank``).

    ``expand``: keyword retrieval with pseudo-relevance feedback (``index.search_expanded``;
    off by default, it lowered hit@5 on LoCoMo); every mode's keyword part uses it.

    A semantic, deep or rerank search without a usable backend falls back to keyword search and
    says so in ``notices`` (and once on stderr); ``auto`` without one is keyword search, silently
    (``resolved`` says which).
    """
    from commonkeep.errors import BadInput
    from commonkeep.recall.search import fts, index

    if mode not in MODES:
        raise BadInput(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
    if not 0 < limit <= MAX_LIMIT:
        raise BadInput(f"--limit must be between 1 and {MAX_LIMIT:,}, got {limit}")
    query = fts.encodable(query)  # a lone surrogate (API callers) cannot reach SQLite or the embedder
    started = time.perf_counter()
    if mode == "llm":
        from commonkeep.recall.search import llm_rerank

        config = llm_rerank.configured()
        resp = _search_records(
            root, query, "auto", llm_rerank.pool_size(limit) if config else limit, backends=backends, expand=expand
        )
        llm_rerank.rerank(resp, query, limit, config)
        if config is not None and "+llm" not in resp.used:  # failed: exactly ``auto``'s results, not the pool's head
            fallback = _search_records(root, query, "auto", limit, backends=backends, expand=expand)
            resp.results = fallback.results
        resp.mode, resp.resolved = mode, mode
        resp.elapsed_ms = (time.perf_counter() - started) * 1000
        return resp
    root = str(root)
    conn = index.open_fresh(root)
    notices: list[str] = index.take_notices()  # a damaged, unwritable or full index: what was used instead
    depth = max(limit * 5, 50)
    backend = None
    resolved = mode
    if mode != "keyword":
        from commonkeep.recall.search import semantic  # not needed (nor imported) for keyword searches

        backend, reasons = semantic.choose_backend(backends)
        if mode == "auto":
            resolved = "keyword" if backend is None else "rerank"
        elif backend is None:
            msg = "no semantic backend available (" + "; ".join(reasons) + "); using keyword search"
            semantic.warn_once("no-backend:" + msg, msg)
            notices.append(msg)
    # ``conn`` is this thread's shared reader (``index.reader``): it is not closed here.
    how = resolved
    if backend is not None and how == "rerank" and not hasattr(backend, "similarities"):
        notices.append(f"semantic backend {backend.name} cannot rerank; using deep (RRF) instead")
        how = "deep"
    keyword_hits = index.search_recall(conn, query, limit if backend is None else depth, expand=expand)
    semantic_ids: list[str] = []
    sims: dict[str, float] = {}
    if backend is not None:
        try:
            if how == "rerank":
                ids = [h.id for h in keyword_hits]
                if _takes_nearest(backend):
                    sims = backend.similarities(root, query, ids, nearest=depth)
                else:  # a third-party backend that only scores given ids
                    sims = backend.similarities(root, query, ids) if ids else {}
            else:
                semantic_ids = list(backend.search(root, query, depth))
        except Exception as exc:
            msg = (
                f"semantic backend {backend.name} failed ({type(exc).__name__}: {exc}); using keyword search"
            )
            semantic.warn_once("failed:" + backend.name, msg)
            notices.append(msg)
            backend = None
    if backend is None:
        results = [
            Result(
                h.id,
                h.layer,
                h.rule_type,
                h.confidence,
                h.statement,
                h.score,
                ["fts"],
                {"fts": {"rank": i + 1, "bm25": h.score}},
            )
            for i, h in enumerate(keyword_hits[:limit])
        ]
        return SearchResponse(
            query, mode, "keyword", results, notices, (time.perf_counter() - started) * 1000, resolved, expand
        )
    rows = index.lookup(conn, list(dict.fromkeys([*(h.id for h in keyword_hits), *semantic_ids])))
    bm25 = {h.id: h.score for h in keyword_hits}
    if how == "rerank":
        have = {h.id for h in keyword_hits}
        extra = index.lookup(conn, [rid for rid in sims if rid not in have])
        cross = _cross_encoder(root, notices)
        pool = max(limit, CROSS_POOL) if cross is not None else limit
        from commonkeep.recall.search.cues import record_facts

        facts = record_facts(conn, [*(h.id for h in keyword_hits), *extra])
        resp = _rerank(query, keyword_hits, sims, extra, backend.name, pool, notices, started, facts)
        if cross is not None:
            _cross_rerank(cross, query, resp, limit, notices)
        resp.mode, resp.resolved, resp.expand = mode, resolved, expand
        return resp
    eligible = {rid for rid, row in rows.items() if row[1] == "L2"}
    if mode == "semantic":
        ranked = [rid for rid in semantic_ids if rid in rows]
        results = []
        for j, rid in enumerate(ranked[:limit]):
            row = rows[rid]
            results.append(
                Result(
                    rid,
                    row[1],
                    row[2],
                    row[3],
                    row[4],
                    rrf_score(j + 1, SEMANTIC_WEIGHT),
                    [backend.name],
                    {"semantic": {"rank": j + 1, "backend": backend.name}},
                )
            )
        return SearchResponse(
            query,
            mode,
            backend.name,
            results,
            notices,
            (time.perf_counter() - started) * 1000,
            resolved,
            expand,
        )
    fused = fuse([h.id for h in keyword_hits], semantic_ids, eligible, limit, semantic_backend=backend.name)
    results = []
    for rid, score, srcs, prov in fused:
        row = rows[rid]
        if "fts" in prov:
            prov["fts"]["bm25"] = bm25.get(rid)
        results.append(Result(rid, row[1], row[2], row[3], row[4], score, srcs, prov))
    return SearchResponse(
        query,
        mode,
        f"fts+{backend.name}",
        results,
        notices,
        (time.perf_counter() - started) * 1000,
        resolved,
        expand,
    )


CROSS_POOL = 30  # how many of the rerank stage's best a configured cross-encoder reorders


def _cross_encoder(root: str, notices: list[str]) -> Any:
    """The cross-encoder ``config.json`` names for ``root`` (loaded once), ``None`` when none is set
    or it cannot load (then a notice says why and the bi-encoder order stays)."""
    from commonkeep.recall.search import models, semantic

    try:
        spec = models.reranker(root)
        return None if spec is None else semantic.load_model(spec)
    except Exception as exc:  # a broken user model is a notice, never a failed search
        msg = f"cross-encoder not used ({type(exc).__name__}: {exc})"
        semantic.warn_once("cross:" + msg, msg)
        notices.append(msg)
        return None


def _cross_rerank(cross: Any, query: str, resp: SearchResponse, limit: int, notices: list[str]) -> None:
    """Reorder ``resp.results`` by the cross-encoder's score of (query, statement); cut to ``limit``."""
    from commonkeep.recall.search import semantic

    try:
        scores = cross.score(query, [r.statement for r in resp.results])
    except Exception as exc:
        msg = f"cross-encoder failed ({type(exc).__name__}: {exc}); kept the rerank order"
        semantic.warn_once("cross-failed", msg)
        notices.append(msg)
        del resp.results[limit:]
        return
    order = sorted(range(len(resp.results)), key=lambda i: (-scores[i], i))
    results = []
    for i in order[:limit]:
        r = resp.results[i]
        r.score_provenance["cross_encoder"] = {"score": scores[i], "model": cross.spec.id, "rank_before": i + 1}
        r.score = scores[i]
        results.append(r)
    resp.results = results
    resp.used += " +cross-encoder"


def _rerank(
    query: str,
    hits: Sequence[Any],
    sims: Mapping[str, float],
    extra: Mapping[str, Sequence[Any]],
    backend: str,
    limit: int,
    notices: list[str],
    started: float,
    facts: Mapping[str, tuple[int | None, str, int]] | None = None,
) -> SearchResponse:
    """Min-max normalised BM25 plus cosine similarity, over the keyword candidates and the
    backend's nearest records (``extra``: their index rows; BM25 part 0, as the pool's minimum),
    plus the cues of ``cues`` (``facts``: each record's day and source)."""
    from commonkeep.recall.search import cues

    cue = cues.Cues(query)
    facts = facts or {}
    top, bottom = (max(h.score for h in hits), min(h.score for h in hits)) if hits else (0.0, 0.0)
    span = top - bottom
    scored: dict[str, tuple[float, int, Result]] = {}

    def add(rid: str, base: float, order: int, statement: str, result: Result) -> None:
        bonuses = cue.bonuses(statement, facts.get(rid, (None, "", -1))[0])
        result.score_provenance.update(bonuses)
        scored[rid] = (base + sum(bonuses.values()), order, result)

    for i, h in enumerate(hits):
        norm = (h.score - bottom) / span if span > 0 else 1.0
        cos = sims.get(h.id, 0.0)
        prov: dict[str, Any] = {
            "fts": {"rank": i + 1, "bm25": h.score, "normalised": norm},
            "semantic": {"cosine": cos, "backend": backend},
        }
        srcs = ["fts", backend] if h.id in sims else ["fts"]
        add(h.id, norm + cos, i, h.statement, Result(h.id, h.layer, h.rule_type, h.confidence, h.statement, 0.0, srcs, prov))
    for j, (rid, row) in enumerate(sorted(extra.items(), key=lambda kv: (-sims[kv[0]], kv[0]))):
        prov = {"semantic": {"cosine": sims[rid], "backend": backend}}
        add(rid, sims[rid], len(hits) + j, row[4], Result(rid, row[1], row[2], row[3], row[4], 0.0, [backend], prov))
    lifts = cues.episode_lifts({rid: t[0] for rid, t in scored.items()}, {rid: f[1] for rid, f in facts.items()})
    for rid, lift in lifts.items():
        if rid in scored and lift:
            score, order, result = scored[rid]
            result.score_provenance["episode"] = lift
            scored[rid] = (score + lift, order, result)
    replies = cues.reply_lifts({rid: t[0] for rid, t in scored.items()}, facts,
                               {rid: t[2].statement for rid, t in scored.items()})
    for rid, lift in replies.items():
        if lift:
            score, order, result = scored[rid]
            result.score_provenance["reply"] = lift
            scored[rid] = (score + lift, order, result)
    ranked = sorted(scored.values(), key=lambda t: (-t[0], t[1]))
    results = []
    for score, _, result in ranked[:limit]:
        result.score = score
        results.append(result)
    return SearchResponse(
        query, "rerank", f"fts+{backend} rerank", results, notices, (time.perf_counter() - started) * 1000
    )
