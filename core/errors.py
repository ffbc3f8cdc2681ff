"""User-facing errors and the CLI's exit codes.

Every failure a person can see names what was wrong, where, and what to do; the CLI prints the
message (never a traceback) and exits with the code of the error class.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDINGS = 1  # the command ran and found problems (doctor, review queue not empty with --check)
EXIT_USAGE = 2  # bad arguments or bad input
EXIT_REFUSED = 3  # the role gate refused the action
EXIT_LOCKED = 4  # the writer lock is held by another live process
EXIT_INTERRUPTED = 130  # Ctrl-C (SIGINT), as a shell reports it; no traceback


class CommonkeepError(Exception):
    """An error meant for a person: the message says what, where and what to do."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class BadInput(CommonkeepError):
    """Input that cannot be accepted (malformed file, path escape, oversized text)."""


class RoleRefused(CommonkeepError):
    """The role gate refused an action before any work was done."""

    exit_code = EXIT_REFUSED


class LockHeld(CommonkeepError):
    """Another live process holds the writer lock."""

    exit_code = EXIT_LOCKED
