"""pytest plugin of ``scripts/mutation``: every test starts with commonkeep's function caches empty.

mutmut 3 runs each mutant's tests in a process forked from one that already ran the clean tests,
so a cached answer of the unmutated code (``redact``'s cache of every text it saw, the provider
scan's, the fold's) would be served to the mutant, which then never runs: it "survives" whatever
the tests assert. Emptying the caches before each test also makes mutmut's first pass see every
function a test reaches (a test whose texts an earlier test cached would otherwise not count as
reaching them). Caches of one entry (``maxsize=1``) are kept: they hold tables read once from a
package (the confusables, the BIP-39 word lists), which no mutant changes.

The scratch folder holds it as ``tests/_mutation_plugin.py`` and pytest loads it with ``-p``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_PACKAGES = ("commonkeep", "commonkeep_hermes", "commonkeep_omp", "commonkeep_roundtable")


def clear_caches() -> int:
    """Empty every ``functools.lru_cache`` defined in a commonkeep module, and every ``secrets.kept.Kept``
    one holds (``secrets._UNTOUCHED``, ``fields._PLAIN``); returns how many."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".", 1)[0] not in _PACKAGES:
            continue
        for value in list(vars(module).values()):
            params = getattr(value, "cache_parameters", None)
            # an ``lru_cache`` of this module, or a ``secrets.kept.Kept`` it holds (a set with the same two methods)
            if (params is None or isinstance(value, type) or (getattr(value, "__module__", None) != name and not isinstance(value, set))
                    or params().get("maxsize") == 1):
                continue
            value.cache_clear()
            cleared += 1
    return cleared


def forget_plan() -> None:
    """``secrets.rules``' one-entry memo of the last text ``plan`` read (``find`` starts where it
    stopped) and ``secrets.public``'s of the last text's public spans: held over from the clean run,
    they would let ``find`` skip rules, or take spans, a mutant changed."""
    rules = sys.modules.get("commonkeep.secrets.rules")
    if rules is not None and hasattr(rules, "_PLANNED"):
        rules._PLANNED = (None, None, None)
    public = sys.modules.get("commonkeep.secrets.public")
    if public is not None and hasattr(public, "_LAST"):
        public._LAST = ("", (), ())


def forget_net() -> None:
    """``secrets.rule_net``'s compiled net of the rules and ``secrets.provider_net``'s of the provider
    scanner's: built by the clean run (or a background thread of it), one would answer for a mutant of
    the code that builds it. Nor is one built in the background while a mutant's tests run
    (``COMMONKEEP_RULE_NET=0``, ``COMMONKEEP_PROVIDER_NET=0``; the tests of that lift them)."""
    for module, off in (("rule_net", "COMMONKEEP_RULE_NET"), ("provider_net", "COMMONKEEP_PROVIDER_NET")):
        os.environ[off] = "0"
        state = getattr(sys.modules.get(f"commonkeep.secrets.{module}"), "_STATE", None)
        if isinstance(state, dict):
            state.clear()
            state["asked"] = 0


def pytest_runtest_setup(item: Any) -> None:
    clear_caches()
    forget_plan()
    forget_net()
