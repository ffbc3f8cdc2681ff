"""``line_edit.edit_lines``: a decision rewrites only the decided lines, and the byte search it
takes on a file in the usual layout writes exactly what the line-by-line loop writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.store import line_edit
from commonkeep.store.jsonjs import dumps_line

IDS = ["c1", "c2", "c3", "cap_x", "c\u00e9", 'q"uote', "back\\slash"]


def _line(rid: str, text: str, nested: bool, escaped: bool) -> bytes:
    row: dict[str, object] = {"id": rid, "text": text, "status": "new"}
    if nested:
        row["contested"] = {"id": "c2"}  # another "id" key on the line
    line = dumps_line(row)
    if escaped:  # another writer's spelling of the same id
        line = line.replace('{"id":"c', '{"id":"\\u0063', 1)
    return line.encode("utf-8") + b"\n"


def _mark(rows: list[dict[str, object]]) -> list[dict[str, object]]:
    return [{**r, "status": "rejected"} for r in rows]


def _slow(path: Path, data: bytes, ids: set[str], monkeypatch: pytest.MonkeyPatch) -> bytes | None:
    with monkeypatch.context() as m:
        m.setattr(line_edit, "_edit_plain", lambda *a, **k: None)
        line_edit.forget(path)
        return line_edit.edit_lines(path, data, ids, _mark)


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(["a", '{"id":"c1"}', "id", "\"id\""]),
                             st.booleans(), st.booleans()), max_size=12),
    ids=st.sets(st.sampled_from(IDS), min_size=1, max_size=3),
    one_pass=st.booleans(),
)
def test_the_byte_search_writes_what_the_loop_writes(lines: list[tuple[str, str, bool, bool]], ids: set[str],
                                                      one_pass: bool, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Both ways of finding the lines (``bytes.find`` per id, and one pass over the line starts
    that a patch of many ids takes) write what the loop writes."""
    path = tmp_path_factory.mktemp("le") / "captured.jsonl"
    data = b"".join(_line(*x) for x in lines)
    mp = pytest.MonkeyPatch()
    try:
        want = _slow(path, data, ids, mp)
        mp.setattr(line_edit, "_FIND_EACH", 0 if one_pass else 10**6)
        line_edit.forget(path)
        assert line_edit.edit_lines(path, data, ids, _mark) == want
    finally:
        mp.undo()


def test_only_the_decided_lines_change_in_the_usual_layout(tmp_path: Path) -> None:
    path = tmp_path / "captured.jsonl"
    rows = [{"id": f"cap_{i}", "text": f"note {i} mentions cap_7", "status": "new"} for i in range(50)]
    data = b"".join(dumps_line(r).encode() + b"\n" for r in rows)
    new = line_edit.edit_lines(path, data, {"cap_7", "cap_49"}, _mark)
    assert new is not None
    got = [json.loads(x) for x in new.splitlines()]
    assert [r["id"] for r in got] == [r["id"] for r in rows]
    assert {r["id"] for r in got if r["status"] == "rejected"} == {"cap_7", "cap_49"}
    old_lines, new_lines = data.splitlines(), new.splitlines()
    assert [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b] == [7, 49]


def test_a_patch_of_many_ids_changes_exactly_their_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many ids (a 20,000-op patch) are found in one pass over the line starts: the same lines,
    in file order, as the loop finds; an id that is only mentioned in a text, or a prefix of
    another id, changes nothing."""
    path = tmp_path / "captured.jsonl"
    rows = [{"id": f"cap_{i}", "text": f"note {i} mentions cap_{i + 1}", "status": "new"} for i in range(200)]
    data = b"".join(dumps_line(r).encode() + b"\n" for r in rows)
    ids = {f"cap_{i}" for i in range(0, 200, 7)} | {"cap_1", "cap_999"}  # cap_1: a prefix of cap_10…; cap_999: absent
    assert len(ids) > line_edit._FIND_EACH
    seen: list[str] = []

    def mark(rs: list[dict[str, object]]) -> list[dict[str, object]]:
        seen.extend(str(r["id"]) for r in rs)
        return _mark(rs)

    new = line_edit.edit_lines(path, data, ids, mark)
    want = _slow(path, data, ids, monkeypatch)
    assert new == want
    assert new is not None
    assert seen == [r["id"] for r in rows if r["id"] in ids]  # file order, each once
    changed = [i for i, (a, b) in enumerate(zip(data.splitlines(), new.splitlines(), strict=True)) if a != b]
    assert changed == sorted([*range(0, 200, 7), 1])


@pytest.mark.parametrize("bad", [b'{"id":"c9","status":"new"},{"id":"c10","status":"new"}',  # two objects on one line
                                 b'[{"id":"c9"}]', b"7", b'{"id":"c9"', b'"text"', b'{"id":"c9"} {"id":"c10"}'])
@pytest.mark.parametrize("with_orjson", [True, False])
def test_a_line_that_is_not_one_object_sends_the_edit_to_the_careful_rewrite(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: bytes, with_orjson: bool) -> None:
    import sys

    if not with_orjson:
        monkeypatch.setitem(sys.modules, "orjson", None)  # ``import orjson`` fails: the json fallback
    path = tmp_path / "captured.jsonl"
    good = [dumps_line({"id": f"c{i}", "text": "t", "status": "new"}).encode() for i in range(3)]
    line_edit.forget(path)
    data = b"\n".join([good[0], bad, *good[1:]]) + b"\n"
    assert line_edit.edit_lines(path, data, {"c1"}, _mark) is None
    assert line_edit._all_objects(good) is True and line_edit._all_objects([]) is True
    assert line_edit._all_objects([good[0], bad]) is False


@pytest.mark.parametrize(("rid", "line"), [
    ("c\u00e9", '{"id":"c\u00e9","status":"new"}'),  # not ASCII, as JavaScript (and commonkeep) write it
    ("c\u00e9", '{"id":"c\\u00e9","status":"new"}'),  # not ASCII, escaped as Python's json.dumps writes it
    ("c1", '{"id":"\\u00631","status":"new"}'),  # ASCII, escaped by hand
    ("c1", '{"status":"new","id":"c1"}'),  # the id not first
])
@pytest.mark.parametrize("slow", [False, True])
def test_a_decided_line_is_found_however_its_id_is_spelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           rid: str, line: str, slow: bool) -> None:
    path = tmp_path / "captured.jsonl"
    others = [dumps_line({"id": f"other{i}", "text": "t", "status": "new"}) for i in range(3)]
    data = "\n".join([others[0], line, *others[1:]]).encode() + b"\n"
    line_edit.forget(path)
    new = _slow(path, data, {rid}, monkeypatch) if slow else line_edit.edit_lines(path, data, {rid}, _mark)
    assert new is not None
    rows = [json.loads(x) for x in new.splitlines()]
    assert [(r["id"], r["status"]) for r in rows] == [("other0", "new"), (rid, "rejected"), ("other1", "new"), ("other2", "new")]


@pytest.mark.parametrize("slow", [False, True])
def test_the_records_of_the_tail_are_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: bool) -> None:
    path = tmp_path / "L2.playbooks.jsonl"
    rows = [{"id": f"mem_{i}", "statement": f"s{i}", "status": "active"} for i in range(4)]
    data = b"".join(dumps_line(r).encode() + b"\n" for r in rows)
    changes = line_edit.RecordChanges({"mem_2": {**rows[2], "status": "deprecated"}, "mem_9": {"id": "mem_9", "statement": "new"},
                                       "mem_3": None})
    line_edit.forget(path)
    with monkeypatch.context() as m:
        if slow:
            m.setattr(line_edit, "_edit_plain", lambda *a, **k: None)
        new = line_edit.edit_lines(path, data, changes.ids, changes.one, changes.tail)
    assert new is not None
    got = [json.loads(x) for x in new.splitlines()]
    assert [(r["id"], r.get("status")) for r in got] == [("mem_0", "active"), ("mem_1", "active"), ("mem_2", "deprecated"),
                                                         ("mem_9", None)]


@pytest.mark.parametrize(("data", "plain"), [
    (b"", True),
    (b'{"id":"a","s":1}\n{"id":"b","s":2}\n', True),
    (b'{"id":"a","s":1}\n{"id":"b","s":2}', False),  # no final newline
    (b'{"id":"a","s":1}\n{"s":2,"id":"b"}\n', False),  # an id not first
    (b'{"id":"a","x":{"id":"b"}}\n', False),  # another "id" key
    (b'{"id":"\\u0061","s":1}\n', False),  # an escaped id
    (b'{"id":"a"}\n\n{"id":"b"}\n', False),  # a blank line
    (b' {"id":"a"}\n', False),
])
def test_the_usual_layout_is_recognised_exactly(data: bytes, plain: bool) -> None:
    assert line_edit._is_plain(data) is plain


@pytest.mark.parametrize("slow", [False, True])
def test_a_blank_line_or_a_repeated_id_loses_no_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow: bool) -> None:
    path = tmp_path / "captured.jsonl"
    rows = [dumps_line({"id": rid, "text": f"t{i}", "status": "new"}).encode() for i, rid in enumerate(["a", "b", "b", "c", "d"])]
    for data in (b"\n".join(rows) + b"\n", b"\n".join([rows[0], b"", *rows[1:]]) + b"\n"):
        line_edit.forget(path)
        new = _slow(path, data, {"b"}, monkeypatch) if slow else line_edit.edit_lines(path, data, {"b"}, _mark)
        assert new is not None
        got = [json.loads(x) for x in new.splitlines()]
        assert [(r["id"], r["text"], r["status"]) for r in got] == [
            ("a", "t0", "new"), ("b", "t1", "rejected"), ("b", "t2", "rejected"), ("c", "t3", "new"), ("d", "t4", "new")]


def test_record_changes_as_a_whole_file_transform() -> None:
    rows = [{"id": "m1", "s": 1}, {"id": "m2", "s": 2}, {"id": "m2", "s": 22}, {"id": "m3", "s": 3}, {"id": 7, "s": 7}]
    changes = line_edit.RecordChanges({"m2": {"id": "m2", "s": 200}, "m3": None, "m9": {"id": "m9", "s": 9}})
    assert changes.ids == {"m2", "m3", "m9"}
    assert changes(rows) == [{"id": "m1", "s": 1}, {"id": "m2", "s": 200}, {"id": 7, "s": 7}, {"id": "m9", "s": 9}]
    assert rows[1] == {"id": "m2", "s": 2}  # the rows given are not changed in place
