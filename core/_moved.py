"""Old module paths keep importing after the core was grouped into domain packages.

``commonkeep.curate``, ``commonkeep.search.hybrid``, ``commonkeep.capture`` … were modules at the
top of the package before 0.2. Third-party code and host configurations may still name them, so
a finder at the front of ``sys.meta_path`` hands out the module at its new path under the old
name: one module object, never a second copy with its own state.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any, cast

# old name (below ``commonkeep.``) -> new name; a package's submodules follow it
MOVED: dict[str, str] = {
    "jsonout": "util.jsonout", "timeutil": "util.timeutil", "llm": "util.llm",
    "root": "store.root", "layout": "store.layout", "jsonl": "store.jsonl",
    "jsonjs": "store.jsonjs", "records": "store.records", "candidates": "store.candidates",
    "ids": "store.ids", "evidence": "store.evidence", "models": "store.models", "render": "store.render",
    "capture": "store.capture", "cmd_store": "store.cli", "bench_store": "store.bench",
    "curate": "governance.curate", "patch": "governance.patch", "review": "governance.review",
    "forget": "governance.forget", "reinforce": "governance.reinforce", "inquiries": "governance.inquiries",
    "scoring": "governance.scoring", "matching": "governance.matching", "poisoning": "governance.poisoning",
    "secrets": "governance.secrets", "writer": "governance.writer", "cmd_governance": "governance.cli",
    "governance_plugin": "governance.plugin", "bench_governance": "governance.bench",
    "select": "recall.select", "projection": "recall.projection", "handoff": "recall.handoff",
    "cmd_recall": "recall.cli", "search": "recall.search", "mcp_server": "tools.mcp",
}


def new_name(fullname: str) -> str | None:
    """The module's current name, or ``None`` when ``fullname`` did not move."""
    head, dot, rest = fullname.partition(".")
    if head != "commonkeep" or not dot:
        return None
    first, dot2, tail = rest.partition(".")
    moved = MOVED.get(first)
    if moved is None:
        return None
    return f"commonkeep.{moved}{dot2}{tail}"


class _Alias:
    """Meta path finder and loader: the module at its new name, registered under the old one.

    Duck-typed on purpose: subclassing ``importlib.abc`` would import ``importlib.resources``
    on every start (about 7 ms), and hosts start the CLI on every tool call."""

    def __init__(self) -> None:
        self._real_specs: dict[str, ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        new = new_name(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None
        return importlib.util.spec_from_loader(fullname, cast(Any, self))

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        new = new_name(spec.name)
        assert new is not None
        module = importlib.import_module(new)
        self._real_specs[new] = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran under its new name. The import machinery has just set
        ``module.__spec__`` to the alias's spec; the module's own goes back, so ``__spec__.name``
        stays its real name and ``importlib.reload`` re-runs its code (the alias would do nothing)."""
        real = self._real_specs.pop(module.__name__, None)
        if real is not None:
            module.__spec__ = real


_ALIAS = _Alias()


def install() -> None:
    if _ALIAS not in sys.meta_path:
        sys.meta_path.insert(0, cast(Any, _ALIAS))
