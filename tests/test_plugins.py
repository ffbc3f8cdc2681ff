"""The plugin core: every hook documented with its exact signature and exercised by a throwaway
plugin; allow-list, block-list, tracing, and a broken plugin skipped rather than fatal."""

from __future__ import annotations

import argparse
import inspect
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from commonkeep import hookspecs
from commonkeep.hookspecs import hookimpl
from commonkeep.plugins import Plugins, build_plugin_manager

DOCS = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"


def _specs() -> dict[str, Any]:
    return {n: f for n, f in vars(hookspecs).items() if n.startswith("commonkeep_") and callable(f)}


def _signature(fn: Any) -> str:
    return f"{fn.__name__}{inspect.signature(fn)}".replace("'", "")


@pytest.fixture
def plugins() -> Iterator[Plugins]:
    p = build_plugin_manager(load_entrypoints=False)
    yield p


class _Throwaway:
    @hookimpl
    def commonkeep_cli_commands(self) -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
        def configure(parser: argparse.ArgumentParser) -> None:
            parser.set_defaults(run=lambda args: 0)

        return {"hello": (configure, "say hello")}

    @hookimpl
    def commonkeep_after_apply(self, root: str, patch: dict[str, Any], applied_ops: list[str]) -> None:
        self.seen = (root, patch["patch_id"], applied_ops)

    @hookimpl
    def commonkeep_semantic_backends(self) -> list[Any]:
        return ["backend"]

    @hookimpl
    def commonkeep_agent_tools(self) -> list[Any]:
        return ["tool"]

    @hookimpl
    def commonkeep_doctor_checks(self, root: str) -> list[dict[str, Any]]:
        return [{"code": "throwaway", "severity": "info", "message": f"checked {root}"}]

    @hookimpl
    def commonkeep_wiki_extractors(self) -> list[Any]:
        return ["extractor"]


class _Broken:
    @hookimpl
    def commonkeep_after_apply(self, root: str, patch: dict[str, Any], applied_ops: list[str]) -> None:
        raise RuntimeError("listener exploded")


def test_cli_commands_hook(plugins: Plugins) -> None:
    plugins.pm.register(_Throwaway(), name="throwaway")
    assert "hello" in plugins.cli_commands()


def test_after_apply_hook_isolates_a_failing_listener(plugins: Plugins) -> None:
    good = _Throwaway()
    plugins.pm.register(_Broken(), name="broken")
    plugins.pm.register(good, name="good")
    errors = plugins.after_apply("/r", {"patch_id": "p1"}, ["op_001"])
    assert good.seen == ("/r", "p1", ["op_001"])
    assert errors == ["broken: listener exploded"]


def test_semantic_backends_hook(plugins: Plugins) -> None:
    plugins.pm.register(_Throwaway(), name="throwaway")
    assert "backend" in plugins.semantic_backends()


def test_agent_tools_hook(plugins: Plugins) -> None:
    plugins.pm.register(_Throwaway(), name="throwaway")
    assert "tool" in plugins.agent_tools()


def test_doctor_checks_hook(plugins: Plugins) -> None:
    plugins.pm.register(_Throwaway(), name="throwaway")
    assert {"code": "throwaway", "severity": "info", "message": "checked /r"} in plugins.doctor_checks("/r")


def test_wiki_extractors_hook(plugins: Plugins) -> None:
    # the ingest side (grounding, notices) is tests/wiki/test_extractor_hook.py
    plugins.pm.register(_Throwaway(), name="throwaway")
    found, errors = plugins.wiki_extractors()
    assert "extractor" in found and errors == []
    assert "extractor" not in plugins.wiki_extractors(skip=("throwaway",))[0]


def test_stamp_candidates_hook(plugins: Plugins) -> None:
    class Stamper:
        @hookimpl
        def commonkeep_stamp_candidates(self, store: Any, candidates: list[dict[str, Any]]) -> list[str]:
            for c in candidates:
                c["seen_by"] = store
            return [c["id"] for c in candidates]

    class Broken:
        @hookimpl
        def commonkeep_stamp_candidates(self, store: Any, candidates: list[dict[str, Any]]) -> list[str]:
            raise RuntimeError("transcript unreadable")

    plugins.pm.register(Stamper(), name="stamper")
    plugins.pm.register(Broken(), name="broken")
    cands = [{"id": "cap_1"}, {"id": "cap_2"}]
    stamped, errors = plugins.stamp_candidates("the-store", cands)
    assert stamped == ["cap_1", "cap_2"] and all(c["seen_by"] == "the-store" for c in cands)
    assert errors == ["broken: transcript unreadable"]  # one broken pass neither stops the others nor curation


HOOK_TESTS = {
    "commonkeep_cli_commands": test_cli_commands_hook,
    "commonkeep_after_apply": test_after_apply_hook_isolates_a_failing_listener,
    "commonkeep_semantic_backends": test_semantic_backends_hook,
    "commonkeep_agent_tools": test_agent_tools_hook,
    "commonkeep_doctor_checks": test_doctor_checks_hook,
    "commonkeep_wiki_extractors": test_wiki_extractors_hook,
    "commonkeep_stamp_candidates": test_stamp_candidates_hook,
}


def test_every_hook_has_a_test() -> None:
    assert set(HOOK_TESTS) == set(_specs())


@pytest.mark.parametrize("name", sorted(_specs()))
def test_every_hook_is_documented_with_its_exact_signature(name: str) -> None:
    fn = _specs()[name]
    assert fn.__doc__ and len(fn.__doc__.strip()) > 40, f"{name} needs a docstring saying when it fires"
    assert _signature(fn) in DOCS.read_text(encoding="utf-8"), f"docs/plugins.md lacks `{_signature(fn)}`"


def test_block_list_keeps_a_default_plugin_out(monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep import plugins as mod

    if not mod.DEFAULT_PLUGINS:
        pytest.fail("no default plugins registered; the block-list cannot be exercised")
    name = mod.DEFAULT_PLUGINS[0]
    assert build_plugin_manager(load_entrypoints=False).pm.get_plugin(name) is not None
    monkeypatch.setenv("COMMONKEEP_BLOCK_PLUGINS", name)
    assert build_plugin_manager(load_entrypoints=False).pm.get_plugin(name) is None
    monkeypatch.delenv("COMMONKEEP_BLOCK_PLUGINS")
    monkeypatch.setenv("COMMONKEEP_PLUGINS", "nothing-else")
    assert build_plugin_manager(load_entrypoints=False).pm.get_plugin(name) is None


def test_a_broken_third_party_plugin_is_skipped_with_a_warning(tmp_path: Path) -> None:
    dist = tmp_path / "site"
    (dist / "brokenck-0.1.dist-info").mkdir(parents=True)
    (dist / "brokenck-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenck\nVersion: 0.1\n")
    (dist / "brokenck-0.1.dist-info" / "entry_points.txt").write_text("[commonkeep]\nbrokenck = brokenck_mod\n")
    (dist / "brokenck_mod.py").write_text(
        "from commonkeep.hookspecs import hookimpl\n@hookimpl\ndef commonkeep_no_such_hook():\n    return 1\n"
    )
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "from commonkeep.plugins import build_plugin_manager;"
        "p = build_plugin_manager(); print('loaded' if p.pm.get_plugin('brokenck') else 'skipped')"
    )
    out = subprocess.run([sys.executable, "-c", code, str(dist)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "skipped"
    assert "plugin 'brokenck' skipped" in out.stderr


def test_trace_variable_prints_hook_calls(tmp_path: Path) -> None:
    import os

    from commonkeep.store.layout import ensure_layout

    ensure_layout(tmp_path / "r")
    env = {**os.environ, "COMMONKEEP_TRACE_HOOKS": "1"}
    out = subprocess.run([sys.executable, "-m", "commonkeep.cli", "doctor", "--root", str(tmp_path / "r")],
                         capture_output=True, text=True, env=env, timeout=60)
    assert "commonkeep: hook commonkeep_doctor_checks(root)" in out.stderr


def test_every_package_folder_is_listed_in_pyproject() -> None:
    import tomllib

    repo = Path(__file__).resolve().parents[1]
    listed = set(tomllib.loads((repo / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    mapping = {"core": "commonkeep", "plugins/hermes": "commonkeep_hermes", "plugins/omp": "commonkeep_omp",
               "plugins/roundtable": "commonkeep_roundtable"}
    found = set()
    for folder, name in mapping.items():
        for init in (repo / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(repo / folder)
            found.add(".".join([name, *rel.parts]))
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
