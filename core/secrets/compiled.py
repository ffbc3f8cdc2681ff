"""A compiled Hyperscan database with a scratch space per thread, built in the background once a
process goes on scanning (``rule_net``, ``provider_net``).

The engine needs a scratch space for each scan in progress: one per thread, made on a thread's first
scan (a scan from another thread with the same scratch would fail).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
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


def asked(state: dict[str, Any], lock: threading.Lock, key: object, build: Callable[[Any], bool], *, after: int,
          after_seconds: float, off: str, name: str) -> None:
    """One more text asked about before the database for ``key`` exists. Once ``after`` texts were
    asked over ``after_seconds`` or more (a process that goes on scanning, not a short command), it is
    built in a background thread, once per ``key``; never with ``off`` set to ``0`` in the environment."""
    state["asked"] += 1
    first = state.setdefault("first", time.monotonic())
    if (state["asked"] >= after and state.get("building") is not key and os.environ.get(off) != "0"
            and time.monotonic() - first >= after_seconds):
        with lock:
            if state.get("building") is key:
                return
            state["building"] = key
        thread = state["thread"] = threading.Thread(target=build, args=(key,), name=name, daemon=True)
        thread.start()


def forget_in_child(module: Any) -> None:
    """In a child forked from a process with ``module``'s net (``_STATE``, ``_LOCK``): a lock held by
    another thread at the fork is never released in the child, so it gets a new one; a net being built
    has no thread there, so the child may build its own. Registered by each net's module."""
    module._LOCK = threading.Lock()
    state = module._STATE
    if "net" not in state:
        state.pop("building", None)
        state.pop("thread", None)
