"""``share init`` on a root whose .gitignore is not UTF-8: a clear error, nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.layout import ensure_layout


def test_a_gitignore_that_is_not_utf8_is_named_and_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ensure_layout(tmp_path / "root").root
    (root / ".gitignore").write_bytes(b"caf\xe9\n")
    assert main(["share", "init", "--root", str(root), "--role", "librarian"]) == 2
    err = capsys.readouterr().err
    assert ".gitignore is not UTF-8" in err and "Traceback" not in err
    assert (root / ".gitignore").read_bytes() == b"caf\xe9\n"
