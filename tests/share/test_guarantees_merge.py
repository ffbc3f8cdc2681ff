"""The ``commonkeep-jsonl`` merge driver's rules, one by one, in the fast suite (issue 28's mutation
testing of ``commonkeep.share.merge``): nothing either machine wrote is lost, a line is either
kept, merged field by field or set aside for review, and the side file and exit codes are what
``share sync`` and git rely on. Pure functions and the driver's ``main`` on real files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from commonkeep.share.merge import (
    BOTH_CHANGED,
    DELETED_OURS,
    DELETED_THEIRS,
    SIDE_FILE_NAME,
    Contested,
    append_side,
    main,
    merge_bytes,
    merge_fields,
    parse,
    purged_ids,
    record_id,
    side_entry,
    side_file,
)


def _j(**kw: Any) -> bytes:
    return json.dumps(kw, separators=(",", ":")).encode()


def _file(*lines: bytes) -> bytes:
    return b"".join(x + b"\n" for x in lines)


def test_record_ids_are_string_ids_of_json_objects() -> None:
    assert record_id(b'{"id": "m1", "x": 1}') == "m1"
    for line in (b'{"id": ""}', b'{"id": 7}', b'{"no": "id"}', b'["id"]', b"not json", b'"m1"', b"[" * 5000):
        assert record_id(line) is None, line[:20]


def test_parse_keys_the_first_line_of_each_id_and_keeps_the_rest_in_order() -> None:
    side = parse(_file(_j(id="a", v=1), b"", b"  ", b"junk", _j(id="a", v=2), _j(id="b")))
    assert side.keyed == {"a": _j(id="a", v=1), "b": _j(id="b")}
    assert side.order == [("a", _j(id="a", v=1)), (None, b"junk"), (None, _j(id="a", v=2)), ("b", _j(id="b"))]


def test_fields_changed_on_one_side_take_that_side_and_both_changed_differently_conflict() -> None:
    base = {"id": "m", "a": 1, "b": 1, "c": 1, "d": 1, "gone": 1}
    ours = {"id": "m", "a": 2, "b": 1, "c": 5, "d": 1, "mine": True}
    theirs = {"id": "m", "a": 1, "b": 3, "c": 6, "d": 1, "gone": 1, "theirs": True}
    merged, conflicts = merge_fields(base, ours, theirs)
    assert merged == {"id": "m", "a": 2, "b": 3, "c": 5, "d": 1, "mine": True, "theirs": True}
    assert list(merged) == ["id", "a", "b", "c", "d", "mine", "theirs"]  # ours' order, then theirs' new
    assert conflicts == {"c": 6}
    # a field one side removed and the other changed: a conflict, ours (removed) stays
    merged, conflicts = merge_fields({"x": 1}, {}, {"x": 2})
    assert merged == {} and conflicts == {"x": 2}
    merged, conflicts = merge_fields({"x": 1}, {"x": 2}, {})
    assert merged == {"x": 2} and conflicts == {"x": None}


def test_nested_objects_merge_field_by_field_with_dotted_conflicts() -> None:
    base = {"meta": {"a": 1, "b": 1, "deep": {"z": 1}}}
    ours = {"meta": {"a": 2, "b": 1, "deep": {"z": 2}}}
    theirs = {"meta": {"a": 1, "b": 3, "deep": {"z": 3}}}
    merged, conflicts = merge_fields(base, ours, theirs)
    assert merged == {"meta": {"a": 2, "b": 3, "deep": {"z": 2}}} and conflicts == {"meta.deep.z": 3}
    merged, conflicts = merge_fields(None, {"meta": {"a": 1}}, {"meta": {"b": 2}})  # new on both sides
    assert merged == {"meta": {"a": 1, "b": 2}} and conflicts == {}
    merged, conflicts = merge_fields({"meta": 5}, {"meta": {"a": 1}}, {"meta": {"b": 2}})  # base not an object
    assert merged == {"meta": {"a": 1}} and conflicts == {"meta": {"b": 2}}


def test_dates_never_contest_and_a_bad_date_is_not_a_date() -> None:
    merged, conflicts = merge_fields({}, {"created_at": "2026-12-03T10:00:00Z", "updated_at": "2026-12-03T10:00:00Z"},
                                     {"created_at": "2026-12-02T10:00:00Z", "updated_at": "2026-12-04T10:00:00Z"})
    assert merged == {"created_at": "2026-12-02T10:00:00Z", "updated_at": "2026-12-04T10:00:00Z"} and conflicts == {}
    merged, conflicts = merge_fields({}, {"at": "2026-12-03T10:00:00+0500"}, {"at": "2026-12-03T06:00:00Z"})
    assert merged == {"at": "2026-12-03T06:00:00Z"} and conflicts == {}  # +0500 read as +05:00
    merged, conflicts = merge_fields({}, {"at": "2026-12-03 10:00"}, {"at": "2026-12-03T09:00"})
    assert merged == {"at": "2026-12-03 10:00"} and conflicts == {}
    merged, conflicts = merge_fields({}, {"at": "2026-02-30"}, {"at": "2026-03-01"})  # no such day
    assert merged == {"at": "2026-02-30"} and conflicts == {"at": "2026-03-01"}
    merged, conflicts = merge_fields({}, {"at": "yesterday"}, {"at": "2026-03-01"})
    assert conflicts == {"at": "2026-03-01"}


def test_a_privacy_purge_deletion_mode_wins_and_other_modes_conflict() -> None:
    for ours, theirs in (("privacy_purge", "audit_preserving"), ("audit_preserving", "privacy_purge")):
        merged, conflicts = merge_fields({}, {"deletion_mode": ours}, {"deletion_mode": theirs})
        assert merged == {"deletion_mode": "privacy_purge"} and conflicts == {}
    merged, conflicts = merge_fields({}, {"deletion_mode": "a"}, {"deletion_mode": "b"})
    assert merged == {"deletion_mode": "a"} and conflicts == {"deletion_mode": "b"}
    merged, conflicts = merge_fields({}, {"mode": "privacy_purge"}, {"mode": "audit_preserving"})
    assert conflicts == {"mode": "audit_preserving"}  # only the tombstone's field


def test_a_record_changed_on_both_sides_merges_and_what_conflicts_is_set_aside() -> None:
    base = _j(id="m", statement="s0", stability="new", n=1)
    ours = _j(id="m", statement="s-ours", stability="new", n=1)
    theirs = _j(id="m", statement="s0", stability="stable", n=1)
    res = merge_bytes(_file(base), _file(ours), _file(theirs))
    assert json.loads(res.data) == {"id": "m", "statement": "s-ours", "stability": "stable", "n": 1}
    assert res.contested == []
    clash = _j(id="m", statement="s-theirs", stability="new", n=1)
    res = merge_bytes(_file(base), _file(ours), _file(clash))
    assert res.data == _file(ours)  # the merged line is ours' line, byte for byte
    assert res.contested == [Contested("m", BOTH_CHANGED, clash, ours, {"statement": "s-theirs"})]
    # changed the same on both sides, or only on one: no contest and no merge
    assert merge_bytes(_file(base), _file(ours), _file(ours)) == merge_bytes(_file(base), _file(ours), _file(base))
    assert merge_bytes(_file(base), _file(base), _file(theirs)).data == _file(theirs)


def test_theirs_line_is_taken_whole_when_the_merge_is_theirs() -> None:
    base = _j(id="m", a=1, b=1)
    theirs = b'{"id": "m", "a": 2, "b": 2}'  # another spelling: kept byte for byte
    res = merge_bytes(_file(base), _file(_j(id="m", a=1, b=2)), _file(theirs))
    assert res.data == _file(theirs) and res.contested == []


def test_a_line_that_is_not_an_object_on_one_side_keeps_ours() -> None:
    base = _j(id="m", a=1)
    ours, theirs = _j(id="m", a=2), _j(id="m", a=3)
    res = merge_bytes(_file(b"oops"), _file(ours), _file(theirs))  # no base line for it: new on both sides
    assert res.data == _file(ours) and [c.kind for c in res.contested] == [BOTH_CHANGED]
    assert res.contested[0].updates == {"a": 3}
    res = merge_bytes(_file(base), _file(ours), _file(theirs))
    assert res.contested[0].updates == {"a": 3}


def test_deletions_win_and_the_changed_line_is_set_aside() -> None:
    base = _file(_j(id="x", v=0), _j(id="y", v=0), _j(id="z", v=0))
    ours = _file(_j(id="x", v=1), _j(id="z", v=0))  # changed x, deleted y
    theirs = _file(_j(id="y", v=2))  # deleted x and z, changed y
    res = merge_bytes(base, ours, theirs)
    assert res.data == b""
    assert res.contested == [Contested("x", DELETED_THEIRS, _j(id="x", v=1), None),
                             Contested("y", DELETED_OURS, _j(id="y", v=2), None)]


def test_order_is_ours_then_theirs_new_lines_and_plain_lines_are_kept_once() -> None:
    ours = _file(b"# plain", _j(id="b"), _j(id="a"), b"dup")
    theirs = _file(_j(id="c"), b"dup", _j(id="a"), b"# plain", b"theirs only", _j(id="d"))
    res = merge_bytes(b"", ours, theirs)
    assert res.data == _file(b"# plain", _j(id="b"), _j(id="a"), b"dup", _j(id="c"), b"theirs only", _j(id="d"))
    assert merge_bytes(b"", b"", b"").data == b""


def test_purged_ids_come_from_the_journal_and_only_strings_count(tmp_path: Path) -> None:
    assert purged_ids(tmp_path) == frozenset()
    (tmp_path / "commonkeep-sync.json").write_text(json.dumps({"purged": ["a", 1, "b"]}))
    assert purged_ids(tmp_path) == frozenset({"a", "b"})
    for doc in ('{"purged": "a"}', "[1]", "{bad"):
        (tmp_path / "commonkeep-sync.json").write_text(doc)
        assert purged_ids(tmp_path) == frozenset()


def test_side_entries_carry_the_lines_as_text_and_updates_only_when_there_are_some(tmp_path: Path) -> None:
    c = Contested("m", BOTH_CHANGED, b'{"id":"m","s":"caf\xc3\xa9"}', b'{"id":"m"}', {"s": 1})
    assert side_entry("memory/L2.jsonl", c) == {"path": "memory/L2.jsonl", "id": "m", "kind": BOTH_CHANGED,
                                                "line": '{"id":"m","s":"café"}', "kept": '{"id":"m"}', "updates": {"s": 1}}
    gone = side_entry("p", Contested("m", DELETED_OURS, b"x", None))
    assert gone["kept"] is None and "updates" not in gone
    side = tmp_path / "deep" / SIDE_FILE_NAME
    append_side(side, "p", [])
    assert not side.exists()
    append_side(side, "p", [c])
    append_side(side, "q", [Contested("n", DELETED_THEIRS, b"y", None)])
    rows = [json.loads(x) for x in side.read_text(encoding="ascii").splitlines()]
    assert [(r["path"], r["id"]) for r in rows] == [("p", "m"), ("q", "n")]


def test_the_side_file_is_in_the_git_dir_of_the_repository(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    (tmp_path / "repo" / "sub").mkdir()
    assert side_file(tmp_path / "repo" / "sub") == (tmp_path / "repo" / ".git" / SIDE_FILE_NAME).resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert side_file(plain) == plain / ".git" / SIDE_FILE_NAME  # not a repository: where git's would be


def _driver(tmp_path: Path, base: bytes, ours: bytes, theirs: bytes) -> tuple[int, Path]:
    for name, data in (("B", base), ("O", ours), ("T", theirs)):
        (tmp_path / name).write_bytes(data)
    code = main([str(tmp_path / "B"), str(tmp_path / "O"), str(tmp_path / "T"), "memory/L2.playbooks.jsonl"])
    return code, tmp_path / "O"


def test_the_driver_writes_the_merge_into_ours_and_the_contest_beside_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    base = _file(_j(id="m", s="0"))
    code, out = _driver(tmp_path, base, _file(_j(id="m", s="1")), _file(_j(id="m", s="2"), _j(id="n")))
    assert code == 0 and out.read_bytes() == _file(_j(id="m", s="1"), _j(id="n"))
    (row,) = [json.loads(x) for x in (tmp_path / ".git" / SIDE_FILE_NAME).read_text().splitlines()]
    assert row["id"] == "m" and row["path"] == "memory/L2.playbooks.jsonl" and row["updates"] == {"s": "2"}
    assert "memory/L2.playbooks.jsonl: 1 contested record(s) set aside for review" in capsys.readouterr().err


def test_the_driver_refuses_bad_arguments_and_unreadable_or_unwritable_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    assert main(["a", "b"]) == 2 and "usage: python -m commonkeep.share.merge BASE OURS THEIRS PATH" in capsys.readouterr().err
    (tmp_path / "O").write_bytes(b"")
    (tmp_path / "T").write_bytes(b"")
    assert main([str(tmp_path / "missing"), str(tmp_path / "O"), str(tmp_path / "T"), "p"]) == 1
    err = capsys.readouterr().err
    assert "cannot read" in err and "missing" in err and "git keeps every version as a conflict" in err
    # the side file cannot be written (a folder in its place): nothing is merged into ours either,
    # so the contested line is never lost
    (tmp_path / ".git" / SIDE_FILE_NAME).mkdir()
    ours = _file(_j(id="m", s="1"))
    code, out = _driver(tmp_path, _file(_j(id="m", s="0")), ours, _file(_j(id="m", s="2")))
    assert code == 1 and "cannot write" in capsys.readouterr().err
    assert out.read_bytes() == ours


def test_a_date_without_an_offset_is_utc_and_compares_with_one_that_has_one() -> None:
    for ours, theirs, later in (("2026-12-03", "2026-12-03T06:00:00Z", "2026-12-03T06:00:00Z"),
                                ("2026-12-03T07:00:00", "2026-12-03T06:00:00Z", "2026-12-03T07:00:00")):
        merged, conflicts = merge_fields({}, {"updated_at": ours}, {"updated_at": theirs})
        assert merged == {"updated_at": later} and conflicts == {}


def test_the_earlier_creation_is_the_earlier_moment_not_the_smaller_string() -> None:
    # 10:00 at +05:00 is 05:00 UTC: earlier than 06:00Z, though it sorts later as a string
    merged, _ = merge_fields({}, {"created_at": "2026-12-03T06:00:00Z"}, {"created_at": "2026-12-03T10:00:00+05:00"})
    assert merged == {"created_at": "2026-12-03T10:00:00+05:00"}


def test_a_purged_id_first_in_the_file_drops_only_itself() -> None:
    rid = "mem_gone"
    ours = _file(_j(id=rid, s="x"), _j(id="a"), _j(id="b"))
    res = merge_bytes(_file(_j(id=rid, s="x")), ours, _file(_j(id=rid, s="y"), _j(id="c")), frozenset({rid}))
    assert res.data == _file(_j(id="a"), _j(id="b"), _j(id="c")) and res.contested == []


def test_side_entries_keep_bytes_that_are_not_utf8_and_several_go_on_separate_lines(tmp_path: Path) -> None:
    bad = b'{"id":"m","s":"\xff"}'
    entry = side_entry("p", Contested("m", BOTH_CHANGED, bad, bad))
    assert entry["line"].encode("utf-8", "surrogateescape") == bad
    assert entry["kept"].encode("utf-8", "surrogateescape") == bad
    side = tmp_path / "a" / "b" / SIDE_FILE_NAME  # its folder is made
    old = os.umask(0o022)
    try:
        append_side(side, "p", [Contested("m", BOTH_CHANGED, bad, None), Contested("n", DELETED_OURS, b"y", None)])
    finally:
        os.umask(old)
    rows = [json.loads(x) for x in side.read_text(encoding="ascii").splitlines()]
    assert [r["id"] for r in rows] == ["m", "n"]
    assert rows[0]["line"].encode("utf-8", "surrogateescape") == bad
    assert side.stat().st_mode & 0o777 == 0o644  # git's own files are world-readable; so is this one


def test_the_driver_reads_its_arguments_from_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.argv", ["commonkeep.share.merge", "only-one"])
    assert main() == 2
    assert capsys.readouterr().err == "usage: python -m commonkeep.share.merge BASE OURS THEIRS PATH\n"
