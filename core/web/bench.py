"""``commonkeep bench web``: the web app's inbox page and a decision round-trip, over HTTP.

A throwaway root is filled with candidates (generated, or copied from ``--inbox FILE``, a
``captured.jsonl``), a server is started on it (loopback, port 0, in this process) and a client
with the token measures, as medians over ``--repeat`` requests:

- the baseline: a static file (``/static/app.css``) served by the same server in the same run;
- the inbox's first page (50 of N candidates, the queue already computed once, as it is a few
  seconds after ``commonkeep serve`` starts), a filtered, searched page, and the first page right
  after another agent appended a candidate (only the appended line is read);
- once, the cold computation of the review queue (``review.pending``, the CLI's own);
- decision round-trips: a reject and an approve posted as the form does, through the redirect
  to the rendered inbox, on a root of ``--decide-candidates`` pending candidates and
  ``--decide-records`` records (``apply_patch`` re-renders the records and syncs the search index
  on every decision, so this size matters most; the first decision, untimed, builds the index).
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import print_json


def _fill(root: Path, candidates: int, inbox: Path | None, records: int = 2_000) -> None:
    from commonkeep.governance.bench import fill
    from commonkeep.store.layout import ensure_layout

    if inbox is None:
        fill(root, candidates, records)
        return
    lay = ensure_layout(root)
    shutil.copyfile(inbox, lay.inbox)


def _ms(fn: Callable[[], Any], repeat: int, between: Callable[[], Any] | None = None) -> dict[str, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
        if between is not None:
            between()  # untimed
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 2)}


def _client(running: Any) -> Any:
    import httpx

    client = httpx.Client(follow_redirects=True, timeout=120)
    client.get(running.token_url).raise_for_status()
    return client


def _get(client: Any, url: str) -> Callable[[], Any]:
    def go() -> Any:
        r = client.get(url)
        r.raise_for_status()
        return r
    return go


def _take(adds: list[str], rest: Iterator[str], action: str, pool: int) -> str:
    """The next candidate to approve (a plain add) or reject; too few is a clear error."""
    cid = (adds.pop() if adds else None) if action == "approve" else next(rest, None)
    if cid is None:
        from commonkeep.errors import BadInput

        raise BadInput(f"--decide-candidates {pool} left no candidate to {action}: each decision figure needs its own",
                       hint="give more --decide-candidates (the default is 200), or fewer --repeat")
    return cid


def run_bench(candidates: int, decide_candidates: int, decide_records: int, repeat: int, inbox: Path | None) -> dict[str, Any]:
    from commonkeep.governance.writer import configured_writer_role
    from commonkeep.store.core import Store
    from commonkeep.web.server import start

    role = configured_writer_role()
    out: dict[str, Any] = {"candidates": candidates if inbox is None else None, "repeat": repeat}
    with tempfile.TemporaryDirectory(prefix="ck-bench-web-") as tmp:
        root = Path(tmp) / "root"
        _fill(root, candidates, inbox)
        out["candidates"] = len(Store(root, warn=False).candidates(status="new"))
        t0 = time.perf_counter()
        running = start(root, role)
        running.web.queue.refresh(wait=True)
        out["queue_cold_seconds"] = round(time.perf_counter() - t0, 3)
        try:
            client = _client(running)
            out["static_file"] = _ms(_get(client, f"{running.url}/static/app.css"), repeat)
            first = _get(client, f"{running.url}/inbox")
            rows = len(re.findall(r'<tr class="cand', first().text))
            out["inbox_first_page"] = {**_ms(first, repeat), "rows": rows}
            out["inbox_filtered_page"] = _ms(_get(client, f"{running.url}/inbox?risk=low&q=the+service"), repeat)
            # another agent writes a candidate, then the page is loaded: the appended line is read (and
            # the queue recomputed after the page, in the background; waited for, untimed)
            from commonkeep.store.candidates import new_candidate

            store, times = Store(root, warn=False), []
            for i in range(max(1, repeat // 4)):
                store.append_candidate(new_candidate(f"The bench agent wrote note {i} about the deploy window.",
                                                     provenance={"agent": "bench"}))
                t0 = time.perf_counter()
                first()
                times.append((time.perf_counter() - t0) * 1000)
                running.web.queue.refresh(wait=True)
            out["inbox_after_a_write"] = {"p50_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2),
                                          "n": len(times)}
        finally:
            running.stop()
    with tempfile.TemporaryDirectory(prefix="ck-bench-web-decide-") as tmp:
        root = Path(tmp) / "root"
        _fill(root, decide_candidates, None, decide_records)
        running = start(root, role)
        running.web.queue.refresh(wait=True)
        try:
            client = _client(running)
            csrf = re.search(r'name="csrf" content="([^"]+)"', client.get(f"{running.url}/inbox").text)
            assert csrf is not None
            items = running.web.queue.items()
            # approvable ones: a plain add (not a duplicate, not L1); rejects take the others first
            adds = [str(i.candidate["id"]) for i in items if [o["op"] for o in i.ops] == ["add"]
                    and (i.ops[0].get("record") or {}).get("layer") != "L1"]
            rest = [str(i.candidate["id"]) for i in items if str(i.candidate["id"]) not in set(adds)]
            half = len(adds) // 2
            ids, adds = iter(rest + adds[:half]), adds[half:]

            def decide(action: str) -> Callable[[], Any]:
                def go() -> Any:
                    cid = _take(adds, ids, action, decide_candidates)
                    form = {"csrf": csrf.group(1), "action": action, "id": cid, "reason": "bench"}
                    r = client.post(f"{running.url}/decide", data=form)
                    if r.status_code != 200 or "Not done" in r.text:
                        raise RuntimeError(re.sub(r"<[^>]+>", "", r.text)[:500])
                    return r
                return go

            n = max(1, min(repeat, decide_candidates // 4 - 1))
            decide("reject")()  # untimed: the first apply builds the search index, as `commonkeep reindex` would have
            out["decide_candidates"], out["decide_records"] = decide_candidates, decide_records
            # between two decisions the queue's background recompute is let finish (untimed), as it
            # does while a person reads the next candidate; back to back, it would slow the next POST
            settle = lambda: running.web.queue.refresh(wait=True)  # noqa: E731
            out["reject_round_trip"] = _ms(decide("reject"), n, settle)
            out["approve_round_trip"] = _ms(decide("approve"), n, settle)
            # the same governance calls without the web app, on the same root: what the web adds
            from commonkeep.governance.review import approve, reject

            out["reject_call"] = _ms(lambda: reject(root, [_take(adds, ids, "reject", decide_candidates)], reason="bench", role=role), n)
            out["approve_call"] = _ms(lambda: approve(root, [_take(adds, ids, "approve", decide_candidates)], role=role), n)
        finally:
            running.stop()
    return out


def run(args: argparse.Namespace) -> int:
    inbox = Path(args.inbox) if args.inbox else None
    if inbox is not None and not inbox.is_file():
        from commonkeep.errors import BadInput

        raise BadInput(f"--inbox {args.inbox}: no such file", hint="give a captured.jsonl (one candidate per line)")
    r = run_bench(args.candidates, args.decide_candidates, args.decide_records, args.repeat, inbox)
    if args.json:
        print_json(r, ensure_ascii=True)
        return 0
    base = r["static_file"]["p50_ms"]
    print(f"web: {r['candidates']} pending candidates; review queue computed cold in {r['queue_cold_seconds']} s (once, in the background)")
    print(f"  static file (baseline, same server)   p50 {base} ms")
    for key, label in (("inbox_first_page", "inbox first page (50 rows)"), ("inbox_filtered_page", "inbox filtered + searched")):
        print(f"  {label:<37} p50 {r[key]['p50_ms']} ms  p95 {r[key]['p95_ms']} ms  ({r[key]['p50_ms'] / base:.1f}x the static file)")
    after = r["inbox_after_a_write"]
    print(f"  {'inbox right after a new candidate':<37} p50 {after['p50_ms']} ms  max {after['max_ms']} ms  "
          f"(n={after['n']}; only the appended line is read)")
    print(f"  decisions with {r['decide_candidates']} pending candidates and {r['decide_records']} records "
          "(POST, apply_patch, redirect, rendered inbox):")
    for verb in ("reject", "approve"):
        trip, call = r[f"{verb}_round_trip"], r[f"{verb}_call"]
        print(f"    {verb + ' round trip':<35} p50 {trip['p50_ms']} ms  p95 {trip['p95_ms']} ms  "
              f"(review.{verb} alone, no web: p50 {call['p50_ms']} ms)")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--candidates", type=int, default=10_000, help="pending candidates for the inbox pages (default 10,000)")
    parser.add_argument("--inbox", metavar="FILE", help="use this captured.jsonl instead of generated candidates")
    parser.add_argument("--decide-candidates", type=int, default=200,
                        help="pending candidates on the root the decisions are timed on (default 200)")
    parser.add_argument("--decide-records", type=int, default=200,
                        help="records on that root (each decision re-renders them and syncs the search index; default 200)")
    parser.add_argument("--repeat", type=positive_int, default=20, help="requests per figure (default 20)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
