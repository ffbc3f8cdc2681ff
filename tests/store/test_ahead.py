"""``store/ahead.py``: work planned for later runs in a thread while an edit waits for the disk,
and is joined before the edit goes on; ``rendered_index.preload`` is taken by ``load`` only while
the index file is the one read."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from commonkeep.store import ahead
from commonkeep.store.layout import Layout, ensure_layout
from commonkeep.store.render import render_all
from tests.store.test_line_index import _apply, _root, _Spy
from tests.store.test_render_splice import hand_append, record


def test_planned_work_runs_in_a_thread_and_is_joined() -> None:
    ran: list[str] = []
    entered, gate = threading.Event(), threading.Event()

    def slow() -> None:
        entered.set()
        gate.wait(5)
        ran.append(threading.current_thread().name)

    def broken() -> None:
        raise RuntimeError("done again later, where it is needed")

    ahead.plan(broken, slow)
    with ahead.during():
        assert entered.wait(5) and ran == []  # running beside the body
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


def test_work_not_started_when_the_wait_ends_is_dropped() -> None:
    entered, gate = threading.Event(), threading.Event()
    ran: list[str] = []

    def first() -> None:
        entered.set()
        gate.wait(5)
        ran.append("first")

    ahead.plan(first, lambda: ran.append("second"))
    ahead.plan(lambda: ran.append("zeroth"), first=True)
    with ahead.during():
        assert entered.wait(5)
        threading.Timer(0.05, gate.set).start()  # the body ends while ``first`` is under way
    assert ran == ["zeroth", "first"]  # waited for; ``second`` never started


def test_an_apply_plans_its_pages_while_the_record_file_is_flushed(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """An apply plans the pages (``splice_ahead.prepare``, MEMORY.md copied into its temp file);
    ``range_edit`` runs that in a thread around its copy and fsync and renames the new record file
    only after both; the render then takes the plan, and the pages are those of a whole render."""
    import os

    from commonkeep.store import render_splice, splice_ahead

    root = _root(tmp_path, "root", 40)
    spy = _Spy(monkeypatch)
    _apply(root, "patch_202612050000_ckfirst", [{"op": "update", "target_id": "mem_001", "updates": {"confidence": 0.5}}],
           slow=False)  # leaves the line index a new process trusts
    events: list[str] = []
    real_prepare, real_plan, real_fsync, real_replace = (splice_ahead.prepare, render_splice._plan, os.fsync,
                                                         os.replace)

    def prepare(*args: object) -> None:
        events.append(f"prepare in {threading.current_thread().name}")
        real_prepare(*args)  # type: ignore[arg-type]
        events.append(f"prepared: {bool(splice_ahead._prepared)}")

    def plan(*args: object) -> object:
        events.append("plan")
        return real_plan(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(splice_ahead, "prepare", prepare)
    monkeypatch.setattr(render_splice, "_plan", plan)
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append(f"replace {Path(b).name}"), real_replace(a, b))[1])
    applied, _, read = _apply(root, "patch_202612050000_cksecond",
                              [{"op": "update", "target_id": "mem_002", "updates": {"confidence": 0.25}}], slow=False, spy=spy)
    assert applied == ["op_001"] and not read  # the edit from the old file's bytes (``range_edit``)
    rename = events.index("replace L2.playbooks.jsonl")
    assert events.index("prepare in commonkeep-ahead") < events.index("prepared: True") < rename
    assert events[rename - 1] == "fsync"  # the new file flushed, then renamed, as ever
    assert events.count("plan") == 1  # planned once, ahead: the render took that plan
    assert rename < events.index("replace MEMORY.md")
    assert not splice_ahead._prepared
    assert Layout(root).rendered_memory.read_bytes() == _rendered_whole(tmp_path, root)
    assert not [p for p in (Layout(root).rendered_dir).iterdir() if ".tmp-" in p.name]


def test_a_plan_made_ahead_is_dropped_when_the_files_moved_meanwhile(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``prepare`` could not see is checked when the render takes its plan: a record file of
    another size than the changes give (another program appended), the tombstones, the page. The
    plan is then dropped and the pages planned again (or rendered whole), never from a stale plan."""
    from commonkeep.store import render_splice, splice_ahead
    from commonkeep.store.render_splice import render_changed
    from tests.store.test_render_splice import Apply, hand_append, pages

    real_plan = render_splice._plan
    planned: list[int] = []
    monkeypatch.setattr(render_splice, "_plan", lambda *a, **k: (planned.append(1), real_plan(*a, **k))[1])
    for case in ("appended", "tombstone", "page", "none"):
        lay = ensure_layout(tmp_path / case)
        hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(20)))
        render_all(lay)
        ap = Apply(lay)
        ap.put({**ap.recs["mem_3"], "confidence": 0.25})
        before = render_splice.stamps(lay)
        splice_ahead.prepare(lay, before, ap.changed)
        assert splice_ahead._prepared
        temp = [p for p in lay.rendered_dir.iterdir() if ".tmp-" in p.name]
        assert len(temp) == 1
        Apply.write(ap)
        if case == "appended":
            hand_append(lay.l2, record("mem_late", "Appended by another program."))
        elif case == "tombstone":
            hand_append(lay.tombstones, {"id": "tomb_x", "deleted_record_id": "mem_9", "deleted_at": "2026-12-05",
                                         "deletion_reason": "other", "deletion_mode": "audit_preserving"})
        elif case == "page":
            with open(lay.rendered_memory, "ab") as fh:
                fh.write(b"edited by hand\n")
        planned.clear()
        got = render_changed(lay, before, ap.changed)
        assert not splice_ahead._prepared and not temp[0].exists()
        if case == "none":
            assert got == [lay.rendered_memory] and not planned  # the plan made ahead
        else:
            assert planned  # planned again, from the files as they are now
        if got is None:
            render_all(lay)  # as the caller does
        twin = tmp_path / f"{case}-twin"
        shutil.copytree(lay.root, twin, symlinks=True)
        render_all(Layout(twin))
        assert pages(lay.root) == pages(twin)


def test_a_plan_no_apply_took_is_dropped(tmp_path: Path) -> None:
    from commonkeep.store import render_splice, splice_ahead
    from tests.store.test_render_splice import Apply

    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(5)))
    render_all(lay)
    ap = Apply(lay)
    ap.put({**ap.recs["mem_3"], "confidence": 0.25})
    splice_ahead.prepare(lay, render_splice.stamps(lay), ap.changed)
    assert [p for p in lay.rendered_dir.iterdir() if ".tmp-" in p.name]
    splice_ahead.discard(lay)
    assert not [p for p in lay.rendered_dir.iterdir() if ".tmp-" in p.name] and not splice_ahead._prepared


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


def _rendered_whole(tmp_path: Path, root: Path) -> bytes:
    twin = tmp_path / "twin"
    shutil.copytree(root, twin, symlinks=True)
    render_all(Layout(twin))
    return Layout(twin).rendered_memory.read_bytes()


@pytest.mark.parametrize("seed", range(6))
def test_pages_from_a_plan_made_ahead_are_those_render_all_writes(tmp_path: Path, seed: int,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``test_render_splice``'s random applies, each planned ahead (before its files are written):
    the pages and the index are those of a whole render, whether the plan was taken or not."""
    import random

    from commonkeep.store import render_splice, splice_ahead
    from tests.store.test_render_splice import _seed_root, _step, render_step

    real_copytree = shutil.copytree  # the twin without the temp page a plan made ahead left beside the page

    def copytree(src: object, dst: object, *args: object, **kwargs: object) -> object:
        if not args:
            kwargs.setdefault("ignore", shutil.ignore_patterns(".*.tmp-*"))
        return real_copytree(src, dst, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "copytree", copytree)

    real_plan = render_splice._plan
    planned: list[int] = []
    monkeypatch.setattr(render_splice, "_plan", lambda *a, **k: (planned.append(1), real_plan(*a, **k))[1])
    rng = random.Random(seed)
    lay = ensure_layout(tmp_path / "root")
    counter = [0]
    _seed_root(rng, lay, counter)
    render_all(lay)
    taken = 0
    for n in range(30):
        ap = _step(rng, lay, counter)
        if ap is None:
            continue
        splice_ahead.prepare(lay, render_splice.stamps(lay), ap.changed)
        early = splice_ahead._prepared.get(str(lay.root))
        before = ap.write()
        if early is not None:
            early.before = before  # the same stamps, taken again by ``write``
        planned.clear()
        render_step(lay, before, ap.changed, tmp_path / f"twin{n}")
        taken += early is not None and not planned
        assert not [p for p in lay.rendered_dir.iterdir() if ".tmp-" in p.name]
    assert taken >= 5, taken
