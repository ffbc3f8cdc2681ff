"""Regressions from the bad-input audit: every case exits 2 with one clear message, prints no
traceback, and leaves the files it refused to change byte for byte as they were."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from commonkeep.cli import main

WRITER = "librarian"


def _sha(root: Path) -> dict[str, str]:
    """Every regular file under ``root`` (lock files aside) and its sha256."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and not p.name.endswith(".lock")
    }


def _seeded(root: Path) -> str:
    """One applied record in ``root``; returns its id."""
    from commonkeep.gate.capture import capture
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    capture(root, "Always run pytest -q before committing.", tags=["testing"],
            evidence_refs=["daily/2026-12-02.md", "pyproject.toml"], confidence=0.9,
            primary_trust_class="direct_user_instruction", durability_signal="long_term",
            provenance={"role": WRITER})  # the writer's own write: a stamp, so the plain apply takes it
    prop = curate(root, role=WRITER)
    apply_patch(root, prop.patch["patch_id"], role=WRITER)
    rec = prop.ops[0]["record"]
    return str(rec["id"])


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_project_refuses_a_max_entry_chars_below_one(root: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    _seeded(root)
    code, err = _run(["project", "--root", str(root), "--max-entry-chars", value], capsys)
    assert code == 2
    assert f"--max-entry-chars) must be >= 1, got {value}" in err


def test_forget_through_a_symlinked_store_file_writes_no_tombstone(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _seeded(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(l2.read_bytes())
    l2.unlink()
    l2.symlink_to(outside)
    before, outside_before = _sha(root), outside.read_bytes()
    code, err = _run(["forget", rid, "--reason", "other", "--root", str(root), "--role", WRITER], capsys)
    assert code == 2
    assert "is a symlink" in err and "L2.playbooks.jsonl" in err
    after = _sha(root)
    # only the patch file (the explanation, written first by design) may be new; nothing existing changed
    assert {k: v for k, v in after.items() if k in before} == before
    assert [k for k in after if k not in before and not k.startswith("patches/")] == []
    assert outside.read_bytes() == outside_before
    assert (root / "memory" / "tombstones.jsonl").read_bytes() == b""


@pytest.mark.parametrize(
    "argv",
    [
        ["curate"],
        ["apply", "patch_202612021649_ckxxxxxx"],
        ["ratify", "cap_20261202164939_abcdefgh"],
        ["review", "--list"],
        ["forget", "mem_x", "--reason", "other"],
        ["reinforce", "mem_x"],
        ["inquiries"],
        ["patches"],
    ],
)
def test_governance_commands_on_a_typod_root_exit_2_and_create_nothing(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo"
    code, err = _run([*argv, "--root", str(typo), "--role", WRITER], capsys)
    assert code == 2
    assert f"no memory root at {typo} (run `commonkeep init`" in err
    assert not typo.exists()


def test_governance_commands_on_a_root_that_is_a_file_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("hi\n")
    for argv in (["curate"], ["inquiries"], ["patches"]):
        code, err = _run([*argv, "--root", str(afile), "--role", WRITER], capsys)
        assert code == 2
        assert f"the memory root {afile} is a file, not a folder" in err
    assert afile.read_text() == "hi\n"


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["review", "--approve", "{cap}", "--text", " "], "--text"),
        (["inquiries", "--withdraw", ""], "--withdraw"),
        (["inquiries", "--answer", "", "--memory", "mem_x"], "--answer"),
        (["inquiries", "--answer", "inq_x", "--memory", ""], "--memory"),
        (["patches", "--show", ""], "--show"),
    ],
)
def test_empty_ids_and_texts_are_refused_not_ignored(
    root: Path, argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.gate.capture import capture

    cap = capture(root, "Maybe the deploy uses docker?", evidence_refs=["a"]).candidate["id"]
    before = _sha(root)
    code, err = _run([a.replace("{cap}", cap) for a in argv] + ["--root", str(root), "--role", WRITER], capsys)
    assert code == 2
    assert f"{flag} is empty" in err
    assert _sha(root) == before


def test_a_line_nested_too_deeply_is_quarantined_not_a_traceback(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.store.jsonl import read_jsonl

    rid = _seeded(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    deep = b"[" * 100_000 + b"]" * 100_000
    l2.write_bytes(l2.read_bytes() + deep + b"\n")
    read = read_jsonl(l2)
    assert [r["id"] for r in read.rows] == [rid]
    assert [(b.line_no, b.error) for b in read.bad] == [(2, "JSON nested too deeply to read (thousands of levels)")]
    code, err = _run(["render", "--root", str(root)], capsys)
    assert code == 0
    assert "memory/L2.playbooks.jsonl:2: JSON nested too deeply" in err
    kept = read_jsonl(root / "quarantine" / "lines.jsonl").rows
    assert [(q["file"], q["line"]) for q in kept] == [("memory/L2.playbooks.jsonl", 2)]
    assert kept[0]["text"].encode() == deep


DEEP = "[" * 100_000 + "]" * 100_000


def test_a_patch_file_nested_too_deeply_is_named_not_a_traceback(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seeded(root)
    bad = root / "patches" / "patch_deep.json"
    bad.write_text(DEEP)
    before = _sha(root)
    code, err = _run(["apply", "patch_deep", "--root", str(root), "--role", WRITER], capsys)
    assert code == 2 and f"cannot read patch {bad}: maximum recursion depth exceeded" in err
    code, err = _run(["patches", "--show", "patch_deep", "--root", str(root)], capsys)
    assert code == 2 and f"{bad}: unreadable (maximum recursion depth exceeded" in err
    code, err = _run(["patches", "--root", str(root)], capsys)
    assert code == 1
    code, _ = _run(["curate", "--root", str(root), "--role", WRITER], capsys)
    assert code == 0
    code, _ = _run(["doctor", "--root", str(root)], capsys)
    assert code == 1
    assert bad.read_text() == DEEP
    assert {k: v for k, v in _sha(root).items() if k in before and not k.startswith(("rendered/", "search/"))} == {
        k: v for k, v in before.items() if not k.startswith(("rendered/", "search/"))
    }


def test_config_and_settings_nested_too_deeply_are_ignored_and_named(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.store.root import resolve_root

    _seeded(root)
    (root / "config.json").write_text(DEEP)
    for argv in (["curate"], ["curate", "--auto"], ["review", "--list"], ["select", "how do we run the tests", "--dry-run"]):
        code, _ = _run([*argv, "--root", str(root), "--role", WRITER], capsys)
        assert code == 0, argv
    code, out = main(["doctor", "--root", str(root)]), capsys.readouterr().out
    assert code == 1 and "config_invalid: config.json: cannot be read (maximum recursion depth exceeded" in out
    cwd = tmp_path / "proj"
    (cwd / ".omp").mkdir(parents=True)
    (cwd / ".omp" / "settings.json").write_text(DEEP)
    choice = resolve_root(cwd=cwd)
    assert any("settings.json: skipped, cannot be read (maximum recursion depth exceeded" in n for n in choice.notes)


@pytest.mark.parametrize(
    "argv",
    [
        ["write", "text \udcff\udcfe here", "--evidence", "a"],
        ["write", "fine", "--evidence", "\udcff"],
        ["forget", "mem_\udcff", "--reason", "other"],
        ["search", "q\udcff"],
        ["handoff", "--goal", "g\udcff"],
    ],
)
def test_arguments_that_are_not_utf8_are_refused_before_anything_runs(
    root: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _sha(root)
    code, err = _run([*argv, "--root", str(root), "--role", WRITER], capsys)
    assert code == 2
    assert "is not valid UTF-8" in err and "\\xff" in err
    assert _sha(root) == before


class _Stdin:
    def __init__(self, data: bytes) -> None:
        import io

        self.buffer = io.BytesIO(data)


def test_write_from_stdin_refuses_bytes_that_are_not_utf8(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _sha(root)
    monkeypatch.setattr("sys.stdin", _Stdin(b"stdin \xff\xfe bytes"))
    code, err = _run(["write", "-", "--evidence", "a", "--root", str(root)], capsys)
    assert code == 2
    assert "standard input is not valid UTF-8 (byte 0xff at offset 6); nothing was written" in err
    assert _sha(root) == before
    monkeypatch.setattr("sys.stdin", _Stdin("line one\r\nline two é".encode()))
    code, _ = _run(["write", "-", "--evidence", "a", "--root", str(root)], capsys)
    assert code == 0
    from commonkeep.store.jsonl import read_jsonl

    assert read_jsonl(root / "inbox" / "captured.jsonl").rows[-1]["text"] == "line one\nline two é"


def test_project_shows_a_stored_lone_surrogate_as_a_replacement_character(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    _seeded(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    rec = json.loads(l2.read_text().splitlines()[0])
    rec.update(id="mem_20261202170000_surr0gat", statement="Lone \udcff surrogate \ud800 here")
    with l2.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, separators=(",", ":")) + "\n")  # ensure_ascii: "\udcff" escapes, as JS writes them
    before = l2.read_bytes()
    assert main(["project", "--root", str(root)]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert "Lone \ufffd surrogate \ufffd here" in captured.out
    assert l2.read_bytes() == before


def test_answering_an_inquiry_with_a_record_that_does_not_exist_is_refused(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.store.inquiries import upsert_inquiries

    rid = _seeded(root)
    (iid,) = upsert_inquiries(root, [{"question": "Which deploy target?", "context": "c"}])
    before = _sha(root)
    code, err = _run(["inquiries", "--answer", iid, "--memory", "mem_nope", "--root", str(root), "--role", WRITER], capsys)
    assert code == 2
    assert f"no record mem_nope in {root / 'memory'} to answer {iid} with" in err
    assert _sha(root) == before
    code, _ = _run(["inquiries", "--answer", iid, "--memory", rid, "--root", str(root), "--role", WRITER], capsys)
    assert code == 0


def test_roundtable_export_writes_under_the_agent_dir_it_was_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil
    import tempfile

    from tests.roundtable.conftest import ROUNDTABLE_VARS, broker_log, start_broker, stop_broker_of

    env_dir = Path(tempfile.mkdtemp(prefix="ckenv", dir="/tmp"))
    given = Path(tempfile.mkdtemp(prefix="ckarg", dir="/tmp"))
    for name in ROUNDTABLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORPHUS_CODING_AGENT_DIR", str(env_dir))
    monkeypatch.setenv("COMMONKEEP_BROKER_LINGER", "0.5")
    proc = start_broker(given)
    try:
        assert main(["roundtable", "post", "design", "We use GCRA.", "--role", "planner", "--agent-dir", str(given)]) == 0
        assert main(["roundtable", "export", "design", "raw/design.md", "--role", WRITER, "--agent-dir", str(given)]) == 0
        assert "Traceback" not in capsys.readouterr().err
        assert "We use GCRA." in (given / "memory" / "raw" / "design.md").read_text(encoding="utf-8")
        assert not (env_dir / "memory").exists()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        stop_broker_of(given)
        shutil.rmtree(env_dir, ignore_errors=True)
        shutil.rmtree(given, ignore_errors=True)
        broker_log(given).unlink(missing_ok=True)


def test_review_refuses_an_edited_statement_over_the_candidate_limit(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.gate.capture import capture
    from commonkeep.store.candidates import MAX_TEXT_CHARS

    cap = capture(root, "Maybe the deploy uses docker?", evidence_refs=["a"]).candidate["id"]
    before = _sha(root)
    too_long = "d" * (MAX_TEXT_CHARS + 1)
    code, err = _run(["review", "--approve", cap, "--text", too_long, "--root", str(root), "--role", WRITER], capsys)
    assert code == 2
    assert f"the edited statement is {MAX_TEXT_CHARS + 1} characters; the limit is {MAX_TEXT_CHARS}" in err
    assert _sha(root) == before
    code, _ = _run(["review", "--approve", cap, "--text", "d" * MAX_TEXT_CHARS, "--root", str(root), "--role", WRITER], capsys)
    assert code == 0


@pytest.mark.parametrize("ident", ["../x", ""])
def test_ratify_without_ops_names_what_the_id_is_not(root: Path, ident: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = _sha(root)
    code, err = _run(["ratify", ident, "--root", str(root), "--role", WRITER], capsys)
    assert code == 2
    assert f"{ident!r} is not a candidate id (cap_…), and ratifying a patch needs --ops" in err
    assert _sha(root) == before


def test_a_stored_lone_surrogate_does_not_break_search_select_reindex_or_handoff(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JS may write "\\udcff" into the JSONL; SQLite and stdout only take UTF-8, so the index and
    every output hold U+FFFD instead, and the file keeps its bytes."""
    import json

    _seeded(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    rec = json.loads(l2.read_text().splitlines()[0])
    rec.update(id="mem_20261202170000_surr0gat", statement="Lone \udcff surrogate deploy \ud800 here",
               tags=["odd\udcfftag"])
    with l2.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, separators=(",", ":")) + "\n")  # ensure_ascii: the escapes, as JS writes them
    before = l2.read_bytes()
    for argv in (
        ["reindex"],
        ["search", "surrogate deploy"],
        ["search", "surrogate", "--json", "--notes"],
        ["select", "how do we deploy the surrogate service"],
        ["handoff", "--goal", "surrogate deploy"],
        ["handoff"],
    ):
        code, err = _run([*argv, "--root", str(root)], capsys)
        assert code == 0, (argv, err)
    assert main(["search", "surrogate", "--root", str(root)]) == 0
    assert "Lone \ufffd surrogate deploy \ufffd here" in capsys.readouterr().out
    assert l2.read_bytes() == before


def test_handoff_max_chars_without_a_goal_and_a_negative_wait_are_refused(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seeded(root)
    before = _sha(root)
    code, err = _run(["handoff", "--max-chars", "500", "--root", str(root)], capsys)
    assert code == 2 and "--max-chars bounds a goal snapshot; add --goal" in err
    assert _sha(root) == before  # no snapshot written
    assert main(["curate", "--wait", "-1", "--root", str(root), "--role", WRITER]) == 2
    assert "must be zero or more seconds, got -1" in capsys.readouterr().err
    assert _sha(root) == before
    assert main(["handoff", "--goal", "pytest", "--max-chars", "500", "--root", str(root)]) == 0


def test_an_empty_wiki_question_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(["dossier", "--project", str(tmp_path / "wiki"), "query", "  "], capsys)
    assert code == 2 and "the question is empty" in err


@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["roundtable", "fetch", "design"], "rooms live in the broker"),
        (["memory", "doctor"], "the wiki tool uses the memory dir"),
        (["dossier", "doctor"], "the wiki project is --project DIR"),
        (["demo"], "the demo runs on a throwaway root"),
        (["bench", "store"], "benchmarks build their own throwaway roots"),
    ],
)
def test_a_command_that_has_no_use_for_root_refuses_it(
    argv: list[str], why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run([argv[0], "--root", str(tmp_path / "r"), *argv[1:]], capsys)
    assert code == 2 and "--root does not apply here" in err and why in err
    assert not (tmp_path / "r").exists()


def test_oversized_provenance_and_forget_reason_are_refused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.errors import BadInput
    from commonkeep.store.candidates import new_candidate

    with pytest.raises(BadInput, match="provenance agent is 600 characters; the limit is 500"):
        new_candidate("Deploys go through blue-green.", provenance={"agent": "a" * 600})
    with pytest.raises(BadInput, match="source cwd is 5000 characters"):
        new_candidate("Deploys go through blue-green.", cwd="/" + "d" * 4999)
    rid = _seeded(root)
    before = _sha(root)
    code, err = _run(["forget", rid, "--reason", "x" * 501, "--root", str(root), "--role", WRITER], capsys)
    assert code == 2 and "--reason is 501 characters; the limit is 500" in err
    assert _sha(root) == before


def test_read_commands_name_a_new_bad_line_once_on_stderr(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _seeded(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    with l2.open("a", encoding="utf-8") as fh:
        fh.write('{"id": "mem_torn", "statement": "half a li\n')
    line = len(l2.read_text(encoding="utf-8").splitlines())
    before = l2.read_bytes()
    code, err = _run(["search", "pytest", "--root", str(root)], capsys)
    assert code == 0 and f"memory/L2.playbooks.jsonl:{line}" in err and "quarantine" in err
    for argv in (["search", "pytest"], ["project"], ["select", "how do we run the tests here"], ["handoff"]):
        code, err = _run([*argv, "--root", str(root)], capsys)
        assert code == 0 and "warning" not in err, (argv, err)  # named once, not on every read
    assert l2.read_bytes() == before
