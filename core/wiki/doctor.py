"""``doctor``: is the wiki backend usable here? (Orphus calls it to check the memory is reachable.)"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from commonkeep.secrets import redact
from commonkeep.wiki.layout import PAGE_KINDS, project_layout
from commonkeep.wiki.llm import configured_extractor


def doctor(project: str | Path) -> tuple[bool, list[str]]:
    """Check the project; returns (healthy, report lines). Never writes anything."""
    layout = project_layout(project)
    lines = [f"project: {layout.project}"]
    ok = True
    if shutil.which("git") is None:
        ok = False
        lines.append("git: missing — install git; every ingest and gardener pass is a git commit")
    else:
        lines.append("git: ok" + (" (repository present)" if (layout.project / ".git").exists() else " (repository created on first ingest)"))
    lines.append(f"raw/: {'present' if layout.raw.is_dir() else 'missing (created on first ingest)'}")
    if layout.raw.is_symlink():
        ok = False
        lines.append("raw/: is a symlink — refused; make it a real folder inside the project")
    pages = sum(len(list((layout.wiki / k).glob("*.md"))) for k in PAGE_KINDS) if layout.wiki.is_dir() else 0
    lines.append(f"wiki/: {pages} page(s)")
    if layout.facts_db.exists():
        try:
            conn = sqlite3.connect(f"file:{layout.facts_db}?mode=ro", uri=True)
            try:
                n = conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]
                s = conn.execute("SELECT COUNT(*) FROM sources").fetchone()[0]
            finally:
                conn.close()
            lines.append(f"facts.db: ok ({n} fact(s) from {s} source(s))")
        except sqlite3.Error as exc:
            ok = False
            lines.append(f"facts.db: unreadable ({exc}) — delete .hmlr/facts.db and ingest the raw/ files again")
    else:
        lines.append("facts.db: not created yet (first ingest creates it)")
    llm = configured_extractor()
    line = "extractor: deterministic" + (f" + LLM at {llm.base_url} (model {llm.model})" if llm else " (no LLM configured)")
    from commonkeep.plugins import plugin_manager

    others, errors = plugin_manager().wiki_extractors()
    names = [str(getattr(e, "name", "?")) for e in others if getattr(e, "name", None) != "llm"]
    if names:
        line += " + plugin extractor(s): " + ", ".join(names)
    lines.append(line)
    for err in errors:
        lines.append(f"extractor plugin failed to load: {redact(err).text.splitlines()[0]}")
    lines.append("status: ok" if ok else "status: problems found")
    return ok, lines
