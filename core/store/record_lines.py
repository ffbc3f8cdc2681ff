"""The record files as an apply reads them, parsing only the lines not seen before in this process.

Every decision reads all the record files under the writer lock (2,000 records: about 10 ms of
parsing and checking, more on a loaded machine), although a decision changes one or two lines.
:func:`records_by_file` gives what ``Store.records_by_file(active_only=False)`` gives, but a line
whose exact bytes were read before gives the record parsed then: only new and changed lines are
parsed and checked (``isMemoryRecord``). The bytes are read every time (through ``read_bytes``,
late lines carried over), so a file changed by another process is seen at once.

A new process (each ``commonkeep review --approve``) would check every line again: the leading
bytes of each file found to be valid records are remembered for it in ``runtime/line-edit.json``
(``clean_memo``, kind ``records``), and only the lines after them are checked (a decision appends
one record; a line changed in place means the whole file is checked again).

It answers ``None`` (the caller reads through ``Store``, which reports and quarantines) whenever
the files are not plainly clean: a line that is blank, over the size limit, not JSON ``orjson``
reads, or not a valid record, or a file without a final newline.

The records are shared between reads: a caller must never change one in place (the apply copies
a record before it changes it). Only the apply (``ops._State``) and the projection use it.
``fresh=True`` gives records parsed anew for a caller that keeps them (a decision's matching
context): they are never shared, but a line checked then is not checked again when the apply
reads it a moment later (``_VALID``: the bytes of lines found to be valid records).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

Row = dict[str, Any]

_MEMO: dict[bytes, Row] = {}  # a record line's bytes -> the valid record it holds
_VALID: set[bytes] = set()  # the bytes of lines found to be valid records (``fresh`` reads)
_FILES: dict[str, bytes] = {}  # a file -> its bytes last read whole and valid in this process (no memo lookup for them)
_MAX = 200_000  # lines remembered; past it the memo starts again
_REMEMBER_AFTER = 64  # lines checked past the remembered prefix before it is moved (a decision adds one)
_lock = threading.Lock()


def records_by_file(store: Any, *, fresh: bool = False) -> dict[Path, list[Row]] | None:
    """``store.records_by_file(active_only=False)`` from remembered lines (``fresh``: parsed anew,
    the caller's own), with ``store.tombstoned_lines`` set as it sets it; ``None`` when a file is
    not plainly clean."""
    from commonkeep.store import clean_memo, line_index
    from commonkeep.store.jsonl import read_bytes

    dead = store.tombstoned_ids()
    out: dict[Path, list[Row]] = {}
    tombstoned: list[tuple[Path, int, Row]] = []
    memo = store.layout.runtime_dir / clean_memo.NAME
    entries: clean_memo.Memo | None = None
    checked: list[tuple[Path, bytes]] = []  # files some line of which was checked now: remembered valid
    for path in store.layout.canonical_files():
        stat = line_index.file_stat(path)
        data = read_bytes(path)
        with _lock:
            known = _FILES.get(str(path))
        if data and not (known is not None and data.startswith(known)):  # what an earlier process found valid
            if line_index.vouches(store.layout, path, stat, len(data)):  # the line index: the whole file, by its stat
                _trust(data)
            else:
                entries = clean_memo.load(memo) if entries is None else entries
                _trust(data[: clean_memo.recalled(entries, path, data, ("records",))["records"]])
        elif known is not None:
            with _lock:
                unchecked = _UNCHECKED.pop(str(path), None)
            if unchecked is known:
                _trust(known)
        before = len(_VALID)
        rows = _fresh(data) if fresh else _rows(data)
        if rows is None:
            return None
        if len(_VALID) - before > _REMEMBER_AFTER or (len(_VALID) != before and not _remembered(entries, path)):
            checked.append((path, data))  # a few lines checked again by the next process cost less than hashing the file
        with _lock:
            _FILES[str(path)] = data
        keep = []
        for n, row in enumerate(rows, 1):
            if row["id"] in dead:
                tombstoned.append((path, n, row))
            else:
                keep.append(row)
        out[path] = keep
    store.tombstoned_lines = tombstoned
    for path, data in checked:
        if not path.is_symlink():  # a store file that is a link is refused by every writer: never vouched for
            clean_memo.remember(memo, path, {"records": data})
    return out


_UNCHECKED: dict[str, bytes] = {}  # vouched for whole (``vouch``) without its lines in ``_VALID``


def vouch(path: Path, data: bytes) -> None:
    """``data`` (the whole of ``path``) was found to hold only valid records (its lines are not
    checked again when every line is read)."""
    with _lock:
        _FILES[str(path)] = data
        _UNCHECKED[str(path)] = data


def vouched(path: Path, data: bytes) -> bool:
    """Whether this process found every line of exactly ``data`` (the whole of ``path``) to be a valid record."""
    with _lock:
        known = _FILES.get(str(path))
    return known is not None and (known is data or known == data)


def _remembered(entries: Any, path: Path) -> bool:
    """Whether the memo holds a ``records`` entry for ``path`` (one that may vouch for a prefix)."""
    entry = entries.get(str(path)) if isinstance(entries, dict) else None
    return isinstance(entry, dict) and "records" in entry


def _trust(prefix: bytes) -> None:
    """The lines of ``prefix`` (whole lines an earlier process found to be valid records) are not
    checked again."""
    if prefix:
        lines = prefix.split(b"\n")[:-1]
        with _lock:
            if len(_VALID) + len(lines) > _MAX:
                _VALID.clear()
            _VALID.update(lines)


def _lines(data: bytes) -> list[bytes] | None:
    """The lines of a record file, or ``None`` when it has no final newline or a line over the limit."""
    from commonkeep.store.jsonl import MAX_LINE_BYTES

    if not data.endswith(b"\n"):
        return None
    lines = data.split(b"\n")[:-1]
    return None if max(map(len, lines)) > MAX_LINE_BYTES else lines


def _parse(lines: list[bytes]) -> list[Row] | None:
    """The records of ``lines`` (each checked unless its bytes were found valid before), or ``None``
    when one is blank, not JSON ``orjson`` reads, or not a valid record."""
    from commonkeep.store.records import memory_record_problem

    if not all(x.strip() for x in lines):
        return None  # a blank line: numbered as Store numbers them only by the careful read
    try:
        from commonkeep.store.jsonl import fast_loads

        # one array, copied once (``b"[" + joined + b"]"`` copies the megabyte twice)
        values: list[Row] = fast_loads(b",".join([b"[" + lines[0], *lines[1:-1], lines[-1] + b"]"]) if len(lines) > 1
                                       else b"[" + b"".join(lines) + b"]")
    except (ImportError, ValueError, RecursionError, MemoryError):
        return None
    if len(values) != len(lines) or not all(isinstance(v, dict) for v in values):
        return None
    with _lock:
        unchecked = [(x, v) for x, v in zip(lines, values, strict=True) if x not in _VALID and x not in _MEMO]
    if any(memory_record_problem(v) for _, v in unchecked):
        return None
    with _lock:
        if len(_VALID) + len(unchecked) > _MAX:
            _VALID.clear()
        _VALID.update(x for x, _ in unchecked)
    return values


def _fresh(data: bytes) -> list[Row] | None:
    """The records of one file's bytes, all parsed now (never shared); ``None`` as :func:`_rows`."""
    if not data:
        return []
    lines = _lines(data)
    return None if lines is None else _parse(lines)


def _rows(data: bytes) -> list[Row] | None:
    """The records of one file's bytes, or ``None`` when a line needs ``Store``'s careful read."""
    if not data:
        return []
    lines = _lines(data)
    if lines is None:
        return None
    with _lock:
        memo = _MEMO
        missing = [x for x in dict.fromkeys(lines) if x not in memo]
    if missing:
        values = _parse(missing)
        if values is None:
            return None
        with _lock:
            if len(_MEMO) + len(missing) > _MAX:
                _MEMO.clear()
            _MEMO.update(zip(missing, values, strict=True))
            memo = _MEMO
    with _lock:
        try:
            return [memo[x] for x in lines]
        except KeyError:  # cleared meanwhile by another thread: read again
            return None
