"""``commonkeep bench userturn``: the corpus, the figures and a bad ``--data`` file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.bench.userturn_corpus import OTHER_SOURCES, PEOPLE_SOURCES, generate
from tests.governance.conftest import run_cli


def test_the_generated_corpus_is_200_plus_unique_sessions_in_both_hosts_shapes() -> None:
    sessions = generate()
    assert len(sessions) >= 200
    assert len({s["statement"] for s in sessions}) == len(sessions)
    assert {s["host"] for s in sessions} == {"hermes", "omp"}
    assert {s["source"] for s in sessions} == set(PEOPLE_SOURCES) | set(OTHER_SOURCES)
    omp = next(s for s in sessions if s["host"] == "omp")
    assert omp["transcript"][0]["type"] == "message" and omp["transcript"][0]["message"]["role"] == "user"
    hermes = next(s for s in sessions if s["host"] == "hermes")
    assert hermes["transcript"][0]["role"] == "user"


@pytest.mark.bench
def test_the_bench_applies_what_the_person_said_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "bench", "userturn", "--sessions", "40", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["not_person_applied"] == 0
    assert report["by_source"]["person"]["applied"] == report["by_source"]["person"]["sessions"]
    assert report["baseline_not_person_stamped"] > 0  # reading the whole transcript would stamp them


def test_a_bad_data_file_is_named_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "sessions.jsonl"
    data.write_text(json.dumps(generate(1)[0]) + "\n{not json\n")
    code, out, err = run_cli(capsys, "bench", "userturn", "--data", str(data))
    assert code != 0 and f"{data}:2" in err and "Traceback" not in err
