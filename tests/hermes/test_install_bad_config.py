"""``commonkeep hermes ...`` on a Hermes home whose config.yaml is broken or odd: a clear error, exit 2,
no traceback, and the file left exactly as it was (no Hermes needed: these run before any Hermes code)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.store.layout import ensure_layout


def ck(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "OMP_", "OMPKEEP_", "PI_"))}
    env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "commonkeep.cli", *args], capture_output=True, text=True,
                          env=env, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize(("config", "says"), [
    ("memory:\n  provider: [unclosed\n", "not valid YAML"),
    ("memory: 5\nplugins: x\n", "memory: is 5, not a mapping"),
])
def test_install_status_and_sync_on_a_broken_config_say_what_and_change_nothing(
        tmp_path: Path, config: str, says: str) -> None:
    root = ensure_layout(tmp_path / "shared").root
    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()
    (hermes_home / "config.yaml").write_text(config)
    install = ck("hermes", "install", "--hermes-home", str(hermes_home), "--root", str(root), home=tmp_path)
    assert install.returncode == 2, install.stderr
    assert says in install.stderr and "Traceback" not in install.stderr
    assert (hermes_home / "config.yaml").read_text() == config
    assert not (hermes_home / "commonkeep").exists() and not (hermes_home / "plugins").exists()
    if "YAML" in says:
        for action in ("status", "sync"):
            out = ck("hermes", action, "--hermes-home", str(hermes_home), home=tmp_path)
            assert out.returncode == 2, (action, out.stderr)
            assert "not valid YAML" in out.stderr and "line 3, column 1" in out.stderr and "Traceback" not in out.stderr


def test_a_profile_name_that_leaves_the_profiles_folder_is_refused(tmp_path: Path) -> None:
    hermes_home = tmp_path / "hermes"
    out = ck("hermes", "install", "--hermes-home", str(hermes_home), "--profile", "../../elsewhere", home=tmp_path)
    assert out.returncode == 2
    assert "is not a profile name" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "elsewhere").exists() and not hermes_home.exists()


def test_a_hand_edited_memory_file_that_is_not_utf8_is_backed_up_byte_for_byte(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.store.core import Store
    from commonkeep_hermes.hermesfiles import refresh
    from commonkeep_hermes.install import install
    from commonkeep_hermes.settings import HermesProfile

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = ensure_layout(tmp_path / "shared").root
    profile = HermesProfile(tmp_path / "hermes")
    install(profile, root)
    edited = b"\xff\xfe latin-1 caf\xe9\n\xc2\xa7\nUse pnpm in the web package.\n"
    profile.memory_file("memory").write_bytes(edited)
    report = refresh(profile, root, reason="test")
    assert len(report["backups"]) == 1 and Path(report["backups"][0]).read_bytes() == edited
    texts = [c["text"] for c in Store(root).candidates()]
    assert "Use pnpm in the web package." in texts


def test_sync_against_a_root_that_does_not_exist_leaves_memory_md_alone(tmp_path: Path) -> None:
    root = ensure_layout(tmp_path / "shared").root
    hermes_home = tmp_path / "hermes"
    hermes_home.mkdir()  # Hermes creates its home on first run
    assert ck("hermes", "install", "--hermes-home", str(hermes_home), "--root", str(root), home=tmp_path).returncode == 0
    memory_md = hermes_home / "memories" / "MEMORY.md"
    memory_md.write_text("A fact the user sees.")
    out = ck("hermes", "sync", "--hermes-home", str(hermes_home), "--root", str(tmp_path / "typo"), home=tmp_path)
    assert out.returncode == 2
    assert f"no memory root at {tmp_path / 'typo'}" in out.stderr and "Traceback" not in out.stderr
    assert memory_md.read_text() == "A fact the user sees."
    assert not (tmp_path / "typo").exists()
