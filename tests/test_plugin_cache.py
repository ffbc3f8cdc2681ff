"""``plugin_cache``: the third-party plugins a new process finds are those ``importlib.metadata``
finds, through installs, upgrades and removals, without importing it when nothing changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_PROBE = (
    "import sys; sys.path.insert(0, sys.argv[1]);"
    "from commonkeep.plugins import build_plugin_manager;"
    "p = build_plugin_manager();"
    "print(sorted(n for n, _ in p.pm.list_name_plugin() if n.startswith('probeck')),"
    " 'importlib.metadata' in sys.modules)"
)


def _run(site: Path, cache: Path, **env: str) -> tuple[list[str], bool]:
    out = subprocess.run([sys.executable, "-c", _PROBE, str(site)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "COMMONKEEP_PLUGIN_CACHE": str(cache / "commonkeep" / "entry-points.json"), **env})
    assert out.returncode == 0, out.stderr
    names, imported = out.stdout.strip().rsplit(" ", 1)
    return json.loads(names.replace("'", '"')), imported == "True"


def _install(site: Path, dist: str, names: list[str]) -> None:
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[commonkeep]\n" + "".join(f"{n} = {n}_mod\n" for n in names))
    for n in names:
        (site / f"{n}_mod.py").write_text("X = 1\n")


def test_installs_upgrades_and_removals_are_seen_by_the_next_process(tmp_path: Path) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    site.mkdir()
    assert _run(site, cache) == ([], True)  # the first process asks importlib.metadata
    assert _run(site, cache) == ([], False)  # the next one does not: nothing changed
    _install(site, "probeck", ["probeck"])
    assert _run(site, cache) == (["probeck"], True)  # installed since: asked again
    assert _run(site, cache) == (["probeck"], False)
    _install(site, "probeck", ["probeck", "probeck_two"])  # its entry points changed in place (an upgrade)
    assert _run(site, cache)[0] == ["probeck", "probeck_two"]
    for f in (site / "probeck-0.1.dist-info").iterdir():
        f.unlink()
    (site / "probeck-0.1.dist-info").rmdir()
    assert _run(site, cache)[0] == []  # removed (the first process's fingerprint again: its entry, remembered, answers)


@pytest.mark.parametrize("text", ["", "{", '{"fingerprint": 1}', "[]", '{"fingerprint": "x", "commonkeep": [[1, 2]]}'])
def test_a_broken_cache_file_is_not_used(tmp_path: Path, text: str) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    _install(site, "probeck", ["probeck"])
    assert _run(site, cache)[0] == ["probeck"]
    made = cache / "commonkeep" / "entry-points.json"
    made.write_text(text)
    assert _run(site, cache) == (["probeck"], True)
    assert ["probeck", "probeck_mod"] in json.loads(made.read_text())["commonkeep"]  # written again


def test_a_cache_folder_that_cannot_be_written_costs_only_the_lookup(tmp_path: Path) -> None:
    site, cache = tmp_path / "site", tmp_path / "cache"
    _install(site, "probeck", ["probeck"])
    cache.write_text("a file where the folder would be")  # the cache file's folder cannot be made
    assert _run(site, cache) == (["probeck"], True)
    assert _run(site, cache, COMMONKEEP_NO_PLUGIN_CACHE="1") == (["probeck"], True)


def test_in_a_virtual_environment_the_cache_is_kept_inside_it_not_in_the_home(tmp_path: Path) -> None:
    code = "import sys; from commonkeep import plugin_cache; print(plugin_cache._cache_file(), sys.prefix)"
    env = {k: v for k, v in os.environ.items() if k != "COMMONKEEP_PLUGIN_CACHE"} | {"HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, check=True)
    where, prefix = out.stdout.split()
    assert sys.prefix != sys.base_prefix, "the tests run in the project's virtual environment"
    assert Path(where).is_relative_to(prefix) and not Path(where).is_relative_to(tmp_path)


def test_processes_from_two_folders_in_turn_each_find_their_own_entry(tmp_path: Path) -> None:
    """The fingerprint holds ``sys.path[0]``: two folders (or an older checkout on ``PYTHONPATH``)
    in turn keep both entries, so neither asks ``importlib.metadata`` again; a change is still seen."""
    site, cache, other = tmp_path / "site", tmp_path / "cache", tmp_path / "other"
    other.mkdir()
    _install(site, "probeck", ["probeck"])
    assert _run(site, cache) == (["probeck"], True)
    assert _run(site, cache, PYTHONPATH=str(other)) == (["probeck"], True)  # another sys.path: asked once
    for _ in range(2):
        assert _run(site, cache) == (["probeck"], False)
        assert _run(site, cache, PYTHONPATH=str(other)) == (["probeck"], False)
    _install(site, "probeck", ["probeck", "probeck_two"])  # an upgrade changes both fingerprints
    assert _run(site, cache, PYTHONPATH=str(other)) == (["probeck", "probeck_two"], True)
    assert _run(site, cache) == (["probeck", "probeck_two"], True)
    made = json.loads((cache / "commonkeep" / "entry-points.json").read_text())
    assert len(made["earlier"]) <= 7


def test_at_most_keep_fingerprints_are_remembered(tmp_path: Path) -> None:
    from commonkeep import plugin_cache

    site, cache = tmp_path / "site", tmp_path / "cache"
    _install(site, "probeck", ["probeck"])
    for n in range(plugin_cache.KEEP + 2):
        (tmp_path / f"p{n}").mkdir()
        assert _run(site, cache, PYTHONPATH=str(tmp_path / f"p{n}"))[0] == ["probeck"]
    made = json.loads((cache / "commonkeep" / "entry-points.json").read_text())
    assert len(made["earlier"]) == plugin_cache.KEEP - 1
    assert len({made["fingerprint"], *(e["fingerprint"] for e in made["earlier"])}) == plugin_cache.KEEP
