"""``generations.swap_in`` (the record file's in-place edit, ``range_edit``) writes the generation
state once, as the pending commit made before the rename (issue 38), and what a rewriter killed
after the rename leaves is settled exactly: the old file kept, a line an appender wrote to it
carried over once, the old file let go."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from commonkeep.store import generations
from commonkeep.store.jsonl import file_lock


def _new_file(path: Path, data: bytes) -> tuple[str, int]:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        os.write(fd, data)
        os.fsync(fd)
        return tmp, os.fstat(fd).st_ino
    finally:
        os.close(fd)


def test_the_state_is_written_once_per_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "L2.playbooks.jsonl"
    path.write_bytes(b'{"id":"a"}\n{"id":"b"}\n')
    saves: list[object] = []
    real = generations._save
    monkeypatch.setattr(generations, "_save", lambda *a, **k: (saves.append(a[2:] or k), real(*a, **k))[1])
    with file_lock(path):
        st = os.stat(path)
        tmp, ino = _new_file(path, b'{"id":"a","x":1}\n{"id":"b"}\n')
        kept = generations.swap_in(path, st, tmp, ino)
        assert kept is not None
        assert len(saves) == 1 and saves[0]  # the pending commit, before the rename; none after it
        generations.tidy(path, kept)
    assert path.read_bytes() == b'{"id":"a","x":1}\n{"id":"b"}\n'
    assert [n for n in os.listdir(tmp_path) if ".tmp-" in n] == []  # the old file let go, no state left


def test_a_rewriter_killed_after_the_rename_leaves_a_state_that_settles(tmp_path: Path) -> None:
    """No ``tidy`` after ``swap_in`` (the process died): an appender that held the old file writes
    to it; the next access carries its line over once and lets the old file go."""
    path = tmp_path / "L2.playbooks.jsonl"
    path.write_bytes(b'{"id":"a"}\n')
    appender = os.open(path, os.O_WRONLY | os.O_APPEND)
    with file_lock(path):
        st = os.stat(path)
        tmp, ino = _new_file(path, b'{"id":"a","x":1}\n')
        assert generations.swap_in(path, st, tmp, ino) is not None
    os.write(appender, b'{"id":"late"}\n')
    os.close(appender)
    assert generations.settle(path) is None
    assert path.read_bytes() == b'{"id":"a","x":1}\n{"id":"late"}\n'
    assert generations.settle(path) is None
    assert path.read_bytes() == b'{"id":"a","x":1}\n{"id":"late"}\n'  # carried once
    assert [n for n in os.listdir(tmp_path) if ".tmp-" in n] == []
