"""Docs that disagree with the code (issue 27), caught where a test can: every `commonkeep.…` module
path a page names imports, no module is listed twice in the Python API table, the top-level help
names every benchmark, only the modules docs/architecture.md names import a part directly, and
pages link outside the repository only to the tools and data sets named here. Reads the
repository only."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# Outside links a page may have: the tools and data sets the docs name (never a format commonkeep implements).
OUTSIDE_LINKS = {
    "https://github.com/newren/git-filter-repo",
    "https://nedbatchelder.com/code/cog/",
    "https://github.com/snap-research/LoCoMo",
    "https://github.com/Sean-V-Dev/HMLR-Agentic-AI-Memory-System",
    "https://pluggy.readthedocs.io",
}
MODULE = re.compile(r"`(commonkeep(?:_hermes|_omp|_roundtable)?(?:\.[a-z_][a-z0-9_]*)+)(?![A-Za-z0-9_])")


def _importable(dotted: str) -> bool:
    """A module (found, not imported: a module for a host may need that host's libraries), or an
    attribute of one (``commonkeep.gate.capture.capture``)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.util.find_spec(".".join(parts[:cut])) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            continue
        if cut == len(parts):
            return True
        obj: object = importlib.import_module(".".join(parts[:cut]))
        for name in parts[cut:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_every_module_path_in_the_docs_imports() -> None:
    broken = []
    for page in PAGES:
        for dotted in sorted(set(MODULE.findall(page.read_text(encoding="utf-8")))):
            if not _importable(dotted):
                broken.append(f"{page.relative_to(REPO)}: {dotted}")
    assert broken == []


def test_no_page_names_a_module_by_its_old_flat_name() -> None:
    """``commonkeep.capture`` still imports (``_moved``), but a page shows the current path; only
    python-api.md, which explains the old names, may use them."""
    from commonkeep._moved import new_name

    old = []
    for page in PAGES:
        if page.name == "python-api.md":
            continue
        for dotted in sorted(set(MODULE.findall(page.read_text(encoding="utf-8")))):
            parts = dotted.split(".")
            if any(new_name(".".join(parts[:cut])) for cut in range(2, len(parts) + 1)):
                old.append(f"{page.relative_to(REPO)}: {dotted}")
    assert old == []


def test_the_python_api_table_lists_each_module_once() -> None:
    rows = re.findall(r"^\| `([^`]+)`", (REPO / "docs" / "python-api.md").read_text(encoding="utf-8"), re.M)
    assert sorted({r for r in rows if rows.count(r) > 1}) == []


def test_the_top_level_help_names_every_benchmark() -> None:
    from commonkeep.bench import BENCHES
    from commonkeep.cli import COMMANDS

    listed = COMMANDS["bench"][1].split(":", 1)[1]
    assert sorted(n.strip() for n in listed.split(",")) == sorted(BENCHES)


def test_only_the_modules_architecture_names_import_a_part() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    importing = sorted(
        str(p.relative_to(REPO)) for p in (REPO / "core").rglob("*.py")
        if re.search(r"^\s*(?:from|import) commonkeep_(?:hermes|omp|roundtable)\b", p.read_text(encoding="utf-8"), re.M)
    )
    assert importing == ["core/bench/userturn.py", "core/demo.py"]
    assert all(f"`{path}`" in doc for path in importing)


def test_pages_link_outside_only_to_the_tools_and_data_sets_they_name() -> None:
    outside = set()
    for page in PAGES:
        outside |= set(re.findall(r"\]\((https?://[^)\s]+)\)", page.read_text(encoding="utf-8")))
    assert outside - OUTSIDE_LINKS == set()
