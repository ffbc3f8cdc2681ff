"""A privacy purge against git's ``union`` merge of daily logs (``commonkeep share``).

The union driver keeps both sides of a conflicting hunk, so a daily-log line the purge scrubbed
on one machine comes back from another machine that appended next to it. The purge records the
sha256 of each daily-log line it scrubbed (``scrubbed_lines`` in its patch file) and every sync
scrubs lines with those hashes again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.store import test_share
from tests.store.test_share import WRITER, add, git, record, sync

# the two-machine fixtures of test_share (a bare remote, A created it, B cloned it)
_git_env = test_share._git_env
machines = test_share.machines

SECRET = "Alice's home address is 12 Elm Street."
RID = "mem_20261202000010_qqqqqqqq"
DAY = "daily/2026-12-02.md"
PURGED_LINE = f"user said: {SECRET}"


def _tombstones(root: Path, rid: str) -> list[dict[str, object]]:
    path = root / "memory/tombstones.jsonl"
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [t for t in rows if t.get("deleted_record_id") == rid]


def _purge_patch(root: Path) -> dict[str, object]:
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((root / "patches").glob("*.json"))]
    [doc] = [d for d in docs if any(o.get("target_id") == RID and o.get("op") == "delete" for o in d["ops"])]
    return doc


def _purged_and_appended_next_to(machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """Both machines have the record and a daily log whose last line quotes it; A purges it,
    B appends a line right after that last line: the two changes touch adjacent lines, so git
    sees a conflict in the daily log and the union driver keeps both sides."""
    from commonkeep.patches.forget import forget

    a, b = machines
    add(a, record(RID, SECRET))
    (a / DAY).write_text(f"# 2026-12-02\n\n- deployed the docs site\n{PURGED_LINE}\n", encoding="utf-8")
    sync(capsys, a)
    sync(capsys, b)
    assert (b / DAY).read_text(encoding="utf-8").endswith(PURGED_LINE + "\n")
    forget(a, RID, reason="privacy_sensitive", role=WRITER, purge=True)
    assert SECRET not in (a / DAY).read_text(encoding="utf-8")
    with open(b / DAY, "a", encoding="utf-8") as fh:
        fh.write("- fixed the flaky test on machine B\n")
    return a, b


def test_a_union_merge_of_a_daily_log_does_not_undo_a_privacy_purge(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _purged_and_appended_next_to(machines, capsys)
    sync(capsys, a)
    rep_b = sync(capsys, b)
    # The merge really conflicted and git's union driver kept both sides of the hunk: B's lines
    # (the original line, then B's own), then A's scrubbed line; the original is scrubbed again.
    assert (b / DAY).read_text(encoding="utf-8").splitlines() == [
        "# 2026-12-02", "", "- deployed the docs site", "[deleted]", "- fixed the flaky test on machine B",
        "user said: [deleted]"]
    rep_a = sync(capsys, a)
    for root in (a, b):
        text = (root / DAY).read_text(encoding="utf-8")
        assert SECRET not in text, (root, text)
        assert "Elm Street" not in text
        assert "- fixed the flaky test on machine B\n" in text and "- deployed the docs site\n" in text
        assert "<<<<<<<" not in text
        assert len(_tombstones(root, RID)) == 1
        assert git(root, "status", "--porcelain", "--", "daily") == ""  # the fix is committed
    assert (a / DAY).read_bytes() == (b / DAY).read_bytes()
    assert any("purged memory the merge brought back were scrubbed again" in n for n in rep_b["notes"])
    assert not any("scrubbed again" in n for n in rep_a["notes"])  # B's commit already carried the fix
    assert SECRET not in git(b, "show", f"HEAD:{DAY}") and SECRET not in git(a, "show", f"HEAD:{DAY}")


def test_the_purge_patch_holds_line_hashes_and_no_statement(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = _purged_and_appended_next_to(machines, capsys)
    doc = _purge_patch(a)
    assert doc["scrubbed_lines"] == [hashlib.sha256(PURGED_LINE.encode("utf-8")).hexdigest()]
    raw = json.dumps(doc)
    assert "Elm Street" not in raw and "Alice" not in raw


def test_a_sync_with_nothing_to_scrub_again_says_nothing_about_it(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _purged_and_appended_next_to(machines, capsys)
    assert _purge_patch(a).get("scrubbed_lines")  # there is something a sync could scrub again
    rep = sync(capsys, a)
    assert not any("scrubbed again" in n for n in rep["notes"])
    (b / DAY).write_text(f"# 2026-12-02\n\n- deployed the docs site\n{PURGED_LINE}\n", encoding="utf-8")  # undo B's append
    rep = sync(capsys, b)  # a fast-forward: no conflict, nothing comes back
    assert not any("scrubbed again" in n for n in rep["notes"])
    assert SECRET not in (b / DAY).read_text(encoding="utf-8")


def test_forget_purge_again_scrubs_a_line_that_came_back(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The purged statement's other copies are scrubbed, so only the recorded hash finds the line."""
    from commonkeep.patches.forget import forget

    add(root, record(RID, SECRET))
    (root / DAY).parent.mkdir(parents=True, exist_ok=True)
    (root / DAY).write_text(f"# 2026-12-02\n{PURGED_LINE}\n", encoding="utf-8")
    forget(root, RID, reason="privacy_sensitive", role=WRITER, purge=True)
    with open(root / DAY, "a", encoding="utf-8") as fh:  # as a union merge would bring it back
        fh.write(f"- mine\n{PURGED_LINE}\r\n")
    forget(root, RID, reason="privacy_sensitive", role=WRITER, purge=True)
    assert (root / DAY).read_bytes() == b"# 2026-12-02\nuser said: [deleted]\n- mine\n[deleted]\r\n"
    assert len(_tombstones(root, RID)) == 1


def test_a_purge_from_another_machine_scrubs_this_machines_local_copies(
        machines: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Runtime files, reports and the search databases are machine-local (never shared): B's copies
    of a record A purged are scrubbed by B's sync, with the statement B held before the merge."""
    from commonkeep.patches.forget import forget
    from commonkeep.recall.search.hybrid import search
    from commonkeep.recall.select import select_for_prompt

    a, b = machines
    add(a, record(RID, SECRET))
    sync(capsys, a)
    sync(capsys, b)
    select_for_prompt(b, "what is Alice's home address")  # B's runtime/context.md quotes it
    (b / "reports").mkdir(exist_ok=True)
    (b / "reports" / "notes.md").write_text(f"copied: {SECRET}\n", encoding="utf-8")
    assert SECRET in (b / "runtime" / "context.md").read_text(encoding="utf-8")
    forget(a, RID, reason="privacy_sensitive", role=WRITER, purge=True)
    sync(capsys, a)
    report = sync(capsys, b)
    assert any("purged for privacy on another machine" in n for n in report["notes"]), report["notes"]
    for path in b.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            assert "Elm Street" not in path.read_text(errors="replace"), path
    assert search(b, "Elm Street", "keyword", 5).results == []
    assert len(_tombstones(b, RID)) == 1
    # nothing to do on the next sync
    assert not any("another machine" in n for n in sync(capsys, b)["notes"])
