"""``clean_memo``: what one process found clean in the inbox is not checked again by the next
process (a CLI decision is a new process each time), and only while the file starts with exactly
those bytes: a line changed in place since is found, and its file takes the careful rewrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.store import clean_memo, line_edit
from commonkeep.store.core import Store
from commonkeep.store.jsonjs import dumps_line


def _inbox(root: Path, n: int) -> Store:
    store = Store(root, warn=False)
    store.ensure()
    rows = [{"id": f"cap_{i:04d}", "text": f"note {i}", "status": "new"} for i in range(n)]
    store.layout.inbox.write_bytes(b"".join(dumps_line(r).encode() + b"\n" for r in rows))
    return store


def _new_process() -> None:
    """What a new process knows of the files: nothing (the module's memory is per process)."""
    line_edit._clean.clear()
    line_edit._plain.clear()


def _decide(store: Store, rid: str) -> None:
    mark = lambda rows: [{**r, "status": "rejected"} for r in rows]  # noqa: E731
    store.update_candidates(mark, {rid})


def _checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of lines each parse of ``_all_objects`` checks."""
    seen: list[int] = []
    real = line_edit._all_objects
    monkeypatch.setattr(line_edit, "_all_objects", lambda lines: seen.append(len(lines)) or real(lines))
    return seen


def _statuses(store: Store) -> dict[str, str]:
    return {r["id"]: r["status"] for r in map(json.loads, store.layout.inbox.read_text().splitlines())}


def test_the_next_process_checks_only_the_lines_appended_since(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _inbox(root, 300)
    checked = _checked(monkeypatch)
    _decide(store, "cap_0007")
    assert checked == [300]  # the first decision checks the whole inbox
    _new_process()
    with store.layout.inbox.open("ab") as fh:  # a capture appends two candidates meanwhile
        fh.write(b"".join(dumps_line({"id": f"cap_9{i}", "text": "late", "status": "new"}).encode() + b"\n"
                          for i in range(2)))
    _decide(Store(root, warn=False), "cap_0100")
    assert checked == [300, 2]
    got = _statuses(store)
    assert (got["cap_0007"], got["cap_0100"], got["cap_90"], got["cap_0101"]) == ("rejected", "rejected", "new", "new")
    assert len(got) == 302


def test_a_line_changed_in_place_since_is_found_and_quarantined(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _inbox(root, 50)
    _decide(store, "cap_0001")
    _new_process()
    data = store.layout.inbox.read_bytes()
    line = data.split(b"\n")[20]
    torn = line[:-3] + b"XYZ"  # same length, no longer JSON: a torn or hand-broken line
    store.layout.inbox.write_bytes(data.replace(line, torn))
    checked = _checked(monkeypatch)
    _decide(Store(root, warn=False), "cap_0002")
    assert checked == [50]  # the memo did not vouch for the changed bytes
    assert "cap_0020" not in _statuses(store)  # the careful rewrite took the broken line out...
    kept = [json.loads(x) for x in store.layout.quarantine.read_text().splitlines()]
    assert [(k["line"], k["text"]) for k in kept] == [(21, torn.decode())]  # ...and kept it aside, whole
    assert _statuses(store)["cap_0002"] == "rejected"


@pytest.mark.parametrize("memo_text", [b"", b"{not json", b'{"version": 2, "files": []}',
                                       b'{"version": 2, "files": {"x": {"clean": [1, "a"]}}}',
                                       b'{"version": 9, "files": {}}'])
def test_a_broken_or_foreign_memo_is_not_used(root: Path, memo_text: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _inbox(root, 40)
    (store.layout.runtime_dir / clean_memo.NAME).write_bytes(memo_text)
    checked = _checked(monkeypatch)
    _decide(store, "cap_0003")
    assert checked == [40]
    assert _statuses(store)["cap_0003"] == "rejected"
    memo = json.loads((store.layout.runtime_dir / clean_memo.NAME).read_text())
    assert memo["files"][str(store.layout.inbox)]["clean"][0] == store.layout.inbox.stat().st_size


def test_a_memo_for_longer_bytes_than_the_file_is_not_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _inbox(root, 40)
    _decide(store, "cap_0003")
    _new_process()
    data = store.layout.inbox.read_bytes()
    store.layout.inbox.write_bytes(data[: data.index(b"\n") + 1])  # cut to its first line
    checked = _checked(monkeypatch)
    _decide(Store(root, warn=False), "cap_0000")
    assert checked == [1]
    assert _statuses(store) == {"cap_0000": "rejected"}


def test_a_memo_of_the_version_before_is_not_used(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 1 kept [length, CRC-32, Adler-32]: its entries, even for the very bytes, are not read
    as today's [length, CRC-32] (the file is checked whole once)."""
    import zlib

    store = _inbox(root, 40)
    data = store.layout.inbox.read_bytes()
    entry = [len(data), zlib.crc32(data), zlib.adler32(data)]
    (store.layout.runtime_dir / clean_memo.NAME).write_text(json.dumps(
        {"version": 1, "files": {str(store.layout.inbox): {"clean": entry, "plain": entry}}}))
    checked = _checked(monkeypatch)
    _decide(store, "cap_0003")
    assert checked == [40]
