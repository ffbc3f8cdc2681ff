"""The writer lock under contention, with real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from commonkeep.patches.curate import curate
from commonkeep.store.core import Store
from tests.governance.conftest import WRITER, write_candidate

HOLDER = """
import sys, time
from pathlib import Path
from commonkeep.patches.lock import writer_lock
root, ready, release = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
with writer_lock(root, "librarian", "test-hold", wait=0):
    ready.write_text("held")
    while not release.exists():
        time.sleep(0.02)
"""


def _cli(*args: str, env_role: str = WRITER) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COMMONKEEP_ROLE": env_role}
    return subprocess.run([sys.executable, "-m", "commonkeep.cli", *args], capture_output=True, text=True, env=env, timeout=120)


def _start_holder(root: Path, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    ready, release = tmp_path / "ready", tmp_path / "release"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(root), str(ready), str(release)])
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None, "holder died before taking the lock"
        assert time.monotonic() < deadline, "holder never took the lock"
        time.sleep(0.02)
    return proc, release


def test_second_writer_fails_clearly_while_the_first_holds_the_lock(root: Path, tmp_path: Path) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    pid = curate(root, role=WRITER).patch["patch_id"]
    holder, release = _start_holder(root, tmp_path)
    try:
        busy = _cli("apply", pid, "--root", str(root), "--wait", "0")
        assert busy.returncode == 4, busy.stderr
        assert f"held by pid {holder.pid} (librarian, since " in busy.stderr
        assert Store(root).records() == []  # nothing happened
        assert json.loads((root / "patches" / f"{pid}.json").read_text())["status"] == "proposed"
    finally:
        release.write_text("go")
        holder.wait(timeout=60)
    ok = _cli("apply", pid, "--root", str(root), "--wait", "0")
    assert ok.returncode == 0, ok.stderr
    assert len(Store(root).records()) == 1


def test_a_lock_left_by_a_dead_process_is_recovered(root: Path, tmp_path: Path) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    pid = curate(root, role=WRITER).patch["patch_id"]
    holder, _ = _start_holder(root, tmp_path)
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=60)
    done = _cli("apply", pid, "--root", str(root), "--wait", "0", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["recovered_lock"].startswith(f"held by pid {holder.pid} (librarian")
    assert out["applied_ops"] == ["op_001"]


def test_two_writers_at_once_serialise_and_the_store_stays_consistent(root: Path) -> None:
    write_candidate(root, "Use black for formatting Python code.", tags=["format"])
    first = curate(root, role=WRITER).patch["patch_id"]
    write_candidate(root, "Name branches after the ticket number.", tags=["branches"])
    second = curate(root, role=WRITER).patch["patch_id"]
    # curate no longer proposes a waiting candidate twice; a patch written before that fix (or by
    # hand) still can: give the second patch the first one's add too, so one apply must refuse it
    doc = json.loads((root / "patches" / f"{second}.json").read_text())
    copied = json.loads((root / "patches" / f"{first}.json").read_text())["ops"][0]
    doc["ops"].append({**copied, "op_id": "op_002"})
    (root / "patches" / f"{second}.json").write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    env = {**os.environ, "COMMONKEEP_ROLE": WRITER}
    procs = [
        subprocess.Popen([sys.executable, "-m", "commonkeep.cli", "apply", p, "--root", str(root), "--wait", "60", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for p in (first, second)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    results = [json.loads(o[0]) for o in outs]
    # whichever ran second may find its only op refused: apply then exits 1 (nothing applied)
    assert [p.returncode for p in procs] == [0 if r["applied_ops"] else 1 for r in results], [o[1] for o in outs]
    records = Store(root).records()
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)) == 2  # both facts, each exactly once
    applied = sum(len(r["applied_ops"]) for r in results)
    skipped = [reason for r in results for reason in r["skipped"].values()]
    assert applied == 2 and len(skipped) == 1 and "was already promoted by another patch" in skipped[0]  # a stale op
    assert {c["status"] for c in Store(root).candidates()} == {"patched"}
