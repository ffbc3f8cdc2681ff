"""Hybrid RRF exactly as the contract: 0.45 / 0.55, K = 60, rank = 0-based index + 1."""

from __future__ import annotations

import pytest

from commonkeep.recall.search.hybrid import fuse, rrf_score


def test_rrf_scores_use_one_based_ranks_and_k_60() -> None:
    assert rrf_score(1, 0.45) == pytest.approx(0.45 / 61)
    assert rrf_score(3, 0.55) == pytest.approx(0.55 / 63)


def test_fusion_sums_both_lists_and_keeps_provenance() -> None:
    fused = fuse(
        ["a", "b", "c"], ["c", "d", "a"], eligible={"a", "c", "d"}, limit=10, semantic_backend="local-minilm"
    )
    scores = {rid: score for rid, score, _, _ in fused}
    assert scores["a"] == pytest.approx(0.45 / 61 + 0.55 / 63)
    assert scores["b"] == pytest.approx(0.45 / 62)
    assert scores["c"] == pytest.approx(0.45 / 63 + 0.55 / 61)
    assert scores["d"] == pytest.approx(0.55 / 62)
    assert [rid for rid, *_ in fused] == ["c", "a", "d", "b"]
    _, _, sources, prov = fused[0]
    assert sources == ["fts", "local-minilm"]
    assert prov["fts"]["rank"] == 3 and prov["semantic"]["rank"] == 1
    assert prov["semantic"]["score"] == pytest.approx(0.55 / 61)


def test_semantic_ids_that_are_not_eligible_do_not_count() -> None:
    fused = fuse(["a"], ["x_l1", "a"], eligible={"a"}, limit=10)
    assert [rid for rid, *_ in fused] == ["a"]
    # "a" keeps its 0-based semantic index 1 (rank 2) even though index 0 was skipped.
    assert fused[0][1] == pytest.approx(0.45 / 61 + 0.55 / 62)


def test_fusion_is_cut_to_the_limit_and_ties_break_by_keyword_rank_then_id() -> None:
    fused = fuse(["b", "a"], [], eligible=set(), limit=1)
    assert [rid for rid, *_ in fused] == ["b"]
    # a real tie: keyword rank 12 and semantic rank 28 score exactly the same (0.45/72 == 0.55/88)
    keyword = [f"k{i:02d}" for i in range(11)] + ["z_keyword"]
    semantic = [f"n{j:02d}" for j in range(27)] + ["a_semantic"]  # n.. are not eligible: skipped, ranks kept
    tie = fuse(keyword, semantic, eligible={"a_semantic"}, limit=20)
    scores = {rid: score for rid, score, *_ in tie}
    assert scores["z_keyword"] == scores["a_semantic"] == rrf_score(12, 0.45) == rrf_score(28, 0.55)
    # the keyword hit goes first, though its id sorts after the other's
    assert [rid for rid, *_ in tie][-2:] == ["z_keyword", "a_semantic"]
    # (the id, last in the sort key, never decides: two ids without a keyword rank have different
    # semantic ranks, so different scores, and two with one have different keyword ranks)
    assert fuse(["a", "a"], [], eligible=set(), limit=5)[0][1] == pytest.approx(0.45 / 61)
