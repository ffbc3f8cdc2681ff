"""Issue 16: the root a real OMP session uses after re-installs and beside a user's own ``.env``
line, what ``doctor`` says when OMP uses another root, and what uninstall keeps.

Three ``omp acp`` starts (about 5 s each); everything else runs the CLI in-process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.cli import main
from commonkeep_omp import install as inst
from commonkeep_omp.acp import AcpClient
from commonkeep_omp.install import ROOT_VARS
from tests.omp.conftest import OmpWorld


def ck(*argv: str) -> int:
    return main(list(argv))


def session_report(world: OmpWorld, cmd: list[str], root: Path) -> dict[str, Any]:
    """Start a real ``omp acp`` session, run /commonkeep-doctor; return the report it wrote under ``root``."""
    with AcpClient(cmd, env=world.env(), cwd=world.project) as client:
        client.initialize()
        session_id = client.new_session()
        assert client.prompt(session_id, "/commonkeep-doctor") == "end_turn"
    path = root / "reports" / "omp-doctor.json"
    assert path.exists(), f"the session did not use {root}"
    return dict(json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.omp
def test_reinstall_on_another_root_moves_the_env_block_and_a_real_session_follows(
    world: OmpWorld, omp_acp_cmd: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = world.root / "a", world.root / "b"
    agent = str(world.agent_dir)
    assert ck("omp", "install", "--root", str(a), "--agent-dir", agent, "--env") == 0
    assert ck("omp", "install", "--root", str(b), "--agent-dir", agent) == 0  # no --env this time
    out = capsys.readouterr().out
    assert f"OMP_MEMORY_ROOT={b}" in out and f"it set {a} before" in out
    text = (world.agent_dir / ".env").read_text(encoding="utf-8")
    assert str(a) not in text and text.count(inst.ENV_BEGIN) == 1
    assert ck("omp", "status", "--agent-dir", agent) == 0
    report = session_report(world, omp_acp_cmd, b)
    assert report["root"] == str(b) and report["env_now"] == dict.fromkeys(ROOT_VARS, str(b))
    assert not (a / "reports" / "omp-doctor.json").exists()


def test_status_checks_the_env_block_against_the_extension(world: OmpWorld) -> None:
    inst.install(world.root / "a", agent=world.agent_dir, write_env=True)
    env_file = world.agent_dir / ".env"
    # a block left on an old root (as versions before issue 16 did) wins over the baked root
    env_file.write_text(env_file.read_text().replace(str(world.root / "a"), str(world.root / "old")))
    report = inst.status(agent=world.agent_dir)
    assert not report["ok"]
    assert any(f"the commonkeep block sets OMP_MEMORY_ROOT={world.root / 'old'}" in p for p in report["problems"])


@pytest.mark.omp
def test_a_users_pi_line_warns_only_when_a_real_session_splits(
    world: OmpWorld, omp_acp_cmd: list[str], tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    env_file = world.agent_dir / ".env"
    env_file.parent.mkdir(parents=True)
    env_file.write_text(f"PI_MEMORY_ROOT={mine}\n")
    root = str(world.root.resolve())
    # without the block the user's line wins over the baked root: a real split, and install says so
    out = inst.install(world.root, agent=world.agent_dir)
    assert [w for w in out.warnings if f"OMP sessions will use {mine}" in w], out.warnings
    report = session_report(world, omp_acp_cmd, mine)
    assert report["root"] == str(mine)
    # with the block, OMP copies OMP_MEMORY_ROOT over the user's PI_MEMORY_ROOT: no split, no warning
    out = inst.install(world.root, agent=world.agent_dir, write_env=True)
    assert out.warnings == []
    assert inst.status(agent=world.agent_dir)["ok"]
    report = session_report(world, omp_acp_cmd, world.root)
    assert report["env_before"] == dict.fromkeys(ROOT_VARS, root) and report["problems"] == []


def test_doctor_on_the_default_root_says_omp_uses_another_root_before_any_hint(
    world: OmpWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    assert ck("omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)) == 0
    capsys.readouterr()
    assert ck("doctor") == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[")]
    assert lines[0].startswith("[warning] omp_root: OMP uses ") and str(world.root.resolve()) in lines[0]
    assert f"commonkeep doctor --root {world.root.resolve()}" in lines[0]
    [layout] = [line for line in lines if "missing_layout" in line]
    assert "would start a separate, empty store here" in layout
    assert ck("doctor", "--root", str(world.root)) == 0  # the root OMP uses is healthy


def test_uninstall_keeps_the_root_and_removes_backups_only_when_asked(
    world: OmpWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = str(world.agent_dir)
    world.extension.parent.mkdir(parents=True)
    world.extension.write_text("// my own extension\n")
    assert ck("omp", "install", "--root", str(world.root), "--agent-dir", agent) == 0
    [backup] = inst.backups(world.agent_dir)
    capsys.readouterr()
    assert ck("omp", "uninstall", "--agent-dir", agent) == 0
    out = capsys.readouterr().out
    assert f"memory root {world.root.resolve()} is kept" in out
    assert "`commonkeep omp uninstall --remove-backups` deletes them" in out and backup.exists()
    assert (world.root / "memory").is_dir()
    assert ck("omp", "uninstall", "--agent-dir", agent, "--remove-backups") == 0
    assert "removed 1 backup(s)" in capsys.readouterr().out and not backup.exists()
