"""Opt-in auto-curation when a Hermes session finalizes (``memory.commonkeep.auto_curate``).

The real Hermes runs one turn whose model calls ``memory`` (``on_session_end`` fires at the end
of it, as after every turn), then Hermes' own one-shot exit path fires ``on_session_finalize``
(``driver.py autocurate``). A high-confidence candidate the librarian wrote (``write --trust``,
the writer's stamp) waits in the inbox;
the candidate Hermes' ``memory`` call stages is an agent inference with one evidence ref, so
the curator leaves it for review under every policy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hermes.conftest import HermesWorld, make_world
from tests.hosts import hermes as hermes_host

pytestmark = pytest.mark.hermes

MEMORY_FACT = "The staging database is postgres 16 on port 6543."
HIGH_FACT = "Release branches are cut from main every Monday."
SETTING = "memory.commonkeep.auto_curate"


def _install(world: HermesWorld, *install_args: str) -> None:
    world.write_config()
    world.commonkeep("hermes", "install", "--root", str(world.root), *install_args)


def _run(world: HermesWorld, *install_args: str, **env: str) -> dict[str, Any]:
    _install(world, *install_args)
    return _drive(world, **env)


def _drive(world: HermesWorld, **env: str) -> dict[str, Any]:
    run = world.drive("autocurate", **env)
    assert run["reply"] == "Noted."
    turn = run["after_turn"]
    # on_session_end fired at the end of the turn: nothing curated, nothing proposed yet
    assert turn["records"] == [] and turn["patches"] == [], turn
    assert turn["inbox"] == {HIGH_FACT: "new", MEMORY_FACT: "new"}
    return run


def _block(world: HermesWorld) -> dict[str, Any]:
    block: dict[str, Any] = yaml.safe_load(world.config.read_text())["memory"]["commonkeep"]
    return block


@pytest.mark.parametrize("version", [hermes_host.NEWEST, hermes_host.MIDDLE, hermes_host.OLDEST])
def test_high_only_as_the_writer_applies_the_high_confidence_candidate_at_finalize(tmp_path: Path, version: str) -> None:
    world = make_world(version, tmp_path)
    run = _run(world, "--auto-curate", "high-only", "--role", "librarian")
    assert _block(world) == {"root": str(world.root), "auto_curate": "high-only", "role": "librarian"}
    fin = run["after_finalize"]
    assert fin["records"] == [HIGH_FACT]
    assert HIGH_FACT in (fin["files"]["MEMORY.md"] or "")  # re-rendered after curating
    assert HIGH_FACT in world.memory_file("MEMORY.md").read_text()
    # Hermes' own write (agent inference, one ref) waits for review
    assert fin["inbox"][MEMORY_FACT] == "new" and MEMORY_FACT not in world.memory_file("MEMORY.md").read_text()
    assert f"{SETTING} failed" not in run["log"] and "not the writer role" not in run["log"]


def test_propose_writes_a_patch_and_applies_nothing(hermes19: HermesWorld) -> None:
    run = _run(hermes19, "--auto-curate", "propose", "--role", "librarian")
    fin = run["after_finalize"]
    assert fin["records"] == [] and len(fin["patches"]) == 1, fin
    patch = json.loads((hermes19.root / "patches" / fin["patches"][0]).read_text())
    assert patch["status"] == "proposed"
    assert [op["record"]["statement"] for op in patch["ops"] if op.get("record")] == [HIGH_FACT]
    assert HIGH_FACT not in (fin["files"]["MEMORY.md"] or "")


def test_a_role_that_is_not_the_writer_applies_nothing_and_warns(hermes19: HermesWorld) -> None:
    run = _run(hermes19, "--auto-curate", "high-only", "--role", "hermes")
    fin = run["after_finalize"]
    assert fin["records"] == [] and fin["patches"] == []
    assert fin["inbox"] == {HIGH_FACT: "new", MEMORY_FACT: "new"}
    warnings = [ln for ln in run["log"].splitlines() if SETTING in ln and "WARNING" in ln]
    assert len(warnings) == 1, run["log"][-3000:]
    assert "not the writer role 'librarian'" in warnings[0] and "role 'hermes'" in warnings[0]


def test_role_from_the_environment_when_the_config_names_none(hermes19: HermesWorld) -> None:
    run = _run(hermes19, "--auto-curate", "high-only", COMMONKEEP_ROLE="librarian")
    assert "role" not in _block(hermes19)
    assert run["after_finalize"]["records"] == [HIGH_FACT]


def test_unset_means_off(hermes19: HermesWorld) -> None:
    run = _run(hermes19)
    assert set(_block(hermes19)) == {"root"}
    fin = run["after_finalize"]
    assert fin["records"] == [] and fin["patches"] == []
    assert fin["inbox"] == {HIGH_FACT: "new", MEMORY_FACT: "new"}
    assert SETTING not in run["log"]


def test_a_held_writer_lock_is_logged_and_hermes_exits(hermes19: HermesWorld) -> None:
    from commonkeep.patches.lock import writer_lock

    _install(hermes19, "--auto-curate", "high-only", "--role", "librarian")
    with writer_lock(hermes19.root, "librarian", "test holds the lock", wait=0):
        run = _drive(hermes19)
    fin = run["after_finalize"]
    assert fin["records"] == [] and fin["patches"] == []
    assert any(SETTING in ln and "skipped this time" in ln and "held by pid" in ln
               for ln in run["log"].splitlines()), run["log"][-3000:]


def test_reinstall_without_options_keeps_the_setting(hermes19: HermesWorld) -> None:
    hermes19.write_config()
    hermes19.commonkeep("hermes", "install", "--root", str(hermes19.root), "--auto-curate", "propose", "--role", "librarian")
    hermes19.install()
    assert _block(hermes19) == {"root": str(hermes19.root), "auto_curate": "propose", "role": "librarian"}
    st = json.loads(hermes19.commonkeep("hermes", "status", "--json", check=False).stdout)
    assert (st["auto_curate"], st["role"]) == ("propose", "librarian")
    assert "auto-curation:      propose at session finalize (as role librarian)" in \
        hermes19.commonkeep("hermes", "status", check=False).stdout
    hermes19.commonkeep("hermes", "install", "--root", str(hermes19.root), "--auto-curate", "off")
    assert yaml.safe_load(hermes19.config.read_text())["memory"]["commonkeep"]["auto_curate"] == "off"
    hermes19.commonkeep("hermes", "uninstall")
    assert "commonkeep" not in (yaml.safe_load(hermes19.config.read_text()).get("memory") or {})
