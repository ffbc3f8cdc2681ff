"""``commonkeep share sync`` keeps the line an audit-preserving deletion keeps (``status:
"deleted"``, byte for byte) on every machine, and drops every other version of the record; a
privacy purge keeps nothing. The store contract: deleted records stay in the JSONL with ``status:
"deleted"``, and only ``status == "deleted"`` is left out of MEMORY.md. Real git (a bare remote
and clones), real files, the real ``commonkeep share sync``, ``forget`` and ``doctor`` commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.share.merge import DELETED_OURS, DELETED_THEIRS, merge_bytes
from tests.share.helpers import L2, WRITER, cli, git, holders, manual_patch, remote_holders, sync_killed
from tests.store.test_share import contested

TEXT = "The deploy script lives in tools/deploy.sh and needs the ops VPN."
EDITED = "The deploy script moved to scripts/deploy.sh; it still needs the ops VPN."


def _sync(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, object]:
    code, out, err = cli(capsys, "share", "sync", "--root", str(root), "--role", WRITER, "--json")
    assert code == 0, err
    rep: dict[str, object] = json.loads(out)
    return rep


def _forget(capsys: pytest.CaptureFixture[str], root: Path, rid: str, *purge: str) -> bytes:
    """``commonkeep forget`` (audit-preserving unless ``--purge``); returns the line it left for ``rid``."""
    code, _, err = cli(capsys, "forget", rid, "--reason", "invalid", "--root", str(root), "--role", WRITER, *purge)
    assert code == 0, err
    left = _lines(root, rid)
    return left[0] if left else b""


def _promoted(root: Path, text: str) -> str:
    """A record promoted the ordinary way (a candidate, approved through a patch); returns its id."""
    from commonkeep.gate.capture import capture
    from commonkeep.reviews.review import approve
    from commonkeep.store.ids import memory_id_for

    cid = str(capture(root, text, evidence_refs=["chat:1", "chat:2"]).candidate["id"])
    approve(root, [cid], role=WRITER)
    return memory_id_for(cid)


def _edit(root: Path, rid: str, text: str, suffix: str) -> None:
    from commonkeep.patches.patch import apply_patch

    result = apply_patch(root, manual_patch(suffix, {"op": "update", "target": L2, "target_id": rid,
                                                     "updates": {"statement": text}}), role=WRITER)
    assert result.applied


def _lines(root: Path, rid: str) -> list[bytes]:
    """Every line of ``rid`` in every record file of ``root``."""
    out = []
    for path in sorted((root / "memory").rglob("*.jsonl")):
        if path.name in ("tombstones.jsonl", "evidence.jsonl", "profiles.jsonl", "reinforcement.jsonl",
                         "inquiries.jsonl"):
            continue
        out += [ln for ln in path.read_bytes().split(b"\n") if ln.strip() and json.loads(ln).get("id") == rid]
    return out


def _settled(capsys: pytest.CaptureFixture[str], a: Path, b: Path, rid: str, *texts: str,
             expected: tuple[str, ...] = ()) -> None:
    """What a user depends on after both machines synced: the same record file on both, a clean
    doctor (but for the ``expected`` finding codes), and MEMORY.md without the deleted record."""
    assert (a / L2).read_bytes() == (b / L2).read_bytes()
    for root in (a, b):
        assert git(root, "status", "--porcelain", "--", "memory", "inbox", "patches") == ""
        code, out, err = cli(capsys, "doctor", "--root", str(root), "--json")
        bad = [f for f in json.loads(out)["findings"] if f["severity"] in ("warning", "error")
               and f["code"] not in ("memory_readable_by_others", *expected)]  # git clone's umask: not the merge
        assert bad == [], bad
        memory = (root / "rendered/MEMORY.md").read_text(encoding="utf-8")
        assert not [t for t in texts if t in memory]
        tombs = [json.loads(x) for x in (root / "memory/tombstones.jsonl").read_text(encoding="utf-8").splitlines()
                 if x.strip() and json.loads(x).get("deleted_record_id") == rid]
        assert len(tombs) == 1


def _two_machines(capsys: pytest.CaptureFixture[str], three: tuple[Path, Path, Path]) -> tuple[Path, Path, str]:
    a, b, _ = three
    rid = _promoted(a, TEXT)
    _sync(capsys, a)
    _sync(capsys, b)
    assert len(_lines(b, rid)) == 1
    return a, b, rid


def test_a_deletion_on_one_machine_keeps_its_line_on_both(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b, rid = _two_machines(capsys, three)
    kept = _forget(capsys, a, rid)
    assert json.loads(kept)["status"] == "deleted"
    for root in (a, b, a):
        rep = _sync(capsys, root)
        assert rep["dropped"] == []
    assert _lines(a, rid) == [kept] and _lines(b, rid) == [kept]  # byte for byte as the deletion wrote it
    _settled(capsys, a, b, rid, TEXT)


@pytest.mark.parametrize("first", ["deleter", "editor"])
def test_a_deletion_wins_over_an_edit_on_the_other_machine_and_keeps_its_line(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], first: str) -> None:
    a, b, rid = _two_machines(capsys, three)
    kept = _forget(capsys, a, rid)
    _edit(b, rid, EDITED, "edit01")  # B, offline, edits the record A deleted
    order = (a, b, a) if first == "deleter" else (b, a, b)
    for root in order:
        _sync(capsys, root)
    assert _lines(a, rid) == [kept] and _lines(b, rid) == [kept]
    merged_on = order[1]  # the machine whose sync merged the two versions
    [cand] = [c for c in contested(merged_on) if c["matched_memory_ids"] == [rid]]
    assert cand["text"] == EDITED and "deleted" in cand["tags"]  # the edit waits for review, not lost
    assert cand["contested"]["kind"] in (DELETED_OURS, DELETED_THEIRS)
    _settled(capsys, a, b, rid, TEXT, EDITED)


def test_a_deletion_of_a_candidate_both_machines_promoted_keeps_its_line_and_asks_nothing(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.gate.capture import capture
    from commonkeep.reviews.review import approve
    from commonkeep.store.ids import memory_id_for

    a, b, _ = three
    cid = str(capture(a, TEXT, evidence_refs=["chat:1", "chat:2"]).candidate["id"])
    _sync(capsys, a)
    _sync(capsys, b)
    for root in (a, b):  # offline, both promote the shared candidate
        approve(root, [cid], role=WRITER)
    rid = memory_id_for(cid)
    kept = _forget(capsys, a, rid)
    for root in (b, a, b):
        _sync(capsys, root)
    assert _lines(a, rid) == [kept] and _lines(b, rid) == [kept]
    assert [c for root in (a, b) for c in contested(root)] == []  # B's copy said nothing the deletion line lacks
    _settled(capsys, a, b, rid, TEXT)


@pytest.mark.parametrize("step", ["merged", "settled"])
def test_a_sync_killed_mid_merge_still_keeps_the_deletion_line(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], step: str) -> None:
    """A real SIGKILL of B's sync after its merge (before the settle, or before the merge commit):
    the next sync finishes it, and the deletion line stays, the edit waiting for review."""
    a, b, rid = _two_machines(capsys, three)
    kept = _forget(capsys, a, rid)
    _edit(b, rid, EDITED, "edit03")
    _sync(capsys, a)
    assert sync_killed(b, step) == -9
    _sync(capsys, b)
    _sync(capsys, a)
    assert _lines(a, rid) == [kept] and _lines(b, rid) == [kept]
    assert [c["text"] for c in contested(b) if c["matched_memory_ids"] == [rid]] == [EDITED]
    _settled(capsys, a, b, rid, TEXT, EDITED)


def test_deleted_on_both_machines_keeps_one_line_the_same_on_both(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b, rid = _two_machines(capsys, three)
    on_a = _forget(capsys, a, rid)
    _edit(b, rid, EDITED, "edit02")  # B edits it, then deletes it too: its deletion line differs from A's
    on_b = _forget(capsys, b, rid)
    assert on_a != on_b
    for root in (a, b, a, b):
        _sync(capsys, root)
    [line] = _lines(a, rid)
    assert _lines(b, rid) == [line] and line in (on_a, on_b)
    _settled(capsys, a, b, rid, TEXT, EDITED)


def test_a_purge_on_one_machine_wins_over_an_audit_deletion_on_the_other(
        remote: Path, three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b, rid = _two_machines(capsys, three)
    _forget(capsys, a, rid)  # audit-preserving: the line stays on A
    _forget(capsys, b, rid, "--purge")
    for root in (a, b, a, b):
        _sync(capsys, root)
    assert _lines(a, rid) == [] and _lines(b, rid) == []  # a privacy purge keeps nothing
    assert holders(a, TEXT) == [] and holders(b, TEXT) == [] and remote_holders(remote, TEXT) == []
    tomb = [json.loads(x) for x in (a / "memory/tombstones.jsonl").read_text(encoding="utf-8").splitlines()
            if x.strip() and json.loads(x)["deleted_record_id"] == rid]
    assert [t["deletion_mode"] for t in tomb] == ["privacy_purge"]
    _settled(capsys, a, b, rid, TEXT, expected=("purged_text_in_history",))  # purge-history's business


@pytest.mark.parametrize("other_change", [False, True])
def test_a_deletion_line_another_machine_lost_is_put_back(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], other_change: bool) -> None:
    """B lost the line (an older commonkeep's sync dropped it, or a hand edit): the next merge puts
    it back from the commit that still holds it, on both machines, instead of spreading the loss."""
    a, b, rid = _two_machines(capsys, three)
    kept = _forget(capsys, a, rid)
    _sync(capsys, a)
    _sync(capsys, b)
    (b / L2).write_bytes(b"".join(ln + b"\n" for ln in (b / L2).read_bytes().split(b"\n") if ln.strip() and ln != kept))
    git(b, "commit", "-q", "-am", "an older sync dropped the deletion line")
    if other_change:  # A changed L2 meanwhile: the merge driver itself sees both versions
        _promoted(a, "Release notes are written in docs/changes.md by the release owner.")
        _sync(capsys, a)
    rep = _sync(capsys, b)
    assert _lines(b, rid) == [kept]
    assert rep["restored"] == ([] if other_change else [f"{L2}#{rid}"])
    _sync(capsys, a)
    assert _lines(a, rid) == [kept]
    _settled(capsys, a, b, rid, TEXT)


# --- the merge driver itself (pure) ---------------------------------------------------------------

RID = "mem_20261202000010_audtaudt"
BASE = b'{"id":"%s","statement":"old","status":"active","updated_at":"2026-12-01"}' % RID.encode()
GONE = b'{"id":"%s","statement":"old","status":"deleted","updated_at":"2026-12-02"}' % RID.encode()
EDIT = b'{"id":"%s","statement":"new","status":"active","updated_at":"2026-12-03"}' % RID.encode()


@pytest.mark.parametrize(("ours", "theirs", "kind"), [
    (GONE, EDIT, DELETED_OURS), (EDIT, GONE, DELETED_THEIRS), (GONE, BASE, None), (BASE, GONE, None),
    (GONE, None, None), (None, GONE, None),
])
def test_the_driver_keeps_the_deletion_line_byte_for_byte(ours: bytes | None, theirs: bytes | None,
                                                          kind: str | None) -> None:
    """Without the rule the field-by-field merge made a line that is deleted but holds the other
    machine's edit (``new`` statement, later date), which no deletion wrote."""
    res = merge_bytes(BASE + b"\n", (ours or b"") + b"\n", (theirs or b"") + b"\n", deleted=frozenset({RID}))
    assert res.data == GONE + b"\n"
    assert [(c.kind, c.line) for c in res.contested] == ([(kind, EDIT)] if kind else [])


def test_the_driver_sets_nothing_aside_when_the_other_line_says_nothing_new() -> None:
    """Both machines promoted the same candidate (no base), then one deleted it: the other's line
    holds nothing the deletion line does not, so no contested candidate is made of it."""
    for ours, theirs in ((GONE, BASE), (BASE, GONE)):
        res = merge_bytes(b"", ours, theirs, deleted=frozenset({RID}))
        assert res.data == GONE + b"\n" and res.contested == []
    res = merge_bytes(b"", GONE, EDIT, deleted=frozenset({RID}))
    assert [c.line for c in res.contested] == [EDIT]


def test_the_driver_keeps_nothing_of_a_purged_record_and_the_smaller_of_two_deletion_lines() -> None:
    other = GONE.replace(b"2026-12-02", b"2026-12-04")
    assert merge_bytes(BASE, GONE, EDIT, frozenset({RID}), frozenset({RID})).data == b""
    for ours, theirs in ((GONE, other), (other, GONE)):
        res = merge_bytes(BASE, ours, theirs, deleted=frozenset({RID}))
        assert res.data == GONE + b"\n" and res.contested == []


def test_a_deletion_line_an_older_sync_dropped_everywhere_is_put_back_from_the_history(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Both machines and the remote lost the line (what an older commonkeep's sync did): the next
    sync finds it in the history, once per clone, and both machines end with it again."""
    a, b, rid = _two_machines(capsys, three)
    kept = _forget(capsys, a, rid)
    _sync(capsys, a)
    _sync(capsys, b)
    (a / L2).write_bytes(b"".join(ln + b"\n" for ln in (a / L2).read_bytes().split(b"\n") if ln.strip() and ln != kept))
    git(a, "commit", "-q", "-am", "an older sync dropped the deletion line")
    git(a, "push", "-q", "origin", "HEAD")
    git(b, "pull", "-q", "--no-rebase", "origin", git(b, "branch", "--show-current").strip())
    assert _lines(b, rid) == []
    rep = _sync(capsys, b)
    assert _lines(b, rid) == [kept] and rep["restored"] == [f"{L2}#{rid}"]
    assert rid in json.loads((b / ".git/commonkeep-deleted-lines.json").read_text(encoding="utf-8"))["searched"]
    _sync(capsys, a)
    assert _lines(a, rid) == [kept]
    assert _sync(capsys, b)["restored"] == []
    _settled(capsys, a, b, rid, TEXT)
