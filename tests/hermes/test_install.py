"""``commonkeep hermes install | uninstall | status`` on a real Hermes home (CLI from Hermes' venv)."""

from __future__ import annotations

import pytest

from tests.hermes.conftest import HermesWorld

pytestmark = pytest.mark.hermes

OLD_ENTRIES = "Old note one.\n§\nOld note two about the build."


def test_install_twice_is_a_noop_and_uninstall_restores_the_config(hermes19: HermesWorld) -> None:
    original = hermes19.write_config()
    first = hermes19.install()
    assert "backed up" in first.stdout and "enabled provider commonkeep" in first.stdout
    installed = hermes19.config.read_text()
    assert "# my Hermes settings (this comment must survive install and uninstall)" in installed
    assert "memory_char_limit: 300  # small on purpose" in installed
    assert "provider: commonkeep" in installed and "commonkeep-governance" in installed
    assert (hermes19.hermes_home / "plugins" / "commonkeep" / "__init__.py").is_file()

    second = hermes19.install()
    assert "already installed; nothing changed" in second.stdout
    assert hermes19.config.read_text() == installed

    # Hermes itself sees the provider and the plugin
    mem = hermes19.run(str(hermes19.bin / "hermes"), "memory", "status", check=False)
    assert "commonkeep" in mem.stdout + mem.stderr

    done = hermes19.commonkeep("hermes", "uninstall")
    assert "restored" in done.stdout
    assert hermes19.config.read_text() == original
    assert not (hermes19.hermes_home / "plugins" / "commonkeep").exists()


def test_uninstall_after_user_edits_removes_only_commonkeep_settings(hermes19: HermesWorld) -> None:
    hermes19.write_config()
    hermes19.install()
    hermes19.config.write_text(hermes19.config.read_text() + "display:\n  theme: dark  # mine\n")
    hermes19.commonkeep("hermes", "uninstall")
    text = hermes19.config.read_text()
    assert "theme: dark  # mine" in text and "small on purpose" in text
    assert "commonkeep" not in text


def test_existing_entries_are_imported_once(hermes19: HermesWorld) -> None:
    hermes19.write_config()
    mem = hermes19.memory_file("MEMORY.md")
    mem.parent.mkdir(parents=True, exist_ok=True)
    mem.write_text(OLD_ENTRIES)
    first = hermes19.install()
    assert "imported 2 existing entries as candidates" in first.stdout
    texts = sorted(c["text"] for c in hermes19.inbox())
    assert texts == ["Old note one.", "Old note two about the build."]
    assert all(c["provenance"]["origin"] == "import" for c in hermes19.inbox())
    backups = list((hermes19.hermes_home / "commonkeep" / "backups").glob("MEMORY.md.*"))
    assert backups and backups[0].read_text() == OLD_ENTRIES  # the old file is kept, not lost

    hermes19.commonkeep("hermes", "install", "--root", str(hermes19.root))
    hermes19.commonkeep("hermes", "sync")
    assert len(hermes19.inbox()) == 2
