"""The writer lock with threads: a second thread of the same process waits (it never walks in),
no other process gets the lock while any thread of this one is inside, nobody crashes on
leaving; and a ``COMMONKEEP_LOCK_WAIT`` that is not a number is a clear error."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from commonkeep.errors import LockHeld
from commonkeep.patches.lock import writer_lock
from tests.governance.conftest import WRITER, run_cli, write_candidate, writer_args

PROBE = """
import sys
from commonkeep.errors import LockHeld
from commonkeep.patches.lock import writer_lock
try:
    with writer_lock(sys.argv[1], "librarian", "probe", wait=0):
        print("got")
except LockHeld:
    print("held")
"""


def _other_process_gets_it(root: Path) -> bool:
    out = subprocess.run([sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip() == "got"


def test_a_second_thread_waits_and_no_process_slips_in_between(root: Path) -> None:
    events: list[str] = []
    first_in, first_may_leave, second_in, second_may_leave = (threading.Event() for _ in range(4))
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with writer_lock(root, WRITER, "first", wait=5):
                events.append("first in")
                first_in.set()
                first_may_leave.wait(30)
                events.append("first out")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def second() -> None:
        try:
            first_in.wait(30)
            with writer_lock(root, WRITER, "second", wait=30):
                events.append("second in")
                second_in.set()
                second_may_leave.wait(30)
                events.append("second out")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t1, t2 = threading.Thread(target=first), threading.Thread(target=second)
    t1.start()
    t2.start()
    assert first_in.wait(30)
    time.sleep(0.3)
    assert not second_in.is_set(), "the second thread walked in while the first was inside"
    assert not _other_process_gets_it(root)
    first_may_leave.set()
    assert second_in.wait(30)
    assert not _other_process_gets_it(root), "another process took the lock while the second thread was inside"
    second_may_leave.set()
    t1.join(30)
    t2.join(30)
    assert errors == []
    assert events == ["first in", "first out", "second in", "second out"]
    assert _other_process_gets_it(root)


def test_a_thread_that_waits_too_long_is_told_who_holds_it(root: Path) -> None:
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with writer_lock(root, WRITER, "curate", wait=5):
            inside.set()
            leave.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert inside.wait(30)
        with pytest.raises(LockHeld, match=f"another thread of this process \\(pid {os.getpid()}, curate"), \
                writer_lock(root, WRITER, "apply", wait=0.2):
            pass
    finally:
        leave.set()
        t.join(30)
    # re-entrant in one thread (review calls apply)
    with writer_lock(root, WRITER, "apply", wait=0), writer_lock(root, WRITER, "apply", wait=0):
        pass


@pytest.mark.parametrize("value", ["5s", "soon", "-1", "nan"])
def test_a_lock_wait_that_is_not_a_number_of_seconds_is_a_clear_error(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    monkeypatch.setenv("COMMONKEEP_LOCK_WAIT", value)
    for args in (["curate"], ["apply", "patch_202612030000_ckabcdef"]):
        code, out, err = run_cli(capsys, *args, *writer_args(root))
        assert code == 2 and "Traceback" not in err, err
        assert f"COMMONKEEP_LOCK_WAIT={value!r} is not a number of seconds" in err
        assert "COMMONKEEP_LOCK_WAIT=5" in err  # says what to write instead
    assert list((root / "patches").glob("*.json")) == []
    monkeypatch.setenv("COMMONKEEP_LOCK_WAIT", "0.5")
    assert run_cli(capsys, "curate", *writer_args(root))[0] == 0
