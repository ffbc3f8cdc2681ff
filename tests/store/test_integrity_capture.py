"""``capture()`` keeps one Store per root (issue 14 §3); whatever changes on disk between two
calls is still seen: a deleted root is recreated, a folder swapped for a link is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from commonkeep.errors import BadInput
from commonkeep.gate.capture import capture
from commonkeep.store.core import Store


def _ids(root: Path) -> list[str]:
    return [c["id"] for c in Store(root, warn=False).candidates()]


def test_a_root_deleted_between_two_captures_is_recreated(tmp_path: Path) -> None:
    root = tmp_path / "r"
    capture(root, "Prefer small commits.")
    shutil.rmtree(root)
    second = capture(root, "Run pytest -q before committing.").candidate["id"]
    assert _ids(root) == [second]
    assert (root / "memory" / "L2.playbooks.jsonl").exists()


def test_an_inbox_folder_swapped_for_an_outside_link_between_captures_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "r"
    capture(root, "Prefer small commits.")
    outside = tmp_path / "elsewhere"
    shutil.move(str(root / "inbox"), str(outside))
    (root / "inbox").symlink_to(outside, target_is_directory=True)
    before = (outside / "captured.jsonl").read_bytes()
    with pytest.raises(BadInput, match="inbox/ in the memory root"):
        capture(root, "Run pytest -q before committing.")
    assert (outside / "captured.jsonl").read_bytes() == before


def test_an_inbox_file_removed_between_captures_is_recreated_owner_only(tmp_path: Path) -> None:
    root = tmp_path / "r"
    capture(root, "Prefer small commits.")
    (root / "inbox" / "captured.jsonl").unlink()
    second = capture(root, "Run pytest -q before committing.").candidate["id"]
    assert _ids(root) == [second]
    assert (root / "inbox" / "captured.jsonl").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("confidence", ["0.9", True, [0.5]])
def test_a_confidence_that_is_not_a_number_is_refused_by_name_and_writes_nothing(tmp_path: Path, confidence: object) -> None:
    root = tmp_path / "r"
    capture(root, "Prefer small commits.")
    before = (root / "inbox" / "captured.jsonl").read_bytes()
    with pytest.raises(BadInput, match="confidence must be a number"):
        capture(root, "Run pytest -q before committing.", confidence=confidence)
    assert (root / "inbox" / "captured.jsonl").read_bytes() == before


@pytest.mark.parametrize("field", ["tags", "evidence_refs"])
def test_a_lone_string_for_a_list_field_is_refused_not_split_into_letters(tmp_path: Path, field: str) -> None:
    root = tmp_path / "r"
    with pytest.raises(BadInput, match="must be a list of strings"):
        capture(root, "Prefer small commits.", **{field: "deploy"})
    assert _ids(root) == []


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"source_ref": 12}, "source ref must be a string, got int"),
        ({"cwd": ["/tmp"]}, "source cwd must be a string, got list"),
        ({"source_type": None}, "source type must be a string, got NoneType"),
        ({"provenance": ["host", "hermes"]}, "provenance must be an object"),
    ],
)
def test_a_wrong_type_through_the_python_api_is_a_clear_error_and_writes_nothing(
    tmp_path: Path, kwargs: dict[str, object], named: str
) -> None:
    """A plugin calling ``capture()`` with a wrong type got a TypeError traceback from deep inside
    (``len()`` of an int, ``.items()`` of a list); now it is ``BadInput`` naming the argument."""
    root = tmp_path / "r"
    kept = capture(root, "Prefer small commits.").candidate["id"]
    with pytest.raises(BadInput, match=named):
        capture(root, "Run pytest -q before committing.", **kwargs)
    assert _ids(root) == [kept]
