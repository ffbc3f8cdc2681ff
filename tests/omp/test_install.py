"""``commonkeep omp install | uninstall | status``: what lands where, and nothing a user wrote is lost."""

from __future__ import annotations

import json

import pytest

from commonkeep.cli import main
from commonkeep_omp import install as inst
from commonkeep_omp.plugin import commonkeep_doctor_checks
from tests.omp.conftest import OmpWorld


def cli(*argv: str) -> int:
    return main(list(argv))


def test_install_bakes_the_root_and_the_commonkeep_command_into_the_extension(world: OmpWorld) -> None:
    out = inst.install(world.root, agent=world.agent_dir, argv=["/opt/ck/bin/commonkeep"])
    assert out.extension == world.extension
    info = inst.read_installed(world.extension)
    assert info["ours"] and info["untouched"]
    assert info["config"]["root"] == str(world.root.resolve())
    assert info["config"]["commonkeep"] == ["/opt/ck/bin/commonkeep"]
    text = world.extension.read_text()
    assert 'registerCommand("commonkeep-doctor"' in text
    assert "memory-doctor" not in text.replace("commonkeep-doctor", "")  # OmpKeep owns /memory-doctor


def test_installing_twice_changes_nothing(world: OmpWorld) -> None:
    inst.install(world.root, agent=world.agent_dir)
    before = world.extension.read_bytes()
    out = inst.install(world.root, agent=world.agent_dir)
    assert "already installed" in out.actions[0]
    assert out.backups == []
    assert world.extension.read_bytes() == before


def test_a_users_own_file_at_the_same_path_is_kept_as_a_backup(world: OmpWorld) -> None:
    world.extension.parent.mkdir(parents=True)
    world.extension.write_text("export default function mine(pi) {}\n")
    out = inst.install(world.root, agent=world.agent_dir)
    assert len(out.backups) == 1
    assert out.backups[0].read_text() == "export default function mine(pi) {}\n"
    assert inst.read_installed(world.extension)["untouched"]


def test_an_edited_copy_is_backed_up_on_reinstall_and_on_uninstall(world: OmpWorld) -> None:
    inst.install(world.root, agent=world.agent_dir)
    world.extension.write_text(world.extension.read_text() + "// my tweak\n")
    assert not inst.read_installed(world.extension)["untouched"]
    out = inst.install(world.root / "elsewhere", agent=world.agent_dir)
    assert out.backups and "// my tweak" in out.backups[0].read_text()
    world.extension.write_text(world.extension.read_text() + "// again\n")
    out = inst.uninstall(agent=world.agent_dir)
    assert not world.extension.exists()
    assert out.backups and "// again" in out.backups[0].read_text()


def test_an_untouched_copy_is_simply_removed(world: OmpWorld) -> None:
    inst.install(world.root, agent=world.agent_dir)
    out = inst.uninstall(agent=world.agent_dir)
    assert out.backups == []
    assert list(world.extension.parent.iterdir()) == []


def test_env_block_keeps_user_lines_and_never_overrides_a_users_root(world: OmpWorld) -> None:
    env_file = world.agent_dir / ".env"
    env_file.parent.mkdir(parents=True)
    env_file.write_text("ANTHROPIC_BASE_URL=http://localhost:1\nPI_MEMORY_ROOT=/somewhere/else\n")
    out = inst.install(world.root, agent=world.agent_dir, write_env=True)
    text = env_file.read_text()
    assert "ANTHROPIC_BASE_URL=http://localhost:1" in text
    assert "PI_MEMORY_ROOT=/somewhere/else" in text
    assert f"OMP_MEMORY_ROOT={world.root.resolve()}" in text
    assert f"OMPKEEP_ROOT={world.root.resolve()}" in text
    assert f"PI_MEMORY_ROOT={world.root.resolve()}" not in text
    # OMP copies the block's OMP_MEMORY_ROOT over PI_MEMORY_ROOT within the file, so no session
    # splits (test_omp_host proves it in a real session): no warning, status clean
    assert out.warnings == []
    assert len(out.backups) == 1 and out.backups[0].read_text().startswith("ANTHROPIC_BASE_URL")
    report = inst.status(agent=world.agent_dir)
    assert report["ok"], report["problems"]
    assert report["resolved_root"] == str(world.root.resolve())
    inst.uninstall(agent=world.agent_dir)
    assert env_file.read_text() == "ANTHROPIC_BASE_URL=http://localhost:1\nPI_MEMORY_ROOT=/somewhere/else\n"


def test_env_block_is_rewritten_in_place_on_a_new_root(world: OmpWorld) -> None:
    inst.install(world.root, agent=world.agent_dir, write_env=True)
    inst.install(world.root / "b", agent=world.agent_dir, write_env=True)
    text = (world.agent_dir / ".env").read_text()
    assert text.count(inst.ENV_BEGIN) == 1
    assert f"OMP_MEMORY_ROOT={(world.root / 'b').resolve()}" in text


def test_cli_status_says_what_is_installed_where(world: OmpWorld, capsys: pytest.CaptureFixture[str]) -> None:
    agent = str(world.agent_dir)
    assert cli("omp", "status", "--agent-dir", agent) == 1
    assert "not installed" in capsys.readouterr().out
    assert cli("omp", "install", "--root", str(world.root), "--agent-dir", agent) == 0
    assert (world.root / "memory").is_dir()  # install prepares the root for both hosts
    capsys.readouterr()
    assert cli("omp", "status", "--agent-dir", agent, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["root"] == str(world.root.resolve())
    assert report["extension"]["path"] == str(world.extension)
    assert cli("omp", "--root", str(world.root / "other"), "status", "--agent-dir", agent) == 1
    assert "baked with root" in capsys.readouterr().out
    assert cli("omp", "uninstall", "--agent-dir", agent) == 0
    assert not world.extension.exists()


def test_doctor_reports_the_omp_extension_and_whether_hermes_shares_the_root(world: OmpWorld) -> None:
    inst.install(world.root, agent=world.agent_dir)
    codes = {f["code"]: f for f in commonkeep_doctor_checks(root=str(world.root))}
    assert codes["omp_extension"]["severity"] == "ok"
    assert codes["hermes_root"]["severity"] == "info"  # no Hermes configured in this HOME
    hermes = world.home / ".hermes"
    hermes.mkdir()
    (hermes / "config.yaml").write_text(f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {world.root}\n")
    codes = {f["code"]: f for f in commonkeep_doctor_checks(root=str(world.root))}
    assert codes["hermes_root"]["severity"] == "ok"
    assert codes["hermes_auto_curate"]["severity"] == "info"  # off by default
    for extra, severity, words in (
        ("auto_curate: high-only\n    role: librarian\n", "ok", "as the writer role 'librarian'"),
        ("auto_curate: high-only\n    role: hermes\n", "warning", "not the writer role 'librarian'"),
        ("auto_curate: sometimes\n", "warning", "use one of"),
    ):
        (hermes / "config.yaml").write_text(
            f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {world.root}\n    {extra}")
        codes = {f["code"]: f for f in commonkeep_doctor_checks(root=str(world.root))}
        assert codes["hermes_auto_curate"]["severity"] == severity and words in codes["hermes_auto_curate"]["message"]
    codes = {f["code"]: f for f in commonkeep_doctor_checks(root=str(world.root / "x"))}
    assert codes["hermes_root"]["severity"] == "warning"
    assert codes["omp_extension"]["severity"] == "warning"


def test_install_without_root_follows_the_root_hermes_is_configured_for(
    world: OmpWorld, capsys: pytest.CaptureFixture[str]
) -> None:
    hermes = world.home / ".hermes"  # HOME is the scratch home in these tests
    hermes.mkdir(parents=True, exist_ok=True)  # Hermes creates its home on first run
    assert cli("hermes", "--root", str(world.root), "install", "--hermes-home", str(hermes)) == 0
    capsys.readouterr()
    assert cli("omp", "install", "--agent-dir", str(world.agent_dir)) == 0
    assert "chosen by Hermes'" in capsys.readouterr().out
    assert inst.read_installed(world.extension)["config"]["root"] == str(world.root.resolve())


def test_an_extension_file_that_is_not_utf8_is_kept_as_a_backup_not_a_crash(world: OmpWorld) -> None:
    world.extension.parent.mkdir(parents=True)
    world.extension.write_bytes(b"\x00\xff not text")
    assert inst.read_installed(world.extension)["untouched"] is False
    assert not inst.status(agent=world.agent_dir)["ok"]
    out = inst.install(world.root, agent=world.agent_dir)
    assert len(out.backups) == 1 and out.backups[0].read_bytes() == b"\x00\xff not text"
    assert inst.read_installed(world.extension)["untouched"]


def test_an_env_file_that_is_not_utf8_is_left_alone_with_a_clear_error(world: OmpWorld) -> None:
    from commonkeep.errors import BadInput

    env_file = world.agent_dir / ".env"
    env_file.parent.mkdir(parents=True)
    env_file.write_bytes(b"KEY=caf\xe9\n")
    with pytest.raises(BadInput, match="is not UTF-8 text"):
        inst.install(world.root, agent=world.agent_dir, write_env=True)
    assert env_file.read_bytes() == b"KEY=caf\xe9\n"
