"""The LoCoMo bench on a small LoCoMo-format fixture, the scale bench's parts, and the search CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.bench import locomo as bench_locomo
from commonkeep.bench import search as bench_search
from commonkeep.cli import main
from tests.recall.conftest import make_record, seed

TOY = Path(__file__).parent / "data" / "locomo_toy.json"


def test_turn_records_are_valid_and_keep_their_dia_id() -> None:
    from commonkeep.store.records import memory_record_problem

    conv = json.loads(TOY.read_text(encoding="utf-8"))[0]
    records = bench_locomo.turn_records(conv, "2026-12-02")
    assert len(records) == 8
    assert all(memory_record_problem(r) is None for r in records)
    assert [bench_locomo.dia_of(r) for r in records][:3] == ["D1:1", "D1:2", "D1:3"]
    assert records[2]["evidence"][0]["ref"] == "locomo/toy-1/session_1#D1:3"
    assert records[2]["statement"] == "Ana: A beagle puppy named Pixel, she loves chewing shoes."


def test_locomo_bench_scores_categories_1_to_4_against_a_bm25_baseline() -> None:
    report = bench_locomo.run_bench(TOY, ["keyword"])
    assert report["turns"] == 12 and report["conversations"] == 2
    base, ours = report["systems"]["bm25-baseline"], report["systems"]["keyword"]
    assert (
        base["overall"]["questions"] == ours["overall"]["questions"] == 6
    )  # the category-5 question is skipped
    assert ours["4:single-hop"]["questions"] == 3 and ours["2:temporal"]["questions"] == 1
    assert ours["overall"]["hit@5"] == 1.0  # every toy answer turn is found
    for key in ("hit@1", "hit@5", "hit@10", "recall@5", "recall@10", "mrr", "p50_ms", "p95_ms"):
        assert key in ours["overall"] and key in base["overall"]
    assert 0 <= base["overall"]["mrr"] <= base["overall"]["hit@10"] <= 1
    assert "bm25-baseline" in bench_locomo.format_report(report)


def test_locomo_bench_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "locomo", "--data", str(TOY), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["systems"]) == {"bm25-baseline", "keyword"}


def test_locomo_bench_rejects_a_file_in_another_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}', encoding="utf-8")
    assert main(["bench", "locomo", "--data", str(bad)]) == 2
    assert "not in LoCoMo format" in capsys.readouterr().err


def test_scale_bench_records_are_valid_and_deterministic() -> None:
    from commonkeep.store.records import memory_record_problem

    a, vocab = bench_search.synthetic_records(50)
    b, _ = bench_search.synthetic_records(50)
    assert a == b and len(vocab) == 5000
    assert all(memory_record_problem(r) is None for r in a)


def test_search_cli_prints_memory_search_lines(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(
        root,
        [make_record("mem_a", "Run the test suite with pytest -q.", ruleType="testing", confidence=0.125)],
    )
    assert main(["search", "--root", str(root), "pytest"]) == 0
    assert capsys.readouterr().out == "- mem_a [L2, conf 0.13, testing] Run the test suite with pytest -q.\n"
    assert main(["search", "--root", str(root), "nothing-like-this"]) == 0
    assert capsys.readouterr().out == "No memory matched.\n"
    assert main(["search", "--root", str(root), "--mode", "keyword", "--json", "test suite"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["results"][0]["sources"] == ["fts"] and data["used"] == "keyword"


def test_search_cli_refuses_a_bad_limit_and_a_missing_root(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "--root", str(root), "--limit", "0", "x"]) == 2
    assert "--limit must be between 1 and 10,000, got 0" in capsys.readouterr().err
    assert main(["search", "--root", str(root), "--limit", "99999999999999999999", "x"]) == 2
    assert "--limit must be between 1 and 10,000" in capsys.readouterr().err
    assert main(["search", "--root", str(tmp_path / "nope"), "x"]) == 2
    assert "no memory root at" in capsys.readouterr().err


def test_reindex_and_doctor_report_drift(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sqlite3

    seed(root, [make_record("mem_a", "Alpha."), make_record("mem_b", "Beta.")])
    assert main(["reindex", "--root", str(root), "--no-embed"]) == 0
    assert "indexed 2 active record(s)" in capsys.readouterr().out
    conn = sqlite3.connect(root / "search" / "memory-fts.db")
    conn.execute("DELETE FROM memory_fts WHERE id = 'mem_a'")
    conn.execute("INSERT INTO memory_fts VALUES ('mem_ghost', 'L2', '', 0.5, 'Ghost.', '')")
    conn.commit()
    conn.close()
    from commonkeep.recall.search.plugin import commonkeep_doctor_checks

    [finding] = [f for f in commonkeep_doctor_checks(str(root)) if f["code"] != "search_model"]
    assert finding["code"] == "index_drift" and finding["severity"] == "warning"
    assert "1 active record(s) not indexed: mem_a" in finding["message"] and "mem_ghost" in finding["message"]
    assert main(["reindex", "--root", str(root), "--no-embed"]) == 0
    assert commonkeep_doctor_checks(str(root))[0]["severity"] == "ok"


def test_search_cli_as_a_subprocess(root: Path) -> None:
    seed(root, [make_record("mem_a", "The root lives in pi-memory.")])
    proc = subprocess.run(
        [sys.executable, "-m", "commonkeep.cli", "search", "--root", str(root), "pi-memory"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("- mem_a [L2, conf 0.80]")


def test_reindex_recreate_in_the_same_process_keeps_search_working(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.recall.search.hybrid import search

    seed(root, [make_record("mem_a", "Alpha release notes.")])
    assert [r.id for r in search(root, "alpha", "keyword", 5).results] == ["mem_a"]
    assert main(["reindex", "--root", str(root), "--recreate", "--no-embed"]) == 0
    seed(root, [make_record("mem_b", "Alpha beta notes.")])
    assert [r.id for r in search(root, "alpha", "keyword", 5).results] == ["mem_a", "mem_b"]


def test_select_and_project_commands(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(
        root,
        [
            make_record("mem_a", "Run the test suite with pytest -q."),
            make_record("mem_u", "The user is Ada.", layer="L1"),
        ],
    )
    assert main(["select", "--root", str(root), "--dry-run", "how do I run the test suite"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Persistent Intelligence Context") and "[mem_a]" in out
    assert not (root / "runtime" / "context.md").exists()  # --dry-run writes nothing
    assert main(["select", "--root", str(root), "okay thanks"]) == 0
    assert capsys.readouterr().out == "nothing selected: trivial acknowledgement\n"
    assert main(["project", "--root", str(root), "--target", "user"]) == 0
    assert capsys.readouterr().out == "The user is Ada.\n"
    assert main(["project", "--root", str(root), "--budget", "10", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (
        data["text"] == "Run the t…" and data["entries"] == ["mem_a"] and data["budget"] == 10
    )  # cut to fit


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--records", "-5"], "argument --records: must be at least 1, got -5"),
        (["--records", "0"], "argument --records: must be at least 1, got 0"),
        (["--queries", "0"], "argument --queries: must be at least 1, got 0"),
        (["--records", "many"], "argument --records: 'many' is not an integer"),
    ],
)
def test_bench_search_refuses_a_negative_or_zero_count_with_exit_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "search", *argv]) == 2
    assert said in capsys.readouterr().err


def test_bench_search_api_refuses_an_empty_run() -> None:
    from commonkeep.errors import BadInput

    with pytest.raises(BadInput, match="at least 1"):
        bench_search.run_bench(-5)


def test_the_bootstrap_interval_brackets_hit_at_5_and_is_reproducible() -> None:
    scores = bench_locomo.Scores()
    for i in range(200):  # 120 of 200 questions found in the top 5: hit@5 = 0.6
        ranked = ["D1:1"] if i < 120 else ["D9:9"]
        scores.add(4, ranked, {"D1:1"}, 0.001)
    lo, hi = scores.hit5_interval()
    assert lo < 0.6 < hi and lo > 0.5 and hi < 0.7  # ±1.96·sqrt(0.24/200) ≈ ±0.068
    assert scores.hit5_interval() == [lo, hi]  # fixed seed
    assert scores.summary()["overall"]["hit@5_ci95"] == [lo, hi]
    perfect = bench_locomo.Scores()
    perfect.add(4, ["D1:1"], {"D1:1"}, 0.001)
    assert perfect.hit5_interval() == [1.0, 1.0]


def test_bench_store_refuses_zero_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "store", "--runs", "0"]) == 2
    assert "argument --runs: must be at least 1, got 0" in capsys.readouterr().err


def test_bench_search_runs_on_a_small_store(capsys: pytest.CaptureFixture[str]) -> None:
    """Its patch-sync step changed record 1,000 and up: under 1,000 records it was an IndexError traceback."""
    assert main(["bench", "search", "--records", "150", "--queries", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sync_after_one_op_patch_ms"] >= 0
