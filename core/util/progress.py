"""Progress bars for long operations, on a terminal only.

``with progress.bar(total, "reindex", unit="record") as bar: … bar.update()`` shows a tqdm bar on
stderr when stderr is a terminal, the operation has run longer than ``DELAY`` seconds, and nothing
asked for quiet (``set_quiet(True)``, which commands call for ``--json``, or
``COMMONKEEP_PROGRESS=0``). Otherwise it costs a counter: tqdm is imported only when a bar is
actually drawn, so short commands and pipes never pay its import (~30 ms).
``COMMONKEEP_PROGRESS=1`` draws even when stderr is not a terminal; ``COMMONKEEP_PROGRESS_DELAY``
changes the delay (seconds).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

T = TypeVar("T")
DELAY = 0.5
_quiet = False


def set_quiet(flag: bool = True) -> None:
    """No bar for the rest of this process (``--json``: the output is for a program)."""
    global _quiet
    _quiet = flag


def _delay() -> float:
    try:
        return max(0.0, float(os.environ.get("COMMONKEEP_PROGRESS_DELAY", DELAY)))
    except ValueError:
        return DELAY


def enabled(stream: TextIO | None = None) -> bool:
    """Whether a bar may be drawn on ``stream`` (stderr by default)."""
    setting = os.environ.get("COMMONKEEP_PROGRESS", "").strip().lower()
    if _quiet or setting in ("0", "false", "no", "off"):
        return False
    if setting in ("1", "true", "yes", "on"):
        return True
    out = stream if stream is not None else sys.stderr
    try:
        return bool(out.isatty())
    except (AttributeError, ValueError):
        return False


class Bar:
    """A counter that becomes a tqdm bar once the operation has run ``delay`` seconds."""

    def __init__(self, total: int | None, desc: str, unit: str, *, show: bool, stream: TextIO,
                 unit_scale: bool = False) -> None:
        self.total = total
        self.unit_scale = unit_scale
        self.desc = desc
        self.unit = unit
        self.n = 0
        self._show = show
        self._stream = stream
        self._start = time.monotonic()
        self._delay = _delay()
        self._tq: Any = None

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.total is not None:
            self.n = min(self.n, self.total)
        if self._tq is not None:
            self._tq.update(self.n - self._tq.n)
        elif self._show and time.monotonic() - self._start >= self._delay:
            from tqdm import tqdm  # only now: a bar is about to be drawn

            self._tq = tqdm(total=self.total, desc=self.desc, unit=self.unit, initial=self.n, file=self._stream,
                            dynamic_ncols=True, leave=False, mininterval=0.2, unit_scale=self.unit_scale)

    def close(self) -> None:
        if self._tq is not None:
            self._tq.close()
            self._tq = None


@contextmanager
def bar(total: int | None, desc: str, *, unit: str = "it", unit_scale: bool = False,
        stream: TextIO | None = None) -> Iterator[Bar]:
    """A progress bar for ``total`` steps (``None``: unknown), closed (erased) at the end;
    ``unit_scale``: counts shown as k/M (bytes)."""
    out = stream if stream is not None else sys.stderr
    b = Bar(total, desc, unit, show=enabled(out), stream=out, unit_scale=unit_scale)
    try:
        yield b
    finally:
        b.close()


def track(items: Iterable[T], total: int | None, desc: str, *, unit: str = "it") -> Iterator[T]:
    """``for x in track(items, len(items), "ingest")``: ``items`` with a bar."""
    with bar(total, desc, unit=unit) as b:
        for item in items:
            yield item
            b.update()
