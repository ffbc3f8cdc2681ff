"""The shipped model's sha256 is kept between processes by the file's whole stat
(``models.file_sha256``): an unchanged, settled file is not hashed again; any change, or a file
changed too shortly before the digest was kept, is hashed again."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from commonkeep.recall.search import models


@pytest.fixture
def memo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cache" / "file-digests.json"
    monkeypatch.setattr(models, "_digest_memo", lambda: path)
    models._digests.clear()
    return path


def _old_file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # mtime long ago (the ctime is now: see below)
    return path


def _hashed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = hashlib.sha256

    def spy(*a: object) -> object:
        calls.append(1)
        return real(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(models.hashlib, "sha256", spy)
    return calls


def test_a_settled_unchanged_file_is_not_hashed_again_by_the_next_process(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _old_file(tmp_path / "model.onnx", b"weights" * 1000)
    monkeypatch.setattr(models, "_SETTLED_NS", 0)  # the ctime (now) counts as settled for this test
    want = hashlib.sha256(f.read_bytes()).hexdigest()
    assert models.file_sha256(f) == want
    assert json.loads(memo.read_bytes())[str(f)]["sha256"] == want
    models._digests.clear()  # a new process
    calls = _hashed(monkeypatch)
    assert models.file_sha256(f) == want and calls == []


def test_a_file_rewritten_in_place_with_the_same_size_is_hashed_again(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _old_file(tmp_path / "model.onnx", b"weights" * 1000)
    monkeypatch.setattr(models, "_SETTLED_NS", 0)
    models.file_sha256(f)
    with open(f, "r+b") as fh:  # same size, same mtime put back: the ctime moves
        fh.write(b"WEIGHTS")
    os.utime(f, ns=(1_000_000_000, 1_000_000_000))
    models._digests.clear()
    assert models.file_sha256(f) == hashlib.sha256(f.read_bytes()).hexdigest()


def test_a_digest_kept_too_soon_after_the_files_last_change_is_not_trusted(
        tmp_path: Path, memo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _old_file(tmp_path / "model.onnx", b"weights" * 1000)
    models.file_sha256(f)  # the ctime is now: too recent to keep (the default 2 s)
    assert not memo.exists()
    st = f.stat()
    memo.parent.mkdir(parents=True, exist_ok=True)
    memo.write_text(json.dumps({str(f): {"stat": [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns],
                                         "sha256": "0" * 64, "written_ns": st.st_ctime_ns + 1}}))  # a racy entry
    models._digests.clear()
    assert models.file_sha256(f) == hashlib.sha256(f.read_bytes()).hexdigest()
