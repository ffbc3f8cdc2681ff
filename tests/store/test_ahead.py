"""``store/ahead.py``: work planned for later runs in a thread while an edit waits for the disk,
and is joined before the edit goes on; ``rendered_index.preload`` is taken by ``load`` only while
the index file is the one read."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from commonkeep.store import ahead, rendered_index
from commonkeep.store.layout import Layout, ensure_layout
from commonkeep.store.render import render_all
from tests.store.test_line_index import _apply, _root, _Spy
from tests.store.test_render_splice import hand_append, record


def test_planned_work_runs_in_a_thread_and_is_joined() -> None:
    ran: list[str] = []
    gate = threading.Event()

    def slow() -> None:
        gate.wait(5)
        ran.append(threading.current_thread().name)

    def broken() -> None:
        raise RuntimeError("done again later, where it is needed")

    ahead.plan(broken, slow)
    with ahead.during():
        assert ran == []  # running beside the body
        gate.set()
    assert ran == ["commonkeep-ahead"]  # joined before the body's caller goes on
    with ahead.during():  # run once: nothing planned any more
        pass
    assert ran == ["commonkeep-ahead"]
    ahead.plan(slow)
    ahead.clear()
    with ahead.during():
        pass
    assert ran == ["commonkeep-ahead"]


def test_a_preloaded_index_is_taken_only_while_its_file_is_unchanged(tmp_path: Path) -> None:
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(20)))
    render_all(lay)
    rendered_index.preload(lay)
    early = rendered_index._preloaded[lay.runtime_dir / rendered_index.NAME][1]
    assert early is not None
    assert rendered_index.load(lay) is early
    rendered_index.preload(lay)
    path = lay.runtime_dir / rendered_index.NAME
    path.write_bytes(b"not an index")  # changed after the read ahead: read again
    assert rendered_index.load(lay) is None
    render_all(lay)
    rendered_index.preload(lay)
    path.unlink()
    assert rendered_index.load(lay) is None


def test_an_apply_reads_the_rendered_index_while_the_record_file_is_flushed(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An apply plans the index's read; ``range_edit`` runs it around its copy and fsync, in a thread,
    and renames the new file only after both; the splice then takes the index read ahead."""
    import os

    from commonkeep.store import render_splice

    root = _root(tmp_path, "root", 40)
    spy = _Spy(monkeypatch)
    _apply(root, "patch_202612050000_ckfirst", [{"op": "update", "target_id": "mem_001", "updates": {"confidence": 0.5}}],
           slow=False)  # leaves the line index a new process trusts
    events: list[str] = []
    real_preload, real_fsync, real_replace, real_load = rendered_index.preload, os.fsync, os.replace, render_splice.load

    def preload(layout: object) -> None:
        events.append(f"preload in {threading.current_thread().name}")
        real_preload(layout)  # type: ignore[arg-type]

    def load(layout: object) -> object:
        got = real_load(layout)  # type: ignore[arg-type]
        events.append("load: read ahead" if got is not None and got is early[0] else "load")
        return got

    early: list[object] = []

    def remember(layout: object) -> None:
        preload(layout)
        early.append(rendered_index._preloaded.get(Layout(root).runtime_dir / rendered_index.NAME, (None, None))[1])

    monkeypatch.setattr(render_splice, "preload", remember)
    monkeypatch.setattr(render_splice, "load", load)
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append(f"replace {Path(b).name}"), real_replace(a, b))[1])
    applied, _, read = _apply(root, "patch_202612050000_cksecond",
                              [{"op": "update", "target_id": "mem_002", "updates": {"confidence": 0.25}}], slow=False, spy=spy)
    assert applied == ["op_001"] and not read  # the edit from the old file's bytes (``range_edit``)
    assert "preload in commonkeep-ahead" in events
    rename = events.index("replace L2.playbooks.jsonl")
    assert events.index("preload in commonkeep-ahead") < rename
    assert events[rename - 1] == "fsync"  # the new file flushed, then renamed, as ever
    assert "load: read ahead" in events
    assert Layout(root).rendered_memory.read_bytes() == _rendered_whole(tmp_path, root)


def _rendered_whole(tmp_path: Path, root: Path) -> bytes:
    import shutil

    twin = tmp_path / "twin"
    shutil.copytree(root, twin, symlinks=True)
    render_all(Layout(twin))
    return Layout(twin).rendered_memory.read_bytes()


def test_beside_runs_beside_the_body_and_raises_at_the_join() -> None:
    started, release = threading.Event(), threading.Event()
    done: list[str] = []

    def work(tag: str) -> None:
        started.set()
        release.wait(5)
        done.append(f"{tag} in {threading.current_thread().name}")

    with ahead.beside(work, "x"):
        assert started.wait(5) and done == []  # running while the body runs
        release.set()
    assert done == ["x in commonkeep-beside"]

    def broken() -> None:
        raise OSError("no space left")

    with pytest.raises(OSError, match="no space left"), ahead.beside(broken):
        pass


def test_an_apply_writes_the_line_index_while_its_hooks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store import line_index
    from tests.governance.conftest import WRITER
    from tests.store.test_line_index import _patch

    root = _root(tmp_path, "root", 10)
    where: list[str] = []
    real = line_index.flush

    def flush(layout: object) -> None:
        where.append(threading.current_thread().name)
        real(layout)

    monkeypatch.setattr(line_index, "flush", flush)
    res = apply_patch(root, _patch("patch_202612050000_ckhooks", [{"op": "update", "target_id": "mem_001",
                                                                   "updates": {"confidence": 0.5}}]), role=WRITER)
    assert res.applied == ["op_001"] and not res.hook_errors
    assert where == ["commonkeep-beside"]
    assert line_index.trusted(Layout(root)) is not None or (Layout(root).runtime_dir / line_index.NAME).exists()
