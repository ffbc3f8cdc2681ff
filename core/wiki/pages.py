"""Wiki pages: YAML frontmatter (``kind``, ``name``, ``edited_by`` ...) and markdown bodies.

Pages are a projection of ``facts.db`` and ``raw/``: tooling regenerates every page it owns
(``edited_by: llm``) and never rewrites a page marked ``edited_by: human`` - nor a page whose
frontmatter it cannot read, since that is most likely a person's edit.
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from commonkeep.wiki.layout import WikiLayout

HUMAN = "human"
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*)$")


@dataclass
class Page:
    """A page on disk: its frontmatter (empty if unreadable) and body."""

    meta: dict[str, Any]
    body: str
    readable: bool


def parse_page(text: str) -> Page:
    """Split ``---`` frontmatter from the body; ``readable`` is False for a broken header."""
    if not text.startswith("---\n"):
        return Page({}, text, False)
    end = text.find("\n---\n", 4)
    if end < 0:
        return Page({}, text, False)
    try:
        meta = yaml.load(text[4:end], Loader=_LOADER) or {}
    except yaml.YAMLError:
        return Page({}, text, False)
    if not isinstance(meta, dict):
        return Page({}, text, False)
    return Page(meta, text[end + 5 :], True)


def read_page(path: Path) -> Page | None:
    try:
        return parse_page(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, UnicodeDecodeError):
        return None


def header_fields(text: str) -> dict[str, str] | None:
    """Top-level ``key: value`` lines of the frontmatter, read without a YAML parser (fast path
    for the index and the ownership check); ``None`` when there is no frontmatter block."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 4)
    if end < 0:
        return None
    fields: dict[str, str] = {}
    for line in text[4:end].splitlines():
        m = _TOP_KEY.match(line)
        if m:
            fields[m.group(1)] = m.group(2).strip().strip("'\"")
    return fields


def is_protected(path: Path) -> bool:
    """True when tooling must not rewrite ``path``: human-edited or unreadable frontmatter."""
    try:
        fields = header_fields(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        return True
    if fields is None or "kind" not in fields:
        return True
    return fields.get("edited_by", "").lower() != "llm"


def render(meta: dict[str, Any], body: str) -> str:
    header = yaml.dump(meta, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{header}---\n{body.rstrip()}\n"


def write_page(path: Path, content: str) -> str:
    """Write an llm-owned page; returns ``created``, ``updated``, ``unchanged`` or ``human``."""
    if path.exists() or path.is_symlink():
        if path.is_symlink() or is_protected(path):
            return HUMAN
        if path.read_text(encoding="utf-8") == content:
            return "unchanged"
        state = "updated"
    else:
        state = "created"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(content, encoding="utf-8")
    os.replace(tmp, path)
    return state


def _status_note(status: str, by: str | None) -> str:
    if status == "current":
        return f" _({by})_" if by else ""
    return f" _({status}{' by ' + by if by else ''})_"


def _source_link(slugs: dict[str, str], source: str) -> str:
    return f"[[sources/{slugs.get(source, source)}]]"


def entity_page(conn: sqlite3.Connection, slug: str, name: str, group: set[str], today: str) -> str:
    """An entity page: evidence sentences (with statuses of the facts they carry) and aliases."""
    slugs = dict(conn.execute("SELECT path, slug FROM sources"))
    rows = conn.execute(
        "SELECT s.source, s.ordinal, s.text FROM mentions m JOIN sentences s ON s.id = m.sentence_id "
        "JOIN sources src ON src.path = s.source WHERE m.entity=? ORDER BY src.date, src.seq, s.ordinal",
        (slug,),
    ).fetchall()
    sources: list[str] = list(dict.fromkeys(r[0] for r in rows))
    bullets = []
    for source, ordinal, text in rows:
        st = conn.execute(
            "SELECT status, status_by FROM facts WHERE source=? AND ordinal=? AND status!='current' LIMIT 1",
            (source, ordinal),
        ).fetchone()
        note = _status_note(st[0], st[1]) if st else ""
        bullets.append(f"- {text} {_source_link(slugs, source)}{note}")
    names = dict(conn.execute("SELECT slug, name FROM entities"))
    others = sorted(g for g in group if g != slug)
    meta: dict[str, Any] = {"kind": "entity", "name": name, "edited_by": "llm"}
    if others:
        meta["aliases"] = [names.get(o, o) for o in others]
    meta["sources"] = sources
    meta["updated"] = today
    body = [f"# {name}", "", "## Evidence", *(bullets or ["_none yet_"])]
    if others:
        body += ["", "## Also known as", *(f"- [[entities/{o}]]" for o in others)]
    return render(meta, "\n".join(body))


def concept_page(conn: sqlite3.Connection, slug: str, today: str) -> str:
    """A concept page: a rule family with its versions and their statuses, or a defined term."""
    slugs = dict(conn.execute("SELECT path, slug FROM sources"))
    rows = conn.execute(
        "SELECT c.name, s.source, s.text FROM concepts c JOIN sentences s ON s.id = c.sentence_id "
        "JOIN sources src ON src.path = s.source WHERE c.slug=? ORDER BY src.date, src.seq, s.ordinal",
        (slug,),
    ).fetchall()
    name = rows[0][0] if rows else slug
    body = [f"# {name}", "", "## Evidence", *(f"- {t} {_source_link(slugs, src)}" for _, src, t in rows)]
    versions = conn.execute(
        "SELECT subject, status, status_by, source FROM facts WHERE kind='rule' AND key LIKE ? ORDER BY key",
        (f"rule:{slug}:%",),
    ).fetchall()
    if versions:
        body += ["", "## Versions"]
        for subj, st, by, src in versions:
            how = (f" by {by}" if by else "") if st != "current" else (f" ({by})" if by else "")
            body.append(f"- {subj}: **{st}**{how} {_source_link(slugs, src)}")
    defs = conn.execute("SELECT value, source FROM facts WHERE kind='definition' AND key LIKE ?", (f"definition:{slug}@%",)).fetchall()
    if defs:
        body += ["", "## Definitions", *(f"- {v} {_source_link(slugs, s)}" for v, s in defs)]
    sources = list(dict.fromkeys(r[1] for r in rows))
    meta = {"kind": "concept", "name": name, "edited_by": "llm", "sources": sources, "updated": today}
    return render(meta, "\n".join(body))


def source_page(conn: sqlite3.Connection, path: str, today: str) -> str:
    """A source page: title, date, and links to the entity and concept pages it fed."""
    slug, title, date = conn.execute("SELECT slug, title, date FROM sources WHERE path=?", (path,)).fetchone()
    ents = [r[0] for r in conn.execute(
        "SELECT DISTINCT m.entity FROM mentions m JOIN sentences s ON s.id=m.sentence_id WHERE s.source=? ORDER BY m.entity", (path,))]
    cons = [r[0] for r in conn.execute(
        "SELECT DISTINCT c.slug FROM concepts c JOIN sentences s ON s.id=c.sentence_id WHERE s.source=? ORDER BY c.slug", (path,))]
    facts = conn.execute("SELECT key, value, status FROM facts WHERE source=? ORDER BY ordinal, key", (path,)).fetchall()
    body = [f"# {title}", "", f"Source: `{path}` ({date})", "", f"## Entities ({len(ents)})"]
    body += [f"- [[entities/{e}]]" for e in ents] or ["_none detected_"]
    body += ["", f"## Concepts ({len(cons)})"]
    body += [f"- [[concepts/{c}]]" for c in cons] or ["_none detected_"]
    body += ["", f"## Facts ({len(facts)})"]
    body += [f"- `{k}`: {v}{'' if st == 'current' else f' _({st})_'}" for k, v, st in facts] or ["_none detected_"]
    meta = {"kind": "source", "name": title, "edited_by": "llm", "sources": [path], "date": date, "updated": today}
    del slug
    return render(meta, "\n".join(body))


def index_page(layout: WikiLayout, summaries: dict[str, str], human: set[str]) -> str:
    """``wiki/index.md``: every page by kind, a link and a one-line summary.

    ``summaries`` ("kind/slug" -> text) comes from ``facts.db``; ``human`` names the pages known
    to be a person's (listed with the name from their own frontmatter). Other files on disk that
    tooling knows nothing about are listed by their frontmatter name too.
    """
    lines = ["# Index", "", "Every page of this wiki, by kind. Read this first.", ""]
    for kind, title in (("entities", "Entities"), ("concepts", "Concepts"), ("sources", "Sources")):
        files = sorted((layout.wiki / kind).glob("*.md"))
        lines.append(f"## {title} ({len(files)})")
        for f in files:
            ref = f"{kind}/{f.stem}"
            summary = summaries.get(ref)
            if summary is None or ref in human:
                try:
                    fields = header_fields(f.read_text(encoding="utf-8")) or {}
                except (OSError, UnicodeDecodeError):
                    fields = {}
                owner = " (human-edited)" if ref in human or fields.get("edited_by", "").lower() == HUMAN else ""
                summary = fields.get("name", f.stem) + owner
            lines.append(f"- [[{ref}]] — {summary}")
        lines.append("")
    return "\n".join(lines)


def summaries(conn: sqlite3.Connection) -> dict[str, str]:
    """One-line summaries of the llm-owned pages, from ``facts.db``."""
    out: dict[str, str] = {}
    for slug, name, n in conn.execute(
        "SELECT e.slug, e.name, COUNT(DISTINCT s.source) FROM entities e JOIN mentions m ON m.entity=e.slug "
        "JOIN sentences s ON s.id=m.sentence_id GROUP BY e.slug"
    ):
        out[f"entities/{slug}"] = f"{name} ({n} source(s))"
    for slug, name, n in conn.execute(
        "SELECT c.slug, MIN(c.name), COUNT(DISTINCT s.source) FROM concepts c JOIN sentences s ON s.id=c.sentence_id GROUP BY c.slug"
    ):
        out[f"concepts/{slug}"] = f"{name} ({n} source(s))"
    for slug, title, date in conn.execute("SELECT slug, title, date FROM sources"):
        out[f"sources/{slug}"] = f"{title[:80]} ({date})"
    return out
