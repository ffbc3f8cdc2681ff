"""``commonkeep share``: a root shared through a git remote (real git, a bare remote, two machines)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from commonkeep.share.merge import BOTH_CHANGED, DELETED_OURS, DELETED_THEIRS, merge_bytes
from commonkeep.share.merge import main as driver_main
from commonkeep.store.jsonjs import dumps_line

WRITER = "librarian"
L2 = "memory/L2.playbooks.jsonl"


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for k, v in {"GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.org",
                 "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.org"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")
    monkeypatch.delenv("COMMONKEEP_WRITER_ROLE", raising=False)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


def record(rid: str, statement: str, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": rid, "layer": "L2", "scope": {"type": "global"}, "tags": ["test"], "statement": statement,
        "evidence": [{"type": "artifact", "ref": "daily/2026-12-02.md", "note": "Captured evidence reference"}],
        "confidence": 0.8, "stability": "semi-stable", "created_at": "2026-12-02", "updated_at": "2026-12-02",
        "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "When it changes."},
        "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None,
    }
    rec.update(extra)
    return rec


def add(root: Path, rec: dict[str, Any], file: str = L2) -> None:
    with open(root / file, "a", encoding="utf-8") as fh:
        fh.write(dumps_line(rec) + "\n")


def replace_statement(root: Path, rid: str, statement: str, file: str = L2) -> None:
    path = root / file
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines:
        row = json.loads(line)
        if row.get("id") == rid:
            row["statement"] = statement
            line = dumps_line(row)
        out.append(line)
    path.write_text("".join(x + "\n" for x in out), encoding="utf-8")


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from commonkeep.cli import main

    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def sync(capsys: pytest.CaptureFixture[str], root: Path, *extra: str) -> dict[str, Any]:
    code, out, err = cli(capsys, "share", "sync", "--root", str(root), "--role", WRITER, "--json", *extra)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture
def machines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A bare remote and two roots: A created it and pushed, B cloned it."""
    from commonkeep.store.layout import ensure_layout

    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a = ensure_layout(tmp_path / "a").root
    assert cli(capsys, "share", "init", "--root", str(a), "--remote", str(remote))[0] == 0
    sync(capsys, a)
    b = tmp_path / "b"
    subprocess.run(["git", "clone", "-q", str(remote), str(b)], check=True)
    ensure_layout(b)
    assert cli(capsys, "share", "init", "--root", str(b))[0] == 0
    sync(capsys, b)
    return a, b


def inbox(root: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (root / "inbox/captured.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]


def contested(root: Path) -> list[dict[str, Any]]:
    return [c for c in inbox(root) if "contested" in c.get("tags", [])]


# --- init --------------------------------------------------------------------------------


def test_init_is_idempotent_and_ignores_derived_files(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    code, out, err = cli(capsys, "share", "init", "--root", str(root))
    assert code == 0, err
    head = git(root, "rev-parse", "HEAD")
    ignore, attrs = (root / ".gitignore").read_bytes(), (root / ".gitattributes").read_bytes()
    config = (root / ".git/config").read_bytes()
    code, out, err = cli(capsys, "share", "init", "--root", str(root))
    assert code == 0 and "nothing changed" in out
    assert git(root, "rev-parse", "HEAD") == head
    assert (root / ".gitignore").read_bytes() == ignore and (root / ".gitattributes").read_bytes() == attrs
    assert (root / ".git/config").read_bytes() == config
    driver = git(root, "config", "--get", "merge.commonkeep-jsonl.driver").strip()
    assert driver.startswith(sys.executable) and driver.endswith("-m commonkeep.share.merge %O %A %B %P")
    for derived in ("search/memory-fts.db", "locks/writer.lock", "runtime/context.md", "quarantine/lines.jsonl",
                    "rendered/MEMORY.md", "memory/.L2.playbooks.jsonl.lock"):
        (root / derived).parent.mkdir(parents=True, exist_ok=True)
        (root / derived).write_text("x", encoding="utf-8")
        assert subprocess.run(["git", "check-ignore", "-q", derived], cwd=root).returncode == 0, derived
    for canonical in (L2, "memory/projects/p.jsonl", "inbox/captured.jsonl", "memory/tombstones.jsonl"):
        assert git(root, "check-attr", "merge", canonical).strip().endswith("merge: commonkeep-jsonl"), canonical
        assert subprocess.run(["git", "check-ignore", "-q", canonical], cwd=root).returncode == 1
    assert git(root, "check-attr", "merge", "daily/2026-12-02.md").strip().endswith("merge: union")


def test_init_keeps_an_existing_history_and_user_lines(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(root, "init", "-q")
    (root / ".gitignore").write_text("notes/\n", encoding="utf-8")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "mine")
    first = git(root, "rev-list", "--max-parents=0", "HEAD")
    assert cli(capsys, "share", "init", "--root", str(root))[0] == 0
    assert git(root, "rev-list", "--max-parents=0", "HEAD") == first
    assert (root / ".gitignore").read_text(encoding="utf-8").startswith("notes/\n")


def test_errors_are_clear(tmp_path: Path, root: Path, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = cli(capsys, "share", "sync", "--root", str(root), "--role", WRITER)
    assert code == 2 and "not set up for sharing" in err and "commonkeep share init" in err and "Traceback" not in err
    assert cli(capsys, "share", "init", "--root", str(root), "--remote", str(tmp_path / "nowhere.git"))[0] == 0
    code, out, err = cli(capsys, "share", "sync", "--root", str(root), "--role", WRITER)
    assert code == 2 and "cannot be reached" in err and "hint:" in err
    code, out, err = cli(capsys, "share", "sync", "--root", str(root), "--role", "hermes")
    assert code == 3
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, out, err = cli(capsys, "share", "init", "--root", str(root))
    assert code == 2 and "git is not on PATH" in err


# --- two machines ---------------------------------------------------------------------------


def test_records_added_on_both_machines_end_up_on_both(machines: tuple[Path, Path],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.recall.search.hybrid import search

    a, b = machines
    add(a, record("mem_20261202000001_aaaaaaaa", "Deploy with the blue green script."))
    add(b, record("mem_20261202000002_bbbbbbbb", "Release notes live in the changelog folder."))
    sync(capsys, a)
    rep = sync(capsys, b)
    assert rep["added"] == ["mem_20261202000001_aaaaaaaa"] and rep["contested"] == []
    rep = sync(capsys, a)
    assert rep["added"] == ["mem_20261202000002_bbbbbbbb"]
    assert (a / L2).read_bytes() == (b / L2).read_bytes()
    assert b"aaaaaaaa" in (a / L2).read_bytes() and b"bbbbbbbb" in (a / L2).read_bytes()
    for root in (a, b):
        assert [r.id for r in search(root, "blue green script", mode="keyword").results] == ["mem_20261202000001_aaaaaaaa"]
        assert [r.id for r in search(root, "changelog folder", mode="keyword").results] == ["mem_20261202000002_bbbbbbbb"]
    assert git(a, "status", "--porcelain") == ""  # derived files stay out of git


def test_same_record_changed_on_both_sides_becomes_one_contested_candidate(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = machines
    rid = "mem_20261202000003_cccccccc"
    add(a, record(rid, "Use port 8080 for the dev server."))
    sync(capsys, a)
    sync(capsys, b)
    replace_statement(a, rid, "Use port 9090 for the dev server.")
    replace_statement(b, rid, "Use port 7070 for the dev server.")
    sync(capsys, a)
    rep = sync(capsys, b)
    assert "7070" in (b / L2).read_text(encoding="utf-8")  # ours kept on B
    assert len(rep["contested"]) == 1
    [cand] = contested(b)
    assert cand["text"] == "Use port 9090 for the dev server."  # the other side's statement
    assert cand["matched_memory_ids"] == [rid] and cand["match_kind"] == "potential_conflict"
    assert cand["status"] == "new" and any(rep["remote_commit"] in ref for ref in cand["evidence_refs"])
    assert cand["provenance"]["agent"] == "commonkeep-share"
    sync(capsys, a)
    assert (a / L2).read_bytes() == (b / L2).read_bytes()
    assert len(contested(a)) == 1  # the candidate travels, and is not created twice
    side = Path(git(b, "rev-parse", "--absolute-git-dir").strip()) / "commonkeep-contested.jsonl"
    assert side.read_text(encoding="utf-8") == ""
    # the librarian is offered the other version as an update of that record, never by default
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    prop = curate(b, role=WRITER)
    [op] = [o for o in prop.ops if o.get("candidate_id") == cand["id"]]
    assert (op["op"], op["target_id"], op["default_selected"]) == ("update", rid, False)
    assert op["updates"]["statement"] == "Use port 9090 for the dev server."
    from commonkeep.errors import BadInput

    with pytest.raises(BadInput, match="not selected by default"):  # nothing is taken by default
        apply_patch(b, prop.patch["patch_id"], role=WRITER)
    apply_patch(b, prop.patch["patch_id"], role=WRITER, op_ids=[op["op_id"]])
    text = (b / L2).read_text(encoding="utf-8")
    [row] = [json.loads(x) for x in text.splitlines() if json.loads(x)["id"] == rid]
    assert row["statement"] == "Use port 9090 for the dev server." and "7070" not in text


def _only_deleted(root: Path, rid: str) -> bool:
    """No live line of ``rid`` in L2: exactly the one an audit-preserving delete keeps (status deleted, as OmpKeep)."""
    rows = [json.loads(x) for x in (root / L2).read_text(encoding="utf-8").splitlines() if rid in x]
    return len(rows) == 1 and rows[0]["status"] == "deleted"


def test_deleted_on_one_side_changed_on_the_other_deletion_wins(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.patches.curate import auto_curate
    from commonkeep.patches.forget import forget
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store.core import Store

    a, b = machines
    rid = "mem_20261202000004_dddddddd"
    add(a, record(rid, "The staging password rotates monthly."))
    sync(capsys, a)
    sync(capsys, b)
    forget(a, rid, reason="invalid", role=WRITER)
    assert _only_deleted(a, rid)
    replace_statement(b, rid, "The staging password rotates weekly.")
    sync(capsys, a)
    rep = sync(capsys, b)
    assert _only_deleted(b, rid)
    assert rid in Store(b).tombstoned_ids()
    [cand] = contested(b)
    assert cand["text"] == "The staging password rotates weekly." and cand["matched_memory_ids"] == [rid]
    assert rep["contested"] == [cand["id"]] and "deleted" in cand["tags"]
    sync(capsys, a)
    assert (a / L2).read_bytes() == (b / L2).read_bytes()
    # the librarian's curation never brings the record back: the contested candidate is rejected
    from commonkeep.patches.curate import curate

    prop = curate(b, role=WRITER, write=False)
    [op] = [o for o in prop.ops if o.get("candidate_id") == cand["id"]]
    assert op["op"] == "reject_candidate" and op["default_selected"] and rid in op["reason"]
    auto_curate(b, role=WRITER)
    assert rid not in {r["id"] for r in Store(b).records(active_only=False)}
    assert cand["id"] not in {c["id"] for c in Store(b).candidates(status="new")}  # rejected, not waiting
    assert _only_deleted(b, rid)
    patch = {"patch_id": "patch_202612020000_ckresur", "created_at": "2026-12-02T00:00:00.000Z", "generated_by": "manual", "applied_at": None, "applied_ops": [], "skipped_ops": [],
             "mode": "propose", "status": "proposed", "summary": "resurrect",
             "ops": [{"op_id": "op_001", "op": "add", "target": L2, "record": record(rid, "back"),
                      "risk": "low", "default_selected": True}]}
    result = apply_patch(b, patch, role=WRITER)
    assert not result.applied and _only_deleted(b, rid)


def test_malformed_line_survives_the_merge(machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = machines
    with open(a / L2, "a", encoding="utf-8") as fh:
        fh.write('{"id": "mem_torn", "statement": "half a li\n')
    add(b, record("mem_20261202000005_eeeeeeee", "Lint with ruff."))
    sync(capsys, a)
    sync(capsys, b)
    data = (b / L2).read_bytes()
    assert b'{"id": "mem_torn", "statement": "half a li\n' in data and b"eeeeeeee" in data


def test_same_day_daily_log_keeps_both_lines(machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = machines
    for root, line in ((a, "- looked at CI on machine A\n"), (b, "- fixed the flaky test on machine B\n")):
        with open(root / "daily/2026-12-02.md", "a", encoding="utf-8") as fh:
            fh.write("# 2026-12-02\n" + line)
    sync(capsys, a)
    sync(capsys, b)
    text = (b / "daily/2026-12-02.md").read_text(encoding="utf-8")
    assert "machine A" in text and "machine B" in text and "<<<<<<<" not in text


def test_junk_blocking_the_pull_is_reported_and_nothing_is_lost(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = machines
    (a / "notes.txt").write_text("from A\n", encoding="utf-8")
    git(a, "add", "notes.txt")
    git(a, "commit", "-q", "-m", "notes")
    add(a, record("mem_20261202000006_ffffffff", "A record from A."))
    sync(capsys, a)
    (b / "notes.txt").write_text("B's own notes\n", encoding="utf-8")  # untracked, would be overwritten
    add(b, record("mem_20261202000007_gggggggg", "A record from B."))
    code, out, err = cli(capsys, "share", "sync", "--root", str(b), "--role", WRITER)
    assert code == 2 and "git pull" in err and "notes.txt" in err and "nothing was lost" in err
    assert (b / "notes.txt").read_text(encoding="utf-8") == "B's own notes\n"
    assert b"gggggggg" in (b / L2).read_bytes()
    assert "gggggggg" in git(b, "show", f"HEAD:{L2}")  # committed locally


# --- the merge driver ------------------------------------------------------------------------


def line(rid: str, statement: str) -> bytes:
    return dumps_line({"id": rid, "statement": statement}).encode()


def test_driver_rules() -> None:
    base = b"\n".join([line("k", "keep"), line("o", "one"), line("t", "two"), line("s", "same"),
                       line("c", "c0"), line("d1", "x"), line("d2", "y"), line("d3", "z")]) + b"\n"
    ours = b"\n".join([line("k", "keep"), line("o", "one-ours"), line("t", "two"), line("s", "same2"),
                       line("c", "c-ours"), line("d2", "y-ours"), line("d3", "z"), line("n1", "ours new")]) + b"\n"
    theirs = b"\n".join([line("theirs-new", "t new"), line("k", "keep"), line("o", "one"), line("t", "two-theirs"),
                         line("s", "same2"), line("c", "c-theirs"), line("d1", "x-theirs")]) + b"\n"
    res = merge_bytes(base, ours, theirs)
    assert res.data == b"\n".join([line("k", "keep"), line("o", "one-ours"), line("t", "two-theirs"),
                                   line("s", "same2"), line("c", "c-ours"), line("n1", "ours new"),
                                   line("theirs-new", "t new")]) + b"\n"
    got = {(c.id, c.kind, c.line) for c in res.contested}
    assert got == {("c", BOTH_CHANGED, line("c", "c-theirs")), ("d1", DELETED_OURS, line("d1", "x-theirs")),
                   ("d2", DELETED_THEIRS, line("d2", "y-ours"))}


def test_driver_keeps_bytes_and_bad_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fancy = '{"id":"u","statement":"caf\u00e9 \u2014 \U0001f680 \\"q\\" \\\\ \\n \\u0007 \\ud800","n":1.50}'.encode()
    base = fancy + b"\n"
    ours = fancy + b"\n" + b"not json at all\n" + b'{"no_id": true}\n'
    theirs = b"not json at all\n" + fancy + b"\n" + b"{torn\n" + line("v", "new")
    (tmp_path / "B").write_bytes(base)
    (tmp_path / "O").write_bytes(ours)
    (tmp_path / "T").write_bytes(theirs)
    git(tmp_path, "init", "-q")
    monkeypatch.chdir(tmp_path)
    assert driver_main([str(tmp_path / "B"), str(tmp_path / "O"), str(tmp_path / "T"), L2]) == 0
    assert (tmp_path / "O").read_bytes() == (fancy + b"\n" + b"not json at all\n" + b'{"no_id": true}\n'
                                             + b"{torn\n" + line("v", "new") + b"\n")
    assert not (tmp_path / ".git/commonkeep-contested.jsonl").exists()
    # a contested line goes to the side file byte for byte
    other = fancy.replace(b"caf", b"CAF")
    (tmp_path / "T").write_bytes(other + b"\n")
    (tmp_path / "O").write_bytes(fancy.replace(b"caf", b"Caf") + b"\n")
    assert driver_main([str(tmp_path / "B"), str(tmp_path / "O"), str(tmp_path / "T"), L2]) == 0
    [entry] = [json.loads(x) for x in (tmp_path / ".git/commonkeep-contested.jsonl").read_text().splitlines()]
    assert entry["path"] == L2 and entry["id"] == "u" and entry["kind"] == BOTH_CHANGED
    assert entry["line"].encode("utf-8", "surrogateescape") == other
    assert driver_main([str(tmp_path / "missing"), str(tmp_path / "O"), str(tmp_path / "T"), L2]) != 0


def test_a_privacy_purge_is_not_undone_by_another_machines_edit(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.patches.forget import forget

    a, b = machines
    rid = "mem_20261202000009_pppppppp"
    add(a, record(rid, "Alice's home address is 12 Elm Street."))
    sync(capsys, a)
    sync(capsys, b)
    forget(a, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    replace_statement(b, rid, "Alice's home address is 14 Elm Street.")
    sync(capsys, a)
    rep = sync(capsys, b)
    assert rid not in (b / L2).read_text(encoding="utf-8")
    assert contested(b) == [] and rep["contested"] == []
    assert any("purged for privacy" in n for n in rep["notes"])
    git_dir = b / ".git"
    for side in git_dir.glob("commonkeep-contested*.jsonl"):
        assert "Elm Street" not in side.read_text(encoding="utf-8"), side
    assert "14 Elm Street" not in (b / "inbox/captured.jsonl").read_text(encoding="utf-8")


def test_a_candidate_both_machines_changed_does_not_become_a_new_candidate(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store

    a, b = machines
    cand = new_candidate("Use ruff for linting Python code.", evidence_refs=["a.md", "b.md"])
    Store(a).append_candidate(cand)
    sync(capsys, a)
    sync(capsys, b)
    for root, status in ((a, "rejected"), (b, "patched")):
        path = root / "inbox/captured.jsonl"
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        path.write_text("".join(dumps_line({**r, "status": status} if r["id"] == cand["id"] else r) + "\n"
                                for r in rows), encoding="utf-8")
    sync(capsys, a)
    rep = sync(capsys, b)
    assert rep["contested"] == [] and contested(b) == []
    assert [c["status"] for c in inbox(b) if c["id"] == cand["id"]] == ["patched"]  # ours stays, once
    assert len(inbox(b)) == len({c["id"] for c in inbox(b)})  # no candidate was added
    assert any("lost the merge" in n for n in rep["notes"])
    done = (b / ".git" / "commonkeep-contested.done.jsonl").read_text(encoding="utf-8")
    assert '\\"status\\":\\"rejected\\"' in done  # the other version is kept, locally


def test_sync_takes_the_role_from_the_environment_like_every_writer_command(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = machines
    monkeypatch.setenv("COMMONKEEP_ROLE", WRITER)
    code, out, err = cli(capsys, "share", "sync", "--root", str(a), "--json")
    assert code == 0, err
    assert json.loads(out)["pushed"] is True
    monkeypatch.setenv("COMMONKEEP_ROLE", "planner")
    code, _, err = cli(capsys, "share", "sync", "--root", str(a))
    assert code == 3 and "only the writer role" in err
