"""``scripts/mutation``'s map stays true to the repository: every module it mutates and every test
that guards one exists (a renamed file would otherwise drop out of the mutation run unnoticed)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _script() -> object:
    spec = importlib.util.spec_from_file_location("mutation_script", REPO / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def test_every_mutated_file_and_guarding_test_exists() -> None:
    script = _script()
    packages: dict[str, str] = script.PACKAGES  # type: ignore[attr-defined]
    for name, module in script.MODULES.items():  # type: ignore[attr-defined]
        for pattern in module.files:
            package, _, rest = pattern.partition("/")
            assert list((REPO / packages[package]).glob(rest)), f"{name}: {pattern}"
        for test in module.tests:
            assert (REPO / test).is_file(), f"{name}: {test}"
        for glob in module.functions:
            assert glob.startswith(tuple(f"{f.removesuffix('.py').replace('/', '.')}." for f in module.files)), glob


def test_the_mutation_plugin_empties_commonkeep_caches_and_keeps_the_tables_read_once() -> None:
    """Under mutmut each mutant runs in a process forked after the clean run: a cached answer of
    the unmutated code would hide the mutant (``scripts/mutation_plugin.py``)."""
    spec = importlib.util.spec_from_file_location("mutation_plugin", REPO / "scripts" / "mutation_plugin.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    from commonkeep.secrets import _UNTOUCHED, _redact_cached, redact, redact_obj
    from commonkeep.util import normalize

    redact("the deploy token is ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b")
    redact_obj({"refs": ["docs/a-runbook-page.md"]})
    table = normalize._confusables()
    assert _redact_cached.cache_info().currsize >= 1 and "docs/a-runbook-page.md" in _UNTOUCHED
    assert plugin.clear_caches() >= 1
    assert _redact_cached.cache_info().currsize == 0 and not _UNTOUCHED
    assert normalize._confusables.cache_info().currsize == 1 and normalize._confusables() is table


def test_the_mutation_plugin_forgets_the_rules_plan_of_the_last_text() -> None:
    """``find`` skips the rules ``plan`` already ran for the same text: a plan kept from the clean run
    would hide a mutant of one of them."""
    spec = importlib.util.spec_from_file_location("mutation_plugin", REPO / "scripts" / "mutation_plugin.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    from commonkeep.secrets import precheck, public, rules

    text = "the deploy token is ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
    assert precheck.needs_scan(text) and rules._PLANNED[0] == text
    public.spans(text)
    assert public._LAST[0] == text
    plugin.forget_plan()
    assert rules._PLANNED[0] is None and public._LAST[0] == ""


def test_the_mutation_plugin_forgets_the_rules_net(monkeypatch: pytest.MonkeyPatch) -> None:
    """A net compiled by the clean run (the rules' or the provider scanner's) would answer for a mutant of
    the code that builds it."""
    spec = importlib.util.spec_from_file_location("mutation_plugin", REPO / "scripts" / "mutation_plugin.py")
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)
    from commonkeep.secrets import provider, provider_net, rule_net, rules

    monkeypatch.setattr(rule_net, "_STATE", {"asked": 0})
    monkeypatch.setenv(rule_net.OFF, "1")
    assert rule_net.build(rules._PLAN) and rule_net.ready(rules._PLAN)
    monkeypatch.setattr(provider_net, "_STATE", {"asked": 0})
    monkeypatch.setenv(provider_net.OFF, "1")
    kingfisher = provider._scanner() is not None and provider._STATE["rules"]
    assert not kingfisher or (provider_net.build(kingfisher) and provider_net.ready(kingfisher))
    plugin.forget_net()
    assert not rule_net.ready(rules._PLAN) and rule_net._STATE == {"asked": 0}
    assert os.environ[rule_net.OFF] == "0"
    assert provider_net._STATE == {"asked": 0} and os.environ[provider_net.OFF] == "0"
