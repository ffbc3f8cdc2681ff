"""What the search indexes hold for a root's canonical files, read in one streamed pass.

Per indexed record (active, not tombstoned, first line of its id): the contract row, its
*source context* and its store order (``IndexRow``); for prompt selection where the whole record
a reader of the store gets for each id (the last active line of it) is (a ``Place``: the file,
offset and length of that line) and the ranked ``hard`` and ``contested`` records, whole
(``SelectRows``).

Source context: a record whose first evidence ref points at a position in a source
(``<source>#<anchor>``, e.g. a conversation turn) is indexed together with the statements of the
``CONTEXT_NEIGHBOURS`` records on each side captured from the same source, in store order. A
memory lifted from a conversation is then also found by the words of the turns around it — a
general document-expansion technique — weighted ``CONTEXT_WEIGHT`` in BM25 so a record's own
words count most. Both values are fixed by reasoning, not measured choices: one neighbour each
side is the adjacency pair of a dialogue (the turn this one answers, the turn that answers it);
0.5 is the midpoint between ignoring the context (0) and counting it as the record's own words
(1). (Earlier values, 2 and 0.3, had been picked by trying a few on the LoCoMo dev split, which
that data's README forbids; they were replaced, and the README reports what these score.)

:func:`scan` reads the record files line by line and keeps only what the indexes need (not a
dict per record): at 100,000 records that is the difference between ~500 MB and ~100 MB. A
record's place is its line as stored (valid UTF-8 JSON parses back to the dict the store reads);
a record that has no such line (invalid UTF-8 in it, or read through ``Store``) is kept whole,
as its JSON, in the place's body instead. A file with a line that does not parse is also read once through ``Store`` so the line is
reported and quarantined as every reader does. A file another program appended to during a
rewrite (its ``generations`` state present) is read through ``Store`` entirely.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.recall.search import fts
from commonkeep.recall.search.days import record_day

CONTEXT_NEIGHBOURS = 1
CONTEXT_WEIGHT = 0.5


@dataclass(frozen=True)
class IndexRow:
    """What commonkeep indexes for one record (the contract row plus context and store order)."""

    row: fts.Row
    context: str
    ord: int
    day: int | None = None  # the record's day (``timeframe.record_day`` of its ``created_at``)
    source: str = ""  # where it was captured (``source_of``; "" when it has no anchored source)

    @property
    def id(self) -> str:
        return self.row[0]


# Where the record of an id is: ``(file relative to the root, byte offset, length, None)`` for a
# line as stored, or ``("", 0, 0, body)`` for a record kept whole (``encode_record``).
Place = tuple[str, int, int, bytes | None]


def inline(body: bytes) -> Place:
    return ("", 0, 0, body)


@dataclass(frozen=True)
class SelectRows:
    """What ``record_at`` and ``select_rows`` should hold (bodies: :func:`encode_record`)."""

    places: dict[str, Place]  # indexed id -> where the record readers of the store get for it is
    ranked: dict[tuple[str, int], bytes]  # (kind, position in priority order) -> record


def source_of(record: Mapping[str, Any]) -> str | None:
    """The source a record was captured from: its first evidence ref without the ``#anchor``.

    Only anchored refs (``<source>#<position>``, e.g. a conversation turn) have a source: a
    record citing a whole file (``daily/2026-12-02.md``) has no neighbours worth indexing.
    """
    evidence = record.get("evidence")
    if not isinstance(evidence, list) or not evidence or not isinstance(evidence[0], dict):
        return None
    ref = evidence[0].get("ref")
    if not isinstance(ref, str) or "#" not in ref:
        return None
    return ref.split("#", 1)[0]


def _with_context(rows: dict[str, fts.Row], sources: dict[str, str | None],
                  days: Mapping[str, int | None] | None = None) -> dict[str, IndexRow]:
    """``rows`` (store order) with each one's source context, order, day and source."""
    groups: dict[str, list[str]] = {}
    for rid, src in sources.items():
        if src is not None:
            groups.setdefault(src, []).append(rid)
    position: dict[str, tuple[str, int]] = {}
    for src, ids in groups.items():
        for i, rid in enumerate(ids):
            position[rid] = (src, i)
    out: dict[str, IndexRow] = {}
    for ord_, (rid, row) in enumerate(rows.items()):
        context = ""
        if rid in position:
            src, i = position[rid]
            ids = groups[src]
            lo, hi = max(0, i - CONTEXT_NEIGHBOURS), min(len(ids), i + CONTEXT_NEIGHBOURS + 1)
            context = " ".join(rows[ids[j]][4] for j in range(lo, hi) if j != i)
        out[rid] = IndexRow(row, context, ord_, (days or {}).get(rid), sources.get(rid) or "")
    return out


def index_rows(records: Iterable[Mapping[str, Any]], tombstoned: Iterable[str] = ()) -> dict[str, IndexRow]:
    """Contract rows of the active, non-tombstoned records, each with its source context."""
    records = list(records)
    rows = fts.indexable(records, tombstoned)
    sources: dict[str, str | None] = {}
    days: dict[str, int | None] = {}
    for record in records:
        rid = record.get("id")
        if isinstance(rid, str) and rid in rows and rid not in sources:
            sources[rid] = source_of(record)
            days[rid] = record_day(record.get("created_at"))
    return _with_context(rows, sources, days)


def load_rows(root: Path | str) -> dict[str, IndexRow]:
    """Read the store and compute what the indexes should hold."""
    return scan(root).rows


# One encoder for every record of a sync (``json.dumps`` with options builds one per call).
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode


def encode_record(record: Mapping[str, Any]) -> bytes:
    """A record as stored in ``recall.db``: :func:`decode_record` gives back an equal dict, with the
    same key order, ints and floats, and lone surrogates (UTF-8 with ``surrogatepass``)."""
    return _ENCODE(record).encode("utf-8", "surrogatepass")


def decode_record(body: bytes) -> dict[str, Any]:
    value = json.loads(bytes(body).decode("utf-8", "surrogatepass"))
    assert isinstance(value, dict)
    return value


def select_rows_for(records: Sequence[Mapping[str, Any]], rows: Mapping[str, IndexRow]) -> SelectRows:
    """``SelectRows`` of the store's records (all statuses, tombstoned ones already left out, in
    store order, as ``Store.records(active_only=False)`` returns them) and their index rows."""
    from commonkeep.recall.projection import is_hard_rule, priority_key

    active = [r for r in records if r.get("status") == "active"]
    by_id = {str(r["id"]): r for r in active}  # the last line of an id wins, as in select
    hard = sorted((r for r in active if is_hard_rule(r)), key=priority_key)
    contested = sorted((r for r in records if r.get("status") == "contested"), key=priority_key)
    ranked = {("hard", i): encode_record(r) for i, r in enumerate(hard)}
    ranked.update({("contested", i): encode_record(r) for i, r in enumerate(contested)})
    return SelectRows({rid: inline(encode_record(by_id[rid])) for rid in rows if rid in by_id}, ranked)


@dataclass
class Scan:
    """One streamed read of the record files: what both indexes and the selection tables need."""

    rows: dict[str, IndexRow] = field(default_factory=dict)
    places: dict[str, Place] = field(default_factory=dict)  # id -> place (unless ``on_place`` took it)
    ranked: dict[tuple[str, int], bytes] = field(default_factory=dict)
    records: int = 0  # valid record lines read
    # every valid record line has an id no other valid line has (``delta`` then need not look
    # for a line's id elsewhere when the line keeps its id)
    unique_ids: bool = True

    @property
    def select(self) -> SelectRows:
        return SelectRows(self.places, self.ranked)


def _lines(path: Path) -> Iterable[tuple[int, bytes, dict[str, Any] | None]]:
    """``(offset, line, parsed object or None when it does not parse)`` of every non-blank line
    (``line`` without the whitespace around it; ``offset``: where it starts in the file)."""
    from commonkeep.store.jsonl import MAX_LINE_BYTES

    if not path.exists():
        return
    pos = 0
    with open(path, "rb") as fh:
        for raw in fh:
            start, pos = pos, pos + len(raw)
            line = raw.strip()
            if not line:
                continue
            if raw[0] in b" \t\r\n\f\v":  # bytes.strip's whitespace
                start += len(raw) - len(raw.lstrip())
            if len(line) > MAX_LINE_BYTES:
                yield start, line, None
                continue
            try:
                value = json.loads(line.decode("utf-8", "surrogateescape"))
            except (ValueError, RecursionError, MemoryError):
                yield start, line, None
                continue
            yield start, line, value if isinstance(value, dict) else None


def scan(root: Path | str, on_place: Callable[[str, Place], None] | None = None,
         read: Callable[[int], None] | None = None) -> Scan:
    """Read the canonical files once; ``on_place(id, place)``, when given, receives each active
    record's place in store order (the last call for an id wins) instead of ``Scan.places``;
    ``read(n)`` is told each line's size (progress)."""
    from commonkeep.recall.projection import is_hard_rule, priority_key
    from commonkeep.store.core import Store
    from commonkeep.store.layout import Layout
    from commonkeep.store.records import memory_record_problem

    lay = Layout(root)
    store = Store(root)  # warns and quarantines as every reader does
    dead = store.tombstoned_ids()
    out = Scan()
    rows: dict[str, fts.Row] = {}
    sources: dict[str, str | None] = {}
    days: dict[str, int | None] = {}
    hard: list[dict[str, Any]] = []
    contested: list[dict[str, Any]] = []
    seen: set[str] = set()

    def take(rec: dict[str, Any], where: tuple[str, int, bytes] | None) -> None:
        if memory_record_problem(rec) or rec["id"] in dead:
            return
        out.records += 1
        seen.add(rec["id"])
        status = rec.get("status")
        if status == "contested":
            contested.append(rec)
        if status != "active":
            return
        rid = rec["id"]
        line = b"" if where is None else where[2]
        utf8 = where is not None
        if utf8 and not line.isascii():
            try:
                line.decode("utf-8")  # a line must decode back as stored; invalid bytes keep the dict's JSON
            except UnicodeDecodeError:
                utf8 = False
        if rid not in rows:
            if utf8 and b"\\u" not in line:  # no lone surrogate can be in it
                rows[rid] = fts.row_for(rec, clean=True)
                sources[rid] = source_of(rec)
                days[rid] = record_day(rec.get("created_at"))
            elif not fts._LONE_SURROGATE.search(rid):
                rows[rid] = fts.row_for(rec)
                sources[rid] = source_of(rec)
                days[rid] = record_day(rec.get("created_at"))
        if is_hard_rule(rec):
            hard.append(rec)
        if rid not in rows:
            return
        place = (where[0], where[1], len(line), None) if utf8 and where is not None else inline(encode_record(rec))
        if on_place is not None:
            on_place(rid, place)
        else:
            out.places[rid] = place

    for path in lay.canonical_files():
        if os.path.lexists(path.with_name(f".{path.name}.tmp-gens")):  # late lines to carry over first
            for whole in store.read(path).rows:
                take(whole, None)
            continue
        bad = False
        name = path.relative_to(lay.root).as_posix()
        for offset, line, parsed in _lines(path):
            if read is not None:
                read(len(line) + 1)
            if parsed is None:
                bad = True
            else:
                take(parsed, (name, offset, line))
        if bad:
            store.read(path)  # names and quarantines the line(s) it skipped, once
    out.unique_ids = len(seen) == out.records
    out.rows = _with_context(rows, sources, days)
    hard.sort(key=priority_key)
    contested.sort(key=priority_key)
    out.ranked = {("hard", i): encode_record(r) for i, r in enumerate(hard)}
    out.ranked.update({("contested", i): encode_record(r) for i, r in enumerate(contested)})
    return out
