"""``util.bytecode``: doctor names modules whose compiled bytecode is missing or stale when this
Python will not write it (an editable install in a shell with PYTHONDONTWRITEBYTECODE=1 compiles
every module again on every command)."""

from __future__ import annotations

import os
import py_compile
import sys
from pathlib import Path

import pytest

from commonkeep.util import bytecode


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pkg = tmp_path / "ckprobe_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(bytecode, "PACKAGES", ("ckprobe_pkg",))
    return pkg


def test_missing_then_compiled_then_stale_after_an_edit(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    stale, total = bytecode.stale_sources()
    assert (sorted(p.name for p in stale), total) == (["__init__.py", "mod.py"], 2)
    for p in package.glob("*.py"):
        py_compile.compile(str(p))
    assert bytecode.stale_sources() == ([], 2)
    assert bytecode.finding() is None
    (package / "mod.py").write_text("X = 22\n")  # edited since (size and time change)
    os.utime(package / "mod.py", (1_900_000_000, 1_900_000_000))
    assert [p.name for p in bytecode.stale_sources()[0]] == ["mod.py"]
    note = bytecode.finding()
    assert note is not None and note["severity"] == "info"
    assert "1 of 2 commonkeep modules" in str(note["message"]) and "-m compileall -q" in str(note["message"])
    assert str(package) in str(note["message"])


def test_no_note_when_python_writes_bytecode_itself(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert bytecode.stale_sources()[0]  # missing, but the next import writes it
    assert bytecode.finding() is None
