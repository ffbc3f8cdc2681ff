"""The review queue as the web app shows it: filtered, searched, paginated, kept fresh.

The queue itself is ``commonkeep.reviews.review.pending`` — the same one ``commonkeep review``
shows (scoring, matches, the ops curation would propose with before/after). Computing it reads
and scores the whole inbox (seconds at 10,000 candidates), so :class:`Queue` keeps the last
computed queue and recomputes it in a background thread whenever the store's stamp changes.
No page waits for that computation: a page is rendered from the last queue at once (before the
first one, from the inbox as stored, unscored); candidates decided since then are dropped by a
cheap read of the inbox, and the page says the scores are being refreshed.

A candidate's own page is computed for that candidate alone (``decide.plan`` against the records,
a few milliseconds), so a candidate written seconds ago opens at once and shows exactly what
approving it does. A decision made through this server (``actions.decide`` with ``queue=``)
updates the queue in place (:meth:`Queue.decided`): the decided candidates leave it, the few
whose matched records it touched are recomputed, the records it changed are told to the cached
:class:`~commonkeep.reviews.decide.Context`, and no full recompute follows. Such a decision
leaves ``rendered/`` and the search index to :meth:`Queue.owe` (``catch_up``), right after
the response (``after_apply.catch_up``; the rule is in ``after_apply``'s module doc).

``pending`` runs curation as a dry run (``write=False``: nothing is written), which every role
may do (as ``commonkeep review --list``); every write goes through the governance functions with
the server's own role.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from commonkeep.reviews.decide import Context, load_context, plan
from commonkeep.reviews.review import ReviewItem, item_of, pending
from commonkeep.store.core import Store
from commonkeep.store.layout import Layout
from commonkeep.web.catch_up import CatchUp
from commonkeep.web.filters import PAGE_SIZE, RISKS, STATUSES, Filters, Page, _tags, agent_of  # noqa: F401  (they lived here)
from commonkeep.web.fingerprint import TAIL_BYTES, _tail, stamp  # noqa: F401  (they lived here)

Row = dict[str, Any]
_LIVE: weakref.WeakValueDictionary[str, Queue] = weakref.WeakValueDictionary()


class Queue:
    """The last computed review queue of one root, recomputed in the background on change."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.layout = Layout(self.root)  # its paths, to stat (reads build a Layout again: it checks the links)
        self._lock = threading.Lock()
        self._items: dict[str, ReviewItem] = {}
        self._stamp: str | None = None
        self._computing: threading.Thread | None = None
        self._ready = threading.Event()
        self.error: str | None = None
        # the inbox as last read (rows, agents, tags), keyed by the file's identity and size
        self._raw: tuple[tuple[int, int, int], list[Row], list[str], list[str]] | None = None
        self._raw_tail = b""  # the last bytes of the inbox as last read (to recognise a pure append)
        self._ctx: tuple[str, Context] | None = None
        self._ctx_lock = threading.Lock()
        self._decided: set[str] = set()  # decided through this server while a recompute ran
        self._at: tuple[list[Row], int, dict[str, list[int]]] | None = None  # ``_index``: id -> places in the rows
        self._order: tuple[list[Row] | None, int, dict[int, list[tuple[str, int, str]]]] = (None, 0, {})  # ``_ordered``
        self._order_lock = threading.Lock()
        self._rest: str | None = None  # the store but the inbox, when the queue was last computed (``refresh``)
        self.deciding = threading.Lock()  # one decision of this server at a time (``actions.decide``)
        self.catch_up = CatchUp(self.root)  # the projection and search index after decisions (``owe``)
        _LIVE[str(self.root.resolve())] = self

    def _records_key(self) -> str:
        lay = self.layout
        key = []
        for p in (lay.tombstones, *lay.canonical_files()):
            try:
                st = p.stat()
                key.append(f"{p}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}")
            except OSError:
                continue
        return "|".join(key)

    def context(self) -> Context:
        """The records as a decision is matched against them (``decide.Context``), read again only
        when a record file or the tombstones changed other than by a decision of this server."""
        key = self._records_key()
        with self._ctx_lock:
            # read again too once many decisions were told to it (each decision also matches them all)
            if self._ctx is None or self._ctx[0] != key or len(self._ctx[1].extra) > 200:
                self._ctx = (key, load_context(self.root))
            return self._ctx[1]

    def records(self) -> dict[str, Row]:
        """Every record by id (all statuses): the cached :meth:`context`'s."""
        return self.context().by_id

    def fresh_item(self, cand: Row) -> ReviewItem:
        """One ``new`` candidate's review item computed now, for it alone (``decide.plan``): what
        approving it does with its default choice, the choices it offers, or why it is refused."""
        ctx = self.context()
        item = item_of(plan(ctx, cand), ctx.by_id)
        with self._lock:
            self._items[str(cand["id"])] = item
        return item

    def begin(self) -> tuple[bool, tuple[int, int, int] | None]:
        """Before a decision: whether the queue and the cached inbox are current (see :meth:`decided`)."""
        self._inbox()  # read now if it changed (an append costs only its lines)
        cached = self._raw
        try:
            st = self.layout.inbox.stat()
            inbox_now = (st.st_ino, st.st_mtime_ns, st.st_size) == (cached[0] if cached else None)
        except OSError:
            inbox_now = False
        # what agents appended since is scored now (a few candidates), so the decision keeps the queue current
        current = self.is_current() or self._score_appended(stamp(self.root, self.layout))
        return current and inbox_now, cached[0] if cached else None

    def decided(self, ids: list[str], result: Any, before: tuple[bool, tuple[int, int, int] | None]) -> None:
        """Take a decision made through this server (``result``, an ``ApplyResult``) into the queue.

        The decided candidates leave it; the candidates whose matched records the decision touched
        are recomputed (each alone); the cached inbox takes the new statuses (when its line count
        shows nobody else wrote meanwhile; else it is read again on the next page) and the queue is
        marked current when it was current before, so no full recompute follows a decision.
        """
        statuses = {str(k): str(v) for k, v in (getattr(result, "candidates", None) or {}).items()}
        statuses.update({i: statuses.get(i, "patched") for i in ids if i not in statuses})
        ops = (getattr(result, "patch", None) or {}).get("ops") or []
        # the records it changed (a record it added is new: no pending candidate was matched to it yet)
        touched = {str(o["target_id"]) for o in ops if o.get("target_id")}
        with self._lock:
            for i in statuses:
                self._items.pop(i, None)
            self._decided.update(statuses)
            stale = [i.candidate for i in self._items.values()
                     if any(str(m) in touched for m in i.candidate.get("matched_memory_ids") or ())] if touched else []
        with self._ctx_lock:
            if self._ctx is not None:
                self._ctx = (self._records_key(), self._ctx[1])  # the decision told it what changed
        consistent = self._take_statuses(statuses, before[1])
        for cand in stale[:200]:
            raw = self.stored(str(cand["id"]))
            if raw is not None and raw.get("status") == "new":
                self.fresh_item(raw)
        if before[0] and consistent:
            with self._lock:
                if consistent is True:
                    self._stamp = stamp(self.root, self.layout)
                # appended meanwhile: the next refresh scores only those lines (``_score_appended``)
                self._rest = stamp(self.root, self.layout, inbox=False)

    def _take_statuses(self, statuses: dict[str, str], key_before: tuple[int, int, int] | None) -> bool | str:
        """The cached inbox with the decision's statuses, re-keyed to the file as it is now, when the
        file holds exactly the cached rows (nobody appended or changed a line meanwhile)."""
        cached = self._raw
        path = Layout(self.root).inbox  # checked again: its bytes are read
        if cached is None or cached[0] != key_before:
            return False
        from commonkeep.store.line_edit import known

        try:
            st = path.stat()
            data = known(path) or b""  # the bytes the decision just wrote, when the file is still that size
            if len(data) != st.st_size or not data:
                data = path.read_bytes()
            if path.stat().st_mtime_ns != st.st_mtime_ns:
                return False
        except OSError:
            return False
        rows = cached[1]
        extra: list[Row] = []
        if data.count(b"\n") != len(rows):
            extra_rows = self._lines_after(data, len(rows), path)
            if extra_rows is None:
                self._raw = None  # read again (through Store) on the next page
                return False
            extra = extra_rows
        at = self._index(rows)
        for cid, status in statuses.items():  # in place: only the decided rows change (no copy of 10,000)
            for i in at.get(cid, ()):
                rows[i] = {**rows[i], "status": status}
        if extra:  # an agent appended meanwhile: its lines are taken as they are, scored by the next refresh
            rows = rows + extra
            self._raw = ((st.st_ino, st.st_mtime_ns, st.st_size), rows, sorted({*cached[2], *(a for a in map(agent_of, extra) if a)}),
                         sorted({*cached[3], *_tags(extra)})[:200])
        else:
            self._raw = ((st.st_ino, st.st_mtime_ns, st.st_size), rows, cached[2], cached[3])
        self._raw_tail = data[-TAIL_BYTES:]
        return "appended" if extra else True

    @staticmethod
    def _lines_after(data: bytes, n: int, path: Path) -> list[Row] | None:
        """The candidates on the lines after the first ``n`` of ``data`` (appended by an agent while a
        decision rewrote the statuses of the first ``n``), when they are whole, valid lines; else ``None``."""
        from commonkeep.store.jsonl import parse_jsonl
        from commonkeep.store.limits import candidate_limit_problem
        from commonkeep.store.records import candidate_problem

        if not data.endswith(b"\n"):
            return None
        at = 0
        for _ in range(n):
            at = data.find(b"\n", at) + 1
            if at == 0:
                return None
        read = parse_jsonl(data[at:], path)
        if read.bad or not read.rows or any(candidate_problem(r) or candidate_limit_problem(r) for r in read.rows):
            return None
        return list(read.rows)

    def inbox(self) -> list[Row]:
        """Every candidate as stored (any status), from the cached read of the inbox."""
        return self._inbox()[0]

    def _index(self, rows: list[Row]) -> dict[str, list[int]]:
        """Where each candidate id is in ``rows``, the cached inbox (built once per read of it)."""
        known = self._at
        if known is not None and known[0] is rows and known[1] == len(rows):
            return known[2]
        at: dict[str, list[int]] = {}
        for i, c in enumerate(rows):
            at.setdefault(str(c.get("id")), []).append(i)
        self._at = (rows, len(rows), at)
        return at

    def named(self, ids: Iterable[str]) -> list[Row]:
        """Every stored row of the candidates ``ids`` (any status, each line of an id), in file order:
        what a decision on them reads of the inbox, without going over the other rows."""
        rows = self._inbox()[0]
        at = self._index(rows)
        return [rows[i] for i in sorted({i for cid in ids for i in at.get(cid, ())})]

    def pending_rows(self, ids: Iterable[str]) -> dict[str, Row]:
        """The ``new`` candidates among ``ids``, by id: scored (risk, match) when the queue has them,
        else as stored; without going over the whole queue."""
        out: dict[str, Row] = {}
        for cid in ids:
            raw = self.stored(cid)
            if raw is None or raw.get("status") != "new":
                continue
            with self._lock:
                item = self._items.get(cid)
            out[cid] = item.candidate if item is not None else raw
        return out

    def pending_ids(self) -> set[str]:
        """The ids of every ``new`` candidate as stored."""
        return {str(c["id"]) for c in self._inbox()[0] if c.get("status") == "new"}

    def _inbox(self) -> tuple[list[Row], list[str], list[str]]:
        """Every candidate as stored, with the agents and tags there are; re-read only when the inbox file changed."""
        try:
            st = self.layout.inbox.stat()
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            key = (0, 0, 0)
        cached = self._raw
        if cached is not None and cached[0] == key:
            return cached[1], cached[2], cached[3]
        path = Layout(self.root).inbox  # checked again (the root's links): its bytes are read
        appended = self._appended(path, key) if cached is not None else None
        if appended is not None and cached is not None:
            raw = cached[1] + appended
            agents = sorted({*cached[2], *(a for a in (agent_of(c) for c in appended) if a)})
            tags = sorted({*cached[3], *_tags(appended)})[:200]
        else:
            raw = Store(self.root, warn=False).candidates()
            agents = sorted({a for a in (agent_of(c) for c in raw) if a})
            tags = sorted(_tags(raw))[:200]
            self._raw_tail = _tail(path, key[2])
        self._raw = (key, raw, agents, tags)
        return raw, agents, tags

    def _appended(self, path: Path, key: tuple[int, int, int]) -> list[Row] | None:
        """The candidates appended since the last read, when that is all that happened (same file,
        longer, the bytes before the old end unchanged, whole lines, every one valid); else ``None``
        and the caller reads the whole file through ``Store`` (which reports and quarantines)."""
        from commonkeep.store.jsonl import parse_jsonl
        from commonkeep.store.limits import candidate_limit_problem
        from commonkeep.store.records import candidate_problem

        assert self._raw is not None
        old_ino, _old_mtime, old_size = self._raw[0]
        if key[0] != old_ino or key[2] <= old_size or not self._raw_tail.endswith(b"\n"):
            return None
        try:
            with path.open("rb") as fh:
                fh.seek(old_size - len(self._raw_tail))
                if fh.read(len(self._raw_tail)) != self._raw_tail:
                    return None
                data = fh.read(key[2] - old_size)
        except OSError:
            return None
        if not data.endswith(b"\n"):
            return None  # a line still being written: the full read handles torn lines
        read = parse_jsonl(data, path)
        if read.bad or any(candidate_problem(r) or candidate_limit_problem(r) for r in read.rows):
            return None
        self._raw_tail = (self._raw_tail + data)[-TAIL_BYTES:]
        return list(read.rows)

    def _compute(self, wanted: str) -> None:
        try:
            with self._lock:
                self._decided = set()
            rest = stamp(self.root, self.layout, inbox=False)
            items = pending(self.root, role=None)  # a dry run: reading the queue needs no role
            with self._lock:
                self._items = {str(i.candidate["id"]): i for i in items if str(i.candidate["id"]) not in self._decided}
                self._stamp = wanted
                self._rest = rest
                self.error = None
        except Exception as exc:  # shown on the page; the last good queue stays
            self.error = str(exc)
        finally:
            self._ready.set()
            with self._lock:
                self._computing = None

    def owe(self, role: str, *, search: bool = True) -> None:
        """After a decision of this server: ``rendered/`` and the search index caught up in the
        background, right after the response (:class:`~commonkeep.web.catch_up.CatchUp`)."""
        self.catch_up.owe(role, search=search)

    def settle(self, timeout: float | None = None) -> bool:
        """Wait until what :meth:`owe` asked for is caught up."""
        return self.catch_up.settle(timeout)

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the first queue is computed (or failed); True when it was within ``timeout``."""
        return self._ready.wait(timeout)

    @classmethod
    def live(cls, root: Path | str) -> Queue | None:
        """The queue a server in this process keeps for ``root``, if any (``actions.decide`` uses it,
        so every decision through the server updates it in place, whichever page posted it)."""
        return _LIVE.get(str(Path(root).resolve()))

    def is_current(self) -> bool:
        """Whether the last computed queue is of the store as it is now (nothing is started)."""
        with self._lock:
            done = self._stamp
        return done is not None and done == stamp(self.root, self.layout)

    def refresh(self, *, wait: bool = False) -> bool:
        """Start a recompute if the store changed (waiting for it only with ``wait``); returns True
        when the queue is current.

        When agents only appended candidates since the last computation (the records, tombstones
        and patches as they were, the inbox grown by whole lines), only the appended candidates
        are scored, each alone (:meth:`fresh_item`), here and now: no full recompute runs in the
        server while an agent writes, so a person's decisions cost the same meanwhile."""
        now = stamp(self.root, self.layout)
        with self._lock:
            if self._stamp == now:
                return True
        if self._score_appended(now):
            return True
        with self._lock:
            if self._computing is None:
                self._computing = threading.Thread(target=self._compute, args=(now,), daemon=True, name="ck-web-queue")
                self._computing.start()
            thread = self._computing
        if wait:
            thread.join()
        with self._lock:
            return self._stamp == now

    def _score_appended(self, now: str) -> bool:
        """Score the candidates appended since the last computation, when that is all that changed
        (see :meth:`refresh`); True when the queue is current after it."""
        with self._lock:
            if self._stamp is None or self._computing is not None or self._rest != stamp(self.root, self.layout, inbox=False):
                return False
            known = set(self._items) | self._decided
        rows = self._inbox()[0]  # an append costs only its lines
        fresh = [c for c in rows if c.get("status") == "new" and str(c.get("id")) not in known]
        if len(fresh) > 200:
            return False  # a bulk import: the full computation, in the background
        for cand in fresh:
            self.fresh_item(cand)
        with self._lock:
            if self._rest == stamp(self.root, self.layout, inbox=False):
                self._stamp = now
        return self.is_current()

    def item(self, cid: str) -> ReviewItem | None:
        """One pending candidate's review item, computed now for it alone (:meth:`fresh_item`: a few
        milliseconds, never a wait for the queue); ``None`` when it is not ``new`` (decided, or unknown)."""
        raw = self.stored(cid)
        if raw is None or raw.get("status") != "new":
            return None
        return self.fresh_item(raw)

    def stored(self, cid: str) -> Row | None:
        """A candidate as stored (any status), from the cached read of the inbox (its first line)."""
        rows = self._inbox()[0]
        first = self._index(rows).get(cid)
        return rows[first[0]] if first and first[0] < len(rows) else None

    def _ordered(self, newest_first: bool = False) -> list[tuple[str, int, str]]:
        """The candidates as stored in review order, as an index kept between decisions (so the next
        candidate is found without sorting the queue): ``(created_at, place, id)`` ascending, the
        place in the inbox breaking ties (oldest first); newest first it is ``(created_at, -place,
        id)``, read backwards (a tie stays in inbox order either way, as the sorted view has it).
        Candidates appended since are inserted (``bisect``); decided ones stay and are skipped."""
        import bisect

        rows = self._inbox()[0]
        sign = -1 if newest_first else 1
        with self._order_lock:
            src, seen, orders = self._order
            same = src is not None and 0 < seen <= len(rows) and rows[seen - 1] is src[seen - 1] and rows[0] is src[0]
            if not same:
                orders = {}
                seen = 0
            for s_, order in orders.items():
                for i in range(seen, len(rows)):
                    bisect.insort(order, (str(rows[i].get("created_at") or ""), s_ * i, str(rows[i].get("id"))))
            if sign not in orders:
                orders[sign] = sorted((str(c.get("created_at") or ""), sign * i, str(c.get("id"))) for i, c in enumerate(rows))
            self._order = (rows, len(rows), orders)
            return orders[sign]

    def next_pending(self, current: str, matches: Any, *, exclude: set[str], newest_first: bool = False) -> str | None:
        """The pending candidate after ``current`` in the review order (oldest first, or newest
        first) that ``matches`` (a view's test on the scored row), else the one before it, else
        ``None`` (``current`` outside the view: the view's first); found from the order index, a
        few rows read, at any queue size."""
        import bisect

        order = self._ordered(newest_first)
        rows = self._inbox()[0]
        places = self._index(rows).get(current) or []
        row = rows[places[0]] if places else None
        with self._lock:
            item = self._items.get(current)
        if row is None or not matches(item.candidate if item is not None else row):
            at = len(order) if newest_first else -1  # not in the view: its first candidate
        else:
            at = bisect.bisect_left(order, (str(row.get("created_at") or ""), (-1 if newest_first else 1) * places[0], current))
        later, earlier = range(at + 1, len(order)), range(at - 1, -1, -1)  # in the list's (ascending) order
        for span in ((earlier, later) if newest_first else (later, earlier)):
            for i in span:
                cid = order[i][2]
                if cid == current or cid in exclude:
                    continue
                raw = self.stored(cid)
                if raw is None or raw.get("status") != "new":
                    continue
                with self._lock:
                    item = self._items.get(cid)
                if matches(item.candidate if item is not None else raw):
                    return cid
        return None

    def items(self) -> list[ReviewItem]:
        """The last computed queue (every pending candidate, with its ops)."""
        self.refresh(wait=True)
        with self._lock:
            return list(self._items.values())

    def page(self, filters: Filters, page_size: int = PAGE_SIZE) -> Page:
        """A page of candidates; ``new`` ones from the queue (scored), others as stored.

        A stale queue is not recomputed here: the caller calls :meth:`refresh` once the page is
        rendered, so the recompute does not compete with the page it would delay (``Page.refreshing``).
        """
        current = self.is_current()  # before the first queue: the inbox as stored, unscored, said on the page
        raw, agents, tags = self._inbox()
        if filters.status == "new":
            live = {str(c["id"]) for c in raw if c.get("status") == "new"}
            with self._lock:
                scored = [i.candidate for cid, i in self._items.items() if cid in live]
            known = {str(c["id"]) for c in scored}
            # written since the last computation: shown unscored until the recompute ends
            rows = scored + [c for c in raw if c.get("status") == "new" and str(c["id"]) not in known]
        elif filters.status == "all":
            rows = raw
        else:
            rows = [c for c in raw if c.get("status") == filters.status]
        hits = [c for c in rows if filters.matches(c)]
        pages = max(1, -(-len(hits) // page_size))
        n = min(filters.page, pages)
        return Page(items=hits[(n - 1) * page_size: n * page_size], total=len(hits), page=n, pages=pages,
                    agents=agents, tags=tags, refreshing=not current)


