"""``gardener``: lint and consolidate the wiki in one commit (Karpathy's *lint*, HMLR's gardener).

It reports orphan pages (nothing links to them, or nothing backs them any more), stale pages
(they cite a raw source that is gone or changed), pages needing review (human pages with newer
evidence, unreadable frontmatter, two current values for one quantity) and missing
cross-references (alias pages that do not link each other). Then it consolidates: statuses are
recomputed, every llm-owned page is regenerated from ``facts.db`` (adding the missing links),
dead llm pages are removed, and ``index.md`` is rebuilt. Human pages are never rewritten.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from commonkeep.wiki.factsdb import FactsDB
from commonkeep.wiki.gitcommit import commit_pass
from commonkeep.wiki.ingest import append_log, regenerate
from commonkeep.wiki.layout import PAGE_KINDS, WikiLayout, ensure_layout, project_layout
from commonkeep.wiki.lock import writer_lock
from commonkeep.wiki.pages import is_protected, read_page

_LINK = re.compile(r"\[\[([^\]|#]+)")


@dataclass
class GardenerReport:
    """Counts found by one gardener pass, what it changed, and its commit."""

    orphans: int = 0
    stale: int = 0
    review: int = 0
    missing_xref: int = 0
    removed: list[str] = field(default_factory=list)
    review_pages: list[str] = field(default_factory=list)
    pages: dict[str, int] = field(default_factory=dict)
    skipped_human: list[str] = field(default_factory=list)
    commit: str = ""

    def summary(self) -> str:
        """The line Dossier prints (``contracts/dossier.md §2``)."""
        return (f"gardener complete — orphans={self.orphans} stale={self.stale} "
                f"review={self.review} missing_xref={self.missing_xref}")


def gardener(project: str | Path) -> GardenerReport:
    """Run one gardener pass over the project; exactly one git commit."""
    layout = project_layout(project)
    ensure_layout(layout)
    with writer_lock(layout.lock):
        db = FactsDB(layout.facts_db)
        try:
            return _garden(layout, db)
        finally:
            db.close()


def _garden(layout: WikiLayout, db: FactsDB) -> GardenerReport:
    report = GardenerReport()
    with db.conn:
        db.recompute_status()
    c = db.conn
    known_sources = {p: (slug, sha) for p, slug, sha in c.execute("SELECT path, slug, sha256 FROM sources")}
    stale_sources = set()
    for path, (_slug, sha) in known_sources.items():
        f = layout.project / path
        if not f.is_file() or f.is_symlink() or hashlib.sha256(f.read_bytes()).hexdigest() != sha:
            stale_sources.add(path)
    backed = {
        "entities": {r[0] for r in c.execute("SELECT DISTINCT entity FROM mentions")},
        "concepts": {r[0] for r in c.execute("SELECT DISTINCT slug FROM concepts")},
        "sources": {slug for slug, _ in known_sources.values()},
    }
    groups = db.alias_groups()
    pages: dict[str, Path] = {}
    for kind in PAGE_KINDS:
        for f in sorted((layout.wiki / kind).glob("*.md")):
            pages[f"{kind}/{f.stem}"] = f
    inbound: dict[str, int] = dict.fromkeys(pages, 0)
    human_refs: set[str] = set()
    for ref, f in pages.items():
        page = read_page(f)
        body = page.body if page else ""
        links = {m.group(1).strip().removesuffix(".md") for m in _LINK.finditer(body)}
        for link in links - {ref}:
            if link in inbound:
                inbound[link] += 1
        kind, slug = ref.split("/", 1)
        protected = is_protected(f)
        if protected:
            human_refs.add(ref)
        meta = page.meta if page else {}
        cited = {str(s) for s in meta.get("sources") or []}
        if cited & stale_sources:
            report.stale += 1
        if protected and page is not None and not page.readable:
            report.review_pages.append(ref)
        if kind == "entities":
            missing = {f"entities/{o}" for o in groups.get(slug, set()) if o != slug} - links
            report.missing_xref += len(missing)
            if protected and missing:
                report.review_pages.append(ref)
        if protected and page is not None and page.readable:
            newest = max((d for p, d in c.execute("SELECT path, date FROM sources") if p in cited or kind == "entities"), default="")
            if newest and str(meta.get("updated", "")) < newest and slug in backed.get(kind, set()):
                report.review_pages.append(ref)
    for ref, count in inbound.items():
        kind, slug = ref.split("/", 1)
        dead = slug not in backed[kind]
        if kind != "sources" and (count == 0 or dead):
            report.orphans += 1
        if dead and not is_protected(pages[ref]):
            pages[ref].unlink()
            report.removed.append(f"wiki/{ref}.md")
    conflicts = c.execute(
        "SELECT substr(key, 1, instr(key, '@') - 1) AS g, COUNT(DISTINCT value) FROM facts "
        "WHERE kind='quantity' AND status='current' GROUP BY g HAVING COUNT(DISTINCT value) > 1"
    ).fetchall()
    for g, _n in conflicts:
        report.review_pages.append(f"facts/{g}")
    with c:
        c.execute("DELETE FROM human_pages")
        c.executemany("INSERT INTO human_pages VALUES (?)", [(r,) for r in sorted(human_refs)])
    report.review_pages = sorted(set(report.review_pages))
    report.review = len(report.review_pages)
    counts, skipped = regenerate(layout, db, backed["entities"], backed["concepts"], set(known_sources) - stale_sources)
    report.pages, report.skipped_human = counts, skipped
    append_log(layout, "gardener", "lint and consolidate", [
        f"- {report.summary().removeprefix('gardener complete — ')}",
        f"- pages: created {counts['created']}, updated {counts['updated']}, unchanged {counts['unchanged']}, "
        f"removed {len(report.removed)}, human pages left alone {len(skipped)}",
        *(f"- review: {r}" for r in report.review_pages),
    ])
    report.commit, _ = commit_pass(layout.project, "wiki gardener pass", {
        "orphans": report.orphans, "stale": report.stale, "review": report.review, "missing_xref": report.missing_xref,
        "pages_updated": counts["updated"], "pages_created": counts["created"], "pages_removed": len(report.removed),
        "human_pages_skipped": len(skipped),
    })
    return report
