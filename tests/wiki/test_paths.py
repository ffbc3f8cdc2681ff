"""Ingest refuses every path that is not a regular file strictly inside raw/, and says why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from commonkeep import wiki
from commonkeep.errors import BadInput


def _setup(project: Path, tmp_path: Path) -> None:
    (project / "raw/ok.md").write_text("Kestrel ships.\n", encoding="utf-8")
    (project / "notes.md").write_text("outside raw\n", encoding="utf-8")
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "x.md").write_text("secret\n", encoding="utf-8")
    (outside / "deep/y.md").write_text("secret\n", encoding="utf-8")
    os.symlink(outside / "x.md", project / "raw/link.md")
    os.symlink(outside / "deep", project / "raw/linkdir")
    (project / "raw/sub").mkdir()
    (project / "raw/bin.md").write_bytes(b"ok\n\xff\xfe bad\n")


CASES = [
    ("/etc/passwd", "is absolute"),
    ("raw/../notes.md", "contains '..'"),
    ("raw/sub/../../notes.md", "contains '..'"),
    ("notes.md", "is outside raw/"),
    ("wiki/index.md", "is outside raw/"),
    ("raw", "names the raw/ folder itself"),
    ("raw/", "names the raw/ folder itself"),
    ("raw/link.md", "raw/link.md in"),
    ("raw/linkdir/y.md", "raw/linkdir in"),
    ("raw/missing.md", "does not exist"),
    ("raw/sub", "is not a regular file"),
    ("", "empty"),
    ("raw/bin.md", "is not UTF-8 text (byte 3, line 2)"),
]


@pytest.mark.parametrize(("path", "message"), CASES)
def test_refused_paths_say_what_and_where_and_change_nothing(project: Path, tmp_path: Path, path: str, message: str) -> None:
    _setup(project, tmp_path)
    with pytest.raises(BadInput) as info:
        wiki.ingest(project, path)
    text = str(info.value)
    assert message in text
    assert "hint:" in text
    assert not (project / "wiki").exists() and not (project / ".git").exists()


def test_symlinked_raw_folder_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "memory"
    project.mkdir()
    real = tmp_path / "elsewhere"
    real.mkdir()
    (real / "a.md").write_text("x\n", encoding="utf-8")
    os.symlink(real, project / "raw")
    with pytest.raises(BadInput, match=r"raw in .* is a symlink"):
        wiki.ingest(project, "raw/a.md")


def test_missing_project_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="does not exist or is not a folder"):
        wiki.query(tmp_path / "nope", "anything")


def test_nested_source_under_raw_is_accepted(project: Path) -> None:
    (project / "raw/team").mkdir()
    (project / "raw/team/notes.md").write_text("Kestrel is now called Falcon.\n", encoding="utf-8")
    report = wiki.ingest(project, "raw/team/notes.md")
    assert (report.source, report.source_page) == ("raw/team/notes.md", "wiki/sources/team-notes.md")
