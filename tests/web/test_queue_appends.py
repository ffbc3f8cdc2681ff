"""While an agent writes, the server scores only what it appended (issue 36: every append started a
full recompute of the queue in the server process, and a person's decisions paid for it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store
from commonkeep.web import actions
from commonkeep.web import queue as queue_module
from commonkeep.web.queue import Queue
from tests.governance.conftest import WRITER


def _full_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the full computations (``review.pending`` over the whole inbox) from here on."""
    runs: list[int] = []
    real = queue_module.pending

    def counted(*a: Any, **k: Any) -> Any:
        runs.append(1)
        return real(*a, **k)
    monkeypatch.setattr(queue_module, "pending", counted)
    return runs


def test_an_appended_candidate_is_scored_alone_and_the_queue_stays_current(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    queue = Queue(root)
    assert queue.refresh(wait=True)
    runs = _full_runs(monkeypatch)
    cid = str(Store(root).append_candidate(new_candidate("The deploy window opens at 09:00 UTC on weekdays.",
                                                          provenance={"agent": "omp"}))["id"])
    assert queue.refresh() and runs == []  # current at once, without a full computation
    item = queue.pending_rows([cid])[cid]
    assert item.get("match_kind") and item.get("poisoning_risk")  # scored, as the full computation scores it
    assert cid in {str(i.candidate["id"]) for i in queue.items()} and runs == []


def test_a_decision_after_an_append_needs_no_full_computation(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_WRITER_ROLE", WRITER)
    queue = Queue(root)
    assert queue.refresh(wait=True)
    pending = [str(i.candidate["id"]) for i in queue.items()]
    runs = _full_runs(monkeypatch)
    Store(root).append_candidate(new_candidate("Release notes live in docs/releases.", provenance={"agent": "omp"}))
    actions.decide(root, WRITER, "reject", [pending[0]], reason="not durable", queue=queue)
    assert queue.refresh() and runs == []
    assert pending[0] not in {str(i.candidate["id"]) for i in queue.items()}


def test_a_record_written_elsewhere_still_recomputes_the_queue(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only appends are scored alone: a change of the records (another process's decision) is the
    full computation, as before."""
    monkeypatch.setenv("COMMONKEEP_WRITER_ROLE", WRITER)
    queue = Queue(root)
    assert queue.refresh(wait=True)
    pending = [str(i.candidate["id"]) for i in queue.items()]
    runs = _full_runs(monkeypatch)
    from commonkeep.reviews.review import reject

    reject(root, [pending[0]], reason="not durable", role=WRITER)  # not through this server
    queue.refresh(wait=True)
    assert runs == [1] and pending[0] not in {str(i.candidate["id"]) for i in queue.items()}
