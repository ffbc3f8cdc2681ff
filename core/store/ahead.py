"""Work an apply will need later, done while it waits for the disk; work of its own beside another.

A one-op apply at 100,000 records spends ~40 ms in two system calls on the record file: the
kernel's copy of the 56 MB file into its temp file and the fsync of it (``range_edit``). Python's
lock is free meanwhile, so work the rest of the command needs anyway and that depends on nothing the
edit changes runs then, in a thread: importing the modules the splice and the hooks use, building
the plugin manager, reading ``runtime/rendered-index.bin`` (``rendered_index.preload``).

:func:`plan` names that work (the caller, under the writer lock, before it writes); :func:`during`
runs it in a thread around the wait and joins the thread when the wait is over, before the edit
goes on, so the work never runs beside anything else of the command (no import from two threads
at once); work not started by then is dropped, not waited for. Work that fails is simply done again later where it is needed, as if never planned (an
import that fails raises there); work planned and never run (the edit took another path) is
dropped by :func:`clear`.

:func:`beside` runs one function in a thread while the body runs (an apply writes
``runtime/line-index.bin`` while the search index syncs), joined at the end; what it raises is
raised there, as if it had run after the body.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

_planned: list[Callable[[], object]] = []


def plan(*work: Callable[[], object], first: bool = False) -> None:
    """Do ``work`` during the next wait for the disk (:func:`during`); ``first``: before what is
    planned already."""
    if first:
        _planned[:0] = work
    else:
        _planned.extend(work)


def clear() -> None:
    """Drop work planned and not run."""
    _planned.clear()


def _run(work: list[Callable[[], object]], stop: threading.Event) -> None:
    for w in work:
        if stop.is_set():
            return  # the wait is over: what is left is done where it is needed, not waited for
        with suppress(Exception):  # done again where it is needed, and failing there as ever
            w()


@contextmanager
def during() -> Iterator[None]:
    """Run the planned work in a thread while the body waits (in system calls), joined at the end."""
    work = list(_planned)
    _planned.clear()
    thread = None
    stop = threading.Event()
    if work:
        thread = threading.Thread(target=_run, args=(work, stop), name="commonkeep-ahead", daemon=True)
        try:
            thread.start()
        except RuntimeError:  # no thread now: the work is done later, where it is needed
            thread = None
    try:
        yield
    finally:
        stop.set()  # work not started yet is dropped; the one under way is waited for
        if thread is not None:
            thread.join()


@contextmanager
def beside(fn: Callable[..., object], *args: Any) -> Iterator[None]:
    """Run ``fn(*args)`` in a thread while the body runs; joined at the end (run there when no
    thread can be started), its exception raised then."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            fn(*args)
        except BaseException as exc:  # raised in the caller's thread, at the join
            failed.append(exc)

    thread: threading.Thread | None = threading.Thread(target=run, name="commonkeep-beside", daemon=True)
    try:
        thread.start()  # type: ignore[union-attr]
    except RuntimeError:
        thread = None
    try:
        yield
    finally:
        if thread is not None:
            thread.join()
        else:
            run()
        if failed:
            raise failed[0]
