"""Golden fixtures of the operations OMP and commonkeep both perform on a shared root.

Each case in ``fixtures/parity/ops/<case>/`` holds the input root, ``command.json`` (the
commonkeep command, the pinned ``COMMONKEEP_NOW`` and the working folder) and the expected root
after it, as OmpKeep 0.12 leaves it (its ``applyPatch`` / ``/memory-handoff``; the documented
deliberate differences are in docs/store.md). The expected files are compared byte for byte, ids
and times pinned by the clock, not masked. Two values depend on the machine and are written as
placeholders in the expected files: ``{root}`` (the root's absolute path, a profile's
``storage_root``) and ``{user}`` (the login name in a profile's ``resource_id``); and the id
of a patch ``curate`` writes is ``{patch_id}``, as commonkeep's patch ids end in a random
suffix so that they never collide with OMP's ``patch_<minute>_001``. ``command.json`` lists the
case's deliberate differences from OmpKeep under ``differences``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from commonkeep.recall.profile import resource_id

CASES = Path(__file__).parent / "fixtures" / "parity" / "ops"
COMPARED = ("memory", "patches", "inbox", "rendered", "reports")


def _files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for top in COMPARED if (root / top).is_dir()
            for p in sorted((root / top).rglob("*")) if p.is_file() and not _lock(p)}


def _lock(path: Path) -> bool:
    """commonkeep's own lock files (``.<name>.lock``), not part of what OmpKeep reads."""
    return path.name.startswith(".") and path.name.endswith(".lock")


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_the_root_after_the_command_is_what_ompkeep_leaves(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.cli import main

    spec = json.loads((CASES / case / "command.json").read_text(encoding="utf-8"))
    root = tmp_path / "root"
    shutil.copytree(CASES / case / "input", root)
    cwd = tmp_path / spec.get("cwd", "work")
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("COMMONKEEP_NOW", spec["now"])
    code = main([*spec["argv"], "--root", str(root)])
    assert code == 0, capsys.readouterr().err
    want, got = _files(CASES / case / "expected"), _files(root)
    new_patch = sorted(set(got) - set(_files(CASES / case / "input")) - set(want))
    pid = ""
    if "patches/{patch_id}.json" in want:
        assert len(new_patch) == 1 and new_patch[0].startswith("patches/patch_"), new_patch
        pid = Path(new_patch[0]).stem
        got["patches/{patch_id}.json"] = got.pop(new_patch[0])
    assert sorted(got) == sorted(want)
    user = resource_id().removeprefix("user:")
    for rel, path in want.items():
        text = path.read_bytes().replace(b"{root}", str(root.resolve()).encode()).replace(b"{user}", user.encode())
        assert got[rel].read_bytes() == text.replace(b"{patch_id}", pid.encode()), rel
