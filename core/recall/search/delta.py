"""The sync after a small change: only the lines of the one record file that moved.

A patch rewrites a record file whole (temp file and rename), so the file's stamp moves even when
one line changed; re-reading and re-comparing 100,000 records costs seconds. ``file_lines`` keeps,
per record file, the stamp, a CRC-32 and length per line and a CRC-32 per block of lines of the
version the indexes were synced from; :func:`try_delta` compares the file now with it block by
block, then line by line inside the blocks that differ, finds the run of lines that changed
(common head and tail kept), parses only those, and moves the indexes by that difference:
``records``/``recall_fts``/``terms``, ``record_at`` (the places after the run shift by the bytes it
grew or shrank), the store order ``ord``, vectors, and the contract table ``memory_fts``.

It handles the plain case and declines (returns ``None``, the caller syncs as before) whenever the
result could differ from a full sync: more than one file moved, tombstones moved, a file came or
went, no state for the file, a changed line that is not a plain active record (a hard rule, a
contested or invalid line, an id on another line too), more than
``MAX_LINES`` changed lines, a record kept whole (not as a line), or the file moving while read.
"""

from __future__ import annotations

import json
import os
import sqlite3
import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_LINES = 200
BLOCK_LINES = 256  # lines per block of ``file_lines.blocks``
# ``blocks``: the CRC-32 of the bytes of every run of ``BLOCK_LINES`` lines (with their newlines).
# A file is hashed block by block (one C call per block, not one per line); only the blocks that
# differ are split into lines. ``line_state`` (the table before, without blocks) is dropped.
STATE = ("CREATE TABLE IF NOT EXISTS file_lines (file TEXT PRIMARY KEY, stamp TEXT NOT NULL, "
         "crcs BLOB NOT NULL, lens BLOB NOT NULL, blocks BLOB NOT NULL)")


def _ensure_state(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TABLE IF EXISTS line_state")  # the earlier format: the next sync is whole
    conn.execute(STATE)


def _stamps(fingerprint: str) -> dict[str, str]:
    """``{name relative to memory/: stamp}`` of an ``index.fingerprint`` string."""
    out: dict[str, str] = {}
    for part in fingerprint.split("|")[1:]:
        name, _, stamp = part.partition(":")
        out[name] = stamp
    return out


def _lines(data: bytes) -> tuple[array[int], array[int]]:
    """CRC-32 and length (newline not included) of every line of ``data``."""
    raw = data.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    return array("I", map(zlib.crc32, raw)), array("I", map(len, raw))


def _block_sizes(lens: array[int]) -> list[int]:
    """Bytes of each block of ``BLOCK_LINES`` lines, newlines included."""
    return [sum(lens[i : i + BLOCK_LINES]) + len(lens[i : i + BLOCK_LINES]) for i in range(0, len(lens), BLOCK_LINES)]


Read = Callable[[int, int], bytes]  # (at, size) -> up to ``size`` bytes of the file from byte ``at``


def _blocks(read: Read, lens: array[int], first: int = 0, at: int = 0) -> array[int]:
    """CRC-32 of the blocks from block ``first`` on (starting at byte ``at``) of the file ``read``
    gives, whose lines are ``lens`` (the last block of a file without a final newline is shorter)."""
    out = array("I")
    for size in _block_sizes(lens)[first:]:
        out.append(zlib.crc32(read(at, size)))
        at += size
    return out


def _view(data: bytes) -> Read:
    view = memoryview(data)
    return lambda at, size: view[at : at + size]  # type: ignore[return-value]


def _pread(fd: int, at: int, size: int) -> bytes:
    parts = []
    while size > 0:
        got = os.pread(fd, size, at)
        if not got:
            break
        parts.append(got)
        at, size = at + len(got), size - len(got)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _stamp(st: os.stat_result) -> str:
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _same_head(a: array[int], b: array[int], c: array[int], d: array[int]) -> int:
    """How many leading items ``a``/``b`` and ``c``/``d`` have in common (chunks compared in C)."""
    n = min(len(a), len(b))
    i = 0
    step = 4096
    while i < n:
        j = min(n, i + step)
        if a[i:j] == b[i:j] and c[i:j] == d[i:j]:
            i = j
            continue
        while i < j and a[i] == b[i] and c[i] == d[i]:
            i += 1
        return i
    return n


def _read_stable(path: Path, stamp: str) -> bytes | None:
    """The file's bytes when its stamp is ``stamp`` before and after the read, else ``None``."""
    try:
        if _stamp(os.stat(path)) != stamp:
            return None
        data = path.read_bytes()
        return data if _stamp(os.stat(path)) == stamp else None
    except OSError:
        return None


def save_state(conn: sqlite3.Connection, root: Path | str, fingerprint: str) -> None:
    """Record the line state of every record file whose stamp is still the one of ``fingerprint``
    (the version just synced); a file that moved meanwhile gets no state (the next sync is whole)."""
    from commonkeep.recall.search.health import transaction

    _ensure_state(conn)
    memory = Path(root) / "memory"
    with transaction(conn):
        conn.execute("DELETE FROM file_lines")
        for name, stamp in _stamps(fingerprint).items():
            if name == "tombstones.jsonl" or stamp == "-":
                continue
            data = _read_stable(memory / name, stamp)
            if data is not None:
                crcs, lens = _lines(data)
                conn.execute("INSERT INTO file_lines VALUES (?, ?, ?, ?, ?)",
                             (name, stamp, crcs.tobytes(), lens.tobytes(), _blocks(_view(data), lens).tobytes()))


@dataclass(frozen=True)
class DeltaResult:
    """What a delta sync changed: rows added and removed, and the ids of the records it (re)wrote
    (so the vectors of those records alone are embedded)."""

    added: int
    removed: int
    ids: tuple[str, ...]


class Declined(Exception):
    """The change is not one :func:`try_delta` handles exactly; sync as before."""


def try_delta(rconn: sqlite3.Connection, root: Path | str, old_fp: str, new_fp: str) -> DeltaResult | None:
    """Sync ``recall.db`` (``rconn``) and ``memory-fts.db`` by the changed lines of the one record
    file that moved between ``old_fp`` and ``new_fp``; ``None`` when declined (nothing changed)."""
    try:
        return _delta(rconn, root, old_fp, new_fp)
    except Declined:
        return None


def _delta(rconn: sqlite3.Connection, root: Path | str, old_fp: str, new_fp: str) -> DeltaResult:
    old, new = _stamps(old_fp), _stamps(new_fp)
    moved = [n for n in new if old.get(n) != new[n]]
    if old_fp.split("|")[0] != new_fp.split("|")[0] or set(old) != set(new) or len(moved) != 1:
        raise Declined
    name = moved[0]
    if name == "tombstones.jsonl" or new[name] == "-":
        raise Declined
    _ensure_state(rconn)
    state = rconn.execute("SELECT stamp, crcs, lens, blocks FROM file_lines WHERE file = ?", (name,)).fetchone()
    if state is None or state[0] != old[name]:
        raise Declined
    path = Path(root) / "memory" / name
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        raise Declined from None
    try:
        return _delta_read(rconn, root, name, path, fd, state, old[name], new[name], new_fp)
    finally:
        os.close(fd)


def _delta_read(rconn: sqlite3.Connection, root: Path | str, name: str, path: Path, fd: int,
                state: tuple[Any, ...], old_stamp: str, new_stamp: str, new_fp: str) -> DeltaResult:
    """:func:`_delta` on the open record file ``fd``: read by position, block by block (never
    the whole file at once but to look for an id), and only if it is the file of ``new_stamp``
    before and after."""
    size = os.fstat(fd).st_size
    if _stamp(os.fstat(fd)) != new_stamp or os.path.lexists(path.with_name(f".{path.name}.tmp-gens")):
        raise Declined

    def read(at: int, n: int) -> bytes:
        return _pread(fd, at, n)

    old_crcs, old_lens, old_blocks = array("I"), array("I"), array("I")
    old_crcs.frombytes(state[1])
    old_lens.frombytes(state[2])
    old_blocks.frombytes(state[3])
    from commonkeep.recall.search.told import told as _told

    told = _told(root, name, fd, read, old_stamp, old_crcs, old_lens, old_blocks)
    crcs, lens, blocks, head, old_end, new_end, middle, pos = told if told is not None else _changed(
        read, size, int(old_stamp.split(":")[0]), old_crcs, old_lens, old_blocks)
    if old_end - head + new_end - head > MAX_LINES:
        raise Declined
    start = sum(old_lens[:head]) + head  # each line and its newline
    old_stop = start + sum(old_lens[head:old_end]) + old_end - head
    new_stop = start + sum(lens[head:new_end]) + new_end - head
    rel = f"memory/{name}"
    added, run_ids = _added(middle[start - pos : new_stop - pos], start)
    if told is None and added:
        # lines another program wrote (OmpKeep's curator, a shell): a secret in one is redacted in
        # place, with an audit line, and the whole sync then reads the redacted file
        from commonkeep.store import exitgate

        if exitgate.holds_secret([rec for rec, _, _ in added]):
            exitgate.sweep(root, reason="index", files=[path])
            raise Declined
    removed = _removed(rconn, rel, start, old_stop, old_end - head, run_ids)
    _check_unique(root, name, lambda: read(0, size), start, new_stop, removed, added, run_ids, rconn)
    try:
        if _stamp(os.stat(path)) != new_stamp or _stamp(os.fstat(fd)) != new_stamp:
            raise Declined  # replaced or written while read
    except OSError:
        raise Declined from None

    def finish() -> None:  # in the same transaction as the rows: the state always matches the index
        rconn.execute("INSERT OR REPLACE INTO file_lines VALUES (?, ?, ?, ?, ?)",
                      (name, new_stamp, crcs.tobytes(), lens.tobytes(), blocks.tobytes()))
        rconn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('fingerprint', ?)", (new_fp,))

    from commonkeep.recall.search.delta_lazy import After

    after = After(rconn, rel, read, lens, new_end, new_stop, new_stop - old_stop)
    return _apply(rconn, root, rel, removed, added, start, old_stop, new_stop - old_stop, finish, after)


def _changed(read: Read, size: int, old_size: int, old_crcs: array[int], old_lens: array[int],
             old_blocks: array[int]) -> tuple[array[int], array[int], array[int], int, int, int, bytes, int]:
    """The lines of the file (crcs, lens, blocks) and the changed run: ``head`` lines in common at
    the start, old lines ``head:old_end`` became new lines ``head:new_end``, the rest in common;
    and the bytes between the blocks in common (``middle``, from byte ``pos``).

    Whole blocks are compared first: from the start while they match, then from the end (shifted
    by the bytes the file grew) while they match, on a line boundary; only the blocks between are
    split into lines and compared line by line."""
    sizes = _block_sizes(old_lens)
    if len(sizes) != len(old_blocks):
        raise Declined
    k, pos = 0, 0
    while k < len(sizes) and zlib.crc32(read(pos, sizes[k])) == old_blocks[k]:
        pos += sizes[k]
        k += 1
    j, tail_at = len(sizes), size  # blocks j.. are the same at the end; they start at tail_at
    at = size  # where block j starts in the new file
    while j > k and sum(sizes) == old_size:  # (a file without a final newline: no tail compared)
        at_j = at - sizes[j - 1]
        if at_j < pos:
            break
        got = read(at_j - 1, sizes[j - 1] + 1) if at_j > 0 else b"\n" + read(0, sizes[j - 1])
        if got[:1] != b"\n" or zlib.crc32(got[1:]) != old_blocks[j - 1]:
            break
        j, at, tail_at = j - 1, at_j, at_j
    lo, hi = min(k * BLOCK_LINES, len(old_lens)), min(j * BLOCK_LINES, len(old_lens))
    middle = read(pos, tail_at - pos)
    if len(middle) != tail_at - pos:
        raise Declined  # the file is shorter than it said
    mid_crcs, mid_lens = _lines(middle)
    oc, ol = old_crcs[lo:hi], old_lens[lo:hi]
    h = _same_head(mid_crcs, oc, mid_lens, ol)
    rev = [array("I", reversed(x[h:])) for x in (mid_crcs, oc, mid_lens, ol)]
    t = _same_head(*rev)
    crcs = old_crcs[:lo] + mid_crcs + old_crcs[hi:]
    lens = old_lens[:lo] + mid_lens + old_lens[hi:]
    if len(mid_crcs) == hi - lo:  # the same blocks: only those between are hashed again
        mid = _view(middle)
        blocks = old_blocks[:k] + _blocks(lambda a, n: mid(a - pos, n), lens[: j * BLOCK_LINES], k, pos) + old_blocks[j:]
    else:  # lines moved between blocks: every block from the one holding line ``lo`` on
        first = lo // BLOCK_LINES
        blocks = old_blocks[:first] + _blocks(read, lens, first, sum(sizes[:first]))
    return crcs, lens, blocks, lo + h, hi - t, lo + len(mid_crcs) - t, middle, pos


def _removed(rconn: sqlite3.Connection, rel: str, start: int, stop: int, lines: int,
             hint: list[str]) -> list[tuple[Any, ...]]:
    """The index rows of the records whose lines were in the old run: every line there must have
    been the place of a plain record (else what it was is unknown here). ``hint``: the ids of every
    line of the new run (a record made inactive is there too), looked up first (a place is a line's
    start: ``lines`` of them in the run are all); ``record_at`` has no index by place."""
    from commonkeep.recall.hard_rules import HARD_RULE_MIN_CONFIDENCE, HARD_RULE_TYPES
    from commonkeep.recall.search.shifts import OFFSET, load

    tab = load(rconn)  # stored offsets: the true ones moved by the lazy shifts (``shifts.py``)
    start, stop = tab.bound(OFFSET, rel, start), tab.bound(OFFSET, rel, stop)
    ids: list[str] = []
    if hint and lines:
        marks = ",".join("?" * len(hint))
        ids = [str(r[0]) for r in rconn.execute(
            f"SELECT id FROM record_at WHERE file = ? AND id IN ({marks}) AND offset >= ? AND offset < ?",  # noqa: S608
            (rel, *hint, start, stop))]
    if len(set(ids)) != lines:  # not all of them: every place in the run (one pass over the table)
        ids = [str(r[0]) for r in rconn.execute(
            "SELECT id FROM record_at WHERE file = ? AND offset >= ? AND offset < ?", (rel, start, stop))]
    if len(ids) != lines:
        raise Declined  # a non-record line (blank, superseded, contested, invalid) or a duplicate was there
    rows = []
    for rid in ids:
        row = rconn.execute("SELECT id, layer, rule_type, confidence, statement, tags, context, ord, rowid, source "
                            "FROM records WHERE id = ?", (rid,)).fetchone()
        if row is None or (row[1] == "L2" and float(row[3]) >= HARD_RULE_MIN_CONFIDENCE and row[2] in HARD_RULE_TYPES):
            raise Declined  # a hard rule: the ranked list changes too
        rows.append(row)
    return rows


def _added(run: bytes, start: int) -> tuple[list[tuple[dict[str, Any], int, int]], list[str]]:
    """``(record, offset, length)`` of each line in the new run: all plain active records; and
    the ids of every line of the run (inactive ones too)."""
    from commonkeep.recall.hard_rules import is_hard_rule
    from commonkeep.store.records import memory_record_problem

    out = []
    ids: list[str] = []
    pos = start
    for raw in run.split(b"\n"):
        line = raw.strip()
        offset = pos + (len(raw) - len(raw.lstrip()))
        pos += len(raw) + 1
        if not line:
            if raw:
                raise Declined
            continue
        try:
            rec = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            raise Declined from None
        if not isinstance(rec, dict) or memory_record_problem(rec) or rec.get("status") == "contested":
            raise Declined  # reported and quarantined, or ranked for select: the whole sync does that
        ids.append(str(rec["id"]))
        if rec.get("status") != "active":
            continue  # superseded, deprecated, deleted: not indexed (the next delta over it declines)
        if is_hard_rule(rec) or b"\\u" in line:
            raise Declined
        out.append((rec, offset, len(line)))
    return out, ids


def _check_unique(root: Path | str, name: str, whole: Callable[[], bytes], start: int, stop: int,
                  removed: list[tuple[Any, ...]], added: list[tuple[dict[str, Any], int, int]],
                  run_ids: list[str], rconn: sqlite3.Connection) -> None:
    """No id of the run is on another line of any record file, or tombstoned (first line wins,
    a tombstone hides it: a full sync would see that). When the last whole sync found every id
    on one line only (``unique_ids``), an id the run kept on one line is known to be nowhere else
    (the other lines did not change); the others are looked for."""
    if len(set(run_ids)) != len(run_ids):
        raise Declined  # an id on two lines of the run
    kept = {str(r[0]) for r in removed}
    for rid in (str(rec["id"]) for rec, _, _ in added):
        if rid not in kept and rconn.execute("SELECT 1 FROM records WHERE id = ?", (rid,)).fetchone():
            raise Declined
    unique = rconn.execute("SELECT 1 FROM meta WHERE key = 'unique_ids' AND value = 'yes'").fetchone()
    known = kept & set(run_ids) if unique else set()
    needles = [json.dumps(i).encode() for i in (kept | set(run_ids)) - known]
    if not needles:
        return
    data = whole()
    for n in needles:  # this file, outside the run
        if data.find(n, 0, start) >= 0 or data.find(n, stop) >= 0:
            raise Declined
    memory = Path(root) / "memory"
    others = [p for p in memory.glob("*.jsonl") if p.name != name] + \
        [p for p in (memory / "projects").glob("*.jsonl") if f"projects/{p.name}" != name]
    for path in others:
        blob = path.read_bytes()
        if any(n in blob for n in needles):
            raise Declined


def _apply(rconn: sqlite3.Connection, root: Path | str, rel: str, removed: list[tuple[Any, ...]],
           added: list[tuple[dict[str, Any], int, int]], start: int, old_stop: int, grew: int,
           finish: Any, after: Any) -> DeltaResult:
    from commonkeep.recall.search import fts, health, index, shifts
    from commonkeep.recall.search.days import record_day
    from commonkeep.recall.search.delta_lazy import count_before, lazy_places
    from commonkeep.recall.search.rows import IndexRow, source_of
    from commonkeep.recall.search.sync import _count_terms, _insert

    if rconn.execute("SELECT 1 FROM record_at WHERE file = '' LIMIT 1").fetchone():
        raise Declined  # a record kept whole: its store order is not known from places
    if rconn.execute("SELECT 1 FROM meta WHERE key = 'terms'").fetchone() is None:
        raise Declined  # term counts not built yet: the whole sync recounts them
    tab = shifts.load(rconn)
    if removed:
        first = min(tab.true(shifts.ORD, "", int(r[7])) for r in removed)
    else:
        first = count_before(rconn, root, rel, start, tab)
    shift = len(added) - len(removed)
    with health.transaction(rconn):
        if shifts.load(rconn).entries != tab.entries:
            raise Declined  # another sync moved the index meanwhile
        if tab.stale:
            shifts.drop(rconn)  # left by other code: the stored values are the true ones
        # the rows after the run keep their stored values, an entry says how far they moved (``shifts``)
        lazy = lazy_places(rconn, tab, rel, removed, added, first, after, shift)
        if lazy is None:  # written into the rows, as ever
            shifts.fold(rconn)
        places, ords = lazy or ([off for _, off, _ in added], [first + i for i in range(len(added))])
        fresh = [IndexRow(fts.row_for(rec, clean=True), "", ords[i], record_day(rec.get("created_at")), source_of(rec) or "")
                 for i, (rec, _, _) in enumerate(added)]
        touched = {r.source for r in fresh if r.source} | {str(r[9]) for r in removed if r[9]}
        rconn.executemany(
            "INSERT INTO recall_fts (recall_fts, rowid, id, statement, tags, context) VALUES ('delete', ?, ?, ?, ?, ?)",
            ((r[8], r[0], r[4], r[5], r[6]) for r in removed))
        rconn.executemany("DELETE FROM records WHERE id = ?", ((r[0],) for r in removed))
        rconn.executemany("DELETE FROM record_at WHERE id = ?", ((r[0],) for r in removed))
        back = {rec["id"] for rec, _, _ in added}  # a record written again keeps its vector (checked by its text's hash)
        rconn.executemany("DELETE FROM vectors WHERE id = ?", ((r[0],) for r in removed if r[0] not in back))
        if lazy is None and shift:
            rconn.execute("UPDATE records SET ord = ord + ? WHERE ord >= ?", (shift, first + len(removed)))
        if lazy is None and grew:
            rconn.execute("UPDATE record_at SET offset = offset + ? WHERE file = ? AND offset >= ?", (grew, rel, old_stop))
        _insert(rconn, fresh)
        rconn.executemany("INSERT INTO record_at (id, file, offset, length, body) VALUES (?, ?, ?, ?, NULL)",
                          ((rec["id"], rel, places[i], length) for i, (rec, _, length) in enumerate(added)))
        _count_terms(rconn, [(str(r[4]), str(r[5]), str(r[6])) for r in removed], -1)
        _count_terms(rconn, [(r.row[4], r.row[5], r.context) for r in fresh], 1)
        for src in sorted(touched):  # a record with a source: its neighbours' contexts move with it
            _recontext(rconn, src)
        rconn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'docs'", (shift,))
        finish()
        if lazy is not None:  # the entries hold for the fingerprint ``finish`` wrote
            rconn.execute("INSERT OR REPLACE INTO meta (key, value) SELECT 'shifts', value FROM meta WHERE key = 'fingerprint'")
    from commonkeep.store.layout import Layout

    with index._closing(fts.connect(Layout(root).search_db)) as conn, health.transaction(conn):
        # By rowid, found in the table's own content store (a plain table: one pass over it is
        # cheaper than FTS5 handing every row's columns to ``WHERE id = ?``).
        ids = [str(r[0]) for r in removed]
        marks = ",".join("?" * len(ids))
        gone = [(int(g[0]),) for g in conn.execute(
            f"SELECT id FROM {fts.TABLE}_content WHERE c0 IN ({marks})", ids)] if ids else []  # noqa: S608
        conn.executemany(f"DELETE FROM {fts.TABLE} WHERE rowid = ?", gone)  # noqa: S608
        conn.executemany(f"INSERT INTO {fts.TABLE} ({', '.join(fts.COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",  # noqa: S608
                         (r.row for r in fresh))
    return DeltaResult(len(fresh), len(removed), tuple(str(rec["id"]) for rec, _, _ in added))


MAX_GROUP = 5_000  # records of one source worked out again here; a larger group: the whole sync


def _recontext(rconn: sqlite3.Connection, source: str) -> None:
    """The source context of every indexed record of ``source`` as ``rows._with_context`` works it
    out (the statements of its ``CONTEXT_NEIGHBOURS`` on each side, among the records of that source
    in store order), written where it changed: ``records``, ``recall_fts`` and the term counts."""
    from commonkeep.recall.search.rows import CONTEXT_NEIGHBOURS
    from commonkeep.recall.search.sync import _count_terms

    group = rconn.execute("SELECT id, statement, tags, context, rowid FROM records WHERE source = ? ORDER BY ord",
                          (source,)).fetchall()
    if len(group) > MAX_GROUP:
        raise Declined
    moved = []
    for i, (rid, statement, tags, context, rowid) in enumerate(group):
        lo, hi = max(0, i - CONTEXT_NEIGHBOURS), min(len(group), i + CONTEXT_NEIGHBOURS + 1)
        now = " ".join(str(group[j][1]) for j in range(lo, hi) if j != i)
        if now != context:
            moved.append((rid, statement, tags, context, rowid, now))
    if not moved:
        return
    rconn.executemany(
        "INSERT INTO recall_fts (recall_fts, rowid, id, statement, tags, context) VALUES ('delete', ?, ?, ?, ?, ?)",
        ((m[4], m[0], m[1], m[2], m[3]) for m in moved))
    rconn.executemany("UPDATE records SET context = ? WHERE id = ?", ((m[5], m[0]) for m in moved))
    rconn.executemany("INSERT INTO recall_fts (rowid, id, statement, tags, context) VALUES (?, ?, ?, ?, ?)",
                      ((m[4], m[0], m[1], m[2], m[5]) for m in moved))
    _count_terms(rconn, [(str(m[1]), str(m[2]), str(m[3])) for m in moved], -1)
    _count_terms(rconn, [(str(m[1]), str(m[2]), str(m[5])) for m in moved], 1)
