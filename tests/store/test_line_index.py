"""The line index (``store/line_index.py``) lets a one-op apply find and rewrite a record's line
without reading the record file (``store/range_edit.py``). Every shortcut must give way to the
checked path whenever the files are not exactly as indexed — OMP appends and rewrites without our
lock at any time — and the result must be byte for byte the slow path's: the record files,
``rendered/`` and the search index."""

from __future__ import annotations

import contextlib
import json
import os
import random
import sqlite3
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches.patch import apply_patch
from commonkeep.recall.search import fts, index, shifts
from commonkeep.store import line_edit, line_index, record_lines, record_lookup
from commonkeep.store.layout import Layout, ensure_layout
from commonkeep.store.render import render_all
from tests.governance.conftest import WRITER
from tests.recall.conftest import make_record, seed

L1 = "memory/L1.identity.jsonl"
L2 = "memory/L2.playbooks.jsonl"


def _new_process() -> None:
    """Forget what this process learnt of the files, as a new ``commonkeep`` process knows nothing."""
    for cache in (record_lines._MEMO, record_lines._FILES, record_lines._UNCHECKED, line_edit._clean, line_edit._plain,
                  line_index._kept, line_index._loaded, line_index._edits):
        cache.clear()
    record_lines._VALID.clear()


@contextlib.contextmanager
def _slow(on: bool) -> Iterator[None]:
    """The line index never trusted (the checked path everywhere) while ``on``."""
    real = line_index.trusted
    if on:
        line_index.trusted = lambda layout: None  # type: ignore[assignment]
    try:
        yield
    finally:
        line_index.trusted = real  # type: ignore[assignment]


class _Spy:
    """Whether each apply read a record file whole (the checked path) or not at all."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from commonkeep.store import generations, jsonl

        self.reads: list[str] = []
        real_read, real_fd = jsonl.read_bytes, generations._read_fd

        def read_bytes(path: Path) -> bytes:
            if Path(path).name.startswith(("L1.", "L2.")):
                self.reads.append(Path(path).name)
            return real_read(path)

        def read_fd(fd: int) -> bytes:
            self.reads.append("rewrite")
            return real_fd(fd)

        monkeypatch.setattr(jsonl, "read_bytes", read_bytes)
        monkeypatch.setattr(generations, "_read_fd", read_fd)

    def take(self) -> bool:
        """Whether a record file was read whole since the last call."""
        out = bool(self.reads)
        self.reads.clear()
        return out


def _root(base: Path, name: str, n: int) -> Path:
    root = ensure_layout(base / name).root
    rng = random.Random(7)
    seed(root, [make_record(f"mem_{i:03d}", f"Fact {i} about the {rng.choice(['deploy', 'build', 'release'])} "
                            + "x" * rng.randrange(0, 40), confidence=round(rng.uniform(0.3, 0.95), 2)) for i in range(n)])
    seed(root, [make_record("mem_l1a", "An identity fact.", layer="L1")], L1)
    render_all(Layout(root))
    index.sync_root(root, embed=False)
    return root


def _patch(pid: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    for i, op in enumerate(ops, 1):
        op["op_id"] = f"op_{i:03d}"
        op.setdefault("risk", "low")
        op.setdefault("default_selected", True)
    return {"patch_id": pid, "created_at": "2026-12-05T00:00:00.000Z", "generated_by": "manual", "mode": "supervised",
            "summary": "line index", "ops": ops, "status": "proposed", "applied_at": None, "applied_ops": [],
            "skipped_ops": []}


def _apply(root: Path, pid: str, ops: list[dict[str, Any]], *, slow: bool, spy: _Spy | None = None) -> tuple[Any, Any, bool]:
    """Apply as a new process, then sync the search index; (applied, skipped, whether the apply
    read a record file whole)."""
    _new_process()
    with _slow(slow):
        if spy is not None:
            spy.take()
        res = apply_patch(root, _patch(pid, json.loads(json.dumps(ops))), role=WRITER, fire_hooks=False)
        read = spy.take() if spy is not None else True
        index.sync_root(root, embed=False)
    return res.applied, res.skipped, read


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for sub in ("memory", "rendered"):
        for p in sorted((root / sub).rglob("*")):
            if p.is_file() and not p.name.startswith("."):
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


def _search_index(root: Path) -> dict[str, Any]:
    """The search indexes' content (not their pages): what a search can return."""
    out: dict[str, Any] = {}
    conn = sqlite3.connect(index.recall_db_path(root))
    try:
        tab = shifts.load(conn)  # places and store order as a reader takes them (stored values moved by ``shifts``)
        assert not tab.stale
        out["records"] = [(*r[:7], tab.true(shifts.ORD, "", r[7]), r[8]) for r in conn.execute(
            "SELECT id, layer, rule_type, confidence, statement, tags, context, ord, source FROM records ORDER BY id")]
        out["record_at"] = [(r[0], r[1], tab.true(shifts.OFFSET, r[1], r[2]), r[3]) for r in conn.execute(
            "SELECT id, file, offset, length FROM record_at ORDER BY id")]
        out["docs"] = conn.execute("SELECT value FROM meta WHERE key IN ('docs', 'terms') ORDER BY key").fetchall()
        out["file_lines"] = conn.execute("SELECT file, crcs, lens, blocks FROM file_lines ORDER BY file").fetchall()
    finally:
        conn.close()
    conn = sqlite3.connect(Layout(root).search_db)
    try:
        out["memory_fts"] = conn.execute(f"SELECT {', '.join(fts.COLUMNS)} FROM {fts.TABLE} ORDER BY id").fetchall()  # noqa: S608
    finally:
        conn.close()
    return out


def _same(fast: Path, slow: Path, what: str) -> None:
    assert _files(fast) == _files(slow), what
    assert _search_index(fast) == _search_index(slow), what


def _rewrite_index(root: Path, change: Any) -> None:
    """``change(LineIndex)`` written back as a valid index (its CRC made again)."""
    path = root / "runtime" / line_index.NAME
    ix = line_index.LineIndex.decode(path.read_bytes())
    assert ix is not None
    change(ix)
    path.write_bytes(ix.encode())


# the changes another program (OMP, a shell) makes between two applies, to both roots alike
def _omp_append(root: Path, n: int) -> None:
    line = json.dumps(make_record(f"mem_omp{n}", f"Appended by OMP {n}."), separators=(",", ":")) + "\n"
    fd = os.open(root / L2, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _omp_rewrite_same_size(root: Path, n: int) -> None:
    """A non-atomic rewrite in place (truncate, write) keeping the size: one statement's letter changed."""
    path = root / L2
    data = path.read_bytes()
    at = data.index(b"Fact ", len(data) // (n % 5 + 2))
    new = data[:at] + b"Fakt " + data[at + 5:]
    with open(path, "r+b") as fh:
        fh.truncate(0)
        fh.write(new)


def _truncate_last_line(root: Path, n: int) -> None:
    path = root / L2
    data = path.read_bytes()
    path.write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])


def _stale_stat(root: Path, n: int) -> None:
    def change(ix: line_index.LineIndex) -> None:
        f = ix.files[1]
        assert f.stat is not None
        f.stat = (*f.stat[:3], f.stat[3] - 1, f.stat[4])

    _rewrite_index(root, change)


def _racy(root: Path, n: int) -> None:
    def change(ix: line_index.LineIndex) -> None:
        f = ix.files[1]
        assert f.stat is not None
        ix.written_ns = max(f.stat[3], f.stat[4]) + 1  # written in the same tick as the file's last change

    _rewrite_index(root, change)


def _offset_elsewhere(root: Path, n: int) -> None:
    """Every id points at another record's line (the ids shifted by one; lengths and stat kept)."""
    def change(ix: line_index.LineIndex) -> None:
        f = ix.files[1]
        ids = f.ids.strip(b"\n").split(b"\n")
        f.ids = b"\n" + b"\n".join(ids[1:] + ids[:1]) + b"\n"

    _rewrite_index(root, change)


def _torn_index(root: Path, n: int) -> None:
    path = root / "runtime" / line_index.NAME
    path.write_bytes(path.read_bytes()[:-9])


FOREIGN = {"append": _omp_append, "rewrite-same-size": _omp_rewrite_same_size, "truncated": _truncate_last_line}
TAMPERED = {"stale-stat": _stale_stat, "racy": _racy, "offset-elsewhere": _offset_elsewhere, "torn": _torn_index}


def _op(rng: random.Random, ids: list[str], n: int) -> dict[str, Any]:
    kind = rng.choice(["confidence", "confidence", "deprecate", "tags", "flag_for_review", "add", "layer"])
    rid = rng.choice(ids)
    if kind == "confidence":
        return {"op": "update", "target_id": rid, "updates": {"confidence": round(rng.uniform(0.1, 0.99), rng.choice([1, 2, 3]))}}
    if kind == "deprecate":
        return {"op": "deprecate", "target_id": rid}
    if kind == "tags":
        return {"op": "update", "target_id": rid, "updates": {"tags": ["deploy"] * rng.randrange(0, 4)}}
    if kind == "flag_for_review":
        return {"op": "flag_for_review", "target_id": rid}
    if kind == "layer":
        return {"op": "update", "target_id": rid, "updates": {"layer": "L1"}, "ratify": True}
    new = f"mem_new{n}"
    ids.append(new)
    return {"op": "add", "record": make_record(new, f"A new fact number {n} about a queue {'y' * n}.")}


@pytest.mark.parametrize("seed_", range(6))
def test_random_applies_write_the_slow_paths_bytes_whatever_happens_between_them(
        tmp_path: Path, seed_: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random one- and two-op patches on two copies of a store, one by the line index and one by
    the checked path, with OMP's appends, in-place rewrites and truncations and tampered indexes
    between them: the record files, ``rendered/`` and the search index stay byte for byte the same,
    and every change the index does not follow sends the apply down the checked path."""
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-05T01:00:00.000Z")
    rng = random.Random(seed_)
    fast, slow = _root(tmp_path, "fast", 60), _root(tmp_path, "slow", 60)
    ids = [f"mem_{i:03d}" for i in range(60)]
    spy = _Spy(monkeypatch)
    took_fast = 0
    from commonkeep.recall.search import told as told_module

    told: list[bool] = []
    real_told = told_module.told

    def spy_told(*a: Any) -> Any:
        out = real_told(*a)
        told.append(out is not None)
        return out

    monkeypatch.setattr(told_module, "told", spy_told)
    for step in range(16):
        event = rng.choice([*FOREIGN, *TAMPERED]) if rng.random() < 0.4 else None
        if event in FOREIGN:
            for root in (fast, slow):
                FOREIGN[event](root, step)
        elif event in TAMPERED and (fast / "runtime" / line_index.NAME).exists():
            TAMPERED[event](fast, step)
        else:
            event = None
        ops = [_op(rng, ids, step * 10 + k) for k in range(rng.choice([1, 1, 2]))]
        pid = f"patch_202612050100_r{seed_}x{step}"
        *done, read = _apply(fast, pid, ops, slow=False, spy=spy)
        got = tuple(done)
        assert got == _apply(slow, pid, ops, slow=True)[:2], f"step {step}: {event} {ops}"
        _same(fast, slow, f"seed {seed_} step {step}: {event} {ops}")
        if event is not None and event != "torn" and got[0]:  # not as indexed: the files are read whole
            assert read, f"step {step}: {event} took the shortcut"
        took_fast += not read
    assert took_fast  # not hollow: some applies read no record file
    assert any(told)  # ... and some syncs were told what changed


@pytest.mark.parametrize("event", [*FOREIGN, *TAMPERED])
def test_each_change_the_index_does_not_follow_takes_the_checked_path(
        tmp_path: Path, event: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """After a first apply (which leaves the index), a change between two applies — an OMP append,
    a non-atomic same-size rewrite, a truncated file, an index with a stale stat, a racy one, one
    pointing at another record's line, a torn one — sends the next apply down the checked path,
    with the slow path's bytes; the apply after it takes the shortcut again."""
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-05T01:00:00.000Z")
    fast, slow = _root(tmp_path, "fast", 30), _root(tmp_path, "slow", 30)
    spy = _Spy(monkeypatch)
    steps = [[{"op": "update", "target_id": "mem_003", "updates": {"confidence": 0.5}}],
             [{"op": "update", "target_id": "mem_004", "updates": {"confidence": 0.125}}],
             [{"op": "deprecate", "target_id": "mem_020"}],
             [{"op": "update", "target_id": "mem_021", "updates": {"confidence": 0.71}}]]
    seen = []
    for step, ops in enumerate(steps):
        if step == 2:
            if event in FOREIGN:
                for root in (fast, slow):
                    FOREIGN[event](root, 3)
            else:
                TAMPERED[event](fast, 3)
        pid = f"patch_202612050100_e{step}"
        *done, read = _apply(fast, pid, ops, slow=False, spy=spy)
        got = tuple(done)
        seen.append(read)
        assert got == _apply(slow, pid, ops, slow=True)[:2]
        _same(fast, slow, f"{event} step {step}")
    # the first apply leaves the index; the change sends one apply back (an index found wrong is
    # dropped: the apply after it reads whole again, and leaves a new one)
    assert seen == [True, False, True, event == "offset-elsewhere"]


def test_a_line_not_where_the_index_says_is_not_read_from_there(tmp_path: Path) -> None:
    """The lookup reads the line at the index's offset and checks it is the id's line: an index
    pointing at another record's line answers "unsure" (every line is read), never that record."""
    root = _root(tmp_path, "r", 10)
    lay = Layout(root)
    from commonkeep.store.core import Store

    _new_process()
    assert record_lookup.RecordLookup.open(Store(root)) is not None  # the checked read leaves the index
    line_index.flush(lay)
    _offset_elsewhere(root, 0)
    _new_process()
    lookup = record_lookup.RecordLookup.open(Store(root))
    assert lookup is not None and lookup._index is not None
    assert lookup.find("mem_004") is record_lookup.UNSURE


def test_the_index_is_written_only_once_the_files_timestamps_are_settled(tmp_path: Path) -> None:
    """``flush`` writes an index only when every file's mtime and ctime are older than its writing
    time by more than the granularity, and not when a file changed since it was kept."""
    root = _root(tmp_path, "r", 5)
    lay = Layout(root)
    from commonkeep.store.core import Store

    _new_process()
    assert record_lookup.RecordLookup.open(Store(root)) is not None
    (root / L2).write_bytes((root / L2).read_bytes())  # rewritten in place, same bytes
    line_index.flush(lay)
    assert not (root / "runtime" / line_index.NAME).exists()
    _new_process()
    assert record_lookup.RecordLookup.open(Store(root)) is not None
    line_index.flush(lay)
    ix = line_index.LineIndex.decode((root / "runtime" / line_index.NAME).read_bytes())
    assert ix is not None and all(line_index.settled(f.stat, ix.written_ns) for f in ix.files)
    _new_process()
    assert line_index.trusted(lay) is not None


def test_a_torn_or_foreign_index_is_not_read(tmp_path: Path) -> None:
    data = line_index.LineIndex([line_index.FileLines("memory/L2.playbooks.jsonl", (1, 2, 3, 4, 5), b"\na\n",
                                                      line_index.array("Q", [3]))], 9).encode()
    assert line_index.LineIndex.decode(data) is not None
    assert line_index.LineIndex.decode(data[:-1]) is None
    assert line_index.LineIndex.decode(b"x" + data[1:]) is None
    body = bytearray(data[:-4])
    body[-1] ^= 1
    assert line_index.LineIndex.decode(bytes(body) + struct.pack("<I", zlib.crc32(bytes(body)))) is None  # sizes do not add up


def test_a_line_omp_writes_through_the_old_file_after_the_edit_is_carried_and_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """OMP opened the record file (``O_APPEND``) before the edit renamed a new file over it and
    writes after: the old file is kept as a generation (``generations``), the index is not trusted
    while it is, and the next apply reads whole and carries the line in: nothing is lost, and the
    bytes are the slow path's."""
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-05T01:00:00.000Z")
    fast, slow = _root(tmp_path, "fast", 20), _root(tmp_path, "slow", 20)
    spy = _Spy(monkeypatch)
    first = [{"op": "update", "target_id": "mem_002", "updates": {"confidence": 0.5}}]
    _apply(fast, "patch_202612050100_g0", first, slow=False)
    _apply(slow, "patch_202612050100_g0", first, slow=True)
    fds = {root: os.open(root / L2, os.O_WRONLY | os.O_APPEND) for root in (fast, slow)}  # OMP, before the next edit
    try:
        ops = [{"op": "update", "target_id": "mem_005", "updates": {"confidence": 0.25}}]
        *_, read = _apply(fast, "patch_202612050100_g1", ops, slow=False, spy=spy)
        assert not read  # the shortcut: the file was as indexed
        _apply(slow, "patch_202612050100_g1", ops, slow=True)
        late = json.dumps(make_record("mem_late", "Written by OMP through the old file."), separators=(",", ":")) + "\n"
        for fd in fds.values():
            os.write(fd, late.encode())
    finally:
        for fd in fds.values():
            os.close(fd)
    assert line_index.trusted(Layout(fast)) is None  # a generation may hold late lines: not trusted
    ops = [{"op": "update", "target_id": "mem_007", "updates": {"confidence": 0.75}}]
    *_, read = _apply(fast, "patch_202612050100_g2", ops, slow=False, spy=spy)
    assert read
    _apply(slow, "patch_202612050100_g2", ops, slow=True)
    assert b"mem_late" in (fast / L2).read_bytes()
    _same(fast, slow, "late line")
