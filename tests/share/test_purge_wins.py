"""A tombstone wins over every other version of its record, on every machine, whatever the order
of the syncs and wherever one is killed (issue 18, "Privacy across machines"). Real git: a bare
remote and clones; real files; real kills (SIGKILL of the sync's process group)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.share.git import ShareError
from commonkeep.share.sync import sync
from tests.share.helpers import (
    L2,
    WRITER,
    git,
    holders,
    kill_group_hook,
    manual_patch,
    record,
    remote_holders,
    run_sync_process,
    sync_killed,
)
from tests.store.test_share import add

SECRET = "Alice's home address is 12 Elm Street."
EDITED = "Alice's home address is 14 Elm Street, flat 3."
RID = "mem_20261202000010_qqqqqqqq"


def _everywhere(remote: Path, *roots: Path, texts: tuple[str, ...] = (SECRET,)) -> list[str]:
    found = remote_holders(remote, *texts)
    for root in roots:
        found += [f"{root.name}/{x}" for x in holders(root, *texts)]
    return found


def _purge(root: Path, rid: str) -> None:
    from commonkeep.patches.forget import forget

    forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)


def _purged_on_a_after_b_selected_it(a: Path, b: Path) -> None:
    """Both machines hold the record, B's runtime files quote it, then A purges it and syncs."""
    from commonkeep.recall.select import select_for_prompt

    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    select_for_prompt(b, "what is Alice's home address")
    _purge(a, RID)
    sync(a, role=WRITER)


def test_a_purge_is_not_undone_when_both_machines_promoted_the_same_candidate(
        remote: Path, three: tuple[Path, Path, Path]) -> None:
    from commonkeep.gate.capture import capture
    from commonkeep.reviews.review import approve
    from commonkeep.store.ids import memory_id_for

    a, b, _ = three
    cid = str(capture(a, SECRET, evidence_refs=["chat:1", "chat:2"]).candidate["id"])
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    approve(a, [cid], role=WRITER)
    approve(b, [cid], role=WRITER)  # offline: both promote the shared candidate
    rid = memory_id_for(cid)
    assert SECRET in (b / L2).read_text(encoding="utf-8")
    _purge(a, rid)
    assert holders(a, SECRET) == []
    sync(b, role=WRITER)  # B's promotion reaches the remote
    sync(a, role=WRITER)  # A merges it: the tombstone must win
    sync(b, role=WRITER)
    assert _everywhere(remote, a, b) == []
    for root in (a, b):
        assert rid not in (root / L2).read_text(encoding="utf-8")
        assert git(root, "status", "--porcelain", "--", "memory", "inbox", "patches", "daily") == ""


def test_a_purge_against_a_concurrent_edit_scrubs_the_edit_and_its_patch(
        remote: Path, three: tuple[Path, Path, Path]) -> None:
    from commonkeep.patches.patch import apply_patch

    a, b, _ = three
    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    res = apply_patch(b, manual_patch("edit01", {"op": "update", "target": L2, "target_id": RID,
                                                 "updates": {"statement": EDITED}}), role=WRITER)
    assert res.applied == ["op_001"] and EDITED in (b / "patches/patch_202612020000_ckedit01.json").read_text()
    _purge(a, RID)
    sync(a, role=WRITER)
    sync(b, role=WRITER)  # B's edit meets A's purge
    sync(a, role=WRITER)
    assert _everywhere(remote, a, b, texts=(SECRET, EDITED)) == []
    doc = json.loads((a / "patches/patch_202612020000_ckedit01.json").read_text(encoding="utf-8"))
    assert doc["ops"][0]["updates"]["statement"] == "[deleted]"  # the patch stays, as an audit of what was done


def test_a_sync_killed_after_the_merge_commit_still_scrubs_this_machines_copies(
        remote: Path, three: tuple[Path, Path, Path]) -> None:
    from commonkeep.recall.select import select_for_prompt

    a, b, _ = three
    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    select_for_prompt(b, "what is Alice's home address")  # B's runtime files quote it
    assert SECRET in (b / "runtime/context.md").read_text(encoding="utf-8")
    add(b, record("mem_20261202000011_bbbbbbbb", "Machine B keeps its own notes."))  # so the pull is a real merge
    _purge(a, RID)
    sync(a, role=WRITER)
    kill_group_hook(b, "post-merge")  # git runs it right after `git pull` recorded the merge
    kill_group_hook(b, "post-commit", only_merges=True)
    killed = run_sync_process(b)
    assert killed.returncode == -9 or killed.returncode == 137, killed
    assert run_sync_process(b).returncode == 0
    assert _everywhere(remote, a, b) == []


def test_the_owed_scrub_is_on_disk_without_text_and_a_later_sync_finishes_it(
        remote: Path, three: tuple[Path, Path, Path]) -> None:

    a, b, _ = three
    _purged_on_a_after_b_selected_it(a, b)
    assert sync_killed(b, "merged") == -9  # after the merge, before the settle
    owed = (b / ".git/commonkeep-sync.json").read_text(encoding="utf-8")
    assert RID in json.loads(owed)["purged"] and "Elm" not in owed
    assert holders(b, SECRET)  # the kill left B's copies
    from commonkeep.governance.plugin import commonkeep_doctor_checks

    [finding] = [f for f in commonkeep_doctor_checks(str(b)) if f["code"] == "share_scrub_owed"]
    assert "commonkeep share sync" in finding["message"] and "Elm" not in finding["message"]
    remote.rename(remote.with_name("away.git"))  # offline: the owed scrub is local work, it still happens
    with pytest.raises(ShareError, match="cannot be reached"):
        sync(b, role=WRITER)
    assert holders(b, SECRET) == []
    remote.with_name("away.git").rename(remote)
    sync(b, role=WRITER)
    assert _everywhere(remote, a, b) == []
    assert not (b / ".git/commonkeep-sync.json").exists()
    assert not [f for f in commonkeep_doctor_checks(str(b)) if f["code"] == "share_scrub_owed"]


def test_both_machines_deleting_one_record_leaves_one_tombstone_and_the_purge_wins(
        remote: Path, three: tuple[Path, Path, Path]) -> None:
    from commonkeep.patches.forget import forget
    from commonkeep.store.core import Store

    a, b, c = three
    add(a, record(RID, SECRET))
    for root in (a, b, c):
        sync(root, role=WRITER)
    forget(a, RID, reason="invalid", role=WRITER)  # a plain deletion on A
    _purge(b, RID)  # a privacy purge of the same record on B, offline
    for root in (a, b, c, a, b, c):
        sync(root, role=WRITER)
    for root in (a, b, c):
        store = Store(root)
        [tomb] = [t for t in store.rows(store.layout.tombstones) if t["deleted_record_id"] == RID]
        assert tomb["deletion_mode"] == "privacy_purge"
    assert _everywhere(remote, a, b, c) == []
    assert all(SECRET not in p.read_text(encoding="utf-8", errors="replace")
               for root in (a, b, c) for p in (root / ".git").glob("commonkeep-contested*.jsonl"))


def test_an_edit_made_here_after_the_purge_elsewhere_leaves_no_local_copy(
        remote: Path, three: tuple[Path, Path, Path]) -> None:
    """A edits the record twice (not knowing B purged it) and its runtime files quote the first
    edit, which only A's first patch holds; that patch comes back to A already scrubbed by B, so A
    finds the text in its own last commit's patch files."""
    from commonkeep.patches.patch import apply_patch
    from commonkeep.recall.select import select_for_prompt

    a, b, _ = three
    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    _purge(b, RID)
    apply_patch(a, manual_patch("edit02", {"op": "update", "target": L2, "target_id": RID,
                                           "updates": {"statement": EDITED}}), role=WRITER)
    select_for_prompt(a, "what is Alice's home address")
    assert EDITED in (a / "runtime/context.md").read_text(encoding="utf-8")
    again = "Alice's home address is 16 Elm Street, the blue door."
    apply_patch(a, manual_patch("edit03", {"op": "update", "target": L2, "target_id": RID,
                                           "updates": {"statement": again}}), role=WRITER)
    sync(a, role=WRITER)  # A's record line now says `again`; EDITED is only in A's first patch and runtime
    sync(b, role=WRITER)
    sync(a, role=WRITER)
    assert _everywhere(remote, a, b, texts=(SECRET, EDITED, again)) == []


def test_a_recovery_killed_in_turn_still_owes_and_finishes_the_scrub(
        remote: Path, three: tuple[Path, Path, Path]) -> None:

    a, b, _ = three
    _purged_on_a_after_b_selected_it(a, b)
    assert sync_killed(b, "merged") == -9  # B fast-forwarded to A's purge, its own copies not scrubbed yet
    assert sync_killed(b, "recovering") == -9  # and the sync that would finish it dies too
    owed = json.loads((b / ".git/commonkeep-sync.json").read_text(encoding="utf-8"))
    assert owed["ours"] and owed["theirs"] and RID in owed["purged"]  # still owed, with the commits to find the text
    sync(b, role=WRITER)
    assert _everywhere(remote, a, b) == []


def test_a_merge_left_uncommitted_is_finished_and_the_sync_goes_on_when_the_remote_moved(
        remote: Path, three: tuple[Path, Path, Path]) -> None:
    """B's sync dies after settling its merge, before committing it; A pushes more meanwhile. B's
    next sync commits the merge it owed, then merges A's new work and pushes (found by the
    property test: the resumed merge used to be pushed as is, and the push was refused)."""
    a, b, _ = three
    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    add(b, record("mem_20261202000012_bbbbbbbb", "Machine B keeps its own notes."))
    _purge(a, RID)
    sync(a, role=WRITER)
    assert sync_killed(b, "settled") == -9  # a real merge: MERGE_HEAD stays
    assert (b / ".git/MERGE_HEAD").exists()
    add(a, record("mem_20261202000013_aaaaaaaa", "Machine A pushed this meanwhile."))
    sync(a, role=WRITER)
    rep = sync(b, role=WRITER)
    assert rep.pushed and any("finished and committed the merge" in n for n in rep.notes)
    assert "Machine A pushed this meanwhile." in (b / L2).read_text(encoding="utf-8")
    assert _everywhere(remote, a, b) == []
    assert git(b, "status", "--porcelain") == ""
