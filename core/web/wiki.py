"""The wiki pages: a wiki project's pages and sources rendered, with their git history.

Markdown is rendered by markdown-it with raw HTML turned off, so a page or source can never
inject markup; links keep only safe schemes (markdown-it's own ``validateLink``). Roundtable
exports are the sources whose lines are ``[<ISO UTC>] <name>#<seq>: <text>``
(``commonkeep_roundtable.export.render_transcript``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.wiki.layout import PAGE_KINDS, WikiLayout

_TRANSCRIPT_LINE = re.compile(r"^\[\d{4}-\d\d-\d\dT[^\]]*\] [^#\n]+#\d+: ")
MAX_SHOWN_BYTES = 2_000_000


@dataclass(frozen=True)
class WikiFile:
    rel: str
    kind: str  # index, log, entities, concepts, sources, raw, roundtable


def listing(project: Path) -> list[WikiFile]:
    """The wiki's pages (index, log, each kind) and its raw sources, roundtable exports marked."""
    lay = WikiLayout(project)
    out: list[WikiFile] = []
    for path, kind in ((lay.index, "index"), (lay.log, "log")):
        if path.is_file():
            out.append(WikiFile(str(path.relative_to(project)), kind))
    for kind in PAGE_KINDS:
        folder = lay.wiki / kind
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            out.append(WikiFile(str(path.relative_to(project)), kind))
    for path in sorted(lay.raw.rglob("*")) if lay.raw.is_dir() else []:
        if path.is_file() and not path.name.startswith("."):
            out.append(WikiFile(str(path.relative_to(project)), "roundtable" if _is_transcript(path) else "raw"))
    return out


def _is_transcript(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return bool(_TRANSCRIPT_LINE.match(fh.readline()))
    except OSError:
        return False


def resolve(project: Path, rel: str) -> Path:
    """A listed file of the project; anything else (``..``, absolute, a symlink out) is refused."""
    base = project.resolve()
    path = (project / rel).resolve()
    if not path.is_relative_to(base) or path == base or not path.is_file():
        raise BadInput(f"{rel!r} is not a page or source of the wiki at {project}")
    if not (path.is_relative_to(base / "wiki") or path.is_relative_to(base / "raw")):
        raise BadInput(f"{rel!r} is not under wiki/ or raw/")
    return path


def render(path: Path) -> str:
    """HTML for a markdown page (raw HTML disabled); other text is shown as escaped preformatted text."""
    from markdown_it import MarkdownIt
    from markupsafe import escape

    from commonkeep.store import exitgate

    # a raw source not ingested yet was written by another program (an export, a person, a model):
    # the exit gate, before it is rendered into HTML the template no longer sees as text
    data = exitgate.text(path.read_bytes()[:MAX_SHOWN_BYTES].decode("utf-8", "replace"))
    if path.suffix.lower() in (".md", ".markdown"):
        return str(MarkdownIt("commonmark", {"html": False}).enable("table").render(data))
    return f"<pre>{escape(data)}</pre>"


def git_history(project: Path, rel: str | None = None, limit: int = 30) -> list[dict[str, Any]]:
    """The commits that touched ``rel`` (or the whole wiki), newest first; empty outside git."""
    try:
        import git

        repo = git.Repo(project, search_parent_directories=False)
        commits = repo.iter_commits(paths=rel, max_count=limit) if rel else repo.iter_commits(max_count=limit)
        return [{"sha": c.hexsha[:10], "when": c.committed_datetime.isoformat(timespec="seconds"),
                 "author": str(c.author.name), "message": str(c.message).strip().splitlines()[0] if c.message else ""}
                for c in commits]
    except Exception:
        return []
