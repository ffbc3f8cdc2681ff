"""The pages an apply leaves, planned while its record file is copied and flushed
(``store/ahead.py``): :func:`prepare` makes ``render_splice``'s plan from the apply's decided
changes before they are written, and copies the new MEMORY.md into its temp file (not renamed);
``render_splice.render_changed`` then takes it (:func:`take`) only if what the plan could not see
still holds once the files are written (:func:`_still`), else drops it (its temp file removed) and
plans again. :func:`discard` drops a plan no render took (an apply that failed)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from commonkeep.store import render_splice
from commonkeep.store.layout import Layout
from commonkeep.store.page_writer import _Pieces
from commonkeep.store.render_splice import _Plan, _release
from commonkeep.store.rendered_index import NAME, _Doubt, _file_stamp, _page_stamp, _read, _stat

Row = dict[str, Any]
Stamp = tuple[int, int, int]


class _Early:
    """A plan made by :func:`prepare`, MEMORY.md already in its temp file."""

    def __init__(self, before: dict[Path, Stamp | None], changed: dict[Path, dict[str, Row | None]], plan: _Plan,
                 opened: list[int], ix_stamp: tuple[int, int, int, int]) -> None:
        self.before = before
        self.changed = changed
        self.plan = plan
        self.opened = opened
        self.ix_stamp = ix_stamp

    def drop(self) -> None:
        if self.plan.built is not None:
            _Pieces.discard(self.plan.built)
            self.plan.built = None
        _release(self.opened, False)


_prepared: dict[str, _Early] = {}


def prepare(layout: Layout, before: dict[Path, Stamp | None], changed: dict[Path, dict[str, Row | None]]) -> None:
    """Plan the pages an apply writing ``changed`` leaves, and copy MEMORY.md's into its temp file,
    before the apply has written them: while the record file is copied and flushed
    (``store/ahead.py``). What depends on the files as written (their sizes, every other file's
    stamp, the tombstones, the index and the pages unchanged) is checked when
    :func:`render_changed` takes the plan; nothing is renamed or removed here. Anything in doubt:
    no plan (``render_changed`` plans as ever)."""
    discard(layout)
    opened: list[int] = []
    plan = None
    try:
        ix_stamp, ix = _read(layout.runtime_dir / NAME)
        if ix is None:
            return
        sizes: dict[Path, int] = {}
        plan = render_splice._plan(layout, before, changed, opened, ix, sizes)
        plan.sizes = sizes
        if plan.memory is not None:
            plan.built = plan.memory.build(layout.rendered_memory)
    except Exception:  # anything: no plan (``render_changed`` plans again, and says what is wrong)
        _release(opened, False)
        return
    _prepared[str(layout.root)] = _Early(before, changed, plan, opened, ix_stamp)


def discard(layout: Layout) -> None:
    """Drop a plan :func:`prepare` made and no apply took (its temp file removed)."""
    early = _prepared.pop(str(layout.root), None)
    if early is not None:
        early.drop()


def _still(layout: Layout, plan: _Plan, ix_stamp: tuple[int, int, int, int]) -> bool:
    """Whether what :func:`prepare` could not see holds now the apply has written: the same record
    files, those it did not write as they were, those it wrote of the sizes its changes give, the
    tombstones as read, the index and the pages as they were (MEMORY.md not changed in place)."""
    try:
        if layout.canonical_files() != plan.files or _stat(layout.tombstones) != plan.tomb:
            return False
        for path in plan.files:
            r = layout.rel(path)
            if path in plan.sizes:
                st = _stat(path)
                if (st[1] if st is not None else 0) != plan.sizes[path]:
                    return False
            elif _stat(path) != plan.then.get(r):
                return False
        if _file_stamp(os.stat(layout.runtime_dir / NAME)) != ix_stamp:
            return False
        for r, st in plan.pages_then:
            if _page_stamp(layout.root / r) != st:
                return False
        if plan.memory is not None:
            plan.memory.check()
    except (_Doubt, OSError):
        return False
    return True


def take(layout: Layout, before: dict[Path, Stamp | None],
         changed: dict[Path, dict[str, Row | None]]) -> tuple[_Plan, list[int]] | None:
    """The plan :func:`prepare` made for these ``before`` and ``changed`` (the very objects), with
    the old page it holds open, when it still holds; ``None`` otherwise (any plan dropped)."""
    early = _prepared.pop(str(layout.root), None)
    if early is None:
        return None
    if early.before is before and early.changed is changed and _still(layout, early.plan, early.ix_stamp):
        return early.plan, early.opened
    early.drop()
    return None
