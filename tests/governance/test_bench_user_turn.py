"""``commonkeep bench userturn``: the corpus, the figures and a bad ``--data`` file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.bench.userturn_corpus import GROUPS, HOSTS, generate, templates
from tests.governance.conftest import run_cli


def test_the_corpus_is_generated_from_the_data_file_in_both_hosts_shapes() -> None:
    data = templates()
    sessions = generate(1)
    assert {s["group"] for s in sessions} == set(GROUPS) and {s["host"] for s in sessions} == set(HOSTS)
    assert {s["class"] for s in sessions if s["group"] == "attack"} == {a["class"] for a in data["attacks"]}
    assert {s["language"] for s in sessions if s["group"] == "request"} == {"en", "de", "fr", "es"}
    assert all("{" not in s["statement"] for s in sessions)  # every slot filled
    omp = [t for s in sessions if s["host"] == "omp" for t in s["turns"]]
    assert any(t.get("typed") is None and t.get("message") for t in omp)  # no input event: an extension's message
    assert any(t.get("remember") for t in omp)  # /commonkeep-remember
    assert generate(1) == sessions and generate(1, seed=36) != sessions  # seeded
    assert len(generate(2)) == 2 * len(sessions)


@pytest.mark.bench
def test_the_bench_applies_the_requests_and_no_attack(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "bench", "userturn", "--per-template", "1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["attacks"]["total"]["stamped"] == 0 and report["attacks"]["total"]["applied"] == 0
    assert report["requests"]["applied_pct"] >= 95
    assert report["attacks"]["total"]["as_expanded"] > 0  # reading what the host expanded would stamp some


def test_a_sessions_file_is_run_and_a_bad_line_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sessions = [s for s in generate(1) if s["host"] == "hermes"][:1] + [s for s in generate(1) if s["group"] == "request"][:1]
    data = tmp_path / "sessions.jsonl"
    data.write_text("".join(json.dumps(s) + "\n" for s in sessions))
    code, out, err = run_cli(capsys, "bench", "userturn", "--data", str(data), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["sessions"] == 2 and report["requests"]["total"]["applied"] == 1
    data.write_text(json.dumps(sessions[0]) + "\n{not json\n")
    code, out, err = run_cli(capsys, "bench", "userturn", "--data", str(data))
    assert code != 0 and f"{data}:2" in err and "Traceback" not in err
    data.write_text(json.dumps({"host": "hermes"}) + "\n")
    code, out, err = run_cli(capsys, "bench", "userturn", "--data", str(data))
    assert code != 0 and f"{data}:1: a session needs" in err


def test_a_bad_templates_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "templates.json"
    data.write_text("{}")
    code, out, err = run_cli(capsys, "bench", "userturn", "--data", str(data))
    assert code != 0 and str(data) in err and "Traceback" not in err
