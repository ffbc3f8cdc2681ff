"""A question that asks *when* is answered by a memory that says when: in the rerank stage, such
records gain ``TIME_ANCHOR_BONUS``; other questions rank as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.recall.search import cues, hybrid, semantic
from commonkeep.recall.search.hybrid import asks_when, has_time_anchor, search
from tests.recall.conftest import make_record, seed

FACTS = [
    make_record("mem_a", "Caroline: the support group meeting was so powerful, I loved the people there."),
    make_record("mem_b", "Caroline: I went to the support group meeting yesterday and it was powerful."),
    make_record("mem_c", "Melanie: I painted a sunrise over the lake with my kids."),
]


@pytest.mark.parametrize(
    ("question", "when"),
    [("When did Caroline go to the support group?", True), ("what year did she move?", True),
     ("How long ago was her birthday?", True), ("On what date was the race?", True),
     ("What did Caroline think of the support group?", False), ("Where is the whenua trail?", False)],
)
def test_asks_when(question: str, when: bool) -> None:
    assert asks_when(question) is when


@pytest.mark.parametrize(
    ("text", "anchor"),
    [("I went there yesterday", True), ("We met on 8 May, 2023.", True), ("last weekend was fun", True),
     ("two weeks ago I ran", True), ("We meet on Friday", True), ("I may go, maybe", False),
     ("I loved the people there", False),
     ("paid on 08/05/23", True), ("build 1.2.3 shipped", False)],
)
def test_has_time_anchor(text: str, anchor: bool) -> None:
    assert has_time_anchor(text) is anchor


def test_a_when_question_ranks_the_memory_that_says_when_first(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root, FACTS)
    backends = [semantic.LocalMiniLM()]
    q = "When did Caroline go to the support group meeting?"
    resp = search(root, q, "rerank", 2, backends=backends)
    assert [r.id for r in resp.results][0] == "mem_b"
    assert resp.results[0].score_provenance["time_anchor"] == hybrid.TIME_ANCHOR_BONUS
    monkeypatch.setattr(cues, "TIME_ANCHOR_BONUS", 0.0)
    without = search(root, q, "rerank", 2, backends=backends)
    assert resp.results[0].score - without.results[[r.id for r in without.results].index("mem_b")].score == pytest.approx(0.25)
    monkeypatch.undo()
    other = search(root, "What did Caroline think of the support group meeting?", "rerank", 3, backends=backends)
    assert all("time_anchor" not in r.score_provenance for r in other.results)
