"""The writer role gate and the writer lock, in process (issue 28's mutation testing of writer.py).

What a user relies on: which role may write (``--role``, then ``$COMMONKEEP_ROLE``, then the
host's; the writer from ``$COMMONKEEP_WRITER_ROLE``, then ``config.json``, then ``librarian``);
a refusal that says who may act and how; a lock that tells who holds it, is taken again by the
same thread, makes other threads wait, leaves an empty 0600 file behind and reports a holder that
died; a bad ``$COMMONKEEP_LOCK_WAIT`` named in a clear error. Real files, real threads, a real
dead process.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from commonkeep.errors import BadInput, LockHeld, RoleRefused
from commonkeep.gate.writer import acting_role, configured_writer_role, require_writer
from commonkeep.patches.lock import LockInfo, lock_wait_seconds, pid_alive, read_lock_info, writer_lock


def _config(root: Path, role: str) -> None:
    (root / "config.json").write_text(json.dumps({"commonkeep": {"writerRole": role}}), encoding="utf-8")


def test_the_writer_role_comes_from_the_environment_then_config_json_then_the_default(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert configured_writer_role() == "librarian"
    assert configured_writer_role(root) == "librarian"
    _config(root, "  curator ")
    assert configured_writer_role(root) == "curator"
    assert configured_writer_role() == "librarian"  # no root: config.json is not read
    monkeypatch.setenv("COMMONKEEP_WRITER_ROLE", " keeper ")
    assert configured_writer_role(root) == "keeper"
    monkeypatch.setenv("COMMONKEEP_WRITER_ROLE", "   ")
    assert configured_writer_role(root) == "curator"


def test_the_acting_role_is_the_flag_then_the_environment_then_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMMONKEEP_ROLE", raising=False)
    assert acting_role() is None
    assert acting_role(None, "hermes-host") == "hermes-host"
    monkeypatch.setenv("COMMONKEEP_ROLE", "planner")
    assert acting_role(None, "hermes-host") == "planner"
    assert acting_role("librarian", "hermes-host") == "librarian"
    assert acting_role("  ", "hermes-host") == "planner"  # a blank flag is no flag
    monkeypatch.setenv("COMMONKEEP_ROLE", "")
    assert acting_role("", "hermes-host") == "hermes-host"
    assert acting_role(" librarian ") == " librarian "  # as given: the gate compares exactly


def test_the_writer_passes_and_a_refusal_says_who_may_act_and_how(root: Path) -> None:
    assert require_writer("apply", "librarian", root) == "librarian"
    assert require_writer("apply", "librarian") == "librarian"
    with pytest.raises(RoleRefused) as refused:
        require_writer("forget", "planner", root)
    assert refused.value.args[0] == (
        "refused before doing anything: 'forget' changes the shared memory and only the writer role 'librarian' "
        "may do it; this process has role 'planner'. Other roles may only append candidates (`commonkeep write TEXT`).")
    assert refused.value.hint == (
        "act as the writer with --role librarian or COMMONKEEP_ROLE=librarian (the writer role is set by "
        "$COMMONKEEP_WRITER_ROLE or config.json commonkeep.writerRole)")
    with pytest.raises(RoleRefused) as nobody:
        require_writer("forget", None, root)
    assert "this process has no role (neither --role nor $COMMONKEEP_ROLE is set). Other" in nobody.value.args[0]
    with pytest.raises(RoleRefused):
        require_writer("forget", "", root)


def test_a_writer_role_from_config_json_is_the_one_the_gate_lets_through(root: Path) -> None:
    _config(root, "curator")
    assert require_writer("apply", "curator", root) == "curator"
    with pytest.raises(RoleRefused, match="only the writer role 'curator'"):
        require_writer("apply", "librarian", root)
    with pytest.raises(RoleRefused, match="not exactly the writer role 'curator'") as near:
        require_writer("apply", "Curator", root)
    assert near.value.hint is not None and "--role curator" in near.value.hint


@pytest.mark.parametrize(("raw", "want"), [(None, 5.0), ("", 5.0), ("  ", 5.0), ("0", 0.0), ("0.5", 0.5), ("12", 12.0)])
def test_the_lock_wait_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str | None, want: float) -> None:
    if raw is None:
        monkeypatch.delenv("COMMONKEEP_LOCK_WAIT", raising=False)
    else:
        monkeypatch.setenv("COMMONKEEP_LOCK_WAIT", raw)
    assert lock_wait_seconds() == want


def test_an_explicit_wait_wins_and_is_never_negative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_LOCK_WAIT", "not a number")
    assert lock_wait_seconds(2) == 2.0
    assert lock_wait_seconds(-3) == 0.0


@pytest.mark.parametrize("raw", ["soon", "nan", "inf", "-1", "5s"])
def test_a_lock_wait_that_is_not_seconds_is_named_in_the_error(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("COMMONKEEP_LOCK_WAIT", raw)
    with pytest.raises(BadInput) as bad:
        lock_wait_seconds()
    assert bad.value.args[0] == f"COMMONKEEP_LOCK_WAIT={raw!r} is not a number of seconds; nothing was done"
    assert bad.value.hint == ("set it to seconds as a plain number (e.g. COMMONKEEP_LOCK_WAIT=5 or 0.5), "
                              "or unset it for the default 5")


def test_lock_info_is_read_back_and_anything_else_is_none(tmp_path: Path) -> None:
    path = tmp_path / "writer.lock"
    assert read_lock_info(path) is None  # missing
    for text in ("", "null", "[1, 2]", "{not json", '{"role": "x"}', '{"pid": "abc"}', '{"pid": null}'):
        path.write_text(text, encoding="utf-8")
        assert read_lock_info(path) is None, text
    path.write_text(json.dumps({"pid": "42", "role": "librarian", "action": "apply", "since": "T"}), encoding="utf-8")
    assert read_lock_info(path) == LockInfo(42, "librarian", "apply", "T")
    path.write_text(json.dumps({"pid": 7}), encoding="utf-8")
    info = read_lock_info(path)
    assert info == LockInfo(7, "?", "?", "?") and info.describe() == "held by pid 7 (?, since ?)"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_pid_alive_tells_a_living_process_from_a_dead_one_and_leaves_the_living_one_running() -> None:
    # the lock's holder is another writer: asking whether it lives must not signal it (signal 0).
    # The holder takes the default action on SIGHUP whatever it inherited (nohup ignores it), and
    # says so before it is asked about
    code = "import signal, time; signal.signal(signal.SIGHUP, signal.SIG_DFL); print('ready', flush=True); time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        assert pid_alive(holder.pid) is True
        with pytest.raises(subprocess.TimeoutExpired):
            holder.wait(timeout=0.5)
    finally:
        holder.kill()
        holder.wait()
    assert pid_alive(_dead_pid()) is False
    assert pid_alive(0) is False and pid_alive(-5) is False


def test_a_writer_of_another_user_counts_as_alive() -> None:
    """A lock held by a process this user may not signal (another user's writer, or pid 1, a
    container's main process) is not taken for a dead one and recovered: ``os.kill`` answers
    ``PermissionError``, and that means alive."""
    assert pid_alive(_dead_pid()) is False
    if os.geteuid() != 0:
        assert pid_alive(1) is True  # init, another user's process
        return
    # as root every process may be signalled: look from a child that dropped to ``nobody`` at
    # this (root's) test process and at pid 1 (which ``nobody`` can never signal, whatever is asked)
    me = os.getpid()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child reports by its exit code)
        code = 2
        try:
            os.setgid(65534)
            os.setuid(65534)
            code = 0 if pid_alive(me) is True and pid_alive(1) is True else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _lock_file(root: Path) -> Path:
    return root / "locks" / "writer.lock"


def test_the_lock_file_says_who_holds_it_and_is_left_empty_and_private(root: Path) -> None:
    with writer_lock(root, "librarian", "apply", wait=0) as got:
        assert got.recovered_from is None and got.finished == []
        info = read_lock_info(_lock_file(root))
        assert info is not None and (info.pid, info.role, info.action) == (os.getpid(), "librarian", "apply")
        assert info.since.endswith("Z")
    assert _lock_file(root).read_bytes() == b""
    assert stat.S_IMODE(_lock_file(root).stat().st_mode) == 0o600


def test_the_same_thread_takes_the_lock_again_and_keeps_it_until_the_outer_hold_ends(root: Path) -> None:
    seen: list[str] = []
    with writer_lock(root, "librarian", "review", wait=0):
        with writer_lock(root, "librarian", "apply", wait=0) as inner:
            assert inner.recovered_from is None
        info = read_lock_info(_lock_file(root))
        assert info is not None and info.action == "review"  # the inner hold did not release or rewrite it

        def other() -> None:
            try:
                with writer_lock(root, "librarian", "curate", wait=0.2):
                    seen.append("got it")
            except LockHeld as exc:
                seen.append(str(exc))

        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert len(seen) == 1 and "held by another thread of this process" in seen[0] and "review" in seen[0]
    assert "waited 0.2s" in seen[0]
    with writer_lock(root, "librarian", "curate", wait=0):  # free again once the outer hold ended
        pass


def test_a_waiting_thread_gets_the_lock_when_the_holder_leaves(root: Path) -> None:
    order: list[str] = []
    inside = threading.Event()
    leave = threading.Event()

    def holder() -> None:
        with writer_lock(root, "librarian", "apply", wait=0):
            order.append("first in")
            inside.set()
            leave.wait(30)
            order.append("first out")

    def waiter() -> None:
        with writer_lock(root, "librarian", "curate", wait=30):
            order.append("second in")

    a = threading.Thread(target=holder)
    a.start()
    assert inside.wait(30)
    b = threading.Thread(target=waiter)
    b.start()
    b.join(0.3)
    assert order == ["first in"]  # still waiting
    leave.set()
    a.join(30)
    b.join(30)
    assert order == ["first in", "first out", "second in"]


def test_a_lock_file_left_by_a_dead_process_is_reported_as_recovered(root: Path) -> None:
    dead = _dead_pid()
    _lock_file(root).parent.mkdir(parents=True, exist_ok=True)
    _lock_file(root).write_text(json.dumps({"pid": dead, "role": "librarian", "action": "apply", "since": "T0"}))
    with writer_lock(root, "librarian", "curate", wait=0) as got:
        assert got.recovered_from == LockInfo(dead, "librarian", "apply", "T0")
    # a file naming a living process (this one, from an earlier hold) is no recovery
    _lock_file(root).write_text(json.dumps({"pid": os.getpid(), "role": "librarian", "action": "apply", "since": "T0"}))
    with writer_lock(root, "librarian", "curate", wait=0) as got:
        assert got.recovered_from is None


def test_an_exception_inside_the_hold_releases_the_lock(root: Path) -> None:
    with pytest.raises(RuntimeError), writer_lock(root, "librarian", "apply", wait=0):
        raise RuntimeError("boom")
    assert _lock_file(root).read_bytes() == b""
    done: list[bool] = []

    def take() -> None:
        with writer_lock(root, "librarian", "curate", wait=0):
            done.append(True)

    t = threading.Thread(target=take)
    t.start()
    t.join(30)
    assert done == [True]


def _held_elsewhere(root: Path, content: str) -> int:
    """Another open of the lock file holding the ``flock``, as another process would (a second
    open file description conflicts even inside one process)."""
    import fcntl

    path = _lock_file(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.ftruncate(fd, 0)
    os.pwrite(fd, content.encode(), 0)
    return fd


def test_a_lock_held_by_another_process_is_refused_with_who_holds_it(root: Path) -> None:
    fd = _held_elsewhere(root, json.dumps({"pid": 4242, "role": "librarian", "action": "apply", "since": "T1"}))
    try:
        with pytest.raises(LockHeld) as busy, writer_lock(root, "librarian", "curate", wait=0):
            pass
        assert str(busy.value).startswith(
            f"the writer lock {_lock_file(root)} is held by pid 4242 (librarian, since T1); waited 0s")
        assert busy.value.hint == ("wait for that process to finish (or raise --wait); a lock whose process died "
                                   "is recovered automatically")
        os.ftruncate(fd, 0)  # a holder that wrote nothing (yet)
        with pytest.raises(LockHeld, match="is held by another process; waited 0.1s"), \
                writer_lock(root, "librarian", "curate", wait=0.1):
            pass
    finally:
        os.close(fd)
    with writer_lock(root, "librarian", "curate", wait=0):  # released: taken at once
        info = read_lock_info(_lock_file(root))
        assert info is not None and info.pid == os.getpid()


def test_a_writer_waits_for_another_process_to_let_go(root: Path) -> None:
    fd = _held_elsewhere(root, json.dumps({"pid": 4242, "role": "librarian", "action": "apply", "since": "T1"}))
    threading.Timer(0.3, os.close, (fd,)).start()
    with writer_lock(root, "librarian", "curate", wait=30) as got:
        assert got.recovered_from is None or got.recovered_from.pid == 4242
        info = read_lock_info(_lock_file(root))
        assert info is not None and (info.pid, info.action) == (os.getpid(), "curate")


def test_the_next_writer_finishes_an_interrupted_apply_when_it_takes_the_lock(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An apply cut off by a full disk leaves its journal; whoever takes the lock next finishes it
    before doing anything else (so nothing it decides sees a half-written apply)."""
    from commonkeep.patches.patch import apply_patch
    from tests.governance.test_apply_resume import _fail_at, _scenario

    pid = _scenario(root)
    with monkeypatch.context() as m:
        _fail_at(m, root, 4)
        with pytest.raises(OSError, match="No space left on device"):
            apply_patch(root, pid, role="librarian", fire_hooks=False)
    journal = root / "runtime" / "journal"
    assert [p.name for p in journal.iterdir()] == [f"{pid}.apply"]
    with writer_lock(root, "librarian", "curate", wait=0) as got:
        assert [r.patch["patch_id"] for r in got.finished] == [pid]
    assert list(journal.iterdir()) == []
    assert json.loads((root / "patches" / f"{pid}.json").read_text())["status"] == "applied"
    with writer_lock(root, "librarian", "curate", wait=0) as again:
        assert again.finished == []  # an empty journal folder: nothing to finish
