"""The store: the canonical files of one memory root, in the OmpKeep layout.

- ``core``: ``Store``, reading and writing the canonical JSONL files (``from commonkeep.store
  import Store`` keeps working: the package re-exports ``core`` lazily).
- ``root``: which root, and why; ``layout``: its folders and files; ``jsonl``/``jsonjs``: lines
  and their byte-exact JSON; ``records``/``candidates``/``models``/``ids``/``evidence``: what a
  line may hold; ``render``: ``rendered/MEMORY.md`` and project pages; ``capture``: the one
  write path for candidates (``commonkeep.capture`` keeps importing).
- ``cli``: ``init``, ``root``, ``write``, ``inbox``, ``render``; ``bench``: the store benchmark.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module("commonkeep.store.core"), name)
