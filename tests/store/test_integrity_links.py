"""A folder of the root replaced by a symlink leading outside it (issue 14 §2).

Policy: commonkeep refuses the root while any of its folders links outside it (exit 2, the
message names the folder), writes nothing outside, and ``doctor`` lists every such link. A link
that stays inside the root is allowed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.errors import BadInput
from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store
from commonkeep.store.layout import FOLDERS

WRITER = "librarian"


def _seeded(root: Path) -> None:
    from commonkeep.gate.capture import capture

    capture(root, "Always run pytest -q before committing.", tags=["testing"],
            evidence_refs=["daily/2026-12-02.md", "pyproject.toml"], confidence=0.9,
            primary_trust_class="direct_user_instruction", durability_signal="long_term")


# the command that writes into each folder
WRITES = {
    "schemas": ["init"], "memory": ["init"], "memory/projects": ["curate", "--role", WRITER],
    "daily": ["write", "--daily", "Looked at CI."], "inbox": ["write", "Prefer small commits."],
    "patches": ["curate", "--role", WRITER], "rendered": ["render"], "rendered/projects": ["render"],
    "runtime": ["select", "how do we run the tests"], "runtime/compaction-artifacts": ["init"],
    "reports": ["handoff"], "reports/handoff": ["handoff"], "reports/diagnostics": ["init"],
    "search": ["reindex"], "sessions": ["init"], "sessions/summaries": ["init"],
    "quarantine": ["inbox"], "locks": ["curate", "--role", WRITER],
}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("rel", FOLDERS)
def test_a_folder_linked_outside_the_root_is_refused_and_nothing_lands_outside(
    root: Path, tmp_path: Path, rel: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _seeded(root)
    if rel == "quarantine":
        with open(root / "inbox" / "captured.jsonl", "ab") as fh:
            fh.write(b"not json\n")
    folder = root / rel
    outside = tmp_path / "elsewhere" / rel.replace("/", "_")
    outside.parent.mkdir(parents=True, exist_ok=True)
    if folder.exists():
        shutil.move(str(folder), str(outside))
    else:
        outside.mkdir()
    folder.symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside)

    code = main([*WRITES[rel], "--root", str(root)])
    out, err = capsys.readouterr()
    assert code == 2, (rel, out, err)
    assert "Traceback" not in err
    assert f"{rel}/ in the memory root {root} is a symlink to {outside}, outside the root" in err
    assert _snapshot(outside) == before

    assert main(["doctor", "--root", str(root)]) == 1
    report = capsys.readouterr().out
    assert f"linked_outside_root: {rel} is a symlinked folder to {outside}, outside the root" in report


def test_a_store_opened_before_the_link_appeared_refuses_too(root: Path, tmp_path: Path) -> None:
    store = Store(root)
    store.ensure()
    outside = tmp_path / "elsewhere"
    shutil.move(str(root / "inbox"), str(outside))
    (root / "inbox").symlink_to(outside, target_is_directory=True)
    before = _snapshot(outside)
    with pytest.raises(BadInput, match="inbox/ in the memory root .* outside the root"):
        store.append_candidate(new_candidate("Prefer small commits."))
    with pytest.raises(BadInput, match="inbox/ in the memory root"):
        store.update_candidates(lambda rows: rows)
    assert _snapshot(outside) == before


def test_a_link_that_stays_inside_the_root_is_allowed_and_noted(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    real = root / "daily-real"
    shutil.move(str(root / "daily"), str(real))
    (root / "daily").symlink_to(real, target_is_directory=True)
    assert main(["write", "--daily", "Looked at CI.", "--root", str(root)]) == 0
    assert any(real.glob("*.md"))
    capsys.readouterr()
    assert main(["doctor", "--root", str(root)]) == 0
    assert "linked_inside_root: daily is a symlinked folder" in capsys.readouterr().out
