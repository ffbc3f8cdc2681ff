"""``commonkeep bench web``: the web app's inbox page and a decision round-trip, over HTTP.

A throwaway root is filled with candidates (generated, or copied from ``--inbox FILE``, a
``captured.jsonl``), a server is started on it (loopback, port 0, in this process) and a client
with the token measures, as medians over ``--repeat`` requests:

- the baseline: a static file (``/static/app.css``) served by the same server in the same run;
- the inbox's first page (50 of N candidates, the queue already computed once, as it is a few
  seconds after ``commonkeep serve`` starts), a filtered, searched page, and the first page right
  after another agent appended a candidate (only the appended line is read);
- once, the cold computation of the review queue (``review.pending``, the CLI's own);
- decisions, on a root of ``--decide-candidates`` pending candidates (default 10,000) and
  ``--decide-records`` records (default 2,000): how long ``serve`` takes to print its URL and to
  warm the queue; a reject and an approve posted as the form does, server-side (the POST alone)
  and round trip (through the redirect to the rendered inbox); a batch approve of 50 in one POST;
  the candidate page of a candidate written seconds earlier; ``commonkeep review --approve`` as a
  new process and ``review.approve`` in process. A server decision answers once the canonical
  files are written; ``rendered/`` and the search index follow in the background
  (``after_apply.catch_up``): between two timed decisions the bench waits, untimed, until they
  are current (a person's next click comes later), and reports how long that took after each
  approve's response. The first decision, an approve, untimed, builds
  the search index. The baseline, on the same root in the same run (``--baseline`` times): the approve of
  before issue 23, which computed the whole review queue (``review.pending``) to approve one.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from commonkeep.bench.web_cli import _approve_call, _cli_approves, _old_approve
from commonkeep.util.jsonout import print_json


def _fill(root: Path, candidates: int, inbox: Path | None, records: int = 2_000) -> None:
    from commonkeep.bench.curate import fill
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
                       hint="give more --decide-candidates (the default is 10,000), or fewer --repeat")
    return cid


def run_bench(candidates: int, decide_candidates: int, decide_records: int, repeat: int, inbox: Path | None,
              baseline: int = 2, cli_against: list[str] | tuple[str, ...] = (), load: int = 0) -> dict[str, Any]:
    from commonkeep.gate.writer import configured_writer_role
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
    out.update(_decisions(decide_candidates, decide_records, repeat, role, baseline, cli_against, load))
    return out


def _decisions(pool: int, records: int, repeat: int, role: str, baseline: int,
               against: list[str] | tuple[str, ...] = (), load: int = 0) -> dict[str, Any]:
    """Decisions on a root of ``pool`` pending candidates and ``records`` records (see the module doc)."""
    from commonkeep.web.server import start

    out: dict[str, Any] = {"decide_candidates": pool, "decide_records": records}
    with tempfile.TemporaryDirectory(prefix="ck-bench-web-decide-") as tmp:
        root = Path(tmp) / "root"
        _fill(root, pool, None, records)
        t0 = time.perf_counter()
        running = start(root, role)  # `serve` prints its URL once this returns
        out["serve_url_seconds"] = round(time.perf_counter() - t0, 3)
        running.web.queue.wait_ready()
        out["queue_ready_seconds"] = round(time.perf_counter() - t0, 3)
        try:
            client = _client(running)
            csrf = re.search(r'name="csrf" content="([^"]+)"', client.get(f"{running.url}/inbox").text)
            assert csrf is not None
            # every figure takes its own candidates: 11 approve figures of n, two batches of 50, the CLI's, quiet and loaded
            adds, rest = _split(running.web.queue, (2 if load else 1) * (12 * repeat + 60) + 40)
            ids = iter(rest)
            n = max(1, min(repeat, len(adds) // 4 - 1, len(rest) // 4 - 1))
            post = _poster(client, running.url, csrf.group(1))
            _decide_once(post, "approve", [_take(adds, ids, "approve", pool)])  # untimed: builds the search index
            settle, caught = _settler(running.web.queue)
            settle()
            static = _get(client, f"{running.url}/static/app.css")

            def figures() -> dict[str, Any]:
                got: dict[str, Any] = {"static_file": _ms(static, repeat)}  # the baseline, same server, same load
                got["reject_post"] = _ms(lambda: _decide_once(post, "reject", [_take(adds, ids, "reject", pool)], follow=False), n, settle)
                caught.clear()
                got["approve_post"] = _ms(lambda: _decide_once(post, "approve", [_take(adds, ids, "approve", pool)], follow=False), n, settle)
                got["approve_catch_up"] = {"p50_ms": round(statistics.median(caught), 2), "max_ms": round(max(caught), 2), "n": len(caught)}
                got["approve_round_trip"] = _ms(lambda: _decide_once(post, "approve", [_take(adds, ids, "approve", pool)]), n, settle)
                # on a candidate's page: the decision, then the next candidate of the view (its page rendered)
                page = {"from": "candidate", "view": ""}
                got["candidate_approve_next_post"] = _ms(
                    lambda: _decide_once(post, "approve", [_take(adds, ids, "approve", pool)], follow=False, extra=page), n, settle)
                got["candidate_approve_next_round_trip"] = _ms(
                    lambda: _decide_once(post, "approve", [_take(adds, ids, "approve", pool)], extra=page), n, settle)
                got["candidate_reject_next_post"] = _ms(
                    lambda: _decide_once(post, "reject", [_take(adds, ids, "reject", pool)], follow=False, extra=page), n, settle)
                got["candidate_reject_next_round_trip"] = _ms(
                    lambda: _decide_once(post, "reject", [_take(adds, ids, "reject", pool)], extra=page), n, settle)
                batch = _batch(running.web.queue, adds, 50)
                got["approve_batch_50"] = _ms(lambda: _decide_once(post, "approve", batch, follow=False), 1, settle)
                # an agent writes candidates all the while (one every 20 ms): the decisions must not pay for them
                with _writing_agent(root):
                    got["approve_post_while_writing"] = _ms(
                        lambda: _decide_once(post, "approve", [_take(adds, ids, "approve", pool)], follow=False, extra=page), n, settle)
                running.web.queue.refresh(wait=True)  # untimed: what the agent wrote is scored before the next figure
                return got

            out.update(figures())
            if load:
                with _burners(load):
                    out["loaded"] = {"burners": load, **figures()}
            out["queue_current_after_decisions"] = running.web.queue.is_current()
            # a candidate written seconds ago, opened at once (computed for it alone)
            from commonkeep.store.candidates import new_candidate
            from commonkeep.store.core import Store

            store, times = Store(root, warn=False), []
            for i in range(max(1, repeat // 4)):
                cid = store.append_candidate(new_candidate(f"The bench agent wrote note {i} about the release window.",
                                                           provenance={"agent": "bench"}))["id"]
                t1 = time.perf_counter()
                _get(client, f"{running.url}/candidates/{cid}")()
                times.append((time.perf_counter() - t1) * 1000)
            out["fresh_candidate_page"] = {"p50_ms": round(statistics.median(times), 2), "max_ms": round(max(times), 2), "n": len(times)}
            # untimed: the candidates written above started a queue computation in the background;
            # it ends here, so the processes timed below do not share the machine with it
            running.web.queue.refresh(wait=True)
        finally:
            running.stop()
        # the CLI, as a person runs it: a new process each time
        # twice, alternating: with the bytecode compiled (as a pip install of the wheel has it; a
        # warm-up run compiles it into a folder of this run) and as this environment runs it (an
        # editable checkout with PYTHONDONTWRITEBYTECODE=1 compiles every module on every start)
        clis = _cli_approves(root, role, lambda: _take(adds, ids, "approve", pool), max(1, min(10, n)),
                             Path(tmp) / "pycache", against)
        out["cli_approve"], out["cli_approve_as_run"] = clis.pop("this"), clis.pop("this_as_run")
        if load:
            with _burners(load):
                out["loaded"]["cli_approve"] = _cli_approves(root, role, lambda: _take(adds, ids, "approve", pool),
                                                             max(1, min(10, n)), Path(tmp) / "pycache", ())["this"]
        out["cli_approve_against"] = clis  # the code of each --cli-against revision, alternated with these
        out["cli_approve_in_process"] = _ms(lambda: _approve_call(root, role, _take(adds, ids, "approve", pool)), max(1, min(5, n)))
        # the baseline, on the same root in the same run: the old approve, which re-curated the whole
        # inbox (review.pending) to find the ops of the one candidate it approved
        if baseline:
            out["old_approve_call"] = _ms(lambda: _old_approve(root, role, _take(adds, ids, "approve", pool)), baseline)
    return out


def _settler(queue: Any) -> tuple[Callable[[], None], list[float]]:
    """Between two timed decisions (untimed): wait until the server has caught up the projection and
    the search index the last one left (``Queue.settle``), as it has long before a person's next
    click; how long that took after the response is kept (the ``approve_catch_up`` figure)."""
    caught: list[float] = []

    def settle() -> None:
        t0 = time.perf_counter()
        queue.settle(timeout=120)
        caught.append((time.perf_counter() - t0) * 1000)
    if not hasattr(queue, "settle"):  # a server that catches up nothing later (the code before this one)
        return lambda: caught.append(0.0), caught
    return settle, caught


def _split(queue: Any, want: int) -> tuple[list[str], list[str]]:
    """``want`` plain adds (approvable without a choice, not L1, by the candidate's own plan, as
    approving computes it), enough for every figure, and the rest (rejected first)."""
    items = queue.items()
    adds: list[str] = []
    for i in items:
        if len(adds) >= want:
            break
        fresh = queue.item(str(i.candidate["id"]))
        if fresh is not None and fresh.default_choice == "add" and [o["op"] for o in fresh.ops] == ["add"] \
                and (fresh.ops[0].get("record") or {}).get("layer") != "L1":
            adds.append(str(i.candidate["id"]))
    taken = set(adds)
    return adds[::-1], [str(i.candidate["id"]) for i in items if str(i.candidate["id"]) not in taken]


def _batch(queue: Any, adds: list[str], size: int) -> list[str]:
    """``size`` candidates from ``adds`` that approving together adds as they are (a dry run of the
    batch, ``decide.preview``, as the records are after the decisions timed before it)."""
    from commonkeep.errors import BadInput
    from commonkeep.reviews.decide import preview

    ctx, rows = queue.context(), queue.inbox()
    batch: list[str] = []
    while len(batch) < size and adds:
        cid = adds.pop()
        try:
            plans = preview(ctx, rows, [*batch, cid])
        except BadInput:
            continue
        if plans[-1].choice == "add":
            batch.append(cid)
    if len(batch) < size:
        raise BadInput(f"only {len(batch)} candidates could be approved together; the batch figure needs {size}",
                       hint="give more --decide-candidates")
    return batch


def _poster(client: Any, url: str, csrf: str) -> Callable[..., Any]:
    def post(action: str, cids: list[str], follow: bool, extra: dict[str, str] | None = None) -> Any:
        # confirmed: a high-risk candidate's approve asks once more (a page, nothing decided); the
        # bench times the decision, as after that second click
        form = {"csrf": csrf, "action": action, "id": cids, "reason": "bench", "confirmed": "1", **(extra or {})}
        r = client.post(f"{url}/decide", data=form, follow_redirects=follow)
        if r.status_code not in (200, 303) or "Not done" in r.text or (not follow and r.status_code != 303) \
                or "err=" in r.headers.get("location", ""):
            raise RuntimeError(f"the {action} was not done: " + (r.headers.get("location") or re.sub(r"<[^>]+>", "", r.text)[:500]))
        return r
    return post


def _decide_once(post: Callable[..., Any], action: str, cids: list[str], follow: bool = True,
                 extra: dict[str, str] | None = None) -> Any:
    return post(action, cids, follow, extra)


def _write_candidates(root: str, every: float, stop: Any) -> None:  # pragma: no cover - runs in a child process
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store

    store, n = Store(root, warn=False), 0
    while not stop.wait(every):
        n += 1
        store.append_candidate(new_candidate(f"The writing agent noted build {n} took longer than the last.",
                                             provenance={"agent": "bench-writer"}))


@contextlib.contextmanager
def _writing_agent(root: Path, every: float = 0.02) -> Iterator[None]:
    """Another agent appending a candidate to the inbox every ``every`` seconds, in a process of its
    own (as an agent is: its writes never hold this server's interpreter), until the block ends."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    proc = ctx.Process(target=_write_candidates, args=(str(root), every, stop), daemon=True)
    proc.start()
    try:
        yield
    finally:
        stop.set()
        proc.join(30)
        if proc.is_alive():
            proc.terminate()


def _burn() -> None:  # pragma: no cover - a child process that only spins
    while True:
        pass


@contextlib.contextmanager
def _burners(n: int) -> Iterator[None]:
    """``n`` processes spinning on the CPU (a loaded box) until the block ends."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_burn, daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    try:
        yield
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.join()


def run(args: argparse.Namespace) -> int:
    inbox = Path(args.inbox) if args.inbox else None
    if inbox is not None and not inbox.is_file():
        from commonkeep.errors import BadInput

        raise BadInput(f"--inbox {args.inbox}: no such file", hint="give a captured.jsonl (one candidate per line)")
    if args.load < 0:
        from commonkeep.errors import BadInput

        raise BadInput(f"--load {args.load}: give the number of CPU burners, 0 or more")
    r = run_bench(args.candidates, args.decide_candidates, args.decide_records, args.repeat, inbox, args.baseline,
                  args.cli_against or (), args.load)
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
    print(f"  decisions with {r['decide_candidates']} pending candidates and {r['decide_records']} records:")
    print(f"    serve: URL after {r['serve_url_seconds']} s; queue warm after {r['queue_ready_seconds']} s (pages work meanwhile)")
    _print_figures(r, r.get("loaded"))
    caught = r["approve_catch_up"]
    print(f"    {'rendered/ + search index current after':<40} p50 {caught['p50_ms']} ms  max {caught['max_ms']} ms "
          "(after the approve's response, in the background)")
    fresh = r["fresh_candidate_page"]
    print(f"    {'a candidate written seconds ago opens':<40} p50 {fresh['p50_ms']} ms  max {fresh['max_ms']} ms (n={fresh['n']})")
    if "old_approve_call" in r:
        print(f"    {'baseline: the old approve (re-curates)':<40} p50 {r['old_approve_call']['p50_ms']} ms")
    print(f"    queue still current after the decisions (no full recompute): {r['queue_current_after_decisions']}")
    cli, as_run = r["cli_approve"], r["cli_approve_as_run"]
    print(f"    commonkeep review --approve as a new process, the figure above: its bytecode compiled, as a pip install of the"
          f" wheel has it (a warm-up run compiled it); CPU (user + system) p50 {cli['cpu_p50_ms']} ms")
    print(f"      as this environment runs it (PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '(unset)')}: the"
          f" checkout's own bytecode, which the install compiles; without it every module is compiled on each start): p50 {as_run['p50_ms']} ms"
          f"  p95 {as_run['p95_ms']} ms, CPU p50 {as_run['cpu_p50_ms']} ms (the two alternated)")
    for rev, got in r.get("cli_approve_against", {}).items():
        print(f"      the code of {rev} (--cli-against), compiled, alternated with them: p50 {got['p50_ms']} ms"
              f"  p95 {got['p95_ms']} ms, CPU p50 {got['cpu_p50_ms']} ms")
    return 0


FIGURES = (
    ("static_file", "baseline: a static file, same server"),
    ("reject_post", "inbox: reject, POST /decide (server-side)"),
    ("approve_post", "inbox: approve, POST /decide (server-side)"),
    ("approve_round_trip", "inbox: approve + inbox rendered"),
    ("candidate_approve_next_post", "candidate page: approve -> next (server)"),
    ("candidate_approve_next_round_trip", "candidate page: approve + next page"),
    ("candidate_reject_next_post", "candidate page: reject -> next (server)"),
    ("candidate_reject_next_round_trip", "candidate page: reject + next page"),
    ("approve_batch_50", "batch approve of 50, one POST"),
    ("approve_post_while_writing", "approve -> next while an agent writes"),
    ("cli_approve", "commonkeep review --approve (process)"),
    ("cli_approve_in_process", "review.approve (in process, cold)"),
)


def _print_figures(r: dict[str, Any], loaded: dict[str, Any] | None) -> None:
    head = f"    {'':<42} {'quiet p50':>10} {'p95':>9}"
    print(head + (f"   {'loaded (' + str(loaded['burners']) + ' burners) p50':>26} {'p95':>9}" if loaded else ""))
    for key, label in FIGURES:
        if key not in r:
            continue
        line = f"    {label:<42} {r[key]['p50_ms']:>8} ms {r[key]['p95_ms']:>6} ms"
        if loaded and key in loaded:
            line += f"   {loaded[key]['p50_ms']:>23} ms {loaded[key]['p95_ms']:>6} ms"
        print(line)


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--candidates", type=int, default=10_000, help="pending candidates for the inbox pages (default 10,000)")
    parser.add_argument("--inbox", metavar="FILE", help="use this captured.jsonl instead of generated candidates")
    parser.add_argument("--decide-candidates", type=int, default=10_000,
                        help="pending candidates on the root the decisions are timed on (default 10,000)")
    parser.add_argument("--decide-records", type=int, default=2_000,
                        help="records on that root (each decision re-renders them and syncs the search index; default 2,000)")
    parser.add_argument("--baseline", type=int, default=2,
                        help="times to run the old approve (the whole queue re-curated) as the baseline; 0 skips it (default 2)")
    parser.add_argument("--repeat", type=positive_int, default=20, help="requests per figure (default 20)")
    parser.add_argument("--cli-against", metavar="REV_OR_DIR", nargs="+",
                        help="also time `review --approve` with the code of these git revisions (or checkout folders), "
                             "alternated with this code on the same root")
    parser.add_argument("--load", type=int, default=0, metavar="N",
                        help="also time the decisions with N processes spinning on the CPU (a loaded box), beside the quiet figures")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
