"""A set of strings a check said no to, kept so that the next ask is one look-up.

A capture's tags, refs, source and session id repeat from call to call; an ``lru_cache`` answers
them too, but each ask is a call of its own. ``Kept`` is emptied when full, and has the
``cache_clear`` and ``cache_parameters`` of an ``lru_cache``, so what empties those (the mutation
runs, ``scripts/mutation_plugin.py``) empties it too.
"""

from __future__ import annotations


class Kept(set[str]):
    """Strings known to need nothing: ``value in kept`` before the check, ``kept.keep(value)`` after."""

    def __init__(self, maxsize: int = 65536) -> None:
        super().__init__()
        self.maxsize = maxsize

    def keep(self, value: str) -> None:
        if len(self) >= self.maxsize:
            self.clear()
        self.add(value)

    def cache_clear(self) -> None:
        self.clear()

    def cache_parameters(self) -> dict[str, int]:
        return {"maxsize": self.maxsize}
