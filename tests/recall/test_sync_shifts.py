"""The delta sync moves the rows after a changed line by an entry of ``shifts`` instead of writing
every one of them (issue 38), and what a reader takes from the index stays what a whole sync gives:
places (``records_by_id``), store order (``cues.record_facts``), and after any sequence of changes."""

from __future__ import annotations

import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from commonkeep.recall.search import cues, index, rows, shifts, sync
from commonkeep.store.core import Store
from tests.recall.test_sync_delta import _dump, _root

Row = dict[str, Any]


def _stored(root: Path) -> dict[str, tuple[int, int]]:
    """Each id's stored offset and store order, as written (not moved by the entries)."""
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        return {str(r[0]): (int(r[1]), int(r[2])) for r in conn.execute(
            "SELECT a.id, a.offset, r.ord FROM record_at a JOIN records r ON r.id = a.id")}


def _entries(root: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        return conn.execute("SELECT kind, file, at, delta FROM shifts ORDER BY kind, file, at").fetchall()


def _whole(root: Path, tmp: Path) -> dict[str, Any]:
    """What a whole sync of a copy of ``root`` gives."""
    copy = tmp / "whole"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    sync.sync_root(copy, full=True, embed=False)
    return _dump(copy)


def _no_scan(monkeypatch: Any) -> list[int]:
    scans: list[int] = []
    real = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real(*a, **k))[1])
    return scans


def test_a_longer_line_moves_no_later_row(tmp_path: Path, monkeypatch: Any) -> None:
    root, _ = _root(tmp_path)
    path = root / "memory" / "L2.playbooks.jsonl"
    before = _stored(root)
    scans = _no_scan(monkeypatch)
    Store(root).rewrite_records(path, lambda rs: [*rs[:40], {**rs[40], "statement": rs[40]["statement"] + " Longer now."},
                                                  *rs[41:]])
    sync.sync_root(root, embed=False)
    assert scans == []
    changed = Store(root).records()[40]["id"]
    after = _stored(root)
    assert {rid for rid in before if rid != changed and after[rid] != before[rid]} == set()  # nothing else written
    assert [e[0] for e in _entries(root)] == ["offset"]
    # a reader gets every record from its true place, in the store's order
    conn = sqlite3.connect(index.recall_db_path(root))
    try:
        ids = [str(r["id"]) for r in Store(root).records()]
        got = index.records_by_id(conn, ids, root)
        assert [got[i] for i in ids] == Store(root).records()
        facts = cues.record_facts(conn, ids)
        assert [facts[i][2] for i in ids] == list(range(len(ids)))
    finally:
        conn.close()
    monkeypatch.undo()
    assert _dump(root) == _whole(root, tmp_path)


def test_a_deprecate_moves_no_later_row(tmp_path: Path, monkeypatch: Any) -> None:
    root, _ = _root(tmp_path)
    path = root / "memory" / "L2.playbooks.jsonl"
    before = _stored(root)
    Store(root).rewrite_records(path, lambda rs: [*rs[:10], {**rs[10], "status": "deprecated"}, *rs[11:]])
    scans = _no_scan(monkeypatch)
    sync.sync_root(root, embed=False)
    assert scans == []
    after = _stored(root)
    assert {rid for rid in after if after[rid] != before[rid]} == set()
    assert sorted(e[0] for e in _entries(root)) == ["offset", "ord"]
    monkeypatch.undo()
    assert _dump(root) == _whole(root, tmp_path)


def test_any_sequence_of_changes_reads_as_a_whole_sync(tmp_path: Path, monkeypatch: Any) -> None:
    """Changes to the big file and to a project file after it (whose rows come last in store order),
    one after another, each synced by its lines."""
    root, records = _root(tmp_path)
    files = [root / "memory" / "L2.playbooks.jsonl", root / "memory" / "projects" / "web.jsonl"]
    template = {k: v for k, v in Store(root).records()[0].items() if k not in ("id", "statement")}
    rng = random.Random(7)
    kinds = ["longer", "shorter", "confidence", "drop", "deprecate", "add at the end", "add in the middle"]
    shifted = 0
    for step in range(48):
        path = files[1] if step % 4 == 3 else files[0]
        kind, at = kinds[step % len(kinds)], rng.randrange(0, 250 if path == files[0] else 15)
        if path == files[1]:
            template = {**template, "scope": {"type": "project", "project": "web"}}
        else:
            template = {k: v for k, v in Store(root).records()[0].items() if k not in ("id", "statement")}

        def change(rs: list[Row], kind: str = kind, i: int = at, step: int = step, template: Row = template) -> list[Row]:
            i = min(i, len(rs) - 1)
            new = {**template, "id": f"mem_new_{step:07d}", "statement": f"A record added at step {step}."}
            if kind == "longer":
                rs[i] = {**rs[i], "statement": rs[i]["statement"] + " More words." * rng.randint(1, 4)}
            elif kind == "shorter":
                rs[i] = {**rs[i], "statement": f"Short {step}."}
            elif kind == "confidence":
                rs[i] = {**rs[i], "confidence": round(rng.uniform(0.5, 0.99), 3)}
            elif kind == "drop":
                rs = [*rs[:i], *rs[i + 1:]]
            elif kind == "deprecate":
                rs[i] = {**rs[i], "status": "deprecated"}
            elif kind == "add at the end":
                rs = [*rs, new]
            else:
                rs = [*rs[:i], new, *rs[i:]]
            return rs

        Store(root).rewrite_records(path, change)
        scans = _no_scan(monkeypatch)
        sync.sync_root(root, embed=False)
        monkeypatch.undo()
        assert scans == [], kind
        shifted += bool(_entries(root))
        assert _dump(root) == _whole(root, tmp_path), (step, kind)
    assert shifted >= 24  # most changes left their moves as entries


def test_entries_left_by_another_sync_are_never_applied(tmp_path: Path) -> None:
    """An older commonkeep sharing the root writes true values and its own fingerprint: the entries
    no longer hold, a reader ignores them and the next sync drops them."""
    root, _ = _root(tmp_path)
    path = root / "memory" / "L2.playbooks.jsonl"
    Store(root).rewrite_records(path, lambda rs: [*rs[:5], {**rs[5], "statement": "Much shorter."}, *rs[6:]])
    sync.sync_root(root, embed=False)
    assert _entries(root)
    conn = sqlite3.connect(index.recall_db_path(root), isolation_level=None)
    try:
        with conn:
            conn.execute("BEGIN")
            shifts.fold(conn)  # the rows as other code leaves them: true values, entries still there
            conn.execute("INSERT INTO shifts VALUES ('offset', 'memory/L2.playbooks.jsonl', 1000, 5)")
            conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('shifts', 'an older fingerprint')")
        tab = shifts.load(conn)
        assert tab.stale and not tab
        ids = [str(r["id"]) for r in Store(root).records()]
        got = index.records_by_id(conn, ids, root)
        assert [got[i] for i in ids] == Store(root).records()
    finally:
        conn.close()
    Store(root).rewrite_records(path, lambda rs: [*rs[:50], {**rs[50], "confidence": 0.51}, *rs[51:]])
    sync.sync_root(root, embed=False)
    assert ("offset", "memory/L2.playbooks.jsonl", 1000, 5) not in _entries(root)
    assert _dump(root) == _whole(root, tmp_path)


def test_a_run_that_needs_a_taken_place_is_not_placed() -> None:
    # one row added before the row at 100 (nothing removed): its place would be the next row's
    assert shifts.place([], [], [100], None, 100, 50) is None
    # a row written again in its place, the rows after it moved by 7: one entry at the next row
    assert shifts.place([], [40], [40], 40, 100, 7) == ([(100, 7)], [40])
    # the row of an entry leaves: its move is carried to the next row
    assert shifts.place([(40, -3)], [40], [], 37, 100, -60) == ([(100, -63)], [])
    # no row after the run: no entry
    assert shifts.place([(40, -3)], [], [500], None, None, 30) == ([(40, -3)], [503])


def test_a_bound_maps_true_values_to_stored_ones() -> None:
    tab = shifts.Shifts({("offset", "f"): [(100, -30), (300, 25)]})
    stored = [0, 50, 100, 200, 300, 400]  # rows; the entries' anchors among them
    true = [tab.true("offset", "f", x) for x in stored]
    assert true == [0, 50, 70, 170, 295, 395]
    for t in range(0, 420):
        lo = tab.bound("offset", "f", t)
        assert {x for x in stored if x >= lo} == {x for x, y in zip(stored, true, strict=True) if y >= t}, t
