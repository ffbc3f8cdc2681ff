"""Issue 15 §5, on a shared root: ``forget --purge`` says the git history still holds the text;
``commonkeep share purge-history`` rewrites it (git filter-repo) and pushes with
``--force-with-lease``; other clones adopt the rewritten history; ``doctor`` reports purged text
still in the history, in the inbox and in patches (by id, never the text). Real git throughout."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from commonkeep.share.git import ShareError
from commonkeep.share.sync import sync
from tests.share.helpers import WRITER, cli, git, holders, record, remote_holders
from tests.store.test_share import add

SECRET = "Alice's home address is 12 Elm Street."
RID = "mem_20261202000040_hhhhhhhh"


def _in_history(repo: Path, text: str) -> list[str]:
    """``[text]`` when a blob reachable from any ref of ``repo`` holds it."""
    objs = subprocess.run(["git", "rev-list", "--all", "--objects"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.split("\n")
    names = [line.split()[0] for line in objs if line.strip()]
    kinds = subprocess.run(["git", "cat-file", "--batch-check=%(objectname) %(objecttype)"], cwd=repo,
                           input=("\n".join(names) + "\n").encode(), capture_output=True, check=True).stdout.decode()
    blobs = [line.split()[0] for line in kinds.splitlines() if line.endswith(" blob")]
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=repo, input=("\n".join(blobs) + "\n").encode(),
                         capture_output=True, check=True).stdout
    return [text] if text.encode("utf-8") in out else []


def _doctor(capsys: pytest.CaptureFixture[str], root: Path) -> list[dict[str, Any]]:
    code, out, err = cli(capsys, "doctor", "--root", str(root), "--json")
    data = json.loads(out)
    return list(data["findings"])


def test_forget_purge_on_a_shared_root_says_the_history_still_holds_the_text(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, _, _ = three
    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    code, out, err = cli(capsys, "forget", RID, "--reason", "privacy_sensitive", "--purge", "--root", str(a),
                         "--role", WRITER)
    assert code == 0, err
    assert "history" in err and "commonkeep share purge-history" in err and "Elm" not in err


def test_purge_history_rewrites_every_commit_pushes_and_other_clones_adopt_it(
        remote: Path, three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.patches.forget import forget

    a, b, c = three
    add(a, record(RID, SECRET))
    add(a, record("mem_20261202000041_kkkkkkkk", "Keep this ordinary record."))
    with open(a / "daily/2026-12-02.md", "a", encoding="utf-8") as fh:
        fh.write(f"# 2026-12-02\n- user said: {SECRET}\n")
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    sync(c, role=WRITER)
    forget(a, RID, reason="privacy_sensitive", role=WRITER, purge=True)
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    sync(c, role=WRITER)
    assert remote_holders(remote, SECRET) == [] and _in_history(remote, SECRET)  # HEAD is clean, history is not
    codes = {f["code"]: f for f in _doctor(capsys, a)}
    assert "purged_text_in_history" in codes and RID in codes["purged_text_in_history"]["message"]
    assert "Elm" not in json.dumps(codes)
    code, out, err = cli(capsys, "share", "purge-history", "--root", str(a), "--role", WRITER)
    assert code == 0, err
    assert "pushed to origin" in out and "commonkeep share adopt-history" in out and "clone again" in out
    assert _in_history(a, SECRET) == [] and _in_history(remote, SECRET) == []
    assert "Keep this ordinary record." in git(a, "show", "HEAD:memory/L2.playbooks.jsonl")
    assert "purged_text_in_history" not in {f["code"] for f in _doctor(capsys, a)}
    # B still holds the old history: its sync must not merge it back
    with pytest.raises(ShareError, match="rewritten"):
        sync(b, role=WRITER)
    assert _in_history(remote, SECRET) == []
    code, out, err = cli(capsys, "share", "adopt-history", "--root", str(b), "--role", WRITER)
    assert code == 0, err
    assert _in_history(b, SECRET) == []
    add(b, record("mem_20261202000042_bbbbbbbb", "A record B adds after adopting."))
    sync(b, role=WRITER)
    sync(a, role=WRITER)
    assert "A record B adds after adopting." in (a / "memory/L2.playbooks.jsonl").read_text(encoding="utf-8")
    assert _in_history(remote, SECRET) == [] and holders(a, SECRET) == [] and holders(b, SECRET) == []


def test_purge_history_refuses_to_overwrite_a_push_it_has_not_seen(
        remote: Path, three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.patches.forget import forget

    a, b, _ = three
    add(a, record(RID, SECRET))
    sync(a, role=WRITER)
    forget(a, RID, reason="privacy_sensitive", role=WRITER, purge=True)
    sync(a, role=WRITER)
    sync(b, role=WRITER)
    add(b, record("mem_20261202000043_nnnnnnnn", "B pushed this while A rewrote."))
    sync(b, role=WRITER)  # the remote moved on since A last looked
    before = git(remote, "rev-parse", "HEAD")
    code, out, err = cli(capsys, "share", "purge-history", "--root", str(a), "--role", WRITER)
    assert code == 2 and "nothing was rewritten or pushed" in err and "share sync" in err and "Traceback" not in err
    assert git(remote, "rev-parse", "HEAD") == before  # B's push is not lost


def test_doctor_flags_purged_text_in_the_inbox_and_the_patches(
        three: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.gate.capture import capture
    from commonkeep.patches.forget import forget
    from commonkeep.store.ids import memory_id_for

    a, _, _ = three
    cid = str(capture(a, SECRET, evidence_refs=["chat:1", "chat:2"]).candidate["id"])
    from commonkeep.reviews.review import approve

    approve(a, [cid], role=WRITER)
    rid = memory_id_for(cid)
    patch = next(p for p in (a / "patches").glob("*.json") if SECRET in p.read_text(encoding="utf-8"))
    kept_patch, kept_inbox = patch.read_bytes(), (a / "inbox/captured.jsonl").read_bytes()
    forget(a, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert not {"purged_text_in_inbox", "purged_text_in_patches"} & {f["code"] for f in _doctor(capsys, a)}
    patch.write_bytes(kept_patch)  # as a merge (or a hand edit) brings them back
    (a / "inbox/captured.jsonl").write_bytes(kept_inbox)
    found = {f["code"]: f for f in _doctor(capsys, a)}
    assert found["purged_text_in_inbox"]["severity"] == "error" and rid in found["purged_text_in_inbox"]["message"]
    assert found["purged_text_in_patches"]["file"] == f"patches/{patch.name}"
    assert "Elm" not in json.dumps(found)
