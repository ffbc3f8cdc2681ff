"""The sync after a small change reads only the changed lines (`delta`, issue 27) and leaves both
indexes exactly as a whole sync would: same rows, store order, places, term counts, contract table.
Real store files, real SQLite; the change is what `apply` does (a rewrite of the record file)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from commonkeep.bench.search import synthetic_records
from commonkeep.recall.search import delta, rows, shifts, sync
from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl
from commonkeep.store.layout import ensure_layout

Row = dict[str, Any]


def _dump(root: Path) -> dict[str, Any]:
    """Both indexes' content, places and store order as a reader takes them (the stored values
    moved by ``shifts``)."""
    recall = sqlite3.connect(root / "search" / "recall.db")
    contract = sqlite3.connect(root / "search" / "memory-fts.db")
    try:
        tab = shifts.load(recall)
        assert not tab.stale
        return {
            "records": [(*r[:7], tab.true(shifts.ORD, "", r[7]), *r[8:]) for r in recall.execute(
                "SELECT id, layer, rule_type, confidence, statement, tags, context, ord, day, source "
                "FROM records ORDER BY id")],
            "record_at": [(r[0], r[1], tab.true(shifts.OFFSET, r[1], r[2]), *r[3:]) for r in recall.execute(
                "SELECT id, file, offset, length, body FROM record_at ORDER BY id")],
            "terms": recall.execute("SELECT term, df FROM terms ORDER BY term").fetchall(),
            "docs": recall.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone(),
            "select_rows": recall.execute("SELECT kind, ord, body FROM select_rows ORDER BY kind, ord").fetchall(),
            "match": recall.execute("SELECT id FROM recall_fts WHERE recall_fts MATCH 'changed' ORDER BY id").fetchall(),
            "contract": contract.execute("SELECT id, layer, rule_type, confidence, statement, tags FROM memory_fts "
                                         "ORDER BY id").fetchall(),
        }
    finally:
        recall.close()
        contract.close()


def _root(tmp_path: Path, n: int = 300) -> tuple[Path, list[Row]]:
    root = ensure_layout(tmp_path / "r").root
    records, _ = synthetic_records(n)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", records[: n - 20], fsync=False)
    (root / "memory" / "projects").mkdir(exist_ok=True)
    append_jsonl(root / "memory" / "projects" / "web.jsonl",
                 [{**r, "scope": {"type": "project", "project": "web"}} for r in records[n - 20:]], fsync=False)
    sync.sync_root(root, full=True, embed=False)
    return root, records


def _update(i: int) -> Callable[[list[Row]], list[Row]]:
    def change(rs: list[Row]) -> list[Row]:
        rs[i] = {**rs[i], "statement": f"A changed statement number {i}."}
        return rs
    return change


def _add_at(i: int, rec: Row) -> Callable[[list[Row]], list[Row]]:
    return lambda rs: [*rs[:i], rec, *rs[i:]]


def _drop(i: int) -> Callable[[list[Row]], list[Row]]:
    return lambda rs: [*rs[:i], *rs[i + 1:]]


def _supersede(i: int) -> Callable[[list[Row]], list[Row]]:
    return lambda rs: [*rs[:i], {**rs[i], "status": "superseded"}, *rs[i + 1:]]


NEW = {"id": "mem_new_0000001", "layer": "L2", "scope": {"type": "global"}, "tags": ["x"],
       "statement": "A changed statement added by a patch.", "status": "active", "confidence": 0.7}


@pytest.mark.parametrize(("name", "change", "fast"), [
    ("update in the middle", _update(100), True),
    ("update the first line", _update(0), True),
    ("add at the end", lambda rs: [*rs, NEW], True),
    ("add in the middle", _add_at(50, NEW), True),
    ("delete a line", _drop(10), True),
    ("supersede (an inactive line stays)", _supersede(5), True),
    ("two changes close together", lambda rs: _update(3)(_update(30)(rs)), True),
    ("two changes far apart (more lines than a delta takes)", lambda rs: _update(3)(_update(250)(rs)), False),
    ("update the last line of a block", _update(6), True),
    ("add at a block's start", _add_at(7, NEW), True),
])
@pytest.mark.parametrize("block", [delta.BLOCK_LINES, 7])  # blocks of 7 lines: many blocks in 280 lines
def test_a_small_change_is_synced_by_its_lines_to_what_a_whole_sync_gives(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, change: Any, fast: bool, block: int) -> None:
    monkeypatch.setattr(delta, "BLOCK_LINES", block)
    root, _ = _root(tmp_path)
    template = {k: v for k, v in Store(root).records()[0].items() if k not in ("id", "statement")}
    fixed = change
    if "add" in name:
        fixed = lambda rs: change(rs) if False else _with_template(change, template)(rs)  # noqa: E731
    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", fixed)
    scans: list[int] = []
    real_scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real_scan(*a, **k))[1])
    sync.sync_root(root, embed=False)
    assert (scans == []) is fast, name  # the small change read no whole store
    by_lines, lines_state = _dump(root), _state(root)
    monkeypatch.setattr(rows, "scan", real_scan)
    sync.sync_root(root, full=True, embed=False)
    assert by_lines == _dump(root), name
    assert lines_state == _state(root), name  # the line and block CRCs the next change is compared with


def _state(root: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        return conn.execute("SELECT file, stamp, crcs, lens, blocks FROM file_lines ORDER BY file").fetchall()


def test_changes_one_after_another_each_go_by_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delta, "BLOCK_LINES", 5)
    root, _ = _root(tmp_path)
    scans: list[int] = []
    real_scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real_scan(*a, **k))[1])
    for change in (_update(12), _drop(40), _update(39), _supersede(0), _update(278)):
        Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", change)
        sync.sync_root(root, embed=False)
    assert scans == []
    by_lines = _dump(root)
    monkeypatch.setattr(rows, "scan", real_scan)
    sync.sync_root(root, full=True, embed=False)
    assert by_lines == _dump(root)


def test_an_index_with_the_earlier_line_state_is_converted_on_first_sync(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _root(tmp_path)
    with sqlite3.connect(root / "search" / "recall.db") as conn:  # as the version before kept it
        conn.execute("DROP TABLE file_lines")
        conn.execute("CREATE TABLE line_state (file TEXT PRIMARY KEY, stamp TEXT NOT NULL, crcs BLOB NOT NULL, "
                     "lens BLOB NOT NULL)")
        conn.execute("INSERT INTO line_state VALUES ('L2.playbooks.jsonl', 'x', x'', x'')")
    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", _update(3))
    sync.sync_root(root, embed=False)  # whole (no state in the new format), and the state is written
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert "line_state" not in names and "file_lines" in names
    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", _update(4))
    scans: list[int] = []
    real_scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real_scan(*a, **k))[1])
    sync.sync_root(root, embed=False)
    assert scans == []  # the next small change goes by its lines
    by_lines = _dump(root)
    monkeypatch.setattr(rows, "scan", real_scan)
    sync.sync_root(root, full=True, embed=False)
    assert by_lines == _dump(root)


def _with_template(change: Any, template: Row) -> Callable[[list[Row]], list[Row]]:
    def fixed(rs: list[Row]) -> list[Row]:
        out = change(rs)
        return [({**template, **r} if r["id"] == NEW["id"] else r) for r in out]
    return fixed


def test_what_a_delta_cannot_know_is_synced_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, records = _root(tmp_path)
    dup = {**records[40], "statement": "The same id again, later in the file."}
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", [dup], fsync=False)  # an id on two lines: first line wins
    scans: list[int] = []
    real_scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real_scan(*a, **k))[1])
    sync.sync_root(root, embed=False)
    assert scans == [1]
    by_sync = _dump(root)
    sync.sync_root(root, full=True, embed=False)
    assert by_sync == _dump(root)


def test_a_change_to_a_line_whose_id_is_also_later_in_the_file_is_synced_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, records = _root(tmp_path)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", [{**records[5], "statement": "A later line of id 5."}], fsync=False)
    sync.sync_root(root, embed=False)  # the duplicate is in the synced version now
    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", _update(5))
    scans: list[int] = []
    real_scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real_scan(*a, **k))[1])
    sync.sync_root(root, embed=False)
    assert scans == [1]
    by_sync = _dump(root)
    sync.sync_root(root, full=True, embed=False)
    assert by_sync == _dump(root)


def test_state_is_not_kept_for_a_file_that_moved_during_the_sync(tmp_path: Path) -> None:
    root, _ = _root(tmp_path, 40)
    conn = sqlite3.connect(root / "search" / "recall.db", isolation_level=None)
    try:
        delta.save_state(conn, root, "commonkeep-index-3|L2.playbooks.jsonl:1:2:3")  # not the file's stamp now
        assert conn.execute("SELECT count(*) FROM file_lines").fetchone()[0] == 0
    finally:
        conn.close()


def test_a_change_to_the_later_line_of_an_id_on_two_lines_is_synced_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the first line of an id gives its index row; the later line is its place: a delta over the
    # later line alone would index the wrong text. The whole sync before found the id twice.
    root, records = _root(tmp_path)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", [{**records[5], "statement": "A later line of id 5."}], fsync=False)
    sync.sync_root(root, embed=False)
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'unique_ids'").fetchone() == ("no",)

    def change(rs: list[Row]) -> list[Row]:
        rs[-1] = {**rs[-1], "statement": "The later line of id 5, changed."}
        return rs
    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", change)
    sync.sync_root(root, embed=False)
    by_sync = _dump(root)
    sync.sync_root(root, full=True, embed=False)
    assert by_sync == _dump(root)


def test_an_index_without_the_whole_records_index_gets_it_on_open(tmp_path: Path) -> None:
    from commonkeep.recall.search import index

    root, _ = _root(tmp_path, 40)
    path = root / "search" / "recall.db"
    with sqlite3.connect(path) as conn:  # as the version before made it
        conn.execute("DROP INDEX record_at_whole")
    index.connect_recall(path).close()
    with sqlite3.connect(path) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT 1 FROM record_at WHERE file = '' LIMIT 1").fetchall()
        fingerprint = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    assert "record_at_whole" in str(plan)
    assert fingerprint is not None  # an index added is no reason to sync the whole store again


def test_a_file_that_is_not_the_one_of_the_fingerprint_is_not_read_by_lines(tmp_path: Path) -> None:
    from commonkeep.recall.search import index

    root, _ = _root(tmp_path, 40)
    conn = sqlite3.connect(root / "search" / "recall.db", isolation_level=None)
    try:
        old = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0]
        Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", _update(3))
        now = index.fingerprint(root)
        Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl", _update(4))  # moved again since
        assert delta.try_delta(conn, root, old, now) is None
        assert conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0] == old
    finally:
        conn.close()


def _sourced_root(tmp_path: Path, n: int = 120) -> Path:
    """Records captured from conversations: anchored evidence (``sessions/sK.md#i``), five a source,
    so each has its neighbours' statements as source context (``rows._with_context``)."""
    root = ensure_layout(tmp_path / "r").root
    records, _ = synthetic_records(n)
    for i, r in enumerate(records):
        r["evidence"] = [{"type": "artifact", "ref": f"sessions/s{i // 5}.md#{i}", "note": "turn"}]
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", records[: n - 10], fsync=False)
    (root / "memory" / "projects").mkdir(exist_ok=True)
    append_jsonl(root / "memory" / "projects" / "web.jsonl",  # a source whose records span two files
                 [{**r, "scope": {"type": "project", "project": "web"},
                   "evidence": [{"type": "artifact", "ref": "sessions/s3.md#99", "note": "turn"}]} for r in records[n - 10:]],
                 fsync=False)
    sync.sync_root(root, full=True, embed=False)
    return root


def _sourced(i: int, src: str) -> Row:
    return {"id": f"mem_sourced_{i:04d}", "layer": "L2", "scope": {"type": "global"}, "tags": ["x"],
            "statement": f"A changed statement captured in turn {i}.", "status": "active", "confidence": 0.7,
            "evidence": [{"type": "artifact", "ref": f"{src}#{i}", "note": "turn"}]}


@pytest.mark.parametrize(("name", "change"), [
    ("a statement changed in the middle of its source", _update(17)),
    ("a confidence changed", lambda rs: [{**r, "confidence": 0.42} if i == 16 else r for i, r in enumerate(rs)]),
    ("the first record of a source changed", _update(15)),
    ("a record of a source spanning two files changed", _update(17)),
    ("an add to an existing source, at the end", lambda rs: [*rs, _sourced(1, "sessions/s3.md")]),
    ("an add to an existing source, in the middle", _add_at(12, _sourced(2, "sessions/s2.md"))),
    ("an add of a new source", lambda rs: [*rs, _sourced(3, "sessions/new.md")]),
    ("a sourced record dropped", _drop(16)),
    ("a sourced record superseded", _supersede(18)),
])
def test_a_change_to_a_record_with_a_source_is_synced_by_its_lines(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, change: Any) -> None:
    """Issue 38: an approve adds a record captured from a conversation; its neighbours' source
    context moves with it. The delta works the contexts of that source out again and leaves both
    indexes as a whole sync does (the contexts, the FTS rows that match through them, the term counts)."""
    root = _sourced_root(tmp_path)
    template = {k: v for k, v in Store(root).records()[0].items() if k not in ("id", "statement", "evidence")}
    Store(root).rewrite_records(root / "memory" / "L2.playbooks.jsonl",
                                lambda rs: [({**template, **r} if r["id"].startswith("mem_sourced") else r) for r in change(rs)])
    scans: list[int] = []
    real_scan = rows.scan
    monkeypatch.setattr(rows, "scan", lambda *a, **k: (scans.append(1), real_scan(*a, **k))[1])
    sync.sync_root(root, embed=False)
    assert scans == [], name  # by its lines
    by_lines = _dump(root)
    monkeypatch.setattr(rows, "scan", real_scan)
    sync.sync_root(root, full=True, embed=False)
    assert by_lines == _dump(root), name
