"""What commonkeep prints to a terminal never carries a control character the terminal would obey.

Stored text (a candidate, a record, a patch op, a search hit) can hold ANSI/OSC escape sequences or
other C0/C1 controls: an OSC 8 hyperlink that shows one address and opens another, a cursor move
that hides a line, a title change. Capture already makes them visible (``commonkeep.store.controls``)
but records another writer appended can still hold them raw. ``guarded_stdout`` wraps standard
output for the length of one command (``commonkeep.cli.main``): every C0 control except newline
and tab, DEL and every C1 control is written as its ``\\xNN`` escape, whichever print path the
command took. ``--json`` output is escaped already (``commonkeep.util.jsonout``); ``mcp`` speaks a
protocol to a program, and ``roundtable`` keeps its own rule (a room's exact words in a pipe,
escaped on a terminal).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import Any, TextIO

# controls a terminal obeys, and lone surrogates: bytes of a file that were not UTF-8 (read with
# ``surrogateescape``), which no terminal encoding can write
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escaped(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # the byte ``surrogateescape`` kept: shown as that byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code > 0xFF else f"\\x{code:02x}"


def escape_controls(text: str) -> str:
    """``text`` with every control a terminal obeys (newline and tab aside) as a visible ``\\xNN``,
    and every byte that was not UTF-8 as ``\\xNN`` too."""
    return CONTROLS.sub(lambda m: _escaped(m.group()), text)


class _Guarded:
    """A text stream that escapes controls on ``write``; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text) if CONTROLS.search(text) else text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[None]:
    """Within: ``sys.stdout`` escapes terminal controls (module doc)."""
    saved = sys.stdout
    sys.stdout = _Guarded(saved)
    try:
        yield
    finally:
        sys.stdout = saved
