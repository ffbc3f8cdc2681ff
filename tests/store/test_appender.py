"""The inbox's ``Appender`` keeps every guarantee of ``jsonl.append_jsonl``: the same bytes, no
write through a symlinked file or a folder linking outside the root, the lock file, a line never
glued to someone's partial line, and the inbox folder made again when it went away."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commonkeep.errors import BadInput
from commonkeep.gate.capture import capture
from commonkeep.store import jsonl
from commonkeep.store.appender import Appender
from commonkeep.store.core import Store

ROWS = [{"id": "cap_20261205000000_aaaaaaaa", "text": "Run pytest -q before committing.", "tags": ["ci"], "n": 1.5},
        {"id": "cap_20261205000000_bbbbbbbb", "text": "línea con acentos \u2028 y control \x1b", "status": "new"}]


def _store(tmp_path: Path) -> Store:
    store = Store(tmp_path / "root")
    store.ensure()
    return store


def test_the_same_bytes_as_append_jsonl(tmp_path: Path) -> None:
    store = _store(tmp_path)
    other = tmp_path / "other.jsonl"
    Appender(store.layout.inbox).append(ROWS)
    Appender(store.layout.inbox).append(ROWS[:1])
    jsonl.append_jsonl(other, ROWS)
    jsonl.append_jsonl(other, ROWS[:1])
    assert store.layout.inbox.read_bytes() == other.read_bytes()
    assert jsonl.lock_path(store.layout.inbox).exists()


def test_a_symlinked_inbox_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    store = _store(tmp_path)
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    store.layout.inbox.unlink(missing_ok=True)
    store.layout.inbox.symlink_to(target)
    with pytest.raises(BadInput, match="symlink"):
        Appender(store.layout.inbox).append(ROWS)
    with pytest.raises(BadInput, match="symlink"):
        capture(store.root, "A fact that must not land outside the root.")
    assert target.read_text() == ""


def test_an_inbox_folder_linking_outside_the_root_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    inbox_dir = store.layout.inbox.parent
    for p in inbox_dir.iterdir():
        p.unlink()
    inbox_dir.rmdir()
    inbox_dir.symlink_to(outside, target_is_directory=True)
    with pytest.raises(BadInput, match="outside the root"):
        Appender(store.layout.inbox).append(ROWS)
    assert list(outside.iterdir()) == []


def test_a_partial_line_at_the_end_is_not_glued_to(tmp_path: Path) -> None:
    store = _store(tmp_path)
    appender = Appender(store.layout.inbox)
    appender.append(ROWS[:1])
    with open(store.layout.inbox, "ab") as f:
        f.write(b'{"id": "torn')
    appender.append(ROWS[1:])
    read = jsonl.read_jsonl(store.layout.inbox)
    assert [r["id"] for r in read.rows] == [ROWS[0]["id"], ROWS[1]["id"]]
    assert len(read.bad) == 1


def test_the_inbox_folder_is_made_again_when_it_went_away(tmp_path: Path) -> None:
    store = _store(tmp_path)
    appender = Appender(store.layout.inbox)
    appender.append(ROWS[:1])
    inbox_dir = store.layout.inbox.parent
    for p in inbox_dir.iterdir():
        p.unlink()
    inbox_dir.rmdir()
    appender.append(ROWS[1:])
    assert [r["id"] for r in jsonl.read_jsonl(store.layout.inbox).rows] == [ROWS[1]["id"]]


def test_fsync_is_asked_when_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(tmp_path)
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    monkeypatch.setenv("COMMONKEEP_FSYNC", "1")
    Appender(store.layout.inbox).append(ROWS[:1])
    assert len(synced) == 1
    monkeypatch.setenv("COMMONKEEP_FSYNC", "0")
    Appender(store.layout.inbox).append(ROWS[:1])
    assert len(synced) == 1
