"""Fixtures: a short agent dir (Unix socket paths are limited), a real broker subprocess, env.

Every broker a test starts, directly or through a client's auto-start, is stopped by its pid at
teardown; nothing outlives the test.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from commonkeep_roundtable.broker import socket_answers
from commonkeep_roundtable.paths import broker_dir, socket_path

ROUNDTABLE_VARS = (
    "ORPHUS_CODING_AGENT_DIR",
    "ATOMIC_CODING_AGENT_DIR",
    "PI_CODING_AGENT_DIR",
    "ORPHUS_MEMORY_COMMAND",
    "ORPHUS_MEMORY_DIR",
    "ORPHUS_MEMORY_WRITER_ROLE",
    "COMMONKEEP_ROLE",
)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_broker_of(base: Path) -> None:
    """Stop the broker whose pid file is under ``base`` (by that pid only) and wait for it."""
    pid_file = broker_dir(base) / "broker.pid"
    try:
        pid = int(pid_file.read_text(encoding="utf-8").strip())
    except (FileNotFoundError, ValueError):
        return
    if pid == os.getpid() or not _pid_alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    for _ in range(200):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                return
        if not _pid_alive(pid):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(autouse=True)
def utc_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Digest lines show local ``HH:MM`` as Orphus does; the tests read them in UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def agent_base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, short agent dir with the roundtable variables pointing into it."""
    base = Path(tempfile.mkdtemp(prefix="ckrt", dir="/tmp"))
    for name in ROUNDTABLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ORPHUS_CODING_AGENT_DIR", str(base))
    monkeypatch.setenv("ORPHUS_MEMORY_DIR", str(base / "memory"))
    # brokers a client auto-starts exit soon after the test's last client leaves
    monkeypatch.setenv("COMMONKEEP_BROKER_LINGER", "0.5")
    try:
        yield base
    finally:
        stop_broker_of(base)
        shutil.rmtree(base, ignore_errors=True)
        broker_log(base).unlink(missing_ok=True)


def broker_log(base: Path) -> Path:
    """Where a broker :func:`start_broker` started writes its output (beside the agent dir)."""
    return base.with_name(base.name + ".broker.log")


def broker_output(base: Path) -> bytes:
    """What that broker has printed so far."""
    try:
        return broker_log(base).read_bytes()
    except FileNotFoundError:
        return b""


def start_broker(base: Path, linger: float = 0.5) -> subprocess.Popen[bytes]:
    # its output goes to a file, never a pipe nobody reads: a broker that writes more than a
    # pipe holds would block on the write and outlive its linger
    with broker_log(base).open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "commonkeep_roundtable.broker", "--agent-dir", str(base), "--linger", str(linger)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
    sock = socket_path(base)
    for _ in range(400):
        if socket_answers(sock):
            return proc
        if proc.poll() is not None:
            raise AssertionError(f"broker exited early ({proc.returncode}): {broker_output(base)[-4000:]!r}")
        time.sleep(0.025)
    proc.kill()
    raise AssertionError("broker never listened")


@pytest.fixture
def broker(agent_base: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real broker process for ``agent_base``; terminated (by its pid) at teardown."""
    proc = start_broker(agent_base)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
