"""The plugin manager and its typed facade.

Built-in parts register as ``DEFAULT_PLUGINS``; third-party plugins come from the entry point
group ``commonkeep``. Environment controls:

- ``COMMONKEEP_PLUGINS``: comma-separated allow-list of plugin names to load (default: all);
- ``COMMONKEEP_BLOCK_PLUGINS``: comma-separated names never to load;
- ``COMMONKEEP_TRACE_HOOKS=1``: print every hook call and its result to stderr.

A third-party plugin that fails to import or register is skipped with a warning, never a crash.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import pluggy

from commonkeep import hookspecs

# Internal modules registered at start-up; each holds ``@hookimpl`` functions.
DEFAULT_PLUGINS: tuple[str, ...] = ("commonkeep.recall.search.plugin", "commonkeep.tools.agent", "commonkeep.governance.plugin",
                                    "commonkeep.wiki.extractors")


class _WikiExtractors:
    """Stands in for the default plugin ``commonkeep.wiki.extractors`` (the built-in LLM extractor).

    Importing the wiki package pulls in httpx and GitPython (about 0.25 s); registering this
    object instead keeps that off every CLI call, and the module is imported when ingest asks.
    """

    @hookspecs.hookimpl(tryfirst=True)
    def commonkeep_wiki_extractors(self) -> list[Any]:
        # by name, as DEFAULT_PLUGINS are: the registry sits beneath every part it registers
        extractors: list[Any] = importlib.import_module("commonkeep.wiki.extractors").builtin_extractors()
        return extractors


# Default plugins registered as a light stand-in object instead of their (heavy) module.
_STAND_INS: dict[str, Callable[[], object]] = {"commonkeep.wiki.extractors": _WikiExtractors}


def _names(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {n.strip() for n in raw.split(",") if n.strip()}


class Plugins:
    """Typed facade over the pluggy manager: core code calls these methods, never ``pm.hook``."""

    def __init__(self, pm: pluggy.PluginManager) -> None:
        self.pm = pm

    def cli_commands(self) -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
        merged: dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]] = {}
        for result in self.pm.hook.commonkeep_cli_commands():
            merged.update(result or {})
        return merged

    def after_apply(self, root: str, patch: dict[str, Any], applied_ops: list[str]) -> list[str]:
        """Run every after-apply listener; returns the errors of listeners that failed."""
        errors: list[str] = []
        for impl in self.pm.hook.commonkeep_after_apply.get_hookimpls():
            try:
                impl.function(root=root, patch=patch, applied_ops=applied_ops)
            except Exception as exc:  # one bad listener must not stop the others
                errors.append(f"{impl.plugin_name}: {exc}")
        return errors

    def stamp_candidates(self, store: Any, candidates: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
        """Every host's stamping pass; the ids stamped and the errors of passes that failed."""
        stamped: list[str] = []
        errors: list[str] = []
        for impl in self.pm.hook.commonkeep_stamp_candidates.get_hookimpls():
            try:
                ids: Any = impl.function(store=store, candidates=candidates)
                stamped.extend(str(i) for i in ids or [])
            except Exception as exc:  # never let a transcript break curation; nothing is stamped
                errors.append(f"{impl.plugin_name}: {exc}")
        return stamped, errors

    def semantic_backends(self) -> list[Any]:
        return [b for result in self.pm.hook.commonkeep_semantic_backends() for b in (result or [])]

    def agent_tools(self) -> list[Any]:
        return [t for result in self.pm.hook.commonkeep_agent_tools() for t in (result or [])]

    def doctor_checks(self, root: str) -> list[dict[str, Any]]:
        """Every plugin's findings, in call order; a check that raises is a finding naming its plugin."""
        try:
            return [f for result in self.pm.hook.commonkeep_doctor_checks(root=root) for f in (result or [])]
        except Exception:  # which one? ask each plugin on its own, so the others still report
            pass
        found: list[dict[str, Any]] = []
        for impl in reversed(self.pm.hook.commonkeep_doctor_checks.get_hookimpls()):
            try:
                result = impl.function(root=root)
            except Exception as exc:  # one broken check must not hide the others
                where = f": {exc.filename}" if isinstance(exc, OSError) and exc.filename else ""
                found.append({"code": "plugin_check_failed", "severity": "warning",
                              "message": f"the doctor check of plugin {impl.plugin_name} failed: {exc}{where}"})
                continue
            found.extend(result if isinstance(result, list) else [])
        return found

    def wiki_extractors(self, skip: tuple[str, ...] = ()) -> tuple[list[Any], list[str]]:
        """Every plugin's wiki extractors, in call order (the built-in LLM extractor first), and
        the errors of implementations that raised or did not return a list. Plugins named in
        ``skip`` are not asked (``ingest(llm=...)`` replaces the built-in one)."""
        extractors: list[Any] = []
        errors: list[str] = []
        for impl in reversed(self.pm.hook.commonkeep_wiki_extractors.get_hookimpls()):
            if impl.plugin_name in skip:
                continue
            try:
                result = impl.function()
            except Exception as exc:  # one bad plugin must not stop the ingest
                errors.append(f"{impl.plugin_name}: {exc}")
                continue
            if result is None:
                continue
            if not isinstance(result, list):
                errors.append(f"{impl.plugin_name}: returned {type(result).__name__}, not a list")
                continue
            extractors.extend(result)
        return extractors, errors


def _trace(pm: pluggy.PluginManager) -> None:
    def before(hook_name: str, hook_impls: Any, kwargs: Any) -> None:
        print(f"commonkeep: hook {hook_name}({', '.join(kwargs)})", file=sys.stderr)

    def after(outcome: Any, hook_name: str, hook_impls: Any, kwargs: Any) -> None:
        print(f"commonkeep: hook {hook_name} -> {outcome.get_result()!r:.200}", file=sys.stderr)

    pm.add_hookcall_monitoring(before, after)


def build_plugin_manager(load_entrypoints: bool = True) -> Plugins:
    """A fresh manager with the default plugins and (unless disabled) third-party ones."""
    pm = pluggy.PluginManager("commonkeep")
    pm.add_hookspecs(hookspecs)
    allow = _names("COMMONKEEP_PLUGINS")
    block = _names("COMMONKEEP_BLOCK_PLUGINS") or set()

    def wanted(name: str) -> bool:
        return name not in block and (allow is None or name in allow)

    for modname in DEFAULT_PLUGINS:
        if wanted(modname):
            stand_in = _STAND_INS.get(modname)
            pm.register(stand_in() if stand_in else importlib.import_module(modname), name=modname)
    if load_entrypoints:
        from commonkeep import plugin_cache  # importlib.metadata's answer, remembered between processes

        for name, value in plugin_cache.entry_points():
            if not wanted(name) or pm.get_plugin(name) is not None:
                continue
            try:
                pm.register(plugin_cache.load(value), name=name)
                pm.check_pending()  # a hook name we do not know is a broken plugin
            except Exception as exc:
                if pm.get_plugin(name) is not None:
                    pm.unregister(name=name)
                print(f"commonkeep: warning: plugin {name!r} skipped: {exc}", file=sys.stderr)
    if os.environ.get("COMMONKEEP_TRACE_HOOKS"):
        _trace(pm)
    return Plugins(pm)


@lru_cache(maxsize=1)
def plugin_manager() -> Plugins:
    """The process-wide plugin manager (built on first use)."""
    return build_plugin_manager()
