"""``record_lines``: the apply's read of the record files, parsing only lines not seen before in
the process, gives what ``Store`` gives, sees a change another process made at once, and leaves
anything unclean to ``Store``'s careful read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.patches.curate import record_from_candidate
from commonkeep.store import jsonl, record_lines
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout


def _root(tmp_path: Path, n: int = 30) -> Path:
    root = tmp_path / "root"
    lay = ensure_layout(root)
    recs = [record_from_candidate({"id": f"cap_20261201000000_r{i:04d}", "text": f"Rule number {i} holds for the build.",
                                   "tags": ["build"], "evidence_refs": ["ci.log"], "confidence": 0.9},
                                  on="2026-12-01", layer="L2") for i in range(n)]
    jsonl.append_jsonl(lay.l2, recs)
    jsonl.append_jsonl(lay.tombstones, [{"id": "tomb_1", "deleted_record_id": recs[3]["id"], "deleted_at": "2026-12-01",
                                         "deletion_reason": "user_requested", "deletion_mode": "audit_preserving"}])
    return root


def test_it_reads_what_the_store_reads(tmp_path: Path) -> None:
    root = _root(tmp_path)
    for _ in range(2):  # the second read comes from remembered lines
        store, mine = Store(root, warn=False), Store(root, warn=False)
        want = store.records_by_file(active_only=False)
        got = record_lines.records_by_file(mine)
        assert got == want
        assert mine.tombstoned_lines == store.tombstoned_lines and len(mine.tombstoned_lines) == 1


def test_a_line_another_process_changed_is_seen_at_once(tmp_path: Path) -> None:
    root = _root(tmp_path)
    lay = Store(root).layout
    assert record_lines.records_by_file(Store(root, warn=False)) is not None
    data = lay.l2.read_bytes()
    lines = data.split(b"\n")
    rec = json.loads(lines[5])
    rec["statement"] = "Rule number 5 was changed by another program."
    lines[5] = json.dumps(rec, separators=(",", ":")).encode()
    lay.l2.write_bytes(b"\n".join(lines))  # same size class, same inode: an edit in place
    # what the apply reads: the remembered lines, or Store's careful read when they decline
    got = record_lines.records_by_file(Store(root, warn=False)) or Store(root, warn=False).records_by_file(active_only=False)
    assert [r["statement"] for r in got[lay.l2] if r["id"] == rec["id"]] == [rec["statement"]]


def test_an_unclean_file_is_left_to_the_store(tmp_path: Path) -> None:
    root = _root(tmp_path)
    lay = Store(root).layout
    with lay.l2.open("ab") as fh:
        fh.write(b'{"id": "not a record"}\n')
    assert record_lines.records_by_file(Store(root, warn=False)) is None
    with lay.l2.open("ab") as fh:
        fh.write(b"\n")  # and a blank line: also the careful read's
    assert record_lines.records_by_file(Store(root, warn=False)) is None


def test_an_integer_beyond_64_bits_stays_an_exact_integer(tmp_path: Path) -> None:
    # orjson reads 100000000000000000000 as the float 1e+20; a record read, rewritten and rendered
    # must keep the number its file holds, so such a text is read with json
    root = _root(tmp_path, 5)
    lay = Store(root).layout
    rows = [json.loads(x) for x in lay.l2.read_text().splitlines()]
    rows[0]["review"] = {**rows[0].get("review", {}), "n": 10**20}
    rows[1]["review"] = {**rows[1].get("review", {}), "n": -(2**63) - 1}
    lay.l2.write_text("".join(json.dumps(r) + "\n" for r in rows))
    # what the apply reads: the remembered lines, or Store's careful read when they decline
    got = record_lines.records_by_file(Store(root, warn=False)) or Store(root, warn=False).records_by_file(active_only=False)
    first, second = got[lay.l2][0]["review"]["n"], got[lay.l2][1]["review"]["n"]
    assert (type(first), first, type(second), second) == (int, 10**20, int, -(2**63) - 1)
    parsed = jsonl.parse_jsonl(lay.l2.read_bytes(), lay.l2)
    assert [r["review"].get("n") for r in parsed.rows[:2]] == [10**20, -(2**63) - 1]
    assert jsonl.fast_loads("[1]") == [1]


@pytest.mark.parametrize(("text", "refused"), [
    ('{"n": 1234567890123456789}', True),  # 19 digits: maybe beyond 64 bits
    ('{"n": 123456789012345678}', False),  # 18 digits: exact in orjson
    ('{"n": -99999999999999999999}', True),
    ('{"s": "id 1234567890123456789012"}', True),  # in a string too (refusing costs only speed)
    ('{"a": 123456789, "b": 1234567890}', False),  # short runs apart
    ('{"n": 1.2345678901234567e300}', False),
    ('{"s": "١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩٠"}', False),  # Arabic-Indic digits are not JSON numbers
])
def test_fast_loads_refuses_exactly_the_long_digit_runs(text: str, refused: bool) -> None:
    for given in (text, text.encode("utf-8")):
        if refused:
            with pytest.raises(ValueError, match="long run of digits"):
                jsonl.fast_loads(given)
        else:
            assert jsonl.fast_loads(given) == json.loads(text)


def test_a_fresh_read_is_the_callers_own_and_the_apply_does_not_check_its_lines_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.store import records

    root = _root(tmp_path, 12)
    record_lines._MEMO.clear()
    record_lines._VALID.clear()
    checked: list[str] = []
    real = records.memory_record_problem
    monkeypatch.setattr(records, "memory_record_problem", lambda r: checked.append(r["id"]) or real(r))
    store = Store(root, warn=False)
    fresh = record_lines.records_by_file(store, fresh=True)
    assert fresh == Store(root, warn=False).records_by_file(active_only=False)
    assert len(checked) == 12  # every line checked once (the tombstoned one too, as Store checks it)
    shared = record_lines.records_by_file(Store(root, warn=False))
    assert shared == fresh and len(checked) == 12  # the apply's read: not checked again
    lay = store.layout
    fresh[lay.l2][0]["statement"] = "changed in the caller's hands"
    fresh[lay.l2][1]["tags"].append("mine")
    again = record_lines.records_by_file(Store(root, warn=False))
    assert again is not None and again[lay.l2][0]["statement"] == "Rule number 0 holds for the build."
    assert again[lay.l2][1]["tags"] == ["build"]
    # a line that turned invalid since is checked (its bytes differ) and sends the caller to Store
    rows = [json.loads(x) for x in lay.l2.read_text().splitlines()]
    rows[5]["layer"] = "L9"
    lay.l2.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert record_lines.records_by_file(Store(root, warn=False), fresh=True) is None


@pytest.mark.parametrize("fresh", [True, False])
def test_a_line_the_careful_read_would_not_take_sends_the_caller_to_store(tmp_path: Path, fresh: bool) -> None:
    root = _root(tmp_path, 4)
    lay = Store(root).layout
    lines = lay.l2.read_bytes().splitlines()
    for bad in (lines[0] + b"," + lines[1],  # two records on one line
                lines[0][:-1] + b', "pad": "' + b"x" * jsonl.MAX_LINE_BYTES + b'"}'):  # over the line limit
        record_lines._MEMO.clear()
        record_lines._VALID.clear()
        lay.l2.write_bytes(b"\n".join([bad, *lines[2:]]) + b"\n")
        assert record_lines.records_by_file(Store(root, warn=False), fresh=fresh) is None


def test_a_line_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    root = _root(tmp_path, 4)
    lay = Store(root).layout
    lines = lay.l2.read_bytes().splitlines()
    head = lines[0][:-1] + b', "pad": "'
    big = head + b"x" * (jsonl.MAX_LINE_BYTES - len(head) - 2) + b'"}'
    assert len(big) == jsonl.MAX_LINE_BYTES
    lay.l2.write_bytes(b"\n".join([big, *lines[1:]]) + b"\n")
    got = record_lines.records_by_file(Store(root, warn=False), fresh=True)
    assert got is not None and len(got[lay.l2][0]["pad"]) > 2_000_000


def _new_process() -> None:
    """What a new process knows of the record files: nothing (the module's memory is per process)."""
    record_lines._MEMO.clear()
    record_lines._VALID.clear()
    record_lines._FILES.clear()


def _checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the records each check (``isMemoryRecord``) looks at."""
    from commonkeep.store import records

    seen: list[str] = []
    real = records.memory_record_problem
    monkeypatch.setattr(records, "memory_record_problem", lambda r: seen.append(str(r.get("id"))) or real(r))
    return seen


def _line(i: int) -> dict[str, object]:
    return record_from_candidate({"id": f"cap_20261202000000_n{i:04d}", "text": f"New rule {i} holds for the docs.",
                                  "tags": ["docs"], "evidence_refs": ["ci.log"], "confidence": 0.9}, on="2026-12-02", layer="L2")


@pytest.mark.parametrize("fresh", [False, True])
def test_the_next_process_checks_only_the_record_lines_added_since(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   fresh: bool) -> None:
    root = _root(tmp_path)
    lay = Store(root).layout
    checked = _checked(monkeypatch)
    _new_process()
    assert record_lines.records_by_file(Store(root, warn=False), fresh=fresh) is not None
    assert len(checked) == 30  # the first process checks every line
    checked.clear()
    _new_process()
    first = record_lines.records_by_file(Store(root, warn=False), fresh=fresh)
    assert checked == [] and first is not None and len(first[lay.l2]) == 29  # unchanged: none again (one is tombstoned)
    jsonl.append_jsonl(lay.l2, [_line(1)])  # a decision appends a record
    _new_process()
    got = record_lines.records_by_file(Store(root, warn=False), fresh=fresh)
    assert checked == [_line(1)["id"]] and got is not None and len(got[lay.l2]) == 30
    assert got == Store(root, warn=False).records_by_file(active_only=False)


def test_a_line_changed_in_place_is_checked_again_and_a_bad_one_still_declines(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    root = _root(tmp_path)
    lay = Store(root).layout
    _new_process()
    assert record_lines.records_by_file(Store(root, warn=False)) is not None  # remembered valid
    checked = _checked(monkeypatch)
    lines = lay.l2.read_bytes().split(b"\n")
    rec = json.loads(lines[2])
    rec["statement"] = "Rule number 2 was reworded by hand."
    lines[2] = json.dumps(rec, separators=(",", ":")).encode()
    lay.l2.write_bytes(b"\n".join(lines))
    _new_process()
    assert record_lines.records_by_file(Store(root, warn=False)) is not None
    assert len(checked) == 30  # the remembered bytes no longer start the file: every line checked
    del rec["statement"]  # now not a record: the memo of the earlier bytes never vouches for it
    lines[2] = json.dumps(rec, separators=(",", ":")).encode()
    lay.l2.write_bytes(b"\n".join(lines))
    _new_process()
    assert record_lines.records_by_file(Store(root, warn=False)) is None
    _new_process()
    lines[29] = json.dumps({**json.loads(lines[29]), "confidence": "high"}, separators=(",", ":")).encode()  # the last line too
    lay.l2.write_bytes(b"\n".join(lines[:2] + lines[3:]))
    assert record_lines.records_by_file(Store(root, warn=False)) is None
