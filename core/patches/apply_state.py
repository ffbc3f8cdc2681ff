"""The store as the ops of one apply see it: read under the writer lock, each op seeing the
effect of the ones before (``ops._apply_op`` applies an op to it).

Most applies need only the records their ops name: a confidence, a status, a review date. Those
are found by id in the record files' bytes (``store.record_lookup``) instead of parsing every line
(1.4 s of a 3.4 s one-op apply at 100,000 records); every line is read when something asks for
all of them, when a lookup cannot say, and for the ops that compare a statement with every active
record (:func:`reads_by_id`).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, MutableMapping
from pathlib import Path
from typing import Any

from commonkeep.store.core import Store
from commonkeep.store.layout import (
    record_file as route,  # not ``curate``'s: an apply by id imports no curation
)

Row = dict[str, Any]


class _State:
    """The store as the ops see it while a patch is applied (re-read under the writer lock).

    ``by_id``: the ops need only the records they name (no op writes a statement, so no record is
    compared with every other): those are found by id in the files' bytes (``RecordLookup``), and
    every line is read only when something asks for all of them (``files``, iterating ``recs``)
    or a lookup cannot say."""

    def __init__(self, store: Store, patch_id: str = "", cands: dict[str, Row] | None = None, *,
                 by_id: bool = False) -> None:
        self.store = store
        self.patch_id = patch_id  # the ``ref`` of the evidence a contest with a reason adds
        self.root = store.layout.root
        self._read: tuple[dict[Path, list[Row]], dict[str, Row], dict[str, Path], list[Any]] | None = None
        self.tomb = store.tombstoned_ids()
        self._dead = frozenset(self.tomb)  # tombstoned when the files were read: their lines are not records here
        self.cands = cands if cands is not None else {str(c["id"]): c for c in store.candidates()}  # or those a patch names
        self.bad_evidence = {
            str(e.get("id")) for e in store.rows(store.layout.evidence) if e.get("redaction_status") in ("redacted", "deleted")
        }
        self.changed: dict[Path, dict[str, Row | None]] = {}
        self.cand_status: dict[str, str] = {}
        self.new_tombstones: list[Row] = []
        self.purge: list[str] = []
        self.purged_texts: list[str] = []
        self.tomb_updates: dict[str, Row] = {}
        self.promoted_elsewhere: set[str] = set()  # candidates another patch already promoted
        self.finished: list[str] = []  # tombstoned ids whose leftover lines this patch drops
        #: each record file as it was read (inode, size, time), for splicing the projection; ``None`` when unknown
        self.stamps: dict[Path, tuple[int, int, int] | None] | None = None
        self._lookup: Any = None
        self._put: dict[str, tuple[Row, Path] | None] = {}  # changed before every line was read (``None``: dropped)
        if by_id:
            from commonkeep.store.record_lookup import RecordLookup

            self._lookup = RecordLookup.open(store)
            if self._lookup is not None:
                self.stamps = self._lookup.stamps
        self._recs = _ById(self, 1)
        self._where = _ById(self, 2)

    @property
    def read_whole(self) -> bool:
        """Whether every line of the record files was read (``files`` known without reading them now)."""
        return self._lookup is None

    def _records(self) -> tuple[dict[Path, list[Row]], dict[str, Row], dict[str, Path], list[Any]]:
        """The record files, read on first use (a patch that only decides candidates reads none)."""
        if self._read is None:
            from commonkeep.store import (
                record_lines,  # lines read before in this process are not parsed again
            )
            from commonkeep.store.record_lookup import stamp

            paths = self.store.layout.canonical_files()
            before = {p: stamp(p) for p in paths}
            files = record_lines.records_by_file(self.store)  # as read: the projection after the apply starts from it
            if files is None:
                files = self.store.records_by_file(active_only=False)
            if self._lookup is not None:
                self.stamps = self._lookup.stamps if self._lookup.stamps == before else None
            else:
                self.stamps = before if all(stamp(p) == before[p] for p in paths) else None
            recs: dict[str, Row] = {}
            where: dict[str, Path] = {}
            for path, rows in files.items():
                for r in rows:
                    recs.setdefault(str(r["id"]), r)
                    where.setdefault(str(r["id"]), path)
            for rid, put in self._put.items():  # what the ops changed while records were found by id
                if put is None:
                    recs.pop(rid, None)
                    where.pop(rid, None)
                else:
                    recs[rid], where[rid] = put
            self._lookup = None
            self._read = (files, recs, where, list(self.store.tombstoned_lines))  # with leftovers of interrupted deletions
        return self._read

    def _by_id(self, rid: str) -> tuple[Row, Path] | None:
        """``rid``'s record and file while records are found by id (``None``: no such record)."""
        if rid in self._put:
            return self._put[rid]
        if rid in self._dead:
            return None
        from commonkeep.store.record_lookup import UNSURE

        hit = self._lookup.find(rid)
        if hit is UNSURE:
            self._records()  # a record not found by its bytes is looked for in every line
            return None
        path, rec = hit
        return rec, path

    @property
    def files(self) -> dict[Path, list[Row]]:
        return self._records()[0]

    @property
    def recs(self) -> MutableMapping[str, Row]:
        return self._recs if self._lookup is not None else self._records()[1]

    @property
    def where(self) -> MutableMapping[str, Path]:
        return self._where if self._lookup is not None else self._records()[2]

    @property
    def tombstoned_lines(self) -> list[Any]:
        return self._records()[3]

    def put(self, rec: Row) -> None:
        rid = str(rec["id"])
        path = self.root / route(rec)
        old = self.where.get(rid)
        if old is not None and old != path:
            self.changed.setdefault(old, {})[rid] = None
        self.recs[rid] = rec
        self.where[rid] = path
        self.changed.setdefault(path, {})[rid] = rec

    def drop(self, rid: str) -> None:
        path = self.where.pop(rid, None)
        self.recs.pop(rid, None)
        if path is not None:
            self.changed.setdefault(path, {})[rid] = None


class _Whole:
    """Every line of the record files was read: the read dicts answer."""


_WHOLE = _Whole()


class _ById(MutableMapping[str, Any]):
    """``_State.recs`` (``part`` 1) or ``_State.where`` (2): found by id until every line is read,
    then the read dicts themselves."""

    def __init__(self, st: _State, part: int) -> None:
        self.st = st
        self.part = part

    def _whole(self) -> dict[str, Any]:
        return self.st._records()[self.part]  # type: ignore[return-value]

    def _found(self, rid: str) -> tuple[Row, Path] | None | _Whole:
        """``rid``'s record and file while found by id (``None``: none), else :data:`_WHOLE` (every
        line read: before, or now because the lookup could not say)."""
        if self.st._lookup is None:
            return _WHOLE
        hit = self.st._by_id(rid)
        return _WHOLE if self.st._lookup is None else hit

    def __getitem__(self, rid: str) -> Any:
        hit = self._found(rid)
        if isinstance(hit, _Whole):
            return self._whole()[rid]
        if hit is None:
            raise KeyError(rid)
        return hit[0] if self.part == 1 else hit[1]

    def __setitem__(self, rid: str, value: Any) -> None:
        old = self._found(rid)
        if isinstance(old, _Whole):
            self._whole()[rid] = value
            return
        rec, path = old if old is not None else ({}, self.st.root)
        self.st._put[rid] = (value, path) if self.part == 1 else (rec, value)

    def __delitem__(self, rid: str) -> None:
        old = self._found(rid)
        if isinstance(old, _Whole):
            del self._whole()[rid]
        elif old is None:
            raise KeyError(rid)
        else:
            self.st._put[rid] = None

    def __iter__(self) -> Iterator[str]:
        return iter(self._whole())

    def items(self) -> ItemsView[str, Any]:  # every record: read whole once, then the dict's own view
        return self._whole().items()

    def __len__(self) -> int:
        return len(self._whole())


_NO_STATEMENT = frozenset({"update", "update_stability", "flag_for_review", "deprecate", "decay", "contest",
                           "uncontest", "add_exception", "reject_candidate", "promote_to_vault_candidate"})


def reads_by_id(patch: Row, selected: set[str]) -> bool:
    """Whether the selected ops need only the records they name (``_State``'s ``by_id``): none
    writes a statement, which is compared with every active record (``SameStatement``), and none
    deletes (a deletion looks for the record's leftover lines in every file)."""
    for op in patch["ops"]:
        if str(op.get("op_id")) not in selected:
            continue
        upd = op.get("updates")
        if op.get("op") not in _NO_STATEMENT or (isinstance(upd, dict) and "statement" in upd):
            return False
    return True
