"""The descriptors of replaced files are closed by a thread while an apply goes on (issue 38,
``store/release.py``), and every one of them is closed by the time the apply returns."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from commonkeep.patches.patch import apply_patch, write_patch
from commonkeep.store import release
from commonkeep.store.layout import ensure_layout
from commonkeep.store.render import render_all
from tests.store.test_render_splice import hand_append, record


def _deleted_fds(under: Path) -> list[str]:
    """This process's descriptors of files under ``under`` that are gone."""
    out = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.endswith(" (deleted)") and target.startswith(str(under)):
            out.append(target)
    return out


def test_a_descriptor_handed_over_is_closed_once_settled(tmp_path: Path) -> None:
    path = tmp_path / "old"
    path.write_bytes(b"x" * 100_000)
    fd = os.open(path, os.O_RDONLY)
    path.unlink()
    release.later(fd)
    release.settle()
    with pytest.raises(OSError):
        os.fstat(fd)
    assert not [t for t in threading.enumerate() if t.name == "commonkeep-release"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_an_apply_returns_with_no_replaced_file_held_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(40)))
    render_all(lay)
    handed: list[int] = []
    real, close = release.later, release._close
    monkeypatch.setattr(release, "later", lambda fd: (handed.append(fd), real(fd))[1])
    monkeypatch.setattr(release, "_close", lambda fd: (time.sleep(0.2), close(fd))[1])  # a slow file system
    for k in range(3):  # the first apply leaves the line index; the later ones edit by it and splice
        time.sleep(0.05)  # past the timestamps' granularity: the line index is trusted (``line_index``)
        pid = f"patch_202612050000_rel{k}"
        write_patch(lay, {"patch_id": pid, "created_at": "2026-12-05T00:00:00.000Z", "generated_by": "manual",
                          "mode": "supervised", "summary": "one op",
                          "ops": [{"op_id": "op_1", "op": "update", "target_id": f"mem_{k + 3}",
                                   "updates": {"confidence": 0.41 + k / 100}, "risk": "low", "default_selected": True}],
                          "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": []})
        apply_patch(lay.root, pid, role="librarian", fire_hooks=False)
        assert _deleted_fds(tmp_path) == []
        assert not [t for t in threading.enumerate() if t.name == "commonkeep-release"]
    assert handed  # the old page and generation went through ``release``


def test_a_removed_or_replaced_cache_is_freed_by_the_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``runtime/rendered-index.bin`` removed before the pages change, ``runtime/line-index.bin``
    replaced: each held open across the change and closed by a thread."""
    from commonkeep.store import rendered_index

    handed: list[int] = []
    real = release.later
    monkeypatch.setattr(release, "later", lambda fd: (handed.append(fd), real(fd))[1])
    lay = ensure_layout(tmp_path / "root")
    index = lay.runtime_dir / rendered_index.NAME
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_bytes(b"x" * 10_000)
    rendered_index.forget(lay)
    assert not index.exists() and len(handed) == 1
    rendered_index.forget(lay)  # missing: nothing to do
    new, old = tmp_path / "new", tmp_path / "old"
    new.write_bytes(b"new")
    old.write_bytes(b"old" * 10_000)
    release.replace(new, old)
    assert old.read_bytes() == b"new" and len(handed) == 2
    release.settle()
    for fd in handed:
        with pytest.raises(OSError):
            os.fstat(fd)
    assert _deleted_fds(tmp_path) == []


def test_a_fifo_where_the_file_was_is_removed_without_waiting(tmp_path: Path) -> None:
    """Opening a FIFO to read waits for a writer: a root where one stands in for a runtime file must not hang an apply."""
    fifo = tmp_path / "rendered-index.bin"
    os.mkfifo(fifo)
    release.unlink(fifo)
    assert not fifo.exists()
    os.mkfifo(fifo)
    src = tmp_path / "new"
    src.write_bytes(b"x")
    release.replace(src, fifo)
    release.settle()
    assert fifo.read_bytes() == b"x"
