"""The review queue as the web app shows it: filtered, searched, paginated, kept fresh.

The queue itself is ``commonkeep.governance.review.pending`` — the same one ``commonkeep review``
shows (scoring, matches, the ops curation would propose with before/after). Computing it reads
and scores the whole inbox (seconds at 10,000 candidates), so :class:`Queue` keeps the last
computed queue and recomputes it in a background thread whenever the store's stamp changes.
A page is rendered from the last queue at once; candidates decided since then are dropped by a
cheap read of the inbox, and the page says the scores are being refreshed.

``pending`` runs curation as a dry run (``write=False``: nothing is written), which every role
may do (as ``commonkeep review --list``); every write goes through the governance functions with
the server's own role.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.governance.review import ReviewItem, pending
from commonkeep.store.core import Store
from commonkeep.store.layout import Layout

Row = dict[str, Any]
PAGE_SIZE = 50
TAIL_BYTES = 256
RISKS = ("low", "medium", "high")
STATUSES = ("new", "patched", "rejected", "all")


def stamp(root: Path | str) -> str:
    """A cheap fingerprint of the store: changes when a candidate, record, patch or tombstone is written.

    Patches are fingerprinted by their folder, not file by file: every patch write is a new file
    renamed into ``patches/`` (``atomic_write_bytes``), which changes the folder's mtime, and
    stat-ing each of 10,000 patch files took ~70 ms on every poll and page.
    """
    lay = Layout(root)
    parts: list[str] = []
    for p in (lay.inbox, lay.tombstones, *lay.canonical_files(), lay.patches_dir):
        try:
            st = p.stat()
        except OSError:
            continue
        parts.append(f"{p.name}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}")
    # A digest, not ``hash()``: str hashes differ per process, so a page stamped before a restart
    # of ``serve`` (or by a second server on the same root) would always look stale.
    return hashlib.blake2b("|".join(parts).encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


def agent_of(cand: Row) -> str:
    prov = cand.get("provenance")
    if isinstance(prov, dict) and prov.get("agent"):
        return str(prov["agent"])
    return ""


@dataclass
class Filters:
    """What the reviewer asked to see."""

    agent: str = ""
    risk: str = ""
    status: str = "new"
    tag: str = ""
    q: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, params: Any) -> Filters:
        def get(key: str) -> str:
            value = params.get(key)
            return str(value).strip()[:200] if value is not None else ""

        try:
            page = max(1, int(get("page") or 1))
        except ValueError:
            page = 1
        status = get("status") or "new"
        return cls(agent=get("agent"), risk=get("risk") if get("risk") in RISKS else "",
                   status=status if status in STATUSES else "new", tag=get("tag"), q=get("q"), page=page)

    def matches(self, cand: Row) -> bool:
        if self.agent and agent_of(cand) != self.agent:
            return False
        if self.risk and cand.get("poisoning_risk") != self.risk:
            return False
        if self.tag and self.tag not in (cand.get("tags") or []):
            return False
        if self.q:
            hay = " ".join([str(cand.get("text", "")), str(cand.get("id", "")), " ".join(map(str, cand.get("tags") or []))]).casefold()
            if not all(word in hay for word in self.q.casefold().split()):
                return False
        return True


@dataclass
class Page:
    """One page of the inbox."""

    items: list[Row]
    total: int
    page: int
    pages: int
    agents: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    refreshing: bool = False


class Queue:
    """The last computed review queue of one root, recomputed in the background on change."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._items: dict[str, ReviewItem] = {}
        self._stamp: str | None = None
        self._computing: threading.Thread | None = None
        self._ready = threading.Event()
        self.error: str | None = None
        # the inbox as last read (rows, agents, tags), keyed by the file's identity and size
        self._raw: tuple[tuple[int, int, int], list[Row], list[str], list[str]] | None = None
        self._raw_tail = b""  # the last bytes of the inbox as last read (to recognise a pure append)
        self._records: tuple[str, dict[str, Row]] | None = None

    def records(self) -> dict[str, Row]:
        """Every record by id (all statuses), re-read only when a record file or the tombstones changed."""
        lay = Layout(self.root)
        key = []
        for p in (lay.tombstones, *lay.canonical_files()):
            try:
                st = p.stat()
                key.append(f"{p}:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}")
            except OSError:
                continue
        joined = "|".join(key)
        cached = self._records
        if cached is not None and cached[0] == joined:
            return cached[1]
        by_id = {str(r["id"]): r for r in Store(self.root, warn=False).records(active_only=False)}
        self._records = (joined, by_id)
        return by_id

    def _inbox(self) -> tuple[list[Row], list[str], list[str]]:
        """Every candidate as stored, with the agents and tags there are; re-read only when the inbox file changed."""
        path = Layout(self.root).inbox
        try:
            st = path.stat()
            key = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            key = (0, 0, 0)
        cached = self._raw
        if cached is not None and cached[0] == key:
            return cached[1], cached[2], cached[3]
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
            items = pending(self.root, role=None)  # a dry run: reading the queue needs no role
            with self._lock:
                self._items = {str(i.candidate["id"]): i for i in items}
                self._stamp = wanted
                self.error = None
        except Exception as exc:  # shown on the page; the last good queue stays
            self.error = str(exc)
        finally:
            self._ready.set()
            with self._lock:
                self._computing = None

    def is_current(self) -> bool:
        """Whether the last computed queue is of the store as it is now (nothing is started)."""
        with self._lock:
            done = self._stamp
        return done is not None and done == stamp(self.root)

    def refresh(self, *, wait: bool = False) -> bool:
        """Start a recompute if the store changed; returns True when the queue is current."""
        now = stamp(self.root)
        with self._lock:
            if self._stamp == now:
                return True
            if self._computing is None:
                self._computing = threading.Thread(target=self._compute, args=(now,), daemon=True, name="ck-web-queue")
                self._computing.start()
            thread = self._computing
        if wait or not self._ready.is_set():
            thread.join()
        with self._lock:
            return self._stamp == now

    def item(self, cid: str) -> ReviewItem | None:
        """One pending candidate's review item: from the last queue when it is there, else after a
        fresh computation. (The caller starts a recompute once its page is sent, see ``refresh``.)"""
        if not self._ready.is_set():
            self.refresh(wait=True)
        with self._lock:
            found = self._items.get(cid)
        if not self.is_current():
            if found is None:
                self.refresh(wait=True)
                with self._lock:
                    found = self._items.get(cid)
            elif (self.stored(cid) or {}).get("status") != "new":
                return None  # decided since the queue was computed: no longer pending
        return found

    def stored(self, cid: str) -> Row | None:
        """A candidate as stored (any status), from the cached read of the inbox."""
        return next((c for c in self._inbox()[0] if c.get("id") == cid), None)

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
        if not self._ready.is_set():
            self.refresh(wait=True)  # the very first page waits for the first queue
        current = self.is_current()
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


def _tail(path: Path, size: int) -> bytes:
    """The last :data:`TAIL_BYTES` bytes of the file's first ``size`` bytes."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, size - TAIL_BYTES))
            return fh.read(min(size, TAIL_BYTES))
    except OSError:
        return b""


def _tags(rows: Iterable[Row]) -> set[str]:
    out: set[str] = set()
    for c in rows:
        out.update(str(t) for t in c.get("tags") or [])
    return out
