"""What an apply does while it waits for the disk (``store/ahead.py``): :func:`plan` names, before
the writer lock, what the hooks will need (their modules, the plugin manager); ``patch._apply_decided``
adds the pages' plan (``store/splice_ahead.py``) once the changes are decided. :func:`drop`, under
the lock at the end, drops what no one took."""

from __future__ import annotations

from commonkeep.store.layout import Layout


def drop(layout: Layout) -> None:
    """Pages planned ahead (``splice_ahead.prepare``) and not taken: dropped, their temp file removed."""
    import sys

    from commonkeep.store import ahead

    ahead.clear()
    early = sys.modules.get("commonkeep.store.splice_ahead")
    if early is not None:
        early.discard(layout)


def plan(layout: Layout, hooks: bool) -> None:
    """What the hooks will need, done while the record file is flushed (``store/ahead.py``): their
    modules and the plugin manager (``hooks``: the apply runs them)."""
    from commonkeep.patches.after_apply import _DERIVED_LATER, _EMBED_LATER
    from commonkeep.store import ahead

    ahead.clear()
    if _DERIVED_LATER.get():
        return  # ``rendered/`` and the index are left to ``after_apply.catch_up``

    def sync_modules() -> None:
        import commonkeep.recall.search.delta  # noqa: F401
        import commonkeep.recall.search.index  # noqa: F401
        import commonkeep.recall.search.sync  # noqa: F401

    def plugins() -> None:
        from commonkeep.plugins import plugin_manager

        plugin_manager()

    def embed_modules() -> None:
        import commonkeep.recall.search.changed_vectors  # noqa: F401

    if hooks:
        ahead.plan(sync_modules, plugins, *([] if _EMBED_LATER.get() else [embed_modules]))
