"""``exitcarry``: a record file the exit gate knew clean stays known clean through commonkeep's own
edit by id (so ``share sync``/``reindex`` after a one-op apply do not read 100,000 records again),
and never when the edit wrote a secret, another program appended meanwhile, or the file was not
known clean before."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from commonkeep.store import exitgate
from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl, read_jsonl
from commonkeep.store.layout import ensure_layout
from commonkeep.store.line_edit import RecordChanges

TOKEN = "ghp_" + "R8xkQ2vLm9ZpT4wYc7NbJ3hFd6GsA1eKu5Wy"  # a GitHub token's shape, generated for the test


def _record(i: int, statement: str) -> dict[str, Any]:
    return {"id": f"mem_20261204000000_r{i:05d}", "statement": statement, "status": "active", "tags": ["t"]}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    root = ensure_layout(tmp_path / "root").root
    path = root / "memory" / "L2.playbooks.jsonl"
    append_jsonl(path, [_record(i, f"Statement number {i} about the build.") for i in range(50)])
    return root, path


def _unread(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("the sweep read a file it knew clean")

    monkeypatch.setattr(exitgate, "blob", refuse)


def test_a_clean_edit_keeps_the_file_known_clean(setup: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = setup
    assert exitgate.sweep(root, reason="test") == []  # found clean: remembered
    Store(root).rewrite_records(path, RecordChanges({_record(7, "")["id"]: _record(7, "Statement seven, edited.")}))
    assert any(r["statement"] == "Statement seven, edited." for r in read_jsonl(path).rows)
    _unread(monkeypatch)
    assert exitgate.sweep(root, reason="test") == []  # not read again


def test_an_edit_that_writes_a_secret_is_swept(setup: tuple[Path, Path]) -> None:
    root, path = setup
    exitgate.sweep(root, reason="test")
    Store(root).rewrite_records(path, RecordChanges({_record(3, "")["id"]: _record(3, f"Use {TOKEN} for the API.")}))
    swept = exitgate.sweep(root, reason="test")
    assert [s.file for s in swept] == ["memory/L2.playbooks.jsonl"]
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_a_file_not_known_clean_is_not_carried(setup: tuple[Path, Path]) -> None:
    root, path = setup
    with open(path, "a", encoding="utf-8") as fh:  # another program's line, never swept
        fh.write(json.dumps(_record(90, f"The deploy token is {TOKEN}.")) + "\n")
    Store(root).rewrite_records(path, RecordChanges({_record(1, "")["id"]: _record(1, "Statement one, edited.")}))
    exitgate.sweep(root, reason="test")
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_a_line_appended_while_the_edit_runs_is_swept(setup: tuple[Path, Path]) -> None:
    root, path = setup
    exitgate.sweep(root, reason="test")

    def edit_while_another_program_appends(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)  # OmpKeep takes no lock of ours
        os.write(fd, (json.dumps(_record(91, f"Token {TOKEN} for CI.")) + "\n").encode())
        os.close(fd)
        return [{**r, "statement": "Statement two, edited."} for r in rows]

    changes = RecordChanges({_record(2, "")["id"]: None})
    changes.one = edit_while_another_program_appends  # type: ignore[method-assign]
    Store(root).rewrite_records(path, changes)
    exitgate.sweep(root, reason="test")
    text = path.read_text(encoding="utf-8")
    assert "Statement two, edited." in text
    assert TOKEN not in text


def test_a_line_appended_after_the_file_was_found_clean_is_swept(setup: tuple[Path, Path]) -> None:
    """The memo knows an older state of the file: another program appended since."""
    root, path = setup
    exitgate.sweep(root, reason="test")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(_record(92, f"Deploy with {TOKEN}.")) + "\n")
    Store(root).rewrite_records(path, RecordChanges({_record(4, "")["id"]: _record(4, "Statement four, edited.")}))
    exitgate.sweep(root, reason="test")
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_a_line_appended_between_the_check_and_the_read_is_swept(setup: tuple[Path, Path],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = setup
    exitgate.sweep(root, reason="test")
    from commonkeep.store import exitcarry

    real = exitcarry.Carry.__init__

    def then_another_program_appends(self: exitcarry.Carry, *args: Any) -> None:
        real(self, *args)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(_record(93, f"CI uses {TOKEN}.")) + "\n")

    monkeypatch.setattr(exitcarry.Carry, "__init__", then_another_program_appends)
    Store(root).rewrite_records(path, RecordChanges({_record(5, "")["id"]: _record(5, "Statement five, edited.")}))
    monkeypatch.undo()
    exitgate.sweep(root, reason="test")
    assert TOKEN not in path.read_text(encoding="utf-8")


def test_an_edit_that_falls_back_to_the_whole_rewrite_is_not_carried(setup: tuple[Path, Path]) -> None:
    """A line that is not one object sends the edit to the full rewrite: which rows are new is
    not known there, so the file is read by the next sweep."""
    root, path = setup
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("7\n")
    exitgate.sweep(root, reason="test")
    Store(root).rewrite_records(path, RecordChanges({_record(6, "")["id"]: _record(6, f"Use {TOKEN} here.")}))
    exitgate.sweep(root, reason="test")
    assert TOKEN not in path.read_text(encoding="utf-8")
