"""The store's CLI as a user runs it: a subprocess, real files, clear errors, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from commonkeep.store.jsonl import read_jsonl


def ck(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "commonkeep.cli", *args], capture_output=True, text=True, env=env, input=stdin, timeout=60)


def test_init_write_inbox_render_doctor(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    assert ck("init", "--root", root).returncode == 0
    out = ck("write", "Run the test suite with pytest -q.", "--root", root, "--agent", "hermes", "--tags", "tooling,pytest",
             "--evidence", "pyproject.toml", "--evidence", "daily/2026-12-02.md", "--json")
    assert out.returncode == 0, out.stderr
    cand_id = json.loads(out.stdout)["candidate"]
    assert ck("write", "Looked at the CI config today.", "--daily", "--root", root).returncode == 0
    inbox = json.loads(ck("inbox", "--json", "--root", root).stdout)
    assert [c["id"] for c in inbox] == [cand_id]
    assert inbox[0]["provenance"]["agent"] == "hermes"
    assert inbox[0]["evidence_refs"] == ["pyproject.toml", "daily/2026-12-02.md"]
    assert list((tmp_path / "r" / "daily").glob("*.md"))
    assert ck("render", "--root", root).returncode == 0
    assert (tmp_path / "r" / "rendered" / "MEMORY.md").read_text().startswith("# Long-Term Memory\n")
    doc = ck("doctor", "--json", "--root", root)
    assert doc.returncode == 0, doc.stdout
    assert json.loads(doc.stdout)["counts"]["candidates_new"] == 1


def test_secrets_never_reach_the_inbox(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    assert ck("init", "--root", str(root)).returncode == 0
    key = "sk-proj-" + "A1b2C3d4" * 5
    out = ck("write", f"The deploy key is {key}", "--root", root, "--json")
    assert out.returncode == 0
    assert json.loads(out.stdout)["redacted"]
    assert key not in (tmp_path / "r" / "inbox" / "captured.jsonl").read_text()


def test_write_reads_standard_input(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    assert ck("init", "--root", str(root)).returncode == 0
    assert ck("write", "-", "--root", root, stdin="Prefer small commits.\n").returncode == 0
    assert read_jsonl(tmp_path / "r" / "inbox" / "captured.jsonl").rows[0]["text"] == "Prefer small commits."


def test_bad_input_gets_a_clear_error_and_no_traceback(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    for args in (["write", "   "], ["write", "x" * 5000], ["write", "fact", "--confidence", "3"]):
        out = ck(*args, "--root", root)
        assert out.returncode == 2, args
        assert "Traceback" not in out.stderr
        assert "error:" in out.stderr
    assert not read_jsonl(tmp_path / "r" / "inbox" / "captured.jsonl").rows


def test_doctor_names_file_and_line_of_a_bad_line(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    (root / "memory" / "L2.playbooks.jsonl").write_text('{"id":"x"}\n{oops\n')
    out = ck("doctor", "--root", str(root))
    assert out.returncode == 1
    assert "memory/L2.playbooks.jsonl:2" in out.stdout
    assert "memory/L2.playbooks.jsonl:1" in out.stdout  # valid JSON, but not a valid record
    assert (root / "memory" / "L2.playbooks.jsonl").read_text() == '{"id":"x"}\n{oops\n'  # nothing lost


def test_root_command_says_which_rule_chose_it(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "OMPKEEP_ROOT": str(tmp_path / "k")}
    env.pop("OMP_MEMORY_ROOT", None)
    out = json.loads(ck("root", "--json", env=env).stdout)
    assert out == {"root": str(tmp_path / "k"), "rule": "$OMPKEEP_ROOT", "exists": False}


def test_a_secret_in_any_write_flag_never_reaches_the_inbox_even_as_a_slug(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    token = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
    refused = ck("write", "Deploys go through the release branch.", "--root", str(root), "--json", "--rule-type", token)
    assert refused.returncode == 2  # --rule-type is a closed vocabulary: refused, and the error shows no secret
    assert token not in refused.stderr + refused.stdout and "invalid choice" in refused.stderr
    out = ck("write", "Deploys go through the release branch.", "--root", str(root), "--json", "--tags", "deploy",
             "--evidence", "docs/release.md", "--cwd", f"/work/{token}", "--session", token, "--agent", token)
    assert out.returncode == 0, out.stderr
    assert "github_token" in json.loads(out.stdout)["redacted"]
    data = (root / "inbox" / "captured.jsonl").read_text().lower()
    assert token.lower() not in data
    assert token.lower().replace("_", "-") not in data  # not even inside normalized_key


def test_an_invalid_record_is_reported_with_its_id(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    (root / "memory" / "L2.playbooks.jsonl").write_text('{"id":"mem_broken_one","layer":"L2","statement":42}\n')
    (root / "inbox" / "captured.jsonl").write_text('{"id":"cap_broken_one","text":5,"status":"new"}\n')
    out = ck("doctor", "--root", str(root))
    assert out.returncode == 1
    assert "memory/L2.playbooks.jsonl:1: not a valid memory record mem_broken_one:" in out.stdout
    assert "inbox/captured.jsonl:1: not a valid candidate cap_broken_one:" in out.stdout


def test_render_on_a_root_that_does_not_exist_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    root = tmp_path / "typo"
    out = ck("render", "--root", str(root))
    assert out.returncode == 2
    assert f"no memory root at {root}" in out.stderr and "commonkeep init" in out.stderr
    assert "Traceback" not in out.stderr
    assert not root.exists()
    listed = ck("inbox", "--root", str(root))
    assert listed.returncode == 2 and "commonkeep init" in listed.stderr
    assert not root.exists()


def test_search_one_line_help_names_no_mode_list_that_can_go_stale() -> None:
    import re

    top = " ".join(ck("--help").stdout.split())
    # keyword is the default (issue 38: "by keyword and by meaning" misled); the modes live in search --help
    assert "search memory by keyword (by meaning too with --mode): QUERY [--mode MODE]" in top
    accepted = re.search(r"--mode \{([a-z,]+)\}", ck("search", "--help").stdout)
    assert accepted and {"keyword", "semantic", "deep", "rerank"} <= set(accepted.group(1).split(","))


def test_a_broken_settings_file_is_named_not_silently_skipped(tmp_path: Path) -> None:
    import os

    project = tmp_path / "proj"
    (project / ".omp").mkdir(parents=True)
    (project / ".omp" / "settings.json").write_text('{"ompkeep": {"localPath": "/tmp/somewhere",}}\n')
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT")}
    env["HOME"] = str(tmp_path / "home")
    out = subprocess.run([sys.executable, "-m", "commonkeep.cli", "root", "--json"], capture_output=True, text=True,
                         env=env, cwd=project, timeout=60)
    assert out.returncode == 0
    report = json.loads(out.stdout)
    assert report["rule"] == "default ~/.omp/agent/omp-memory"
    assert report["notes"] and ".omp/settings.json: skipped, not valid JSON" in report["notes"][0]
    assert "line 1 column" in out.stderr
    doc = subprocess.run([sys.executable, "-m", "commonkeep.cli", "doctor"], capture_output=True, text=True,
                         env=env, cwd=project, timeout=60)
    assert doc.returncode == 1 and "root_settings_skipped" in doc.stdout


def test_doctor_reports_a_config_json_that_does_not_parse(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    (root / "config.json").write_text('{"commonkeep": {"writerRole": "curator"\n')
    out = ck("doctor", "--json", "--root", str(root))
    assert out.returncode == 1
    found = [f for f in json.loads(out.stdout)["findings"] if f["code"] == "config_invalid"]
    assert found and found[0]["file"] == "config.json" and "not valid JSON" in found[0]["message"]


def test_inbox_shows_control_characters_as_escapes_not_raw(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    assert ck("init", "--root", str(root)).returncode == 0
    sneaky = "Normal fact\x1b[2K\rApproved by admin\u202eevil\x07"
    assert ck("write", sneaky, "--root", root).returncode == 0
    out = ck("inbox", "--root", root)
    assert out.returncode == 0
    assert "\x1b" not in out.stdout and "\r" not in out.stdout and "\u202e" not in out.stdout and "\x07" not in out.stdout
    assert "Normal fact\\x1b[2K\\x0dApproved by admin\\u202eevil\\x07" in out.stdout
    # stored with its terminal controls made visible (issue 22); the bidi override is shown as \u202e on output
    stored = json.loads(ck("inbox", "--json", "--root", root).stdout)[0]["text"]
    assert stored == "Normal fact\\x1b[2K\\x0dApproved by admin\u202eevil\\x07"


def test_doctor_names_a_patch_file_that_is_not_a_patch(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    (root / "patches" / "patch_202612020000_cktorn00.json").write_text('{"patch_id": "patch_202612020000_cktorn00", "ops": [\n')
    (root / "patches" / "patch_202612020001_cklist00.json").write_text("[]\n")
    out = ck("doctor", "--root", str(root))
    assert out.returncode == 1
    assert "[error] bad_patch_file: patches/patch_202612020000_cktorn00.json:2: not valid JSON" in out.stdout
    assert "[error] bad_patch_file: patches/patch_202612020001_cklist00.json: not a patch" in out.stdout


def test_inbox_warns_about_lines_that_are_not_valid_candidates(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    assert ck("write", "Prefer small commits.", "--root", str(root)).returncode == 0
    with (root / "inbox" / "captured.jsonl").open("a") as fh:
        fh.write('{"id":"cap_broken_two","text":["not","text"],"status":"new"}\n')
    for args in ([], ["--json"]):
        out = ck("inbox", *args, "--root", str(root))
        assert out.returncode == 0
        assert "1 line(s) of inbox/captured.jsonl are not valid candidates" in out.stderr
        assert "line 2: not a valid candidate cap_broken_two" in out.stderr
    assert len(json.loads(ck("inbox", "--json", "--root", str(root)).stdout)) == 1


def test_a_root_that_is_a_file_or_cannot_be_created_is_a_clear_error(tmp_path: Path) -> None:
    a_file = tmp_path / "afile"
    a_file.write_text("not a folder\n")
    for args in (["init"], ["write", "Prefer small commits."], ["inbox"]):
        out = ck(*args, "--root", str(a_file))
        assert out.returncode == 2, (args, out.stderr)
        assert "Traceback" not in out.stderr and str(a_file) in out.stderr
    assert a_file.read_text() == "not a folder\n"
    under_a_file = ck("init", "--root", str(a_file / "sub"))  # the OS refuses: a file where a folder must be
    assert under_a_file.returncode == 2
    assert "Traceback" not in under_a_file.stderr and "Not a directory" in under_a_file.stderr
    assert "hint: check that the path exists" in under_a_file.stderr


def test_oversized_tags_or_evidence_refs_are_refused_with_the_limit(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    assert ck("init", "--root", str(root)).returncode == 0
    many = ",".join(f"t{i}" for i in range(65))
    out = ck("write", "Fact with too many tags.", "--root", root, "--tags", many)
    assert out.returncode == 2 and "65 tags; a candidate takes at most 64" in out.stderr
    out = ck("write", "Fact with a huge ref.", "--root", root, "--evidence", "a", "--evidence", "e" * 2001)
    assert out.returncode == 2 and "evidence refs #2 is 2001 characters; the limit is 2000" in out.stderr
    assert "Traceback" not in out.stderr
    assert not read_jsonl(tmp_path / "r" / "inbox" / "captured.jsonl").rows


def test_bench_store_on_a_real_inbox_with_bad_lines_reports_figures_not_a_traceback(tmp_path: Path) -> None:
    inbox = tmp_path / "captured.jsonl"
    inbox.write_text('{"id": "cap_1", "text": "kept"}\nnot json\n', encoding="utf-8")
    p = ck("bench", "store", "--appends", "4", "--rewrite", "10", "--runs", "1", "--captures", "4", "--inbox", str(inbox), "--json")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert json.loads(p.stdout)["doctor_candidates"] == 1  # the bad line is skipped by the floor, reported by doctor


def test_doctor_names_a_bad_tombstone_line_once(tmp_path: Path) -> None:
    root = tmp_path / "r"
    assert ck("init", "--root", str(root)).returncode == 0
    with (root / "memory" / "tombstones.jsonl").open("a") as fh:
        fh.write("{oops\n")
    report = json.loads(ck("doctor", "--root", str(root), "--json").stdout)
    bad = [(f["file"], f["line"]) for f in report["findings"] if f["code"] == "bad_line"]
    assert bad == [("memory/tombstones.jsonl", 1)]
