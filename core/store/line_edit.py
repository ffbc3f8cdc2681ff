"""Changing a few rows of a large JSONL file (one candidate's status in an inbox of 10,000) without
re-encoding the others.

``edit_lines`` returns the file's new bytes with the rows of the named ids passed through a
transform and every other line kept byte for byte, or ``None`` when the file is not plainly clean
(a line that is not a JSON object, an unfinished last line, a line over the size limit): the
caller then takes the full path, which parses every line and quarantines the bad ones. So the
result is the one the full rewrite would write, but for lines another writer formatted its own
way, which are kept as they are.

Checking that every line is a JSON object costs one parse of the file (about 40 ms for 10,000
candidates); the bytes found clean are remembered per file in this process, so the next edit
checks only what was appended since (``clean_prefix``), and for the next process in
``runtime/line-edit.json`` (``clean_memo``: a decision in the CLI is a new process each time).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = dict[str, Any]

_clean: dict[str, bytes] = {}  # file -> bytes of it known to be clean JSON-object lines
_plain: dict[str, bytes] = {}  # file -> bytes of it known to be in the usual layout (``_edit_plain``)
_HEAD = b'{"id":"'
_lock = threading.Lock()


def _all_objects(lines: list[bytes]) -> bool:
    """Whether every non-blank line is one JSON object (as ``jsonl.parse_jsonl`` would read it)."""
    body = [x for x in lines if x.strip()]
    if not body:
        return True
    try:
        import orjson

        values = orjson.loads(b"[" + b",".join(body) + b"]")
    except ImportError:
        try:
            values = json.loads("[" + ",".join(x.decode("utf-8") for x in body) + "]")
        except (ValueError, RecursionError, MemoryError):
            return False
    except (ValueError, RecursionError, MemoryError):  # orjson.JSONDecodeError is a ValueError
        return False
    return len(values) == len(body) and all(isinstance(v, dict) for v in values)


def clean_prefix(path: Path, data: bytes) -> int:
    """How many leading bytes of ``data`` were found clean before (0 when none)."""
    with _lock:
        known = _clean.get(str(path))
    return len(known) if known is not None and data.startswith(known) else 0


def known(path: Path) -> bytes | None:
    """The bytes this process last wrote to (or found clean in) ``path``, if any (the caller
    compares them with the file: another program may have written since)."""
    with _lock:
        return _clean.get(str(path))


def remember_clean(path: Path, data: bytes) -> None:
    with _lock:
        _clean[str(path)] = data


def remember_plain(path: Path, data: bytes) -> None:
    """``data`` (the whole of ``path``) was found to be in the usual layout (``_is_plain``)."""
    with _lock:
        _plain[str(path)] = data


def forget(path: Path) -> None:
    with _lock:
        _clean.pop(str(path), None)
        _plain.pop(str(path), None)


def _recall(memo: Path | None, path: Path, data: bytes) -> None:
    """Take what an earlier process found clean or plain in ``path`` (``clean_memo``), when this
    process knows nothing of the file yet."""
    if memo is None:
        return
    with _lock:
        if str(path) in _clean or str(path) in _plain:
            return
    from commonkeep.store import clean_memo

    entries = clean_memo.load(memo)
    found = clean_memo.recalled(entries, path, data, ("clean", "plain"))
    clean, plain = found["clean"], found["plain"]
    with _lock:
        if clean and str(path) not in _clean:
            _clean[str(path)] = data[:clean]
        if plain and str(path) not in _plain:
            _plain[str(path)] = data[:plain]


def persist(memo: Path, path: Path, records: bytes | None = None) -> None:
    """Keep what this process knows of ``path`` for the next process (``clean_memo``); ``records``:
    the file's bytes, every line of which is a valid memory record (``record_lines``)."""
    from commonkeep.store import clean_memo

    with _lock:
        found = {"clean": _clean.get(str(path)), "plain": _plain.get(str(path))}
    if records is not None:
        found["records"] = records  # the same bytes as "clean": hashed once
    clean_memo.remember(memo, path, found)


def edit_lines(path: Path, data: bytes, ids: set[str], transform: Callable[[list[Row]], list[Row]],
               tail: Callable[[], list[Row]] | None = None, memo: Path | None = None) -> bytes | None:
    """``data`` with each row whose ``id`` is in ``ids`` replaced by ``transform([row])`` (no row,
    one or more), then the rows of ``tail()`` appended; ``None`` when the full rewrite must be
    taken (see the module doc). ``transform`` sees one row at a time, in file order. ``memo``:
    where earlier processes left what they found of the file (``clean_memo``)."""
    from commonkeep.store.jsonl import MAX_LINE_BYTES, encode_rows

    if data and not data.endswith(b"\n"):
        return None
    _recall(memo, path, data)
    known = clean_prefix(path, data)
    fresh = data[known:].split(b"\n")[:-1]  # the lines not found clean before (all of them the first time)
    if (fresh and max(map(len, fresh)) > MAX_LINE_BYTES) or not _all_objects(fresh):
        return None
    fast = _edit_plain(path, data, ids, transform)
    if fast is not None:
        body, plain = fast
        more = encode_rows(tail()) if tail is not None else b""
        result = body + more
        with _lock:
            if plain and _is_plain(more):
                _plain[str(path)] = result
            else:
                _plain.pop(str(path), None)
        return result
    lines = data.split(b"\n")[:-1] if data else []
    needles = [json.dumps(i, ensure_ascii=a).encode("utf-8") for i in ids for a in (True, False)]  # "c\u00e9", "cé"
    keys = {json.dumps(i).encode("utf-8") for i in ids}
    out: list[bytes] = []
    for line in lines:
        if not line.strip():
            continue  # the full rewrite drops blank lines too
        first = _FIRST_ID.match(line)  # the usual layout: the id first, plain ASCII, no other "id" key
        if first is not None and first.group(1) not in keys and b'"id"' not in line[first.end():]:
            out.append(line + b"\n")
            continue
        # any other line is read: its id may be one of ``ids`` spelled another way (escaped as
        # ``\u0063``, or not ASCII: ``"cé"`` as JavaScript writes it), which no needle finds
        if first is not None or _FIRST_ID_ANY.match(line) is None or any(n in line for n in needles):
            row = json.loads(line.decode("utf-8", "surrogateescape"))
            if row.get("id") in ids:
                out.append(encode_rows(transform([row])))
                continue
        out.append(line + b"\n")
    if tail is not None:
        out.append(encode_rows(tail()))
    return b"".join(out)


def _is_plain(data: bytes) -> bool:
    """Whether ``data`` is whole lines in the usual layout (see :func:`_edit_plain`), every id
    written without escapes (so the byte search finds each line by the id as ``json.dumps`` writes it)."""
    n = data.count(b"\n")
    return not data or (data.endswith(b"\n") and data.startswith(_HEAD) and data.count(b"\n" + _HEAD) == n - 1
                        and data.count(b'"id"') == n and _ESCAPED_ID.search(data) is None)


def _edit_plain(path: Path, data: bytes, ids: set[str],
                transform: Callable[[list[Row]], list[Row]]) -> tuple[bytes, bool] | None:
    """:func:`edit_lines` on a file in the usual layout, by searching its bytes: every line starts
    with ``{"id":"`` and holds no other ``"id"`` (so a line is one of ``ids`` exactly when it starts
    with that id), and every id is plain ASCII (written the same by ``json.dumps`` and JS). The
    lines of ``ids`` are found with ``bytes.find``, not by looking at 10,000 lines one by one.
    ``None`` when the file or an id is not like that (the line-by-line loop decides)."""
    from commonkeep.store.jsonl import encode_rows

    if not data or not all(_PLAIN_ID.fullmatch(i) for i in ids):
        return None
    with _lock:
        seen = _plain.get(str(path))
    known = len(seen) if seen is not None and data.startswith(seen) else 0  # found in the layout before
    if not _is_plain(data[known:]):
        return None
    spans = _line_starts(data, ids)
    out: list[bytes | memoryview] = []
    view = memoryview(data)  # the kept runs are joined from views of ``data``, not copied twice
    pos, plain = 0, True
    for start in sorted(spans):  # file order, as the loop calls ``transform``
        end = data.index(b"\n", start) + 1
        out.append(view[pos:start])
        line = encode_rows(transform([json.loads(data[start:end].decode("utf-8", "surrogateescape"))]))
        plain = plain and _is_plain(line)
        out.append(line)
        pos = end
    out.append(view[pos:])
    return b"".join(out), plain


def _line_starts(data: bytes, ids: set[str]) -> list[int]:
    """Where the lines of ``ids`` start in ``data`` (a file in the usual layout; ids plain ASCII).
    A few ids are found with ``bytes.find`` (each search reads the file to its end, fast); many
    are found in one pass over the line starts: searching each of 20,000 ids through a 10 MB inbox
    cost a 20,000-op patch 70 s."""
    keys = {b'{"id":' + json.dumps(i).encode("ascii") for i in ids}
    if len(keys) > _FIND_EACH:
        return [m.start() for m in _LINE_ID.finditer(data) if m.group(1) in keys]
    spans: list[int] = []
    for key in keys:
        at = 0 if data.startswith(key) else -1
        while True:
            if at >= 0 and data[at + len(key): at + len(key) + 1] in (b",", b"}"):
                spans.append(at)
            at = data.find(b"\n" + key, at + 1)
            if at < 0:
                break
            at += 1
    return spans


_FIND_EACH = 16  # more ids than this are found in one pass
# a line's start and its ``{"id":"…"`` (followed by ``,`` or ``}``) in the usual layout
_LINE_ID = re.compile(rb'^(\{"id":"[\x20\x21\x23-\x5b\x5d-\x7e]*")[,}]', re.M)

_PLAIN_ID = re.compile(r'[\x20\x21\x23-\x5b\x5d-\x7e]*')  # printable ASCII but '"' and '\\'

# ``{"id":"…",`` at the start of a line: the id, as JSON.stringify writes it
_FIRST_ID = re.compile(rb'\{"id":("[\x20\x21\x23-\x5b\x5d-\x7e]*")[,}]')
# ... and a line starting with an id in any spelling but one with an escape (``{"id":"c\u00e9"``)
_FIRST_ID_ANY = re.compile(rb'\{"id":"[^"\\]*"[,}]')
_ESCAPED_ID = re.compile(rb'\{"id":"[^"\n]*\\')  # an id written with an escape


class RecordChanges:
    """The records of a file changed by id (``None``: the line dropped), those not in it yet
    appended: as a whole-file transform (``__call__``) and one row at a time (``one``, then
    ``tail``, for ``edit_lines``). A record's first line takes its change; a later line of the
    same id is dropped."""

    def __init__(self, changes: dict[str, Row | None]) -> None:
        self.changes = changes
        self.ids = set(changes)
        self._seen: set[str] = set()

    def __call__(self, rows: list[Row]) -> list[Row]:
        out: list[Row] = []
        seen: set[str] = set()
        for r in rows:
            rid = r.get("id")
            if isinstance(rid, str) and rid in self.changes:
                if rid in seen:
                    continue
                seen.add(rid)
                repl = self.changes[rid]
                if repl is not None:
                    out.append(repl)
            else:
                out.append(r)
        out.extend(r for rid, r in self.changes.items() if r is not None and rid not in seen)
        return out

    def one(self, rows: list[Row]) -> list[Row]:
        rid = str(rows[0]["id"])
        if rid in self._seen:
            return []
        self._seen.add(rid)
        repl = self.changes[rid]
        return [repl] if repl is not None else []

    def tail(self) -> list[Row]:
        return [r for rid, r in self.changes.items() if r is not None and rid not in self._seen]

    def reset(self) -> None:
        """Forget the rows ``one`` gave (an edit that gave up part-way; the next starts afresh)."""
        self._seen.clear()
