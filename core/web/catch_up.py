"""The server's catch-up of the files derived from the records, after its decisions.

A decision through ``serve`` is made within ``after_apply.derived_deferred``: it answers once the
canonical files are written, and :meth:`CatchUp.owe` then brings ``rendered/`` and the search
index up to date in a background thread (``after_apply.catch_up``, whose module doc gives the
rule: what may be stale meanwhile, and why a crash in between loses nothing). Decisions in a row
are caught up together; :meth:`CatchUp.settle` waits for it (a server stopping, the benchmark
between two timed decisions, tests).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path


class CatchUp:
    """What a server owes ``rendered/`` and the search index of one root, and the worker paying it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cond = threading.Condition()
        self._owed = 0  # catch-ups asked for
        self._caught = 0  # asked for and done
        self._worker: threading.Thread | None = None
        self._role = ""
        self._search = False
        self.errors: list[str] = []  # what the last catch-up could not do (also said on stderr)

    def owe(self, role: str, *, search: bool = True) -> None:
        """Catch up after a decision (``search``: the index too, else only the projection)."""
        with self._cond:
            self._owed += 1
            self._role = role
            self._search = self._search or search
            if self._worker is None:
                self._worker = threading.Thread(target=self._run, daemon=True, name="ck-web-catch-up")
                self._worker.start()

    def _run(self) -> None:
        from commonkeep.patches.after_apply import catch_up

        while True:
            with self._cond:
                if self._caught == self._owed:
                    self._worker = None
                    self._cond.notify_all()
                    return
                target, role, search = self._owed, self._role, self._search
                self._search = False
            errors = catch_up(str(self.root), role, search=search)
            for e in errors:  # derived files only: said where the server's messages go, nothing is lost
                print(f"commonkeep serve: warning: {e}", file=sys.stderr)
            with self._cond:
                self._caught = target
                self.errors = errors
                self._cond.notify_all()

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until everything owed is caught up; False when ``timeout`` passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: self._caught == self._owed, timeout)
