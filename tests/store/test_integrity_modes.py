"""Who can read memory (issue 18): the root is created 0700 and new files 0600, files that exist
keep the user's modes, the process umask is never touched, doctor warns about readable memory."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl, atomic_write_bytes, rewrite_jsonl

WRITER = "librarian"


def _mode(p: Path) -> int:
    return stat.S_IMODE(os.stat(p).st_mode)


@pytest.fixture(autouse=True)
def _usual_umask() -> Iterator[None]:
    """Run under the common 022 umask, where files used to come out 0644 and folders 0755."""
    umask = os.umask  # the test below replaces os.umask
    old = umask(0o022)
    yield
    umask(old)


def test_a_new_root_is_owner_only_and_every_file_commands_create_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "fresh"
    assert main(["init", "--root", str(root)]) == 0
    assert _mode(root) == 0o700
    for d in ("memory", "inbox", "daily", "patches", "search", "reports", "sessions/summaries"):
        assert _mode(root / d) == 0o700, d
    for f in ("memory/L1.identity.jsonl", "memory/L2.playbooks.jsonl", "inbox/captured.jsonl", "scratchpad.md"):
        assert _mode(root / f) == 0o600, f
    assert main(["write", "Always run pytest -q before committing.", "--tags", "testing", "--evidence", "pyproject.toml",
                 "--evidence", "daily/2026-12-02.md", "--confidence", "0.9", "--root", str(root)]) == 0
    assert main(["write", "--daily", "Looked at CI.", "--root", str(root)]) == 0
    with open(root / "inbox" / "captured.jsonl", "ab") as fh:
        fh.write(b"not json\n")
    assert main(["curate", "--role", WRITER, "--root", str(root)]) == 0
    assert main(["render", "--root", str(root)]) == 0
    assert main(["reindex", "--no-embed", "--root", str(root)]) == 0
    assert main(["search", "pytest", "--root", str(root)]) == 0
    created = [p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    loose = {str(p.relative_to(root)): oct(_mode(p)) for p in created if _mode(p) & 0o077}
    assert loose == {}  # the search databases too (they hold every record's text), -wal/-shm with them
    assert {"memory-fts.db", "recall.db"} <= {p.name for p in created if p.parent.name == "search"}
    assert any(p.parent.name == "patches" for p in created)
    assert any(p.parent.name == "daily" for p in created)
    assert (root / "quarantine" / "lines.jsonl").exists()


def test_files_that_exist_keep_their_modes_through_appends_and_rewrites(root: Path) -> None:
    store = Store(root, warn=False)
    inbox, l2 = store.layout.inbox, store.layout.l2
    os.chmod(inbox, 0o640)
    os.chmod(l2, 0o644)
    append_jsonl(inbox, [{"id": "a"}])
    store.update_candidates(lambda rows: rows + [{"id": "b"}])
    rewrite_jsonl(l2, lambda rows: rows + [{"id": "c"}], quarantine=store.layout.quarantine)
    atomic_write_bytes(store.layout.rendered_memory, b"x")
    os.chmod(store.layout.rendered_memory, 0o604)
    atomic_write_bytes(store.layout.rendered_memory, b"y")
    assert _mode(inbox) == 0o640
    assert _mode(l2) == 0o644
    assert _mode(store.layout.rendered_memory) == 0o604


def test_no_write_path_reads_or_changes_the_umask(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Setting the umask to read it leaves a window in which another thread's new file is
    world-writable; every path that creates a file must do without it."""
    def refuse(_mask: int) -> int:
        raise AssertionError("os.umask was called")

    monkeypatch.setattr(os, "umask", refuse)
    q = tmp_path / "q.jsonl"
    append_jsonl(tmp_path / "a.jsonl", [{"id": "a"}])
    rewrite_jsonl(tmp_path / "b.jsonl", lambda rows: [{"id": "b"}], quarantine=q)
    atomic_write_bytes(tmp_path / "c.json", b"{}")
    Store(root, warn=False).append_daily("Looked at CI.", date="2026-12-02")
    for name in ("a.jsonl", "b.jsonl", "c.json"):
        assert _mode(tmp_path / name) == 0o600


def test_doctor_warns_when_group_or_others_can_read_memory(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.chmod(root, 0o700)
    os.chmod(root / "memory" / "L2.playbooks.jsonl", 0o644)
    assert main(["doctor", "--root", str(root)]) == 0  # the root keeps them out: nothing to warn about
    assert "memory_readable_by_others" not in capsys.readouterr().out
    os.chmod(root, 0o755)
    assert main(["doctor", "--root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "memory_readable_by_others: others can read 1 memory file(s)" in out
    assert "memory/L2.playbooks.jsonl" in out and f"chmod 700 {root}" in out
