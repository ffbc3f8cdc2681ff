"""A fresh account has no git identity: ``share init`` and ``share sync`` say so, change nothing,
and name the command that fixes it (exit 2), instead of failing half-way through a commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.layout import ensure_layout
from tests.store.test_share import WRITER

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL")


@pytest.fixture
def no_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in IDENTITY_VARS:
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "fresh.gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n", encoding="utf-8")  # as on a box with no mail name
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))


def test_share_init_without_git_identity_is_refused_naming_the_fix(
    no_identity: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ensure_layout(tmp_path / "mem").root
    code = main(["share", "init", "--root", str(root)])
    err = capsys.readouterr().err
    assert code == 2
    assert "no git identity" in err and "git config --global user.email" in err
    assert not (root / ".git").exists() and not (root / ".gitattributes").exists()  # nothing changed


def test_share_sync_without_git_identity_is_refused_before_any_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ensure_layout(tmp_path / "mem").root
    assert main(["share", "init", "--root", str(root)]) == 0  # with the tests' identity
    for var in IDENTITY_VARS:
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "fresh.gitconfig"
    config.write_text("[user]\n\tuseConfigOnly = true\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    capsys.readouterr()
    code = main(["share", "sync", "--no-push", "--root", str(root), "--role", WRITER, "--json"])
    out = capsys.readouterr().out
    assert code == 2 and "GitIdentityMissing" in out and "user.name" in out
    head = subprocess.run(["git", "-C", str(root), "rev-list", "--count", "HEAD"], capture_output=True, text=True)
    assert head.stdout.strip() == "1"  # only init's commit
