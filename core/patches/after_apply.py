"""The ``after_apply`` listeners of an apply, and deferring the embedding of new records.

``run`` calls every listener as ``Plugins.after_apply`` does (one failing never stops the others;
their errors are returned). Within :func:`embedding_deferred` the search plugin's listener is
replaced by a sync of the search index that embeds nothing: loading the embedding model costs a
new process over a second, and a search embeds what has no vector yet
(``semantic.QUERY_EMBED_LIMIT``), as the next apply's sync does. ``commonkeep review`` decides
inside it.

Within :func:`derived_deferred` (``serve`` decides inside it) an apply writes the canonical
files and the patch, runs the other listeners, and leaves the two files derived from the records
to :func:`catch_up`, which the server runs right after its response: ``rendered/`` (the
projection) and the search index. Nothing canonical waits for them, so a process that dies in
between loses nothing: a search syncs the index itself when the record files moved since it was
synced (its fingerprint), and the projection is rendered again whole by the next apply, by
``commonkeep render``, and by ``serve`` when it starts.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_EMBED_LATER: ContextVar[bool] = ContextVar("commonkeep_embed_later", default=False)
_DERIVED_LATER: ContextVar[bool] = ContextVar("commonkeep_derived_later", default=False)
_SEARCH_PLUGIN = "commonkeep.recall.search.plugin"


@contextmanager
def derived_deferred() -> Iterator[None]:
    """Within: applies leave ``rendered/`` and the search index to :func:`catch_up` (see the module doc)."""
    token = _DERIVED_LATER.set(True)
    try:
        yield
    finally:
        _DERIVED_LATER.reset(token)


def deferring() -> bool:
    """Whether the files derived from the records are left to :func:`catch_up` (``apply_patch`` asks)."""
    return _DERIVED_LATER.get()


def catch_up(root: str, role: str, *, search: bool = True, embed_limit: int | None = None) -> list[str]:
    """Bring the projection and the search index in line with the record files as they are now
    (after deferred applies; idempotent, a no-op when both are current). The projection is rendered
    under the writer lock, from the records read under it, so it never overwrites a newer one; the
    index syncs by its fingerprint, as a search would. Returns what failed, in words."""
    from commonkeep.patches.lock import writer_lock
    from commonkeep.store.layout import Layout
    from commonkeep.store.render import render_all

    errors: list[str] = []
    try:
        with writer_lock(root, role, "render"):
            render_all(Layout(root))
    except Exception as exc:  # derived: reported, the next apply or `commonkeep render` catches up
        errors.append(f"rendered/ was not refreshed ({exc}); run `commonkeep render`")
    if not search:
        return errors
    try:
        from commonkeep.recall.search.plugin import APPLY_EMBED_LIMIT
        from commonkeep.recall.search.sync import sync_root

        sync_root(root, embed=not _EMBED_LATER.get(), embed_limit=embed_limit if embed_limit is not None else APPLY_EMBED_LIMIT)
    except Exception as exc:  # the next search syncs it
        errors.append(f"the search index was not synced ({exc}); the next search syncs it")
    return errors


@contextmanager
def embedding_deferred() -> Iterator[None]:
    """Within: applies sync the search index without embedding their new records."""
    token = _EMBED_LATER.set(True)
    try:
        yield
    finally:
        _EMBED_LATER.reset(token)


def run(root: str, patch: dict[str, Any], applied: list[str], *, records_changed: bool = True) -> list[str]:
    """Every listener; ``records_changed`` false (the patch only decided candidates, as a reject
    does): the search index, which holds records, is not synced (nothing of it changed)."""
    from commonkeep.plugins import plugin_manager

    plugins = plugin_manager()
    if not _EMBED_LATER.get() and not _DERIVED_LATER.get() and records_changed:
        return plugins.after_apply(root, patch, applied)
    errors: list[str] = []
    for impl in plugins.pm.hook.commonkeep_after_apply.get_hookimpls():
        try:  # every listener as ``Plugins.after_apply`` runs them; the search index as said above
            if impl.plugin_name == _SEARCH_PLUGIN:
                if records_changed and not _DERIVED_LATER.get():  # else left to ``catch_up``
                    from commonkeep.recall.search.sync import sync_root

                    sync_root(root, embed=not _EMBED_LATER.get())
            else:
                impl.function(root=root, patch=patch, applied_ops=applied)
        except Exception as exc:  # one bad listener must not stop the others
            errors.append(f"{impl.plugin_name}: {exc}")
    return errors
