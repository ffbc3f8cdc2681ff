"""The merge driver lets a purge win over the other machine's version, in the fast suite (issue 28:
a driver that kept the other machine's edit of a purged record passed every test, as the sync's
later scrub hid it). Pure ``merge_bytes`` and the driver's ``main`` in a real git folder."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commonkeep.share.merge import JOURNAL_NAME, SIDE_FILE_NAME, main, merge_bytes

RID = "mem_20261202000010_qqqqqqqq"
SECRET = "Alice's home address is 12 Elm Street."


def _line(rid: str, statement: str, **more: object) -> bytes:
    return json.dumps({"id": rid, "statement": statement, **more}).encode()


def _file(*lines: bytes) -> bytes:
    return b"".join(x + b"\n" for x in lines)


OTHER = _line("mem_other", "Use pnpm in this repo.")


@pytest.mark.parametrize(("ours", "theirs"), [
    # both machines edited it after the purge elsewhere
    (_file(OTHER, _line(RID, SECRET + " Flat 3.")), _file(OTHER, _line(RID, "Alice lives at 14 Elm Street."))),
    # only the other machine still has it, edited
    (_file(OTHER), _file(OTHER, _line(RID, "Alice lives at 14 Elm Street."))),
    # only this machine still has it, unchanged or edited
    (_file(OTHER, _line(RID, SECRET)), _file(OTHER)),
    (_file(OTHER, _line(RID, "Alice lives at 14 Elm Street.")), _file(OTHER)),
    # the other machine added it anew
    (_file(OTHER), _file(OTHER, _line(RID, SECRET))),
], ids=["both-edited", "theirs-edited", "ours-unchanged", "ours-edited", "theirs-new"])
def test_a_purged_id_leaves_every_side_and_nothing_of_it_is_set_aside(ours: bytes, theirs: bytes) -> None:
    base = _file(OTHER, _line(RID, SECRET))
    res = merge_bytes(base, ours, theirs, frozenset({RID}))
    assert RID.encode() not in res.data and b"Elm" not in res.data
    assert res.data == _file(OTHER)
    assert res.contested == []  # a set-aside line would become a candidate quoting the purged text


def test_without_the_purge_the_same_edits_are_kept_or_set_aside() -> None:
    """The control: the drop above is the purge's doing, not the merge's ordinary rules."""
    base = _file(OTHER, _line(RID, SECRET))
    res = merge_bytes(base, _file(OTHER), _file(OTHER, _line(RID, "Alice lives at 14 Elm Street.")))
    assert [c.id for c in res.contested] == [RID]


@pytest.mark.parametrize("purge_side", ["ours", "theirs"])
def test_a_privacy_purge_tombstone_wins_over_an_audit_preserving_one(purge_side: str) -> None:
    base_tomb = {"id": "tomb_1", "deleted_record_id": RID, "deleted_at": "2026-12-01T10:00:00.000Z"}
    purge = json.dumps({**base_tomb, "deleted_at": "2026-12-02T10:00:00.000Z",
                        "deletion_mode": "privacy_purge"}).encode()
    plain = json.dumps({**base_tomb, "deleted_at": "2026-12-03T10:00:00.000Z",
                        "deletion_mode": "audit_preserving"}).encode()
    ours, theirs = (purge, plain) if purge_side == "ours" else (plain, purge)
    res = merge_bytes(_file(json.dumps(base_tomb).encode()), _file(ours), _file(theirs))
    (merged,) = [json.loads(x) for x in res.data.splitlines()]
    assert merged["deletion_mode"] == "privacy_purge"
    assert merged["deleted_at"] == "2026-12-03T10:00:00.000Z"  # the later date, never a contest
    assert res.contested == []


def test_the_driver_reads_the_purged_ids_from_the_running_syncs_journal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    base, ours, theirs = tmp_path / "B", tmp_path / "O", tmp_path / "T"
    base.write_bytes(_file(OTHER, _line(RID, SECRET)))
    ours.write_bytes(_file(OTHER, _line(RID, SECRET + " Flat 3.")))
    theirs.write_bytes(_file(OTHER, _line(RID, "Alice lives at 14 Elm Street.")))
    (tmp_path / ".git" / JOURNAL_NAME).write_text(json.dumps({"purged": [RID, 7, None]}), encoding="utf-8")
    assert main([str(base), str(ours), str(theirs), "memory/L2.playbooks.jsonl"]) == 0
    assert ours.read_bytes() == _file(OTHER)
    side = tmp_path / ".git" / SIDE_FILE_NAME
    assert not side.exists() or "Elm" not in side.read_text(encoding="utf-8")
