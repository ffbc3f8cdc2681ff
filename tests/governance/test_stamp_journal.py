"""The stamp journal itself (``commonkeep.gate.stamps``): where it lives, who may read it, what a
line must carry to count, and that a stamp is bound to exactly one candidate id, text, root and
stamp."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.gate import stamps

CAND = {"id": "cap_20261204120000_journal1", "text": "We deploy with make release."}


def test_it_lives_per_user_outside_any_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(stamps.ENV_DIR)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert stamps.state_dir() == tmp_path / "home" / ".local" / "state" / "commonkeep"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert stamps.state_dir() == tmp_path / "xdg" / "commonkeep"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/not/used")
    assert stamps.state_dir() == tmp_path / "home" / ".local" / "state" / "commonkeep"
    monkeypatch.setenv(stamps.ENV_DIR, str(tmp_path / "elsewhere"))
    assert stamps.state_dir() == tmp_path / "elsewhere"


def test_the_key_and_the_journal_are_private_and_made_on_first_use(tmp_path: Path) -> None:
    assert not stamps.key_path().exists() and stamps.load_key() is None
    stamps.record_stamp(tmp_path / "root", CAND, stamps.WRITER, "direct_user_instruction")
    assert stamps.key_path().stat().st_mode & 0o777 == 0o600
    assert stamps.journal_path().stat().st_mode & 0o777 == 0o600
    assert stamps.state_dir().stat().st_mode & 0o777 == 0o700
    [entry] = [json.loads(x) for x in stamps.journal_path().read_text().splitlines()]
    assert CAND["text"] not in json.dumps(entry)  # the text is never kept, only its hash
    assert entry["text"] == stamps.text_sha256(CAND["text"]) and len(entry["mac"]) == 64


def test_a_stamp_is_bound_to_one_id_text_root_stamp_and_trust(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    stamps.record_stamp(root, CAND, stamps.WRITER, "direct_user_instruction")
    assert stamps.holds(root, CAND, stamps.WRITER, "direct_user_instruction")
    os.symlink(root, tmp_path / "link")
    assert stamps.holds(tmp_path / "link", CAND, stamps.WRITER, "direct_user_instruction")  # the real path counts
    assert not stamps.holds(tmp_path / "other", CAND, stamps.WRITER, "direct_user_instruction")
    assert not stamps.holds(root, {**CAND, "id": "cap_x"}, stamps.WRITER, "direct_user_instruction")
    assert not stamps.holds(root, {**CAND, "text": CAND["text"] + " "}, stamps.WRITER, "direct_user_instruction")
    assert not stamps.holds(root, CAND, "commonkeep_hermes/import", "direct_user_instruction")
    assert not stamps.holds(root, CAND, stamps.WRITER, "user_correction")
    assert not stamps.holds(None, CAND, stamps.WRITER, "direct_user_instruction")


@pytest.mark.parametrize("damage", ["mac", "field", "not json", "no mac", "another key"])
def test_a_line_that_does_not_verify_counts_for_nothing_and_is_named(tmp_path: Path, damage: str) -> None:
    import hashlib
    import hmac

    stamps.record_stamp(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")
    good = json.loads(stamps.journal_path().read_text())
    other = {**CAND, "id": "cap_20261204120000_journal2"}
    forged = {**good, "candidate": other["id"]}
    if damage == "mac":
        forged["mac"] = "0" * 64
    elif damage == "field":
        pass  # the candidate changed under the old mac
    elif damage == "no mac":
        forged.pop("mac")
    elif damage == "another key":
        forged["mac"] = hmac.new(b"k" * 32, stamps._message(forged), hashlib.sha256).hexdigest()
    line = "{not json" if damage == "not json" else json.dumps(forged)
    with stamps.journal_path().open("a") as fh:
        fh.write(line + "\n")
    book = stamps.book()
    assert not book.holds(tmp_path, other, stamps.WRITER, "direct_user_instruction")
    assert book.holds(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")  # the good line still counts
    assert [n for n, _ in book.forged] == [2]


@pytest.mark.parametrize("unsafe", ["readable by others", "a link", "another owner's", "short", "not hex"])
def test_a_key_that_is_not_private_honours_no_stamp(tmp_path: Path, unsafe: str) -> None:
    stamps.record_stamp(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")
    key = stamps.key_path()
    if unsafe == "readable by others":
        key.chmod(0o644)
    elif unsafe == "a link":
        real = tmp_path / "elsewhere.key"
        real.write_bytes(key.read_bytes())
        real.chmod(0o600)
        key.unlink()
        key.symlink_to(real)
    elif unsafe == "another owner's":
        if os.getuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(key, 12345, 12345)
    elif unsafe == "short":
        key.write_text("ab" * 8)
    else:
        key.write_text("zz" * 32)
    book = stamps.book()
    assert not book.holds(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")
    assert book.problem and "no stamp is honoured" in book.problem
    with pytest.raises(stamps.KeyUnsafe):
        stamps.record_stamp(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")


def test_entries_without_their_key_honour_nothing(tmp_path: Path) -> None:
    stamps.record_stamp(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")
    stamps.key_path().unlink()
    book = stamps.book()
    assert not book.stamps and book.problem and "key" in book.problem
    stamps.load_key(create=True)  # a new key: the old entries stay unverifiable
    assert not stamps.holds(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")


def test_two_processes_making_the_key_at_once_make_one(tmp_path: Path) -> None:
    code = "from commonkeep.gate import stamps; print(stamps.load_key(create=True).hex())"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=os.environ)
             for _ in range(4)]
    keys = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(keys) == 1 and stamps.key_path().read_text().strip() in keys
    assert [p.name for p in stamps.state_dir().iterdir()] == ["stamps.key"]  # no temp file left


def test_what_another_process_appends_is_seen_and_the_cache_follows(tmp_path: Path) -> None:
    stamps.record_stamp(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")
    assert stamps.holds(tmp_path, CAND, stamps.WRITER, "direct_user_instruction")
    other = {**CAND, "id": "cap_20261204120000_journal3"}
    code = (f"from commonkeep.gate import stamps; stamps.record_stamp({str(tmp_path)!r}, {other!r}, 'writer', "
            "'direct_user_instruction')")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ, timeout=60)
    assert stamps.holds(tmp_path, other, stamps.WRITER, "direct_user_instruction")
    third = {**CAND, "id": "cap_20261204120000_journal4"}
    stamps.record_stamp(tmp_path, third, stamps.WRITER, "direct_user_instruction")  # the cached book grows in place
    assert stamps.holds(tmp_path, third, stamps.WRITER, "direct_user_instruction")
    assert stamps.book() == stamps._read_book(stamps.journal_path())


def test_typed_input_and_apply_journals_are_bound_too(tmp_path: Path) -> None:
    stamps.record_typed("omp", "s-1", "remember that we use pnpm")
    assert stamps.typed("omp", "s-1", ["remember that we use pnpm", "other"]) == ["remember that we use pnpm"]
    assert stamps.typed("omp", "s-2", ["remember that we use pnpm"]) == []
    stamps.record_apply(tmp_path, "patch_x", b"{}")
    assert stamps.apply_bound(tmp_path, "patch_x", b"{}")
    assert not stamps.apply_bound(tmp_path, "patch_x", b"{ }") and not stamps.apply_bound(tmp_path, "patch_y", b"{}")
