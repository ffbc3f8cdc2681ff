"""The real omp in interactive mode, typed into through a pseudo-terminal, as a person uses it.

OMP fires its extensions' ``input`` event only for what is submitted in its editor (interactive
mode), so the tests of what the person *typed* need the TUI: ``omp`` runs in a pty of 120×40, the
test types a line and presses Enter, and reads OMP's session file to know the turn is done. The
model is the scripted fake server (``tests/fakellm.py``); OMP asks it for a session title first
(a request with no tools), which :class:`TitledFakeLLM` answers without using the script.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import termios
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.fakellm import FakeLLM, Step


class TitledFakeLLM(FakeLLM):
    """The fake model, answering OMP's title requests (no tools offered) apart from the script."""

    def next_step(self, body: dict[str, Any]) -> Step:
        if not body.get("tools"):
            with self._lock:
                self.requests.append(body)
            return Step.say("A session")
        return super().next_step(body)


class Terminal:
    """``omp`` in a pty: :meth:`type_line` submits a line, :meth:`close` ends the session as /exit does."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.output = b""
        pid, fd = pty.fork()
        if pid == 0:  # the child: omp
            os.chdir(cwd)
            os.execve(argv[0], argv, {**env, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self._done = threading.Event()
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while not self._done.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.output += chunk

    def wait_for(self, what: Callable[[], bool], timeout: float = 60, why: str = "") -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if what():
                return
            time.sleep(0.2)
        tail = self.output[-2000:].decode(errors="replace")
        raise AssertionError(f"omp did not {why or 'get there'} in {timeout} s; the screen ended with:\n{tail}")

    def ready(self, timeout: float = 90) -> None:
        """Wait for the editor (OMP draws its status line with the model's name)."""
        self.wait_for(lambda: b"fake-model" in self.output, timeout, "show its editor")
        time.sleep(1.5)

    def type_line(self, text: str) -> None:
        os.write(self.fd, text.encode())
        time.sleep(0.8)
        os.write(self.fd, b"\r")

    def close(self, timeout: float = 30) -> int | None:
        """Type ``/exit`` (OMP runs its shutdown handlers, commonkeep's session-end curation among
        them); kill it when it does not end."""
        try:
            self.type_line("/exit")
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                done, status = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    return status
                time.sleep(0.2)
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            return None
        finally:
            self._done.set()
            os.close(self.fd)
