"""``commonkeep bench apply`` runs each decision as a new process on a real root and fails loudly
when one fails (a bench that timed a crash would report it as fast)."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.bench import apply as bench_apply


def test_bench_apply_times_every_step_as_a_process() -> None:
    report = bench_apply.bench(40, 1, [])
    for step in bench_apply.STEPS:
        assert report[f"{step}_p50_ms[this]"] > 0 and report[f"{step}_cpu_p50_ms[this]"] > 0
    assert report["first_apply_ms[this]"] > 0


def test_a_failing_decision_stops_the_bench(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="failed"):
        bench_apply._cli(tmp_path / "no-root-here", {}, "apply", "patch_202612050000_none")


def test_the_root_has_every_vector_current(tmp_path: Path) -> None:
    from commonkeep.recall.search import index

    ids = bench_apply.build_root(tmp_path / "root", 25)
    conn = index.connect_recall(index.recall_db_path(tmp_path / "root"))
    try:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(ids) == 25
        fp, done = (conn.execute("SELECT value FROM meta WHERE key = ?", (k,)).fetchone()[0]
                    for k in ("fingerprint", "vectors_fingerprint"))
    finally:
        conn.close()
    assert done.endswith(fp)
