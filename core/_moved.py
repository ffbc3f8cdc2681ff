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

# old name (below ``commonkeep.``) -> new name; a package's submodules follow it. Keys may be dotted
# (``governance.curate``): the longest key that prefixes the name wins.
MOVED: dict[str, str] = {
    # before 0.2: flat modules at the top of the package
    "jsonout": "util.jsonout", "timeutil": "util.timeutil",
    "root": "store.root", "layout": "store.layout", "jsonl": "store.jsonl",
    "jsonjs": "store.jsonjs", "records": "store.records", "candidates": "store.candidates",
    "ids": "store.ids", "evidence": "store.evidence", "models": "store.models", "render": "store.render",
    "capture": "gate.capture", "cmd_store": "store.cli", "bench_store": "bench.store",
    "curate": "patches.curate", "patch": "patches.patch", "review": "reviews.review",
    "forget": "patches.forget", "reinforce": "patches.reinforce", "inquiries": "store.inquiries",
    "scoring": "gate.scoring", "matching": "gate.matching", "poisoning": "gate.poisoning",
    "writer": "gate.writer", "cmd_governance": "governance.cli",
    "governance_plugin": "governance.plugin", "bench_governance": "bench.curate",
    "select": "recall.select", "projection": "recall.projection", "handoff": "recall.handoff",
    "cmd_recall": "recall.cli", "search": "recall.search", "mcp_server": "tools.mcp",
    # before 0.3 (issue 34, "the house by the path of the data"): governance/ split into the gate,
    # the patch path and the review path; secrets beneath the store; benchmarks in one package
    "governance.after_apply": "patches.after_apply",
    "governance.agent_shell": "gate.agent_shell",
    "governance.apply_journal": "patches.apply_journal",
    "governance.audit": "patches.audit",
    "governance.audit_log": "gate.audit_log",
    "governance.autoapply": "gate.autoapply",
    "governance.bench": "bench.curate",
    "governance.bench_gate": "bench.gate",
    "governance.bench_user_turn": "bench.userturn",
    "governance.curate": "patches.curate",
    "governance.curate_parity": "patches.curate_parity",
    "governance.decide": "reviews.decide",
    "governance.forget": "patches.forget",
    "governance.inquiries": "store.inquiries",
    "governance.latest": "patches.latest",
    "governance.matching": "gate.matching",
    "governance.normalize": "util.normalize",
    "governance.ops": "patches.ops",
    "governance.outcome": "reviews.outcome",
    "governance.patch": "patches.patch",
    "governance.plainwords": "reviews.plainwords",
    "governance.poisoning": "gate.poisoning",
    "governance.poisoning_literals": "gate.poisoning_literals",
    "governance.purge": "patches.purge",
    "governance.reinforce": "patches.reinforce",
    "governance.review": "reviews.review",
    "governance.review_groups": "patches.review_groups",
    "governance.review_terminal": "reviews.terminal",
    "governance.scoring": "gate.scoring",
    "governance.secrets": "secrets",
    "governance.secrets.baseline": "bench.secrets_baseline",
    "governance.secrets.bench": "bench.secrets",
    "governance.secrets.corpus": "bench.secrets_corpus",
    "governance.secrets.corpus_base": "bench.secrets_corpus_base",
    "governance.secrets.corpus_more": "bench.secrets_corpus_more",
    "governance.secrets.fields": "secrets.fields",
    "governance.secrets.fold": "secrets.fold",
    "governance.secrets.identifier": "secrets.identifier",
    "governance.secrets.lazy": "secrets.lazy",
    "governance.secrets.named": "secrets.named",
    "governance.secrets.precheck": "secrets.precheck",
    "governance.secrets.provider": "secrets.provider",
    "governance.secrets.rules": "secrets.rules",
    "governance.secrets.scan": "secrets.scan",
    "governance.secrets.structure": "secrets.structure",
    "governance.show": "patches.show",
    "governance.undo": "reviews.undo",
    "governance.user_turn": "gate.user_turn",
    "governance.user_turn_corpus": "bench.userturn_corpus",
    "governance.verify": "patches.verify",
    "governance.waiting": "patches.waiting",
    "governance.words": "reviews.words",
    "governance.writer": "gate.writer",
    "recall.search.bench_locomo": "bench.locomo",
    "recall.search.bench_notes": "bench.notes",
    "recall.search.bench_search": "bench.search",
    "startup": "bench.startup",
    "store.bench": "bench.store",
    "store.bench_capture": "bench.capture",
    "store.capture": "gate.capture",
    "util.llm": "llm",
    "web.bench": "bench.web",
    "wiki.bench_hydra9": "bench.hydra9",
    "wiki.bench_wiki": "bench.wiki",
}


def new_name(fullname: str) -> str | None:
    """The module's current name, or ``None`` when ``fullname`` did not move."""
    head, dot, rest = fullname.partition(".")
    if head != "commonkeep" or not dot:
        return None
    parts = rest.split(".")
    for n in range(len(parts), 0, -1):
        moved = MOVED.get(".".join(parts[:n]))
        if moved is not None:
            return ".".join(["commonkeep", moved, *parts[n:]])
    return None


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


def moved_up(module: str, table: dict[str, str], name: str) -> Any:
    """A module's ``__getattr__`` for names that moved to a higher package: the name, read from its
    new module by name (so the lower package never imports the higher one), or ``AttributeError``."""
    target = table.get(name)
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return getattr(importlib.import_module(target), name)

