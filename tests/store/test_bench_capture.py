"""``commonkeep bench capture``: the same generated calls through this code and another version,
rounds alternated, reported side by side; a bad ``--against`` is a clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.bench.capture import calls
from commonkeep.cli import main

REPO = Path(__file__).resolve().parents[2]


def test_the_generated_calls_are_seeded_varied_and_hold_a_few_secrets() -> None:
    first = calls(200, seed=3)
    assert first == calls(200, seed=3) and first != calls(200, seed=4)
    texts = [t for t, _ in first]
    assert len(set(texts)) >= 195  # every text its own: no cache makes a repeat free
    from commonkeep.secrets import redact

    assert 2 <= sum(bool(redact(t).findings) for t in texts) <= 10  # one in fifty holds a generated secret
    sessions = {kw["provenance"]["session_id"] for _, kw in first}
    assert len(sessions) == 20  # ten captures per session, as a host's turns share one


def test_bench_capture_runs_both_versions_in_alternating_rounds(capsys: pytest.CaptureFixture[str]) -> None:
    import tempfile

    before = set(Path(tempfile.gettempdir()).glob("ck-bench-capture-*"))
    assert main(["bench", "capture", "--captures", "30", "--rounds", "2", "--against", str(REPO), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    this, other = out["this"], out[str(REPO)]
    assert len(this["cpu_per_s"]) == len(other["cpu_per_s"]) == 2 and min(this["cpu_per_s"] + other["cpu_per_s"]) > 0
    assert other["package"] == str(REPO / "core") and out["ratio_cpu"][str(REPO)] > 0 and out["workload"] == "mixed"
    assert main(["bench", "capture", "--captures", "20", "--rounds", "1", "--workload", "fact", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["workload"] == "fact" and set(out) >= {"this"} and "ratio_cpu" not in out  # no --against: one version
    # ... beside the same code without the secret scan (issue 37: what the scan costs)
    assert out["unscanned"]["cpu_per_s_median"] > 0 and out["scan_cost_ratio"] > 0
    assert main(["bench", "capture", "--captures", "20", "--rounds", "1", "--workload", "tokens", "--no-baseline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["workload"] == "tokens" and "unscanned" not in out and "scan_cost_ratio" not in out
    assert main(["bench", "capture", "--captures", "20", "--rounds", "2", "--against", str(REPO), f"{REPO}/.",
                 "--workload", "fact", "--no-baseline"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and "this code:" in lines[0] and "fact calls" in lines[0]
    assert lines[3].startswith(f"this code / {REPO}: ") and "rounds alternated in one run" in lines[4]
    assert set(Path(tempfile.gettempdir()).glob("ck-bench-capture-*")) <= before  # each worker removed its root


def test_bench_capture_names_an_against_that_is_neither_a_checkout_nor_a_revision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["bench", "capture", "--captures", "5", "--rounds", "1", "--against", str(tmp_path / "nowhere")])
    assert "--against" in str(exc.value.code) and "not a checkout folder" in str(exc.value.code)
