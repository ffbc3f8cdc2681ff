"""The next candidate after a decision on a candidate's page comes from the queue's order index
(issue 36: it was found by sorting every pending candidate): the same answer as the sorted view,
decided and filtered-out candidates skipped, one written meanwhile in its place."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.reviews.review import reject
from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store
from commonkeep.web import flow
from commonkeep.web.queue import Queue
from tests.governance.conftest import WRITER


def _write(root: Path, text: str, agent: str, when: str, monkeypatch: pytest.MonkeyPatch) -> str:
    del monkeypatch
    cand = {**new_candidate(text, provenance={"agent": agent}), "created_at": when}  # captured then, appended now
    return str(Store(root).append_candidate(cand)["id"])


def _sorted_answer(queue: Queue, view: flow.View, decided: list[str]) -> str | None:
    order = [str(c["id"]) for c in flow.view_rows(queue, view, with_facets=False)[0]]
    return flow.next_in_view(order, decided, queue.pending_ids() - set(decided))


@pytest.mark.parametrize("query", [{}, {"sort": "newest"}, {"agent": "omp"}, {"agent": "omp", "sort": "newest"}, {"q": "deploy"}])
def test_the_next_candidate_is_the_sorted_views_next(root: Path, monkeypatch: pytest.MonkeyPatch, query: dict[str, str]) -> None:
    ids = []
    for n in range(12):  # written out of order: the file order is not the review order
        day = 10 + (n * 7) % 12
        ids.append(_write(root, f"Note {n}: deploy step {n} runs after the build.", "omp" if n % 3 else "hermes",
                          f"2026-12-{day:02d}T10:00:00Z", monkeypatch))
    reject(root, [ids[4]], reason="not durable", role=WRITER)  # decided: skipped
    queue = Queue(root)
    view = flow.View.from_query(query)
    for current in ids:
        if current == ids[4]:
            continue
        want = _sorted_answer(queue, view, [current])
        assert flow.next_candidate(queue, view, [current]) == want, (current, query)
    # another agent writes one meanwhile: it takes its place in the order at once
    late = _write(root, "Note 12: deploy step 12 runs after the build.", "omp", "2026-12-31T10:00:00Z", monkeypatch)
    last = _sorted_answer(queue, flow.View.from_query({"sort": "newest"}), [late])
    assert flow.next_candidate(queue, flow.View.from_query({"sort": "newest"}), [late]) == last
    oldest = flow.View.from_query({})
    before_late = [str(c["id"]) for c in flow.view_rows(queue, oldest, with_facets=False)[0]][-2]
    assert flow.next_candidate(queue, oldest, [before_late]) == late


def test_the_last_candidate_of_the_view_opens_the_one_before_it(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the query has a hyphen, which no candidate id holds: a seeded id ending in "zqx" once matched it
    a = _write(root, "The zqx-build uses uv.", "omp", "2027-01-01T10:00:00Z", monkeypatch)
    b = _write(root, "The zqx-build caches wheels.", "omp", "2027-01-02T10:00:00Z", monkeypatch)
    queue = Queue(root)
    assert flow.next_candidate(queue, flow.View.from_query({}), [b]) == a  # the newest of all: the one before it
    assert flow.next_candidate(queue, flow.View.from_query({"q": "zqx-build"}), [a]) == b
    assert flow.next_candidate(queue, flow.View.from_query({"q": "zqx-build"}), [a, b]) is None
