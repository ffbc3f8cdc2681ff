"""What a decision works out from every record's statement, remembered for the next process.

``decide.load_context`` indexes every active record by the words of its statement
(``matching.MatchIndex``: its tokens and whether it holds a contradiction cue) and keys every
record that says its statement by that statement (``waiting.statement_key``, for "an active record
already says this"). For 2,000 records that is some 30 ms of every ``commonkeep review --approve``
process, although a decision adds or changes one record. What it works out depends on the
statement's text alone and on the code that works it out, so it is kept in
``runtime/statement-words.json``: per statement, its tokens, its cue and its key, beside a
fingerprint of that code (``gate/matching.py``, ``patches/waiting.py``, ``util/normalize.py``, by
size and time): a changed module makes every entry stale. A statement not in the file is worked out
as before. The file is derived and machine-local (``runtime/`` is never shared), written by rename
without fsync; missing, unreadable, foreign or of another shape, it is simply not used. It holds
the statements of the records the last context indexed and nothing else, so a purged statement
leaves it with the next decision.
"""

from __future__ import annotations

import contextlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from commonkeep.gate.matching import MatchIndex, statement_words
from commonkeep.patches.waiting import record_key, statement_key

NAME = "statement-words.json"
_HERE = Path(__file__).resolve().parent.parent
_SOURCES = ("gate/matching.py", "patches/waiting.py", "util/normalize.py")
Row = dict[str, Any]
Entry = list[Any]  # [tokens joined by spaces, cue 0/1, statement key]


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """The code a statement's entry depends on, by path, size and time."""
    parts = []
    for rel in _SOURCES:
        try:
            st = (_HERE / rel).stat()
        except OSError:
            parts.append(f"{rel}:-")
            continue
        parts.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)


def index_records(runtime_dir: Path, by_id: dict[str, Row], says: tuple[str, ...]) -> tuple[MatchIndex, list[str], dict[str, str]]:
    """The index of the active records of ``by_id``, its entry -> record id, and the key of each
    record whose status is in ``says`` -> its id (the first); as ``MatchIndex.add_record`` and
    ``waiting.record_key`` work them out, from the statements' entries kept in ``runtime_dir``."""
    path = runtime_dir / NAME
    stored = _read(path)
    used: dict[str, Entry] = {}
    index, order = MatchIndex(), []
    statements: dict[str, str] = {}
    for rid, r in by_id.items():
        status = r.get("status")
        active = status == "active"
        if not active and status not in says:
            continue
        text = str(r.get("statement", ""))
        entry = used.get(text) or stored.get(text)
        if entry is None:
            toks, cue = statement_words(text)
            entry = [" ".join(sorted(toks)), int(cue), statement_key(text)]
        used[text] = entry
        if active:
            index.add_known(rid, frozenset(entry[0].split(" ")) if entry[0] else frozenset(), list(r.get("tags") or []),
                            r.get("normalized_key"), bool(entry[1]))
            order.append(rid)
        if status in says:
            statements.setdefault(record_key(r, text_key=entry[2]), rid)
    if used.keys() != stored.keys():
        _save(path, used)
    return index, order, statements


def _read(path: Path) -> dict[str, Entry]:
    try:
        import orjson

        doc = orjson.loads(path.read_bytes())
    except (OSError, ValueError, ImportError):
        return {}
    if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint() or not isinstance(doc.get("statements"), dict):
        return {}
    rows: dict[str, Entry] = doc["statements"]
    good = all(isinstance(v, list) and len(v) == 3 and isinstance(v[0], str) and v[1] in (0, 1) and isinstance(v[2], str)
               for v in rows.values())
    return rows if good else {}


def _save(path: Path, used: dict[str, Entry]) -> None:
    """Best effort: the file is derived; a failed write only costs the next decision its speed."""
    import tempfile

    import orjson

    tmp = ""
    try:  # renamed into place, not fsynced: a file cut short by a crash reads as none
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{NAME}.tmp-", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps({"fingerprint": fingerprint(), "statements": used}))
        os.replace(tmp, path)
    except (OSError, TypeError):
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
