"""Durable JSONL: concurrent appends during rewrites, SIGKILL mid-rewrite, torn lines."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl, read_jsonl, rewrite_jsonl


def _appender(path: str, worker: int, count: int) -> None:
    p = Path(path)
    for i in range(count):
        append_jsonl(p, [{"id": f"cap_w{worker}_{i:05d}", "text": f"candidate {i} from worker {worker}", "status": "new"}])


def _rewriter(path: str, quarantine: str, stop: float) -> None:
    p = Path(path)
    n = 0
    while time.monotonic() < stop:
        # a real read-modify-write: touch every row, keep them all
        rewrite_jsonl(p, lambda rows: [{**r, "seen": r.get("seen", 0) + 1} for r in rows], quarantine=Path(quarantine))
        n += 1


def test_four_appenders_and_a_rewriter_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox" / "captured.jsonl"
    inbox.parent.mkdir()
    ctx = mp.get_context("fork")
    appenders = [ctx.Process(target=_appender, args=(str(inbox), w, 2500)) for w in range(4)]
    rewriter = ctx.Process(target=_rewriter, args=(str(inbox), str(tmp_path / "q.jsonl"), time.monotonic() + 600))
    rewriter.start()
    for p in appenders:
        p.start()
    for p in appenders:
        p.join(300)
        assert p.exitcode == 0
    rewriter.terminate()
    rewriter.join(30)
    # the rewriter may have been stopped mid-rewrite: the file must still be whole
    read = read_jsonl(inbox)
    assert read.bad == []
    ids = [r["id"] for r in read.rows]
    assert len(ids) == 10_000
    assert len(set(ids)) == 10_000
    assert any(r.get("seen") for r in read.rows), "the rewriter never ran concurrently"


def test_sigkill_between_temp_write_and_rename_leaves_the_original_intact(tmp_path: Path) -> None:
    target = tmp_path / "L2.playbooks.jsonl"
    append_jsonl(target, [{"id": f"mem_{i}", "statement": f"fact {i}"} for i in range(100)])
    original = target.read_bytes()
    ready = tmp_path / "ready"
    child = textwrap.dedent(
        f"""
        import os, time
        from pathlib import Path
        real_replace = os.replace
        def stuck_replace(src, dst):
            Path({str(ready)!r}).write_text(src)
            time.sleep(600)
        os.replace = stuck_replace
        from commonkeep.store.jsonl import rewrite_jsonl
        rewrite_jsonl(Path({str(target)!r}), lambda rows: rows[:1], quarantine=Path({str(tmp_path / 'q.jsonl')!r}))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child])
    deadline = time.monotonic() + 60
    while not (ready.exists() and ready.read_text()):  # created, then written: wait for both
        assert proc.poll() is None, "child died before reaching the rename"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    temp = Path(ready.read_text())
    assert temp.exists() and temp.read_bytes().count(b"\n") == 1  # the new content was fully written
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert target.read_bytes() == original
    assert len(read_jsonl(target).rows) == 100


def test_torn_tail_line_is_reported_quarantined_and_whole_lines_still_load(root: Path) -> None:
    store = Store(root, warn=False)
    inbox = store.layout.inbox
    good = [{"id": f"cap_{i}", "created_at": "2026-12-02T10:00:00.000Z", "source": {"type": "manual", "ref": "x"},
             "text": f"fact {i}", "tags": [], "evidence_refs": [], "status": "new"} for i in range(3)]
    append_jsonl(inbox, good)
    with open(inbox, "ab") as fh:
        fh.write(b'{"id":"cap_torn","created_at":"2026-12-0')  # a crash mid-append
    cands = store.candidates()
    assert [c["id"] for c in cands] == ["cap_0", "cap_1", "cap_2"]
    assert [(p.file, p.line) for p in store.problems] == [("inbox/captured.jsonl", 4)]
    assert "torn final line" in store.problems[0].message
    q = read_jsonl(store.layout.quarantine).rows
    assert len(q) == 1 and q[0]["file"] == "inbox/captured.jsonl" and q[0]["line"] == 4
    assert q[0]["text"].startswith('{"id":"cap_torn"')
    # the next append starts on a fresh line instead of gluing onto the torn text
    append_jsonl(inbox, [{**good[0], "id": "cap_after"}])
    assert [c["id"] for c in Store(root, warn=False).candidates()] == ["cap_0", "cap_1", "cap_2", "cap_after"]


def test_rewrite_moves_a_bad_line_to_quarantine_and_keeps_every_good_line(root: Path) -> None:
    store = Store(root, warn=False)
    path = store.layout.evidence
    path.write_text('{"id":"e1"}\nnot json at all\n[1,2]\n{"id":"e2"}\n', encoding="utf-8")
    store.rewrite(path, lambda rows: rows)
    assert [r["id"] for r in read_jsonl(path).rows] == ["e1", "e2"]
    assert read_jsonl(path).bad == []
    kept = {(q["line"], q["text"]) for q in read_jsonl(store.layout.quarantine).rows}
    assert kept == {(2, "not json at all"), (3, "[1,2]")}


def test_lines_appended_by_an_unlocked_writer_during_a_rewrite_are_carried_over(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    append_jsonl(path, [{"id": "a"}])

    def transform(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        # OMP appends with plain O_APPEND and no lock while we hold ours
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"id": "from_omp"}) + "\n")
        return rows + [{"id": "b"}]

    rewrite_jsonl(path, transform, quarantine=tmp_path / "q.jsonl")
    assert [r["id"] for r in read_jsonl(path).rows] == ["a", "b", "from_omp"]


def test_a_rewrite_keeps_the_files_permissions(tmp_path: Path) -> None:
    path = tmp_path / "L2.playbooks.jsonl"
    append_jsonl(path, [{"id": "a"}])
    os.chmod(path, 0o640)
    rewrite_jsonl(path, lambda rows: rows + [{"id": "b"}], quarantine=tmp_path / "q.jsonl")
    assert os.stat(path).st_mode & 0o777 == 0o640
    fresh = tmp_path / "new.jsonl"
    rewrite_jsonl(fresh, lambda rows: [{"id": "c"}], quarantine=tmp_path / "q.jsonl")
    assert os.stat(fresh).st_mode & 0o777 == 0o600  # a new file is owner-only (issue 18)


def test_a_symlinked_store_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    import pytest

    from commonkeep.errors import BadInput
    from commonkeep.store.candidates import new_candidate

    root = tmp_path / "r"
    store = Store(root)
    store.ensure()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    store.layout.inbox.unlink(missing_ok=True)
    store.layout.inbox.symlink_to(outside)
    daily = store.layout.daily_file("2026-12-02")
    daily.symlink_to(outside)

    with pytest.raises(BadInput, match="is a symlink"):
        store.append_candidate(new_candidate("Prefer small commits."))
    with pytest.raises(BadInput, match="is a symlink"):
        store.update_candidates(lambda rows: rows)
    with pytest.raises(BadInput, match="is a symlink"):
        store.append_daily("Looked at CI.", date="2026-12-02")
    assert outside.read_text() == "not yours\n"
    assert store.layout.inbox.is_symlink()


def test_a_file_saved_with_a_byte_order_mark_keeps_its_first_record(tmp_path: Path) -> None:
    path = tmp_path / "L2.playbooks.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id":"mem_a","n":1}\r\n{"id":"mem_b","n":2}\r\n')
    read = read_jsonl(path)
    assert [r["id"] for r in read.rows] == ["mem_a", "mem_b"] and read.bad == []
    assert read.line_nos == [1, 2]


def test_without_hard_links_a_rewrite_keeps_an_unfinished_last_line_for_the_quarantine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    path, quarantine = tmp_path / "captured.jsonl", tmp_path / "lines.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b", "text": "half wri')

    def no_links(*_: object, **__: object) -> None:  # a file system without hard links (vfat, some FUSE mounts)
        raise OSError(errno.EPERM, "hard links are not supported here")

    monkeypatch.setattr(os, "link", no_links)
    rewrite_jsonl(path, lambda rows: rows, quarantine=quarantine)
    monkeypatch.undo()
    read = read_jsonl(path)
    assert [r["id"] for r in read.rows] == ["a"]
    assert [b.text for b in read.bad] == ['{"id": "b", "text": "half wri']  # reported, not silently gone
    rewrite_jsonl(path, lambda rows: rows, quarantine=quarantine)
    assert [q["text"] for q in read_jsonl(quarantine).rows] == ['{"id": "b", "text": "half wri']
