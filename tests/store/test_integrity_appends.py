"""No line OMP appends is lost while commonkeep rewrites the inbox (issue 14 §1).

OmpKeep appends with a plain ``open(O_APPEND)``, ``write``, ``close`` and no lock. These tests run
such appenders as real processes, with a delay between their ``open`` and ``write`` (0, 2, 50
and 500 ms), against real rewriters (``Store.update_candidates``), one of which is killed with
SIGKILL at random points and restarted, then check that every appended line is in the inbox
exactly once.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl, read_jsonl

CTX = mp.get_context("fork")


def _candidate(tag: str, i: int) -> dict[str, object]:
    return {"id": f"cap_{tag}_{i:05d}", "created_at": "2026-12-02T10:00:00.000Z", "source": {"type": "manual", "ref": "omp"},
            "text": f"fact {i} from {tag}", "tags": [], "evidence_refs": [], "status": "new"}


def _omp_appender(path: str, tag: str, count: int, delay: float) -> None:
    """What OmpKeep's appendFileSync does, with a pause between open and write."""
    for i in range(count):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if delay:
            time.sleep(delay)
        os.write(fd, (json.dumps(_candidate(tag, i), separators=(",", ":")) + "\n").encode())
        os.close(fd)


def _rewriter(root: str, counter: Any) -> None:
    store = Store(root, warn=False)
    while True:
        store.update_candidates(lambda rows: [{**r, "seen": int(r.get("seen", 0)) + 1} for r in rows])
        if counter is not None:  # only the rewriter that is never killed counts (a kill could hold the lock)
            with counter.get_lock():
                counter.value += 1


# (delay between open and write, appender processes, lines each)
PLANS = [(0.0, 4, 3000), (0.002, 4, 100), (0.05, 6, 12), (0.5, 8, 3)]


@pytest.mark.parametrize(("delay", "procs", "count"), PLANS, ids=["0ms", "2ms", "50ms", "500ms"])
def test_no_line_omp_appends_is_lost_to_rewrites_or_a_killed_rewriter(root: Path, delay: float, procs: int, count: int) -> None:
    inbox = Store(root).layout.inbox
    rng = random.Random(14)
    done = CTX.Value("i", 0)
    steady = CTX.Process(target=_rewriter, args=(str(root), done))
    steady.start()
    deadline = time.monotonic() + 60
    while done.value < 1:
        assert steady.is_alive() and time.monotonic() < deadline
        time.sleep(0.005)
    appenders = [CTX.Process(target=_omp_appender, args=(str(inbox), f"w{w}", count, delay)) for w in range(procs)]
    for p in appenders:
        p.start()
    kills = 0
    while any(p.is_alive() for p in appenders):
        victim = CTX.Process(target=_rewriter, args=(str(root), None))
        victim.start()
        time.sleep(rng.uniform(0.001, 0.03))
        os.kill(victim.pid or 0, signal.SIGKILL)  # anywhere: mid-read, mid-temp-file, between link and rename …
        victim.join()
        kills += 1
    for p in appenders:
        p.join(60)
        assert p.exitcode == 0
    os.kill(steady.pid or 0, signal.SIGKILL)
    steady.join()
    assert done.value > 1 and kills > 0, "the rewriters never ran while OMP appended"

    store = Store(root, warn=False)
    ids = [c["id"] for c in store.candidates()]
    expected = {_candidate(f"w{w}", i)["id"] for w in range(procs) for i in range(count)}
    lost = expected - set(ids)
    assert not lost, f"{len(lost)} of {len(expected)} lines lost, e.g. {sorted(lost)[:3]}"
    assert len(ids) == len(set(ids)), "a line was carried over twice"
    assert store.problems == []
    # once nobody holds an old file open, no previous generation is left behind
    left = [n for n in os.listdir(inbox.parent) if n.startswith((".captured.jsonl.tmp-gen-", ".captured.jsonl.tmp-gens"))]
    assert left == []  # (a killed rewriter's temp files go at the next rewrite)


def test_an_appender_holding_the_old_file_keeps_it_until_it_writes(root: Path) -> None:
    """The file is rewritten three times while an appender sits between its open and its write."""
    store = Store(root, warn=False)
    store.append_candidate(_candidate("ours", 0))
    inbox = store.layout.inbox
    fd = os.open(inbox, os.O_WRONLY | os.O_APPEND)
    for _ in range(3):
        store.update_candidates(lambda rows: rows)
    gens = [inbox.parent / n for n in os.listdir(inbox.parent) if n.startswith(".captured.jsonl.tmp-gen-")]
    assert gens
    # what the new file already holds is zeroed in the kept old file (no stale copy of the text)
    assert all(b"fact 0 from ours" not in g.read_bytes() for g in gens)
    os.write(fd, (json.dumps(_candidate("late", 0)) + "\n").encode())
    os.close(fd)
    # the next read carries the late line over and lets the old file go
    assert [c["id"] for c in Store(root, warn=False).candidates()] == ["cap_ours_00000", "cap_late_00000"]
    assert [n for n in os.listdir(inbox.parent) if ".tmp-" in n] == []
    # OMP reads the same file: the line is in captured.jsonl itself, not only in our view
    assert b"cap_late_00000" in inbox.read_bytes()


def _half_writer(path: str, n: int) -> None:
    """An appender that writes a line in two write() calls and dies after the first."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, f'{{"id":"dead_{n:04d}","created_at":"2026-12-02T10:00:00.000Z","text":"half'.encode())
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_dead_appenders_partial_line_never_swallows_our_next_line(root: Path) -> None:
    store = Store(root, warn=False)
    store.append_candidate(_candidate("ours", 0))
    p = CTX.Process(target=_half_writer, args=(str(store.layout.inbox), 0))
    p.start()
    p.join()
    assert p.exitcode == -signal.SIGKILL
    store.append_candidate(_candidate("ours", 1))
    fresh = Store(root, warn=False)
    assert [c["id"] for c in fresh.candidates()] == ["cap_ours_00000", "cap_ours_00001"]
    assert [(pr.file, pr.line) for pr in fresh.problems] == [("inbox/captured.jsonl", 2)]
    kept = read_jsonl(fresh.layout.quarantine).rows
    assert len(kept) == 1 and kept[0]["text"].startswith('{"id":"dead_0000"')


def _garbage(path: str, stop: float) -> None:
    """Dying appenders, one after another: partial lines with no newline, at jittered moments
    (up to 50 µs apart) so that some land between our look at the file's end and our write."""
    n = 0
    rng = random.Random(18)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    while time.monotonic() < stop:
        os.write(fd, f'{{"id":"dead_{n:06d}","text":"half'.encode())
        n += 1
        time.sleep(rng.uniform(0, 0.00005))
    os.close(fd)


def test_our_appends_survive_partial_lines_landing_at_any_moment(root: Path) -> None:
    """The race: a partial line lands between our look at the file's end and our write."""
    store = Store(root, warn=False)
    inbox = store.layout.inbox
    junk = CTX.Process(target=_garbage, args=(str(inbox), time.monotonic() + 120))
    junk.start()
    try:
        for i in range(3000):
            append_jsonl(inbox, [_candidate("ours", i)])
    finally:
        junk.kill()
        junk.join()
    fresh = Store(root, warn=False)
    ids = [c["id"] for c in fresh.candidates()]
    assert ids == [f"cap_ours_{i:05d}" for i in range(3000)]
    assert fresh.problems, "the partial lines are reported"
    quarantined = "".join(q["text"] for q in read_jsonl(fresh.layout.quarantine).rows)
    assert '"id":"dead_000000"' in quarantined


def _two_writes(path: str, first_done: Any, go: Any) -> None:
    line = json.dumps(_candidate("slow", 0), separators=(",", ":")).encode() + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    os.write(fd, line[:40])
    first_done.set()
    go.wait(60)
    os.write(fd, line[40:])
    os.close(fd)


def test_a_line_written_in_two_writes_around_a_rewrite_stays_whole(root: Path) -> None:
    store = Store(root, warn=False)
    store.append_candidate(_candidate("ours", 0))
    first_done, go = CTX.Event(), CTX.Event()
    p = CTX.Process(target=_two_writes, args=(str(store.layout.inbox), first_done, go))
    p.start()
    assert first_done.wait(60)
    store.update_candidates(lambda rows: rows)  # the file ends in half a line right now
    go.set()
    p.join(60)
    fresh = Store(root, warn=False)
    assert [c["id"] for c in fresh.candidates()] == ["cap_ours_00000", "cap_slow_00000"]
    assert fresh.problems == []


def test_a_dead_writers_half_line_met_by_a_rewrite_is_quarantined_and_nothing_else_lost(root: Path) -> None:
    store = Store(root, warn=False)
    store.append_candidate(_candidate("ours", 0))
    p = CTX.Process(target=_half_writer, args=(str(store.layout.inbox), 7))
    p.start()
    p.join()
    store.update_candidates(lambda rows: rows)
    store.append_candidate(_candidate("ours", 1))
    fresh = Store(root, warn=False)
    assert [c["id"] for c in fresh.candidates()] == ["cap_ours_00000", "cap_ours_00001"]
    assert len(fresh.problems) == 1
    assert any(q["text"].startswith('{"id":"dead_0007"') for q in read_jsonl(fresh.layout.quarantine).rows)
    assert [n for n in os.listdir(fresh.layout.inbox.parent) if ".tmp-gen" in n] == []


def test_rewrite_bytes_keeps_a_line_appended_to_the_old_daily_log(root: Path) -> None:
    """The path for a scrub of files OMP appends to (daily logs, runtime/events.jsonl)."""
    from commonkeep.store.jsonl import read_bytes, rewrite_bytes

    daily = root / "daily" / "2026-12-02.md"
    daily.write_bytes(b"secret plan here\n")
    fd = os.open(daily, os.O_WRONLY | os.O_APPEND)  # OMP, between its open and its write
    rewrite_bytes(daily, lambda data: data.replace(b"secret plan here", b"[deleted]"))
    os.write(fd, b"- late note\n")
    os.close(fd)
    assert read_bytes(daily) == b"[deleted]\n- late note\n"  # a read carries the late line over
    assert daily.read_bytes() == b"[deleted]\n- late note\n"  # into the file itself, for OMP


def test_a_lease_that_fails_oddly_after_the_unlink_does_not_hold_the_lock_for_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_retire`` waits for appenders that opened the old generation by taking the lease again.
    A lease that then fails for another reason than a holder (``None``) used to keep it looping,
    writer lock held, until a 60 s deadline; it now carries what is there (here nothing) and stops. The kernel
    cannot be made to fail that way on demand, so ``_lease`` is replaced after its first answer
    (the only fake in this file)."""
    from commonkeep.store import generations

    path = tmp_path / "captured.jsonl"
    path.write_bytes(b'{"n": 1}\n')
    old = tmp_path / ".captured.jsonl.gen-1"
    old.write_bytes(b'{"n": 1}\n')  # all of it carried over already
    real = generations._lease
    calls: list[bool | None] = []

    def lease(fd: int) -> bool | None:
        got = real(fd) if not calls else None
        calls.append(got)
        return got

    monkeypatch.setattr(generations, "_lease", lease)
    g = generations.Gen(old.name, old.stat().st_ino, len(b'{"n": 1}\n'))
    assert generations._retire(path, g) is True
    assert calls[0] is True and len(calls) == 2  # no loop on None
    assert path.read_bytes() == b'{"n": 1}\n'
    assert not old.exists()
