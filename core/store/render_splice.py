"""``rendered/`` after an apply that changed a few records, spliced from the pages' previous bytes.

``render_all`` renders MEMORY.md and every project page from every record: at 100,000 records
about 1.8 s (the projection cache loaded and saved whole, a 38 MB page built and compared),
although a one-op apply changes one block. Each time ``render_all`` writes or confirms the pages
from record files it read whole and found plainly clean (every line a valid record), it also
leaves ``runtime/rendered-index.bin`` (:data:`NAME`): for every line of every canonical record
file, in file order, the record's id, where it is shown (MEMORY.md's L1 or L2 section, nowhere,
or nowhere because it is tombstoned), its project name, the byte length of its block in the page
and of its line in the file; with the stamps (inode, size, mtime) of the record files and of the
tombstones it was rendered from, the stamps of the pages as written, and
``projection_cache.fingerprint()`` (the code a block depends on) with this module's own stamp.

:func:`render_changed` then builds the pages an apply leaves from that index: slices of the old
MEMORY.md for every block that did not change, ``_shown`` (redacted, rendered) for the records
the apply wrote. It reads neither the record files nor the projection cache (the tombstones,
yes: a tombstone hides every line of its id). It answers ``None``, and the caller renders with
``render_all``, whenever it cannot be sure: no index, or one from other code; record files not
as the index saw them when the apply read them; a file the apply did not write changed since; a
page changed since it was written (by hand, by another program) or made a link; a tombstone taken
back; a written file whose size is not the one the apply's changes give (another program wrote
to it meanwhile); a written record that is not a valid one.

What it cannot see: a record file changed in place by another program keeping its inode, size
and mtime, or written between the apply's write and this render with the size the apply's
changes give. ``commonkeep render`` (``render_all``) renders everything again.

The index is derived and machine-local, like the projection cache; a missing, torn, foreign or
unreadable one is simply not used.
"""

from __future__ import annotations

import json
import os
from array import array
from itertools import compress
from pathlib import Path
from typing import Any

from commonkeep.store.layout import Layout, slug
from commonkeep.store.page_writer import _open_page, _Pieces, _pread, _project_pages
from commonkeep.store.render import _CACHE, _shown
from commonkeep.store.rendered_index import (
    _SHOWN,
    DEAD,
    HIDDEN,
    L1,
    L2,
    MID,
    NAME,
    NO_L1,
    NO_L2,
    PREFIX,
    TAIL,
    Index,
    _bytes,
    _Doubt,
    _kind,
    _page_size,
    _page_stamp,
    _save,
    _stat,
    boot_id,
    forget,
    load,
    stamps,
)
from commonkeep.store.rendered_source import keep, read_source, vouch

__all__ = ["DEAD", "NAME", "Index", "forget", "keep", "load", "read_source", "render_changed", "stamps", "vouch"]

Row = dict[str, Any]
Stamp = tuple[int, int, int]


class _New:
    """A line the apply wrote: its record's id, kind, project name, block and line length."""

    __slots__ = ("block", "id", "kind", "llen", "name")

    def __init__(self, rid: str, kind: int, name: str | None, block: bytes, llen: int) -> None:
        self.id = rid
        self.kind = kind
        self.name = name
        self.block = block
        self.llen = llen


def _new(rid: str, rec: Row, dead: set[str]) -> _New:
    """The line the apply wrote for ``rec`` (``RecordChanges`` writes ``encode_rows([rec])``), as
    a render that reads it back shows it."""
    from commonkeep.store.jsonl import encode_rows
    from commonkeep.store.records import memory_record_problem

    line = encode_rows([rec])
    try:
        row = json.loads(line.decode("utf-8", "surrogateescape"))  # what a read of the file gives
    except (ValueError, RecursionError) as exc:
        raise _Doubt("a written line does not read back") from exc
    if not isinstance(row, dict) or row.get("id") != rid or line.count(b"\n") != 1 or memory_record_problem(row):
        raise _Doubt(f"{rid}: not a valid record, or not under its own id")
    if rid in dead:
        return _New(rid, DEAD, None, b"", len(line) - 1)
    token = _CACHE.set(None)  # never the projection cache (loading it is the cost this module saves)
    try:
        s = _shown(row)
    finally:
        _CACHE.reset(token)
    k = _kind(s)
    return _New(rid, k, str(s.project) if s.project is not None else None, _bytes(s.block) if k != HIDDEN else b"",
                len(line) - 1)


Segment = tuple[int, int] | _New  # old lines a..b-1 kept, or a written line


def render_changed(layout: Layout, before: dict[Path, tuple[int, int, int] | None],
                   changed: dict[Path, dict[str, Row | None]]) -> list[Path] | None:
    """Re-render ``rendered/`` after an apply wrote ``changed`` (per canonical file, record id ->
    the new record, ``None``: its line dropped; ``RecordChanges`` semantics) to record files whose
    stamps were ``before`` (every canonical file, as :func:`stamps` gives them, taken under the
    writer lock before the apply wrote). The pages are spliced from their previous bytes and the
    index; only pages whose bytes change are written. Returns the pages written, as ``render_all``
    would, or ``None`` when the index cannot vouch for the pages (module doc): then nothing was
    written, and the caller calls ``render_all``. The caller holds the writer lock.

    A plan ``splice_ahead.prepare`` made for the same ``before`` and ``changed`` is used when
    everything it could not see then still holds; else it is dropped and the pages planned here."""
    from commonkeep.store import splice_ahead

    early = splice_ahead.take(layout, before, changed)
    if early is not None:
        return _written(layout, *early)
    old: list[int] = []  # MEMORY.md as the index saw it, open from the first look to the last copy
    try:
        plan = _plan(layout, before, changed, old)
    except (_Doubt, OSError):
        _release(old, False)
        return None
    return _written(layout, plan, old)


def _written(layout: Layout, plan: _Plan, old: list[int]) -> list[Path] | None:
    replaced = False
    try:
        try:
            written = plan.write(layout)
        except _Doubt:  # MEMORY.md, written first, changed while copied: nothing was written
            return None
        replaced = layout.rendered_memory in written
        return written
    finally:
        if plan.built is not None:
            _Pieces.discard(plan.built)
            plan.built = None
        _release(old, replaced)


def _release(old: list[int], replaced: bool) -> None:
    for fd in old:
        if replaced:  # the old page, renamed over: its blocks are freed while the apply goes on
            from commonkeep.store import release

            release.later(fd)
        else:
            os.close(fd)


class _Plan:
    """The pages to write and the index to leave."""

    def __init__(self, index: Index, memory: _Pieces | None, writes: list[tuple[Path, bytes]], pages: list[Path],
                 files: list[Path], size: int) -> None:
        self.index = index
        self.size = size  # MEMORY.md's, as the index's lines give it
        self.memory = memory  # MEMORY.md when its bytes change
        self.writes = writes  # the project pages whose bytes change
        self.pages = pages
        self.files = files
        self.tomb: Stamp | None = None  # the tombstones' stamp, as read
        self.then: dict[str, Stamp | None] = {}  # the record files' stamps before the apply (relative paths)
        self.built: tuple[int, str] | None = None  # MEMORY.md already in its temp file (``splice_ahead.prepare``)
        self.sizes: dict[Path, int] = {}  # each written record file's size, as the changes give it (``splice_ahead.prepare``)
        self.pages_then: list[tuple[str, Stamp]] = []  # the pages' stamps the plan started from

    def write(self, layout: Layout) -> list[Path]:
        from commonkeep.store.jsonl import atomic_write_bytes

        written = []
        if self.memory is not None or self.writes:
            forget(layout)
        if self.memory is not None:
            # not fsynced where the boot can be told (``rendered_index`` module doc): the index then
            # holds this boot, and vouches for the page in no other
            boot = boot_id()
            if self.built is None:
                self.built = self.memory.build(layout.rendered_memory)  # _Doubt when the old page changed meanwhile: nothing written
            built, self.built = self.built, None
            self.memory.install(built, layout.rendered_memory, durable=boot is None)
            self.index.boot = boot
            written.append(layout.rendered_memory)
        for path, data in self.writes:
            atomic_write_bytes(path, data)
            written.append(path)
        ix = self.index
        try:  # the files as the caller, holding the writer lock, has just written them
            ix.files = [(layout.rel(p), _stat(p), c) for p, (_, _, c) in zip(self.files, ix.files, strict=True)]
        except OSError:
            return written  # no index: the next apply renders everything
        _save(layout, ix, self.pages, self.size)
        return written




def _plan(layout: Layout, before: dict[Path, Stamp | None], changed: dict[Path, dict[str, Row | None]],
          opened: list[int], ix: Index | None = None, sizes: dict[Path, int] | None = None) -> _Plan:
    """The plan; ``sizes`` given (``splice_ahead.prepare``, before the apply has written), each
    written file's size is not compared with the file but put there, to be compared later."""
    if ix is None:
        ix = load(layout)
    if ix is None:
        raise _Doubt("no index")
    rel = layout.rel
    then = {rel(p): s for p, s in before.items()}
    if len(then) != len(before) or then != {r: s for r, s, _ in ix.files}:
        raise _Doubt("the record files are not those the pages were rendered from")
    now = layout.canonical_files()
    now_rel = [rel(p) for p in now]
    edits = {rel(p): c for p, c in changed.items()}
    if len(edits) != len(changed) or not set(edits) | set(then) <= set(now_rel) or not set(now_rel) <= set(edits) | set(then):
        raise _Doubt("record files came or went")
    for p, r in zip(now, now_rel, strict=True):
        if r not in edits and _stat(p) != then[r]:
            raise _Doubt(f"{r} changed since the apply read it")
    for r, s in ix.pages:
        if _page_stamp(layout.root / r) != s:
            raise _Doubt(f"{r} changed since it was written")
    fd = _open_page(layout.rendered_memory, ix.pages[0][1])
    opened.append(fd)
    old1, old2 = ix.sections
    if (_pread(fd, len(PREFIX), 0) != PREFIX or _pread(fd, len(MID), old1.end) != MID
            or _pread(fd, len(TAIL), old2.end) != TAIL or ix.pages[0][1][1] != old2.end + len(TAIL)
            or (not old1.m and _pread(fd, len(NO_L1), old1.start) != NO_L1)
            or (not old2.m and _pread(fd, len(NO_L2), old2.start) != NO_L2)):
        raise _Doubt("MEMORY.md is not laid out as the index says")

    from commonkeep.store.core import Store

    t0 = _stat(layout.tombstones)
    dead = Store(layout.root, warn=False).tombstoned_ids()
    if _stat(layout.tombstones) != t0:
        raise _Doubt("the tombstones changed while read")
    kind, proj, blen = ix.kind, ix.proj, ix.blen
    gone: list[int] = []  # old lines whose block leaves the page, or whose project loses them
    if t0 != ix.tomb:  # tombstones added: their lines are hidden from now on
        kind, proj, blen = bytearray(kind), array("I", proj), array("Q", blen)
        for g, rid in enumerate(ix.ids):
            if rid in dead:
                if kind[g] != DEAD:
                    gone.append(g)
                    kind[g], proj[g], blen[g] = DEAD, 0, 0
            elif kind[g] == DEAD:
                raise _Doubt(f"{rid} is no longer tombstoned")

    # each file's lines after the apply: kept runs of old lines, and the lines it wrote
    offsets, at = {}, 0
    for r, _, c in ix.files:
        offsets[r] = (at, at + c)
        at += c
    bounds: dict[int, int] = {}  # line -> where its id starts in ``ix.idblob`` (where known): each file's first
    if ix.spans is not None:
        line = byte = 0
        bounds[0] = 0
        for (_, _, c), span in zip(ix.files, ix.spans, strict=True):
            line, byte = line + c, byte + span
            bounds[line] = byte
    segments: list[Segment] = []
    counts: list[int] = []
    spans: list[list[Segment]] = []  # each file's segments
    for path, r in zip(now, now_rel, strict=True):
        a, b = offsets.get(r, (0, 0))
        change = edits.get(r)
        if change is None:
            if b > a:
                segments.append((a, b))
            counts.append(b - a)
            spans.append([(a, b)])
            continue
        mine: list[Segment] = []
        seen: set[str] = set()
        pos = a
        for g, rid in _lines_of(ix, a, b, change, bounds):
            if g > pos:
                mine.append((pos, g))
            pos = g + 1
            gone.append(g)
            if rid in seen:
                continue  # a later line of the same id is dropped
            seen.add(rid)
            rec = change[rid]
            if rec is not None:
                mine.append(_new(rid, rec, dead))
        if b > pos:
            mine.append((pos, b))
        mine += [_new(rid, rec, dead) for rid, rec in change.items() if rec is not None and rid not in seen]
        size = sum(sum(ix.llen[x[0]:x[1]]) + x[1] - x[0] if isinstance(x, tuple) else x.llen + 1 for x in mine)
        if sizes is not None:
            sizes[path] = size
        else:
            st = _stat(path)
            if size != (st[1] if st is not None else 0):
                raise _Doubt(f"{r} is not the size the apply's changes give")
        segments += mine
        counts.append(sum(x[1] - x[0] if isinstance(x, tuple) else 1 for x in mine))
        spans.append(mine)

    # MEMORY.md: each section is the old one without the blocks gone, with the new blocks after
    # the nearest kept block before them
    last = {L1: -1, L2: -1}
    after: dict[int, dict[int, list[bytes]]] = {L1: {}, L2: {}}
    for x in segments:
        if isinstance(x, tuple):
            for k in (L1, L2):
                found = kind.rfind(k, x[0], x[1])
                if found >= 0:
                    last[k] = found
        elif x.kind in (L1, L2):
            after[x.kind].setdefault(last[x.kind], []).append(x.block)
    gone = sorted(set(gone))
    page = _Pieces(fd, ix.pages[0][1])
    page.run(0, len(PREFIX))
    for sec, k, empty, tail in ((old1, L1, NO_L1, MID), (old2, L2, NO_L2, TAIL)):
        out = [g for g in gone if ix.kind[g] == k]
        anchors = sorted(after[k])
        numbered = dict(zip(anchors[1:] if anchors and anchors[0] == -1 else anchors,
                            sec.numbers(a for a in anchors if a >= 0), strict=True))
        events = sorted([(n, 0, -1) for n in sec.numbers(out)] + [(numbered.get(a, -1), 1, a) for a in anchors])
        items: list[tuple[int, int] | bytes] = []  # runs of old blocks, new blocks
        cur = 0
        for n, what, a in events:
            if what == 0:  # block n leaves
                if cur < n:
                    items.append((sec.first(cur), sec.last(n - 1)))
                cur = n + 1
            else:  # new blocks after block n (-1: at the start)
                if cur <= n:
                    items.append((sec.first(cur), sec.last(n)))
                cur = n + 1
                items += after[k][a]
        if cur < sec.m:
            items.append((sec.first(cur), sec.last(sec.m - 1)))
        for i, item in enumerate(items):
            if i:
                page.add(b"\n\n")
            if isinstance(item, tuple):
                page.run(*item)
            else:
                page.add(item)
        if not items:
            page.add(empty)
        page.add(tail)

    # the new index's lines; the ids from the old ones' bytes, where every kept run's are known
    names = list(ix.names)
    number = {x: i for i, x in enumerate(names, 1)}
    ids, id_spans = _new_ids(ix, bounds, spans)
    nkind = bytearray()
    nproj, nblen, nllen = array("I"), array("Q"), array("Q")
    for x in segments:
        if isinstance(x, tuple):
            a, b = x
            nkind += kind[a:b]
            nproj += proj[a:b]
            nblen += blen[a:b]
            nllen += ix.llen[a:b]
        else:
            nkind.append(x.kind)
            if x.name is not None and x.name not in number:
                names.append(x.name)
                number[x.name] = len(names)
            nproj.append(number[x.name] if x.name is not None else 0)
            nblen.append(len(x.block))
            nllen.append(x.llen)
    if _page_size(nkind, nblen) != page.size:
        raise _Doubt("the spliced page does not add up")  # never expected: a bug, not a state of the root
    writes: list[tuple[Path, bytes]] = []

    # the project pages of the names whose lines changed, and of the slugs another name now wins
    touched = {ix.proj[g] for g in gone}
    touched |= {number[x.name] for x in segments if not isinstance(x, tuple) and x.name is not None and x.kind != DEAD}
    touched.discard(0)
    pages = [layout.rendered_memory] + [layout.root / r for r, _ in ix.pages[1:]]
    if touched:
        was = _winners(ix.names, ix.kind, ix.proj)
        won = _winners(names, nkind, nproj)
        tracked = {r for r, _ in ix.pages[1:]}
        todo = {name: w for name, w in won.items()
                if w in touched or was.get(name) != w or rel(_project_page(layout, name)) not in tracked}
        if todo:
            built = _project_pages(page, nkind, nproj, nblen, set(todo.values()))
            for name, w in todo.items():
                path = _project_page(layout, name)
                data = built[w]
                if path.is_symlink():
                    raise _Doubt(f"{rel(path)} is a link")
                try:  # as render_all: a page of another size differs, not read to be compared
                    if path.stat().st_size == len(data) and path.read_bytes() == data:
                        continue
                except FileNotFoundError:
                    pass
                writes.append((path, data))
        pages = [layout.rendered_memory] + [_project_page(layout, s) for s in won]
    index = Index(list(ix.files), t0, [], names, ids, nkind, nproj, nblen, nllen)
    index.spans = id_spans
    index.boot = ix.boot  # a page kept as it is stays as synced as it was
    index.files = [(r, None, c) for r, c in zip(now_rel, counts, strict=True)]  # stamps taken once written
    plan = _Plan(index, None if page.same() else page, writes, pages, now, page.size)
    plan.tomb = t0
    plan.then = then
    plan.pages_then = list(ix.pages)
    return plan


def _lines_of(ix: Index, a: int, b: int, change: dict[str, Any], bounds: dict[int, int]) -> list[tuple[int, str]]:
    """The lines ``a..b-1`` whose id is one of ``change``'s, in order, with their ids. A few ids are
    looked for in the ids' bytes (``bounds`` learns where each found line starts and ends); many, in
    the list of ids, in one pass."""
    if len(change) > 16 or a not in bounds or b not in bounds:
        ids = ix.ids
        return [(a + i, x) for i, x in enumerate(ids[a:b]) if x in change]
    blob = ix.idblob
    lo, hi = bounds[a], bounds[b]
    out = []
    for rid in change:
        if "\n" in rid:
            continue  # not an id the index can hold: on no line
        try:
            needle = rid.encode("utf-8") + b"\n"
        except UnicodeEncodeError:
            raise _Doubt(f"{rid!r} cannot be looked up") from None
        at = lo
        while (p := blob.find(needle, at, hi)) >= 0:
            if p == lo or blob[p - 1] == 10:  # a whole line, not the end of a longer id
                g = a + blob.count(b"\n", lo, p)
                bounds[g], bounds[g + 1] = p, p + len(needle)
                out.append((g, rid))
            at = p + 1
    return sorted(out)


def _new_ids(ix: Index, bounds: dict[int, int], spans: list[list[Segment]]) -> tuple[bytes | list[str], list[int] | None]:
    """The new index's ids, and each file's bytes of them: the old ids' bytes cut at known lines
    (``bounds``) and the written lines' ids; else (a run whose ends are not known) the list."""
    if all(x[0] in bounds and x[1] in bounds for seg in spans for x in seg if isinstance(x, tuple)) and \
            not any("\n" in x.id for seg in spans for x in seg if not isinstance(x, tuple)):
        blob = ix.idblob
        pieces: list[bytes] = []
        sizes = []
        try:
            for seg in spans:
                size = 0
                for x in seg:
                    piece = blob[bounds[x[0]]:bounds[x[1]]] if isinstance(x, tuple) else x.id.encode("utf-8") + b"\n"
                    pieces.append(piece)
                    size += len(piece)
                sizes.append(size)
            return b"".join(pieces), sizes
        except UnicodeEncodeError:  # a lone surrogate: as a list, which no index can hold (``_save``)
            pass
    ids: list[str] = []
    for seg in spans:
        for x in seg:
            if isinstance(x, tuple):
                ids += ix.ids[x[0]:x[1]]
            else:
                ids.append(x.id)
    return ids, None




def _project_page(layout: Layout, s: str) -> Path:
    return layout.rendered_projects_dir / f"{s}.md"


def _winners(names: list[str], kind: bytes | bytearray, proj: array[int]) -> dict[str, int]:
    """Slug -> the name whose page it gets, in ``render_all``'s order: names first seen in line
    order (tombstoned lines are not seen), one page per name, a later name winning its slug."""
    out: dict[str, int] = {}
    for x in dict.fromkeys(compress(proj, kind.translate(_SHOWN))):
        if x:
            out[slug(names[x - 1])] = x
    return out
