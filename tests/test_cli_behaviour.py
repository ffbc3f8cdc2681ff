"""The CLI behaves the same everywhere: options only where they apply, closed vocabularies as
choices, errors as JSON under --json, reading the review queue for everyone, and ops shown with
their text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from commonkeep.cli import main
from commonkeep.store.core import Store

WRITER = "librarian"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", [["demo"], ["bench", "store"], ["dossier"]])
def test_root_is_listed_only_where_it_applies(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    assert "--root" not in capsys.readouterr().out
    code, out, err = _run(capsys, *command, "--root", "/tmp/x")
    assert code == 2 and out == ""
    assert f"commonkeep {command[0]}: error: --root does not apply here:" in err


def test_root_is_listed_where_it_applies(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["inbox", "--help"])
    assert "--root DIR" in capsys.readouterr().out


def test_memory_query_with_root_names_the_command_not_the_top_level(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "memory", "query", "what did we decide", "--root", "/tmp/x")
    assert code == 2
    assert "commonkeep memory: error: --root does not apply here" in err
    assert "usage: commonkeep [-h]" not in err


def test_demo_refuses_a_role_it_would_ignore(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "demo", "--role", "coder")
    assert code == 2 and "--role does not apply here: the demo plays every role itself" in err


@pytest.mark.parametrize("argv", [["bench", "startup", "--runs", "0"], ["bench", "web", "--repeat", "-1"]])
def test_a_benchmark_count_below_one_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Refused before anything is built or started (a median of no runs was a StatisticsError traceback)."""
    code, _, err = _run(capsys, *argv)
    assert code == 2 and f"argument {argv[2]}: must be at least 1" in err and "Traceback" not in err


def test_bench_web_with_too_few_candidates_to_decide_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "bench", "web", "--candidates", "3", "--decide-candidates", "2",
                        "--decide-records", "2", "--repeat", "1")
    assert code == 2 and "--decide-candidates 2 left no candidate to reject" in err


@pytest.mark.parametrize("flag,value", [("--trust", "nonsense"), ("--durability", "forever"), ("--rule-type", "vibes")])
def test_closed_vocabularies_are_choices_and_nothing_is_stored(root: Path, flag: str, value: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "write", "Use uv for Python installs.", flag, value, "--root", str(root))
    assert code == 2 and f"invalid choice: '{value}'" in err
    assert Store(root).candidates() == []


def test_the_cli_vocabularies_are_the_models_literals() -> None:
    from commonkeep.store import models, vocabulary

    assert get_args(models.TrustClass) == vocabulary.TRUST_CLASSES
    assert get_args(models.Durability) == vocabulary.DURABILITIES
    assert get_args(models.RuleType) == vocabulary.RULE_TYPES


def test_json_errors_are_json_on_stdout(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a usage error
    code, out, err = _run(capsys, "inbox", "--json", "--no-such-flag", "--root", str(root))
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False and doc["error"]["kind"] == "usage" and "--no-such-flag" in doc["error"]["message"]
    assert "--no-such-flag" in err  # a person still reads it on stderr
    # an error raised by the command (the role gate)
    code, out, _ = _run(capsys, "curate", "--json", "--root", str(root), "--role", "coder")
    assert code == 3
    doc = json.loads(out)
    assert doc["error"]["kind"] == "RoleRefused" and doc["error"]["exit_code"] == 3 and "hint" in doc["error"]
    # without --json, stdout stays empty
    code, out, _ = _run(capsys, "curate", "--root", str(root), "--role", "coder")
    assert code == 3 and out == ""


def _candidate(root: Path, text: str) -> None:
    code = main(["write", text, "--root", str(root), "--evidence", "commit:a1", "--evidence", "commit:b2",
                 "--confidence", "0.9"])
    assert code == 0


def test_anyone_may_read_the_review_queue_but_only_the_writer_decides(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _candidate(root, "Run the linters before every commit.")
    capsys.readouterr()
    code, out, _ = _run(capsys, "review", "--list", "--root", str(root), "--role", "coder")
    assert code == 0 and "Run the linters before every commit." in out and "1 pending" in out
    code, out, _ = _run(capsys, "review", "--json", "--root", str(root), "--role", "coder")
    assert code == 0 and len(json.loads(out)) == 1
    cid = Store(root).candidates()[0]["id"]
    code, _, err = _run(capsys, "review", "--approve", cid, "--root", str(root), "--role", "coder")
    assert code == 3 and "only the writer role" in err
    assert Store(root).candidates()[0]["status"] == "new"
    assert list((root / "patches").glob("*.json")) == []  # reading wrote nothing


def test_curate_and_patches_show_the_text_of_each_op(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = ["--root", str(root), "--role", WRITER]
    _candidate(root, "Use pytest -x for quick test runs in this repository.")
    capsys.readouterr()
    code, out, _ = _run(capsys, "curate", *r)
    assert code == 0
    assert "+ Use pytest -x for quick test runs in this repository." in out
    patch_id = json.loads(_run(capsys, "patches", *r, "--json")[1])[0]["patch_id"]
    code, out, _ = _run(capsys, "apply", patch_id, "--ops", "op_001", *r)  # an agent's note: a person selects it
    assert code == 0 and "op_001 add" in out  # apply shows the text it wrote
    assert "+ Use pytest -x for quick test runs in this repository." in out
    code, out, _ = _run(capsys, "patches", "--show", patch_id, *r)
    assert code == 0
    assert not out.lstrip().startswith("{")  # not raw JSON without --json
    assert f"patch {patch_id}  applied" in out
    assert "-> applied" in out and "+ Use pytest -x for quick test runs in this repository." in out
    # an update shows the statement it keeps and the fields it changes
    _candidate(root, "Use pytest -x for quick test runs in this repository, always.")
    code, out, _ = _run(capsys, "curate", *r)
    assert code == 0
    if "update" in out:
        assert "Use pytest -x for quick test runs in this repository." in out
        assert "from candidate" in out or "+ " in out


def test_version_answers_without_loading_plugins() -> None:
    """``--version`` imports neither pluggy nor any plugin (hosts call the CLI on every tool call)."""
    code = ("import sys; from commonkeep.cli import main; rc = main(['--version']); "
            "print(sorted(m for m in sys.modules if m.startswith(('pluggy', 'commonkeep_', 'asyncio'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_bench_web_times_the_cli_approve_against_another_revision(capsys: pytest.CaptureFixture[str]) -> None:
    """``--cli-against REV`` runs ``review --approve`` with that revision's package (git archive of this
    repository), alternated with this code on the same root; each figure is there with its CPU time."""
    code, out, err = _run(capsys, "bench", "web", "--candidates", "5", "--decide-candidates", "80", "--decide-records", "10",
                          "--repeat", "2", "--baseline", "0", "--cli-against", "HEAD", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert set(got["cli_approve_against"]) == {"HEAD"}
    for figure in (got["cli_approve"], got["cli_approve_as_run"], got["cli_approve_against"]["HEAD"]):
        assert figure["p50_ms"] > 0 and figure["cpu_p50_ms"] > 0


def test_bench_startup_runs_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    """Its seed applies the curated records although the gate holds an agent's candidates for a
    person (it stopped at "nothing to apply" since the gate decides by provenance)."""
    code, out, err = _run(capsys, "bench", "startup", "--runs", "1", "--records", "3", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert "search tests" in json.dumps(got) and "Traceback" not in err
