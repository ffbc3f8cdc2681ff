"""The core is grouped into domain packages; the module paths of 0.1 keep importing."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from commonkeep._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_is_the_moved_module_itself(old: str) -> None:
    """One module object under both names: patching or reading state through the old name
    reaches the code that runs."""
    before = importlib.import_module(f"commonkeep.{old}")
    after = importlib.import_module(f"commonkeep.{MOVED[old]}")
    assert before is after


def test_importing_an_old_name_leaves_the_module_its_own_spec() -> None:
    """The module keeps its real ``__spec__`` after an import by its old name, so
    ``importlib.reload`` (through either name) runs its code again."""
    real = importlib.import_module("commonkeep.store.inquiries")
    old = importlib.import_module("commonkeep.inquiries")
    assert old is real and real.__spec__ is not None and real.__spec__.name == "commonkeep.store.inquiries"
    real.__dict__.pop("describe")
    assert importlib.reload(old) is real and callable(real.describe)


def test_old_submodule_and_from_imports_of_a_moved_package() -> None:
    from commonkeep.recall.search.hybrid import search
    from commonkeep.search.hybrid import search as old_search  # type: ignore[import-not-found,unused-ignore]

    assert old_search is search
    assert importlib.import_module("commonkeep.search.fts") is importlib.import_module("commonkeep.recall.search.fts")


def test_the_names_third_parties_use_still_resolve() -> None:
    from commonkeep.capture import capture  # type: ignore[import-not-found,unused-ignore]
    from commonkeep.store import Store
    from commonkeep.tools import core_tools

    assert callable(capture) and callable(core_tools) and Store.__name__ == "Store"


@pytest.mark.parametrize(("old", "name", "new"), [
    ("commonkeep.governance.writer", "writer_lock", "commonkeep.patches.lock"),
    ("commonkeep.governance.writer", "read_lock_info", "commonkeep.patches.lock"),
    ("commonkeep.writer", "Acquired", "commonkeep.patches.lock"),
    ("commonkeep.governance.autoapply", "auto_curate", "commonkeep.patches.auto"),
    ("commonkeep.governance.autoapply", "HELD_CHANGES", "commonkeep.patches.auto"),
    ("commonkeep.governance.autoapply", "curator_config", "commonkeep.store.curators"),
    ("commonkeep.governance.curate", "auto_curate", "commonkeep.patches.auto"),
    ("commonkeep.governance.curate", "infer_project_name", "commonkeep.store.project"),
    ("commonkeep.governance.decide", "record_key", "commonkeep.patches.waiting"),
    ("commonkeep.governance.scoring", "USER_TRUST", "commonkeep.gate.trust"),
    ("commonkeep.share.settle", "texts_in", "commonkeep.patches.purge"),
    ("commonkeep.share.deleted_lines", "is_record_file", "commonkeep.store.layout"),
    ("commonkeep.governance.secrets", "redact", "commonkeep.secrets"),
    ("commonkeep.store.capture", "capture", "commonkeep.gate.capture"),
])
def test_a_name_that_moved_in_0_3_is_the_same_object_under_its_old_module(old: str, name: str, new: str) -> None:
    """Names that moved out of a module (some up a layer, forwarded by name so the lower package
    never imports the higher one) are still read from their old module, as the same object."""
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


def test_a_forwarded_module_still_says_which_name_it_lacks() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = importlib.import_module("commonkeep.gate.writer").no_such_name


def test_a_name_that_never_existed_still_fails_plainly() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("commonkeep.no_such_module")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("commonkeep.search.no_such_module")


def test_documented_module_entry_points_run() -> None:
    """Hosts are configured with these command lines (Orphus: ``python -m commonkeep.dossier``)."""
    for argv in (["-m", "commonkeep.dossier", "--help"], ["-m", "commonkeep.cli", "--version"]):
        done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr


def test_no_test_reads_outside_the_repository() -> None:
    """A fresh clone has no ``../shared`` beside it: the tests carry their own data
    (the Hydra9 data is vendored with its notice in ``tests/wiki/data``)."""
    import re
    from pathlib import Path

    reads_shared = re.compile(r"""["']\.\./shared/|/ *["']shared["'] */|parents\[\d\] */ *["']shared""")
    here = Path(__file__).resolve().parent
    offenders = [str(p.relative_to(here)) for p in here.rglob("*.py")
                 if p.name != "test_layout.py" and reads_shared.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_no_module_is_over_500_lines() -> None:
    """Modules stay small and named after what they do (issue 13): split one that grows."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    big = {str(p.relative_to(repo)): n for folder in ("core", "plugins") for p in (repo / folder).rglob("*.py")
           if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500}
    assert big == {}
