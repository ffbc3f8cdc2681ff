"""``ingest``: compile one raw source into pages, facts and a single git commit.

Order of work: check the path (``paths``), take the writer lock, extract (deterministic, then
the LLM extractor when configured and plugins' extractors, through ``commonkeep.wiki.extractors``),
store facts, regenerate the pages the source touched (and those whose facts changed status),
rebuild ``index.md``, append to ``log.md``, commit once.

Secrets: under the lock and before anything else, the raw source is redacted
(``commonkeep.secrets``) and, when it held a secret, atomically rewritten in place, so the secret
never reaches ``facts.db``, a page, the index, the log, any extractor or a git object; every
sentence is then grounded against the redacted file. A secret in the source's path is handled
the same way, first: the file is moved to its redacted path (``paths.redact_source_name``), so
slugs, page names, front matter, ``log.md``, ``facts.db``, git trees and commit messages are all
made from a path that holds none. The report, the CLI output and ``log.md`` say how many secrets
were redacted and of which kinds, never the values.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from commonkeep.errors import BadInput
from commonkeep.secrets import summarize
from commonkeep.util import timeutil
from commonkeep.wiki.extract import Extraction, extract
from commonkeep.wiki.factsdb import FactsDB
from commonkeep.wiki.gitcommit import commit_pass
from commonkeep.wiki.layout import WikiLayout, ensure_layout, project_layout
from commonkeep.wiki.lock import writer_lock
from commonkeep.wiki.pages import (
    HUMAN,
    concept_page,
    entity_page,
    index_page,
    source_page,
    summaries,
    write_page,
)
from commonkeep.wiki.paths import read_source, redact_source_name, redacted_rel, resolve_source
from commonkeep.wiki.text import slugify

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


@dataclass
class IngestReport:
    """What one ingest did (printed by the CLI, returned by the Python API)."""

    source: str
    source_page: str
    date: str
    entities: int
    concepts: int
    facts: int
    pages: dict[str, int] = field(default_factory=dict)
    skipped_human: list[str] = field(default_factory=list)
    commit: str = ""
    extractor: str = "deterministic"
    redacted: list[str] = field(default_factory=list)
    """Kinds of secret redacted from the raw source (rewritten in place), one per secret."""
    redacted_name: list[str] = field(default_factory=list)
    """Kinds of secret redacted from the source's path (the file was moved to ``source``)."""
    notices: list[str] = field(default_factory=list)
    """One redacted line per extractor that failed or was malformed (left out; the ingest went on)."""

    def redaction_line(self) -> str:
        """``"redacted: 2 secret(s) in raw/x.md (1 jwt, 1 openai_key); ..."``, or ``""`` when none.

        A secret in the path adds ``"redacted: 1 secret(s) in the path of the source (…); moved to raw/…"``.
        """
        lines = []
        if self.redacted_name:
            lines.append(f"redacted: {len(self.redacted_name)} secret(s) in the path of the source "
                         f"({summarize(self.redacted_name)}); the file was moved to {self.source}, values never stored")
        if self.redacted:
            lines.append(f"redacted: {len(self.redacted)} secret(s) in {self.source} ({summarize(self.redacted)}); "
                         "the raw file was rewritten in place, values never stored")
        return "\n".join(lines)


def split_raw(text: str) -> tuple[dict[str, Any], str]:
    """Optional YAML frontmatter of a raw source (``date``, ``title``) and its body."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end > 0:
            try:
                meta = yaml.safe_load(text[4:end]) or {}
            except yaml.YAMLError:
                meta = None
            if isinstance(meta, dict):
                return meta, text[end + 5 :]
    return {}, text


def _source_slug(db: FactsDB, rel: str) -> str:
    rel = redacted_rel(rel)[0]  # ingest already moved a source whose path held a secret; never slug one
    stem = rel[len("raw/") :].rsplit(".", 1)[0] if "." in rel.rsplit("/", 1)[-1] else rel[len("raw/") :]
    slug = slugify(stem.replace("/", "-"))
    taken = {s for p, s, _, _ in db.sources() if p != rel}
    if slug in taken:
        slug = f"{slug}-{hashlib.sha256(rel.encode()).hexdigest()[:6]}"
    return slug


def _statuses(db: FactsDB) -> dict[str, tuple[str, str, int, str | None]]:
    return {k: (src, st, o, by) for k, src, st, o, by in db.conn.execute("SELECT key, source, status, ordinal, status_by FROM facts")}


def regenerate(layout: WikiLayout, db: FactsDB, entities: set[str], concepts: set[str], sources: set[str]) -> tuple[dict[str, int], list[str]]:
    """Rewrite the named llm-owned pages from ``facts.db``; human pages are left alone."""
    today = timeutil.today()
    counts: dict[str, int] = {"created": 0, "updated": 0, "unchanged": 0}
    skipped: list[str] = []
    groups = db.alias_groups()
    names = db.entity_names()

    human = {r[0] for r in db.conn.execute("SELECT ref FROM human_pages")}

    def put(path: Path, content: str) -> None:
        ref = f"{path.parent.name}/{path.stem}"
        state = write_page(path, content)
        if state == HUMAN:
            skipped.append(str(path.relative_to(layout.project)))
            human.add(ref)
        else:
            counts[state] += 1
            human.discard(ref)

    for slug in sorted(entities):
        if slug in names:
            put(layout.page("entities", slug), entity_page(db.conn, slug, names[slug], groups.get(slug, {slug}), today))
    for slug in sorted(concepts):
        put(layout.page("concepts", slug), concept_page(db.conn, slug, today))
    for src in sorted(sources):
        row = db.source_row(src)
        if row is not None:
            put(layout.page("sources", row[0]), source_page(db.conn, src, today))
    with db.conn:
        db.conn.execute("DELETE FROM human_pages")
        db.conn.executemany("INSERT INTO human_pages VALUES (?)", [(r,) for r in sorted(human)])
    layout.index.write_text(index_page(layout, summaries(db.conn), human), encoding="utf-8")
    return counts, skipped


def append_log(layout: WikiLayout, op: str, title: str, lines: list[str]) -> None:
    """Append one entry to ``wiki/log.md`` (``## [YYYY-MM-DD] op | title``); never rewrites it."""
    entry = [f"## [{timeutil.today()}] {op} | {title}", *lines, ""]
    text = layout.log.read_text(encoding="utf-8") if layout.log.exists() else ""
    with layout.log.open("a", encoding="utf-8") as fh:
        if text and not text.endswith("\n\n"):
            fh.write("\n" if text.endswith("\n") else "\n\n")
        fh.write("\n".join(entry) + "\n")


def affected_by_status(db: FactsDB, before: dict[str, tuple[str, str, int, str | None]]) -> tuple[set[str], set[str], set[str]]:
    """Entities, concepts and sources whose pages show a fact whose status just changed."""
    after = _statuses(db)
    changed = [(v[0], v[2]) for k, v in after.items() if k in before and before[k] != v]
    ents: set[str] = set()
    cons: set[str] = set()
    srcs: set[str] = set()
    for src, ordinal in set(changed):
        srcs.add(src)
        ents |= {r[0] for r in db.conn.execute(
            "SELECT m.entity FROM mentions m JOIN sentences s ON s.id=m.sentence_id WHERE s.source=? AND s.ordinal=?", (src, ordinal))}
        cons |= {r[0] for r in db.conn.execute(
            "SELECT c.slug FROM concepts c JOIN sentences s ON s.id=c.sentence_id WHERE s.source=? AND s.ordinal=?", (src, ordinal))}
    return ents, cons, srcs


def redact_source(path: Path, rel: str, text: str) -> tuple[str, list[str]]:
    """Redact ``text`` (the content of ``path``); when it held a secret, rewrite ``path`` atomically.

    Returns (redacted text, kinds found). The new file has the same mode and exactly the bytes
    of the redacted text, so its sha256 is the one ``facts.db`` records.
    """
    from commonkeep.store import exitgate

    kinds: list[str] = []
    clean = exitgate.text(text, kinds)  # a raw source is written by another program (an export, a person): the exit gate
    if not kinds:
        return text, []
    mode = path.stat().st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(prefix=".redact-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(clean)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if path.is_symlink() or not path.is_file():
            raise BadInput(f"source {rel} changed while it was being redacted; refused",
                           hint="ingest it again once nothing else writes to it")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return clean, kinds


def ingest(project: str | Path, source: str, *, llm: Any = None) -> IngestReport:
    """Ingest ``source`` (a path relative to the project, under ``raw/``) as one commit."""
    layout = project_layout(project)
    path, rel = resolve_source(layout, source)
    read_source(path, rel)  # a source that is not UTF-8 is refused before anything is created
    ensure_layout(layout)
    with writer_lock(layout.lock):
        path, rel, redacted_name = redact_source_name(layout, path, rel)
        # read again under the lock: the rewrite must not put back what another writer replaced
        text, redacted = redact_source(path, rel, read_source(path, rel))
        db = FactsDB(layout.facts_db)
        try:
            report = _ingest_locked(layout, db, rel, text, llm, redacted, redacted_name)
        finally:
            db.close()
    return report


def _run_extractors(body: str, ex: Extraction, slug: str, llm: Any) -> tuple[list[str], list[str]]:
    """Run the extractors after the deterministic one; returns (report labels, notices).

    ``llm`` (when given) replaces the built-in LLM extractor the default plugin contributes;
    plugins' extractors run too. Every proposal goes through ``extractors.admit``. A notice is
    also printed to stderr when it happens.
    """
    from commonkeep.plugins import plugin_manager
    from commonkeep.wiki.extractors import BUILTIN_PLUGIN, one_line, run_extractors

    labels: list[str] = []
    notices: list[str] = []
    runs: list[tuple[Any, bool]] = []
    if llm is not None and not callable(getattr(llm, "propose", None)):
        labels.append(f"llm ({llm.enrich(body, ex, source_slug=slug)} fact(s) added)")  # an enrich-only object
    elif llm is not None:
        runs.append((llm, True))  # asked for by the caller: its failure is the ingest's
    try:
        found, errors = plugin_manager().wiki_extractors(skip=(BUILTIN_PLUGIN,) if llm is not None else ())
    except Exception as exc:  # the plugin machinery itself: the deterministic facts still go in
        found, errors = [], [str(exc)]
    notices += [f"wiki extractor plugin {one_line(e)}" for e in errors]
    runs += [(x, getattr(x, "required", False) is True) for x in found]
    more_labels, more_notices = run_extractors(body, ex, runs, source_slug=slug)
    labels += more_labels
    notices += more_notices
    for notice in notices:
        print(f"commonkeep: warning: {notice}", file=sys.stderr)
    return labels, notices


def _ingest_locked(layout: WikiLayout, db: FactsDB, rel: str, text: str, llm: Any, redacted: list[str],
                   redacted_name: list[str]) -> IngestReport:
    meta, body = split_raw(text.replace("\r\n", "\n"))
    date_value = meta.get("date")
    date = str(date_value)[:10] if date_value is not None and _DATE.match(str(date_value)) else timeutil.today()
    slug = _source_slug(db, rel)
    known = set(db.entity_names().values())
    ex: Extraction = extract(body, source_slug=slug, known_names=known, known_families=db.families())
    labels, notices = _run_extractors(body, ex, slug, llm)
    extractor = "+".join(["deterministic", *labels])
    if meta.get("title"):
        ex.title = " ".join(str(meta["title"]).split())[:120]
    before = _statuses(db)
    old_entities = {r[0] for r in db.conn.execute(
        "SELECT DISTINCT m.entity FROM mentions m JOIN sentences s ON s.id=m.sentence_id WHERE s.source=?", (rel,))}
    db.replace_source(rel, slug, date, hashlib.sha256(text.encode("utf-8")).hexdigest(), ex)
    ents = {slugify(n) for n in ex.entities} | old_entities
    groups = db.alias_groups()
    # a new alias statement changes the "Also known as" of every page in its chain
    for f in ex.facts:
        if f.kind == "alias":
            for name in f.detail.get("names", []):  # type: ignore[attr-defined]
                ents |= groups.get(slugify(str(name)), set())
    cons = {slugify(c) for c in ex.concepts}
    more_e, more_c, more_s = affected_by_status(db, before)
    counts, skipped = regenerate(layout, db, ents | more_e, cons | more_c, {rel} | more_s)
    report = IngestReport(rel, f"wiki/sources/{slug}.md", date, len(ex.entities), len(ex.concepts), len(ex.facts),
                          counts, skipped, extractor=extractor, redacted=list(redacted), redacted_name=list(redacted_name),
                          notices=notices)
    append_log(layout, "ingest", ex.title[:80], [
        f"- source: `{rel}` ({date})",
        *([f"- redacted: {len(redacted_name)} secret(s) in the source's path ({summarize(redacted_name)}); "
           "file moved to this name"] if redacted_name else []),
        *([f"- redacted: {len(redacted)} secret(s) ({summarize(redacted)}); raw file rewritten in place"] if redacted else []),
        f"- pages: created {counts['created']}, updated {counts['updated']}, unchanged {counts['unchanged']}, "
        f"human pages left alone {len(skipped)}",
        f"- entities: {report.entities}, concepts: {report.concepts}, facts: {report.facts}",
    ])
    report.commit, _ = commit_pass(layout.project, f"wiki ingest: {rel}", {
        "entities": report.entities, "concepts": report.concepts, "facts": report.facts,
        "pages_created": counts["created"], "pages_updated": counts["updated"], "human_pages_skipped": len(skipped),
        **({"secrets_redacted": len(redacted)} if redacted else {}),
        **({"secrets_redacted_from_path": len(redacted_name)} if redacted_name else {}),
    })
    return report
