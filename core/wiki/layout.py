"""Where things live in a wiki project (``contracts/dossier.md §3``).

``raw/`` holds immutable sources; ``wiki/{entities,concepts,sources}`` the compiled pages with
``index.md`` and the append-only ``log.md``; ``.hmlr/facts.db`` the SQLite state, kept out of
the wiki and out of git (it is rebuilt from ``raw/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from commonkeep.errors import BadInput

PAGE_KINDS = ("entities", "concepts", "sources")


@dataclass(frozen=True)
class WikiLayout:
    """The paths of one wiki project."""

    project: Path

    @property
    def raw(self) -> Path:
        return self.project / "raw"

    @property
    def wiki(self) -> Path:
        return self.project / "wiki"

    @property
    def index(self) -> Path:
        return self.wiki / "index.md"

    @property
    def log(self) -> Path:
        return self.wiki / "log.md"

    @property
    def state_dir(self) -> Path:
        return self.project / ".hmlr"

    @property
    def facts_db(self) -> Path:
        return self.state_dir / "facts.db"

    @property
    def lock(self) -> Path:
        return self.state_dir / "write.lock"

    def page(self, kind: str, slug: str) -> Path:
        return self.wiki / kind / f"{slug}.md"


def project_layout(project: str | Path) -> WikiLayout:
    """The layout of an existing project folder (refused with a clear error if it is missing)."""
    path = Path(project).expanduser()
    if not path.is_dir():
        raise BadInput(
            f"wiki project folder {path} does not exist or is not a folder",
            hint="pass --project DIR pointing at the memory folder (it holds raw/ and wiki/), or create it first",
        )
    return WikiLayout(path.resolve())


def ensure_layout(layout: WikiLayout) -> None:
    """Create the folders, the log header and the ``.gitignore`` entry for ``.hmlr/`` (idempotent)."""
    layout.raw.mkdir(exist_ok=True)
    for kind in PAGE_KINDS:
        (layout.wiki / kind).mkdir(parents=True, exist_ok=True)
    layout.state_dir.mkdir(exist_ok=True)
    if not layout.log.exists():
        layout.log.write_text("# Log\n\nAppend-only record of ingests and gardener passes.\n", encoding="utf-8")
    ignore = layout.project / ".gitignore"
    lines = ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []
    if ".hmlr/" not in lines:
        with ignore.open("a", encoding="utf-8") as fh:
            if lines and not ignore.read_text(encoding="utf-8").endswith("\n"):
                fh.write("\n")
            fh.write(".hmlr/\n")
