"""A compiled Hyperscan database with a scratch space per thread (``rule_net``, ``provider_net``).

The engine needs a scratch space for each scan in progress: one per thread, made on a thread's first
scan (a scan from another thread with the same scratch would fail).
"""

from __future__ import annotations

import threading
from typing import Any


class Compiled:
    __slots__ = ("db", "_local")

    def __init__(self, db: Any) -> None:
        self.db = db
        self._local = threading.local()

    def scratch(self) -> Any:
        """This thread's scratch space for ``db``."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            import hyperscan

            scratch = self._local.scratch = hyperscan.Scratch(self.db)
        return scratch
