"""The ``after_apply`` listeners of an apply, and deferring the embedding of new records.

``run`` calls every listener as ``Plugins.after_apply`` does (one failing never stops the others;
their errors are returned). Within :func:`embedding_deferred` the search plugin's listener is
replaced by a sync of the search index that embeds nothing: loading the embedding model costs a
new process over a second, and a search embeds what has no vector yet
(``semantic.QUERY_EMBED_LIMIT``), as the next apply's sync does. ``commonkeep review`` decides
inside it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_EMBED_LATER: ContextVar[bool] = ContextVar("commonkeep_embed_later", default=False)
_SEARCH_PLUGIN = "commonkeep.recall.search.plugin"


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
    if not _EMBED_LATER.get() and records_changed:
        return plugins.after_apply(root, patch, applied)
    errors: list[str] = []
    for impl in plugins.pm.hook.commonkeep_after_apply.get_hookimpls():
        try:  # every listener as ``Plugins.after_apply`` runs them; the search index as said above
            if impl.plugin_name == _SEARCH_PLUGIN:
                if records_changed:
                    from commonkeep.recall.search.sync import sync_root

                    sync_root(root, embed=not _EMBED_LATER.get())
            else:
                impl.function(root=root, patch=patch, applied_ops=applied)
        except Exception as exc:  # one bad listener must not stop the others
            errors.append(f"{impl.plugin_name}: {exc}")
    return errors
