"""The extension inside the real omp (18.2.3 under Bun, from npm), driven over ``omp acp``.

No model and no API key: slash commands run locally, and every result is asserted on disk (the
report file under the root OMP resolved, the session JSONL), as contracts/omp-host.md §7 says.
Each ``omp acp`` start costs about 3-5 s.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.cli import main
from commonkeep_omp.acp import AcpClient
from commonkeep_omp.install import ROOT_VARS
from tests.hosts import omp as omp_host
from tests.omp.conftest import OmpWorld

pytestmark = pytest.mark.omp


def install(world: OmpWorld, *extra: str) -> None:
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir), *extra]) == 0


def run_doctor(world: OmpWorld, cmd: list[str], env: dict[str, str]) -> tuple[str, list[dict[str, Any]]]:
    """Start omp acp, run /commonkeep-doctor; returns (session id, OMP's extension listing)."""
    with AcpClient(cmd, env=env, cwd=world.project) as client:
        agent = client.initialize()
        assert agent["agentInfo"]["version"] == omp_host.OMP_VERSION
        session_id = client.new_session()
        extensions = client.extensions()
        assert client.prompt(session_id, "/commonkeep-doctor") == "end_turn"
        update = client.wait_for_update(session_id, "available_commands_update")
        offered = [c["name"] for c in update.get("availableCommands", [])]
    # ACP clients (editors) list our commands; OmpKeep's /memory-doctor is not shadowed.
    assert {"commonkeep-doctor", "commonkeep-remember"} <= set(offered)
    return session_id, extensions


def custom_messages(world: OmpWorld, session_id: str, custom_type: str) -> list[dict[str, Any]]:
    return [
        e for e in world.session_entries(session_id) if e.get("type") == "custom_message" and e.get("customType") == custom_type
    ]


def test_omp_started_with_no_root_variable_uses_the_shared_root(world: OmpWorld, omp_acp_cmd: list[str]) -> None:
    install(world)
    (world.home / ".hermes").mkdir()
    (world.home / ".hermes" / "config.yaml").write_text(f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {world.root}\n")
    env = world.env()
    assert not set(ROOT_VARS) & set(env)

    session_id, extensions = run_doctor(world, omp_acp_cmd, env)

    ours = [e for e in extensions if e.get("path") == str(world.extension)]
    assert ours and ours[0]["state"] == "active" and ours[0]["kind"] == "extension-module", extensions
    # The report lands under the root OMP resolved: the shared one, set by the extension itself.
    report = json.loads((world.root / "reports" / "omp-doctor.json").read_text())
    root = str(world.root.resolve())
    assert report["root"] == root and report["rule"] == "commonkeep install"
    assert report["env_before"] == dict.fromkeys(ROOT_VARS)
    assert sorted(report["env_set_by_extension"]) == sorted(ROOT_VARS)
    assert report["env_now"] == dict.fromkeys(ROOT_VARS, root)
    assert report["problems"] == []
    # `commonkeep doctor --json --root <root>` ran as an argv vector from inside OMP.
    doctor = report["commonkeep_doctor"]
    assert doctor["argv"][-4:] == ["doctor", "--json", "--root", root]
    assert doctor["report"]["root"] == root, doctor
    assert {"code": "hermes_root", "severity": "ok"}.items() <= report["hermes"][0].items(), report["hermes"]
    assert report["index"][0]["code"].startswith("index_"), report["index"]  # index sync, from the search part
    bad = [f for f in doctor["report"]["findings"] if f["severity"] in ("warning", "error")]
    assert report["ok"] is True and bad == [], (bad, doctor["stderr"])
    # The same report is in the session file (ACP clients never see notify()).
    [message] = custom_messages(world, session_id, "commonkeep-doctor")
    assert f"root in use: {root}" in message["content"]
    assert message["details"]["report_file"] == str(world.root / "reports" / "omp-doctor.json")


def test_a_root_the_user_set_wins_and_the_mismatch_is_reported_as_is_a_missing_snapshot(world: OmpWorld, omp_acp_cmd: list[str], tmp_path: Path) -> None:
    install(world)
    mine = tmp_path / "my-own-root"

    missing = tmp_path / "handoffs" / "gone.json"  # e.g. garbage-collected before the child started

    session_id, _ = run_doctor(world, omp_acp_cmd, world.env(OMP_MEMORY_ROOT=str(mine), OMPKEEP_HANDOFF=str(missing)))

    assert not (world.root / "reports" / "omp-doctor.json").exists()
    report = json.loads((mine / "reports" / "omp-doctor.json").read_text())
    assert report["root"] == str(mine) and report["rule"].startswith("$OMP_MEMORY_ROOT")
    # The other two follow the user's root, so OmpKeep and upstream pi-PI cannot diverge.
    assert report["env_now"] == dict.fromkeys(ROOT_VARS, str(mine))
    assert report["ok"] is False
    [problem] = report["problems"]
    assert str(mine) in problem and str(world.root.resolve()) in problem
    [message] = custom_messages(world, session_id, "commonkeep-doctor")
    assert "DIFFERENT" in message["content"] and "problem:" in message["content"]
    # A snapshot that cannot be read is recorded in the session, and the session still runs.
    [error] = [e for e in world.session_entries(session_id) if e.get("customType") == "commonkeep-handoff-error"]
    assert error["data"]["path"] == str(missing) and "ENOENT" in error["data"]["error"]


def test_the_env_file_written_by_install_is_read_before_the_extension(world: OmpWorld, omp_acp_cmd: list[str]) -> None:
    (world.agent_dir).mkdir(parents=True)
    (world.agent_dir / ".env").write_text("SOME_USER_SETTING=1\n")
    install(world, "--env")

    run_doctor(world, omp_acp_cmd, world.env())

    report = json.loads((world.root / "reports" / "omp-doctor.json").read_text())
    root = str(world.root.resolve())
    # OMP loaded the .env block before any extension: the root was already set, and agrees.
    assert report["env_before"] == dict.fromkeys(ROOT_VARS, root)
    assert report["env_set_by_extension"] == []
    assert report["problems"] == []
    assert "SOME_USER_SETTING=1" in (world.agent_dir / ".env").read_text()
