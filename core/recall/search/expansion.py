"""Keyword search with pseudo-relevance feedback (RM3-style query expansion) over ``recall_fts``.

Off by default (``search --expand``): on the LoCoMo dev split it lowered hit@5 (README, Benchmarks).
"""

from __future__ import annotations

import math
import re
import sqlite3

from commonkeep.recall.search import fts, index
from commonkeep.recall.search.rows import CONTEXT_WEIGHT

# The textbook defaults of Anserini's RM3 (fbDocs 10, fbTerms 10, originalQueryWeight 0.5, terms
# in more than 10 % of the records skipped), fixed before any measurement and not tuned to a data set.
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 10
ORIGINAL_WEIGHT = 0.5
MAX_DF_RATIO = 0.1
FEEDBACK_POOL = 50  # candidates kept from each of the two queries (at least ``limit``)

# unicode61's tokens: runs of letters and digits (``_`` and punctuation separate).
_TOKEN = re.compile(r"[^\W_]+")
_RANKED = (
    "SELECT id, bm25(recall_fts, 0.0, 1.0, 1.0, {w}) AS score FROM recall_fts WHERE recall_fts MATCH ? "
    "ORDER BY score LIMIT ?"
)


def _ranked(conn: sqlite3.Connection, expression: str, limit: int) -> list[tuple[str, float]]:
    """``(id, abs(bm25))`` best first, without fetching the rows."""
    try:
        rows = conn.execute(_RANKED.format(w=CONTEXT_WEIGHT), (expression, limit)).fetchall()
    except sqlite3.OperationalError as exc:
        if fts.is_query_error(exc):
            return []
        raise
    return [(str(r[0]), abs(float(r[1]))) for r in rows]


def _stems(conn: sqlite3.Connection, words: list[str]) -> dict[str, str]:
    """The index's own (porter) stem of each word, from a scratch FTS5 table in the temp schema."""
    index.temp_tables(conn)
    # One row, one token per word (``words`` are unicode61 tokens): the instance offset is the
    # word's index. One statement each, so one small temp-schema transaction each.
    conn.execute("DELETE FROM temp.prf_words")
    conn.execute("INSERT INTO temp.prf_words (rowid, w) VALUES (1, ?)", (" ".join(words),))
    out: dict[str, str] = {}
    for term, offset in conn.execute("SELECT term, offset FROM temp.prf_stems"):
        if 0 <= int(offset) < len(words):
            out.setdefault(words[int(offset)], str(term))
    return out


def expansion_terms(
    conn: sqlite3.Connection, query: str, feedback: list[tuple[str, float]], n: int = FEEDBACK_TERMS
) -> list[tuple[str, float]]:
    """The ``n`` best expansion words for ``query`` from the ``feedback`` records ``(id, score)``.

    A stem's weight is ``sum over feedback records of (score / total score) * tf / length``
    (the relevance model) times its BM25 idf in ``recall_fts``; stopwords, the query's own
    stems, one-letter words, numbers and stems in more than ``MAX_DF_RATIO`` of the records are
    skipped. Returns ``(word, weight)`` best first, the word being one surface form of the stem.
    """
    if not feedback or n <= 0:
        return []
    texts = index.lookup(conn, [rid for rid, _ in feedback])
    total = sum(score for _, score in feedback) or 1.0
    docs: list[tuple[float, list[str]]] = []
    for rid, score in feedback:
        if rid in texts:
            row = texts[rid]
            docs.append((score / total, _TOKEN.findall(f"{row[4]} {row[5]}".lower())))
    query_words = [w.lower() for w in _TOKEN.findall(query)]
    usable = {
        w for _, toks in docs for w in toks if len(w) > 1 and not w.isdigit() and w not in fts.STOPWORDS
    }
    candidates = sorted(usable)
    if not candidates:
        return []
    stem = _stems(conn, [*query_words, *candidates])
    skip = {stem[w] for w in query_words if w in stem}
    weight: dict[str, float] = {}
    surface: dict[str, str] = {}
    for share, toks in docs:
        if not toks:
            continue
        counts: dict[str, int] = {}
        for w in toks:
            s = stem.get(w)
            if s is not None and s not in skip and w in usable:
                counts[s] = counts.get(s, 0) + 1
                surface.setdefault(s, w)
        for s, tf in counts.items():
            weight[s] = weight.get(s, 0.0) + share * tf / len(toks)
    if not weight:
        return []
    docs_row = conn.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone()
    ready = conn.execute("SELECT 1 FROM meta WHERE key = 'terms'").fetchone() is not None
    n_docs = int(docs_row[0]) if docs_row else int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    n_docs = max(n_docs, 1)
    marks = ",".join("?" * len(weight))
    # ``terms`` (kept by every sync); an index synced before it existed is counted by FTS5 itself.
    source = "SELECT term, df FROM terms" if ready else "SELECT term, doc FROM temp.recall_df"
    df = {str(t): int(d) for t, d in conn.execute(f"{source} WHERE term IN ({marks})", list(weight))}
    scored = []
    for term, rm in weight.items():
        d = df.get(term, 0)
        if d == 0 or d / n_docs > MAX_DF_RATIO:
            continue
        idf = math.log(1 + (n_docs - d + 0.5) / (d + 0.5))
        scored.append((rm * idf, term))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(surface[term], value) for value, term in scored[:n]]


def _hits(conn: sqlite3.Connection, ranked: list[tuple[str, float]]) -> list[fts.Hit]:
    rows = index.lookup(conn, [rid for rid, _ in ranked])
    return [fts.Hit(*rows[rid][:5], score) for rid, score in ranked if rid in rows]


def search_expanded(
    conn: sqlite3.Connection,
    query: str,
    limit: int,
    *,
    docs: int = FEEDBACK_DOCS,
    terms: int = FEEDBACK_TERMS,
    original_weight: float = ORIGINAL_WEIGHT,
) -> list[fts.Hit]:
    """Keyword search with RM3-style pseudo-relevance feedback.

    1. As :func:`fts.search_with`: records with all the terms in their own text (BM25 order)
       come first and are kept as they are; then the any-content-term query (first pass).
    2. The ``docs`` best records of that ranking are the feedback set; its ``terms`` best
       expansion words (:func:`expansion_terms`) are OR-ed into a second query.
    3. The other candidates (the best ``max(limit, FEEDBACK_POOL)`` of each query) are ranked by
       ``original_weight * bm25_first / max_first + (1 - original_weight) * bm25_second / max_second``
       (a record missing from a list counts 0 there) — BM25 is linear in the query's term
       weights, so this is the interpolated query model of RM3 — reported on the first query's
       BM25 scale (times ``max_first``). Ties keep the first pass's order, then the id.
    """
    if limit <= 0:
        return []
    strict = fts.match_all(query)
    if strict is None:
        return []
    own = "{statement tags} : ("
    strict = own + strict + ")"
    top = _ranked(conn, strict, limit)
    loose = fts.match_any(query)
    if loose is not None and len(fts.content_terms(query)) <= 1:
        loose = own + loose + ")"  # one word: context would only add the neighbours of every match
    if len(top) >= limit or loose is None or loose == strict:
        return _hits(conn, top)
    pool = max(limit, FEEDBACK_POOL)
    exact = {rid for rid, _ in top}
    first = [(rid, s) for rid, s in _ranked(conn, loose, pool + len(top)) if rid not in exact][:pool]
    need = limit - len(top)
    words = expansion_terms(conn, query, [*top, *first][:docs], terms)
    if not words:
        return _hits(conn, [*top, *first[:need]])
    expr = " OR ".join(fts._quote(w) for w, _ in words)
    second = [(rid, s) for rid, s in _ranked(conn, expr, pool + len(top)) if rid not in exact][:pool]
    lo, ex = dict(first), dict(second)
    lo_max, ex_max = max(lo.values(), default=0.0), max(ex.values(), default=0.0)
    order = {rid: i for i, rid in enumerate(lo)}
    combined = {}
    for rid in dict.fromkeys([*lo, *ex]):
        a = lo.get(rid, 0.0) / lo_max if lo_max > 0 else 0.0
        b = ex.get(rid, 0.0) / ex_max if ex_max > 0 else 0.0
        combined[rid] = original_weight * a + (1 - original_weight) * b
    scale = lo_max or ex_max or 1.0
    ranked = sorted(combined, key=lambda r: (-combined[r], order.get(r, len(order)), r))[:need]
    return _hits(conn, [*top, *((rid, combined[rid] * scale) for rid in ranked)])
