"""The exit gate's own promises (``commonkeep.store.exitgate``, ``commonkeep.share.exitcheck``), on
real files, real git and the real redactor: what a JSONL line, a markdown paragraph or a
non-UTF-8 Hermes file becomes; what a large daily log replays; what ``share`` stages when a file
other programs write disappears; and that a file found clean is not scanned again."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.governance.conftest import WRITER
from tests.governance.test_secrets_outside_files import Plants


def _plants() -> Plants:
    return Plants(random.SystemRandom().randrange(1 << 30))


def test_a_jsonl_line_is_redacted_as_json_and_stays_valid_json() -> None:
    from commonkeep.store.exitgate import blob

    p = _plants()
    escaped = "".join(f"\\u{ord(c):04x}" for c in p.github)  # a token hidden behind JSON escapes
    plain = json.dumps({"id": "cap_1", "text": "nothing secret here, only words"}, separators=(",", ":"))
    data = (plain + "\n" + '{"id":"cap_2","text":"token ' + escaped + '"}\n').encode()
    clean, kinds = blob(data, "captured.jsonl")
    lines = clean.decode().splitlines()
    assert lines[0] == plain  # an untouched line keeps its bytes
    assert json.loads(lines[1])["text"].startswith("token [REDACTED:") and kinds
    assert p.found(clean, "jsonl") == [] and p.found(json.loads(lines[1])["text"], "decoded") == []


def test_a_key_block_in_markdown_goes_whole_and_bytes_that_are_not_utf8_stay() -> None:
    from commonkeep.store.exitgate import blob

    p = _plants()
    data = b"# Notes\n\n\xff\xfe not UTF-8 here\n\n" + p.key_block().encode() + b"\n\nlast words\n"
    clean, kinds = blob(data, "MEMORY.md")
    assert kinds and p.found(clean, "md") == []
    assert clean.startswith(b"# Notes\n\n\xff\xfe not UTF-8 here\n\n") and clean.endswith(b"\n\nlast words\n")


def test_a_daily_log_too_large_to_sweep_before_a_prompt_is_redacted_where_replayed(root: Path) -> None:
    from commonkeep.recall.select import SWEEP_BEFORE_PROMPT, select_for_prompt
    from commonkeep.store import exitgate
    from commonkeep.util.timeutil import today

    p = _plants()
    daily = root / "daily" / f"{today()}.md"
    filler = "".join(f"- step {i}: ran the build and the tests, all green\n" for i in range(SWEEP_BEFORE_PROMPT // 48 + 10))
    daily.write_text(filler + "\n\n" + p.sentences()[0] + "\n", encoding="utf-8")
    assert daily.stat().st_size > SWEEP_BEFORE_PROMPT
    sel = select_for_prompt(root, "which deploy token")
    assert "deploy with the token [REDACTED:" in sel.text and p.found(sel.text, "context") == []
    assert p.found((root / "runtime" / "context.md").read_text(), "context.md") == []
    assert exitgate.events(root) == []  # not swept in place before a prompt: share, reindex or doctor --redact do it
    assert [f for f, _ in exitgate.findings(root)] == [f"daily/{today()}.md"]


def test_a_file_found_clean_is_not_scanned_again_until_it_changes(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.store import exitgate

    p = _plants()
    daily = root / "daily" / "2026-12-01.md"
    daily.write_text("first paragraph, nothing secret\n\nsecond paragraph, nothing either\n", encoding="utf-8")
    assert exitgate.sweep(root, reason="test") == []
    scanned: list[bytes] = []
    real = exitgate.blob

    def counting(data: bytes, name: str) -> tuple[bytes, list[str]]:
        scanned.append(data)
        return real(data, name)

    monkeypatch.setattr(exitgate, "blob", counting)
    assert exitgate.sweep(root, reason="test") == [] and scanned == []  # unchanged: not read, not scanned
    with daily.open("a", encoding="utf-8") as fh:  # OmpKeep appends
        fh.write("\n\n" + p.sentences()[0] + "\n")
    got = exitgate.sweep(root, reason="test")
    assert [s.file for s in got] == ["daily/2026-12-01.md"] and "github_token" in got[0].kinds
    # the tail from the last paragraph it was found clean in (a block straddling the edge is read whole)
    assert scanned[0].startswith(b"second paragraph") and b"first paragraph" not in scanned[0]
    assert p.found(daily.read_text(), "daily") == [] and daily.read_text().startswith("first paragraph")
    event = exitgate.events(root)[-1]
    assert event["file"] == "daily/2026-12-01.md" and event["during"] == "test" and event["kinds"]["github_token"] == 1
    assert p.github not in json.dumps(exitgate.events(root))


def _shared(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Path]:
    """The writer's arguments and a bare remote, with a git identity for this test."""
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "exit gate test")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "exit@test.invalid")
    remote = tmp_path / "remote.git"
    assert subprocess.run(["git", "init", "-q", "--bare", str(remote)]).returncode == 0
    return ["--root", str(root), "--role", WRITER], remote


def test_share_stages_the_removal_of_a_file_other_programs_write(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from commonkeep.cli import main

    r, remote = _shared(root, tmp_path, monkeypatch)
    old = root / "daily" / "2026-11-30.md"
    old.write_text("an old day\n", encoding="utf-8")
    assert main(["share", "init", "--remote", str(remote), *r]) == 0
    assert main(["share", "sync", *r]) == 0
    tracked = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True)
    assert tracked.returncode == 0 and "daily/2026-11-30.md" in tracked.stdout.split()
    old.unlink()
    assert main(["share", "sync", *r]) == 0
    capsys.readouterr()
    tracked = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True)
    assert tracked.returncode == 0 and "daily/2026-11-30.md" not in tracked.stdout.split()
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True)
    assert status.returncode == 0 and status.stdout.strip() == ""  # audit/ and the memo are not left uncommitted


# files nobody expected under a path ``share`` commits: each must pass the gate like the known ones
UNEXPECTED = ["config.json", "schemas/x.json", "daily/sub/notes.md", "daily/notes.txt", "memory/archive/old.jsonl",
              "inbox/notes.txt", "patches/p.txt", "patches/old/patch_1.json"]


def test_share_never_commits_a_secret_in_a_file_nobody_expected_under_a_committed_path(
    tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from commonkeep.cli import main

    r, remote = _shared(root, tmp_path, monkeypatch)
    assert main(["share", "init", "--remote", str(remote), *r]) == 0
    p = _plants()
    for rel in UNEXPECTED:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel == "config.json":
            doc = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
            doc["note"] = f"token {p.github}"
            path.write_text(json.dumps(doc), encoding="utf-8")
        elif rel.endswith((".json", ".jsonl")):
            path.write_text(json.dumps({"note": f"token {p.github}"}) + "\n", encoding="utf-8")
        else:
            path.write_text(f"token {p.github}\n", encoding="utf-8")
    hidden = root / "memory" / ".cache" / "y.txt"  # a hidden folder: never committed at all
    hidden.parent.mkdir(parents=True)
    hidden.write_text(f"token {p.github}\n", encoding="utf-8")
    assert main(["share", "sync", *r]) == 0
    said = capsys.readouterr().out
    objects = subprocess.run(["git", "-C", str(remote), "cat-file", "--batch-all-objects", "--batch"], capture_output=True)
    assert objects.returncode == 0 and p.github.encode() not in objects.stdout and p.github[4:16].encode() not in objects.stdout
    tracked = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True).stdout.split()
    assert set(UNEXPECTED) <= set(tracked) and "memory/.cache/y.txt" not in tracked
    for rel in UNEXPECTED:  # redacted in place too, each with its audit line, and named in what sync says
        assert p.github not in (root / rel).read_text(encoding="utf-8") and rel in said
    audit = [json.loads(line) for line in (root / "audit" / "log.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {a["file"] for a in audit if a.get("event") == "outside_secret_redacted"} >= set(UNEXPECTED)


def test_a_record_another_curator_wrote_raw_is_redacted_in_every_copy_and_by_reindex_in_place(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """OmpKeep's curator (when a root turns it back on) writes records without commonkeep's redactor."""
    from commonkeep.cli import main
    from commonkeep.store import exitgate

    p = _plants()
    record = {"id": "mem_20261202105616_k3x9", "layer": "L2", "scope": {"type": "global"}, "tags": ["deploy"],
              "statement": f"Deploy with {p.github}; the staging DB_PASSWORD={p.password}",
              "evidence": [{"type": "artifact", "ref": "ops.md", "note": "Captured evidence reference"}],
              "confidence": 0.9, "stability": "semi-stable", "created_at": "2026-12-02", "updated_at": "2026-12-02",
              "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "a new deploy"},
              "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None, "ruleType": "convention"}
    playbooks = root / "memory" / "L2.playbooks.jsonl"
    with playbooks.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, separators=(",", ":")) + "\n")
    r = ["--root", str(root), "--role", WRITER]
    for cmd in (["project"], ["project", "--format", "plain"], ["handoff"], ["handoff", "--goal", "deploy"], ["render"],
                ["select", "how do we deploy with the token"]):
        assert main([*cmd, *r]) == 0
    printed = capsys.readouterr().out
    # select replays records into the agent's context before any sweep: through the redactor's rules
    context = (root / "runtime" / "context.md").read_text(encoding="utf-8")
    assert "mem_20261202105616_k3x9" in context and "Deploy with [REDACTED:" in context and p.found(context, "context") == []
    assert p.found((root / "runtime" / "selected_memory.json").read_bytes(), "selected_memory") == []
    assert "Deploy with [REDACTED:" in printed and p.found(printed, "printed") == []
    for rel in ("rendered", "reports", "runtime"):
        assert [hit for f in (root / rel).rglob("*") if f.is_file() for hit in p.found(f.read_bytes(), str(f))] == []
    assert main(["reindex", *r]) == 0  # the indexes are built from the file redacted in place
    assert p.found(playbooks.read_bytes(), "L2") == [] and "Deploy with [REDACTED:" in playbooks.read_text()
    assert [e["file"] for e in exitgate.events(root)] == ["memory/L2.playbooks.jsonl"]
    for db in (root / "search").glob("*.db"):
        assert p.found(db.read_bytes(), db.name) == []


def test_a_record_another_program_appends_to_an_indexed_store_is_redacted_before_the_index_takes_it(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The index's delta sync reads the lines another program appended: a secret in one is redacted in
    the file, with an audit line, before any search database or result holds it."""
    from commonkeep.cli import main
    from commonkeep.store import exitgate
    from tests.recall.conftest import make_record

    r = ["--root", str(root), "--role", WRITER]
    playbooks = root / "memory" / "L2.playbooks.jsonl"
    with playbooks.open("a", encoding="utf-8") as fh:
        for i in range(40):
            fh.write(json.dumps(make_record(f"mem_clean_{i:03d}", f"Service {i} deploys on Fridays."), separators=(",", ":")) + "\n")
    assert main(["search", "deploys Fridays", *r]) == 0  # the index is built
    p = _plants()
    with playbooks.open("a", encoding="utf-8") as fh:  # as OmpKeep's curator or a shell appends
        fh.write(json.dumps(make_record("mem_raw_001", f"Deploy the billing service with {p.github}"), separators=(",", ":")) + "\n")
    capsys.readouterr()
    assert main(["search", "billing service deploy", *r]) == 0
    printed = capsys.readouterr().out
    assert "mem_raw_001" in printed and "[REDACTED:" in printed and p.found(printed, "printed") == []
    assert p.found(playbooks.read_bytes(), "L2") == []
    assert [(e["file"], e["during"]) for e in exitgate.events(root)] == [("memory/L2.playbooks.jsonl", "index")]
    for db in (root / "search").glob("*.db*"):
        assert p.found(db.read_bytes(), db.name) == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n§é", max_size=600))
def test_text_is_scanned_in_pieces_that_join_back_to_it_exactly(value: str) -> None:
    from commonkeep.store import exitgate

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(exitgate, "CHUNK", 32)  # small pieces: every split path is taken
        pieces = [piece for para in exitgate._paragraphs(value)
                  for piece in (exitgate._lines(para) if len(para) > 32 else (para,))]
        assert "".join(pieces) == value
        assert all(len(p) <= 32 or "\n" not in p.rstrip("\n") for p in pieces)  # longer only as one line
        assert exitgate.text(value) == value  # nothing secret: not a character changed


def test_the_web_app_shows_a_raw_wiki_source_nobody_ingested_yet_redacted(root: Path, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from commonkeep.web.app import Settings, build
    from commonkeep.web.security import Keys

    p = _plants()
    project = tmp_path / "wiki-project"
    (project / "wiki").mkdir(parents=True)
    (project / "raw").mkdir()
    (project / "wiki" / "index.md").write_text("# Index\n", encoding="utf-8")
    (project / "raw" / "stray.md").write_text("# Stray\n\n" + "\n\n".join(p.sentences()) + "\n", encoding="utf-8")
    keys = Keys()
    guard, _ = build(Settings(root=root, role=WRITER, keys=keys, wiki=project))
    with TestClient(guard, base_url="http://127.0.0.1") as client:
        page = client.get("/wiki", params={"page": "raw/stray.md"}, headers={"x-commonkeep-token": keys.token})
    assert page.status_code == 200 and "<h1>Stray</h1>" in page.text
    assert "deploy with the token [REDACTED:" in page.text and p.found(page.text, "the wiki page") == []
    assert p.found((project / "raw" / "stray.md").read_text(), "raw") != []  # showing it does not rewrite the source


def test_doctor_names_an_outside_file_and_its_writer_and_redact_cleans_it_now(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.cli import main
    from commonkeep.store import exitgate

    p = _plants()
    with (root / "scratchpad.md").open("a", encoding="utf-8") as fh:  # OmpKeep's scratchpad tool
        fh.write(f"- [ ] {p.sentences()[1]}\n")
    assert main(["doctor", "--root", str(root)]) == 1
    said = capsys.readouterr().out
    assert "scratchpad.md:3: looks like a secret (1 aws_access_key" in said
    assert "written by OmpKeep's scratchpad tool, or a shell" in said and "`commonkeep doctor --redact`" in said
    assert p.found(said, "doctor") == []
    assert main(["doctor", "--redact", "--root", str(root)]) == 0  # redacted first, then nothing to report
    said = capsys.readouterr().out
    assert "redacted in place: scratchpad.md: 1 aws_access_key" in said and p.found(said, "doctor --redact") == []
    assert p.found((root / "scratchpad.md").read_text(), "scratchpad") == []
    assert [(e["file"], e["during"]) for e in exitgate.events(root)] == [("scratchpad.md", "doctor --redact")]
