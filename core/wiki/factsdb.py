"""``.hmlr/facts.db``: the wiki's SQLite state, kept outside the wiki folder.

``facts(key, value, source)`` is the table Dossier consumers read (``contracts/dossier.md §2.1``);
the extra columns, the sentence index and the alias/mention tables are ours. All of it is
derived from ``raw/`` and can be rebuilt by ingesting the sources again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from commonkeep.wiki.extract import Extraction
from commonkeep.wiki.status import QuantityRow, RuleEvent, quantity_replacements, rule_statuses
from commonkeep.wiki.text import content_terms, slugify

SCHEMA = """
CREATE TABLE IF NOT EXISTS facts(
    key TEXT PRIMARY KEY, value TEXT NOT NULL, source TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT '', subject TEXT NOT NULL DEFAULT '', sentence TEXT NOT NULL DEFAULT '',
    ordinal INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL DEFAULT 'current', status_by TEXT,
    detail TEXT NOT NULL DEFAULT '{}');
CREATE INDEX IF NOT EXISTS facts_source ON facts(source);
CREATE TABLE IF NOT EXISTS sources(
    path TEXT PRIMARY KEY, slug TEXT NOT NULL, title TEXT NOT NULL, date TEXT NOT NULL,
    sha256 TEXT NOT NULL, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS sentences(
    id INTEGER PRIMARY KEY, source TEXT NOT NULL, ordinal INTEGER NOT NULL, text TEXT NOT NULL,
    section TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS sentences_source ON sentences(source);
CREATE VIRTUAL TABLE IF NOT EXISTS sentences_fts USING fts5(terms, tokenize='unicode61');
CREATE TABLE IF NOT EXISTS entities(slug TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS mentions(sentence_id INTEGER NOT NULL, entity TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS mentions_entity ON mentions(entity);
CREATE INDEX IF NOT EXISTS mentions_sentence ON mentions(sentence_id);
CREATE TABLE IF NOT EXISTS concepts(slug TEXT NOT NULL, name TEXT NOT NULL, sentence_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS concepts_slug ON concepts(slug);
CREATE TABLE IF NOT EXISTS aliases(a TEXT NOT NULL, b TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS human_pages(ref TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS rule_events(
    source TEXT NOT NULL, ordinal INTEGER NOT NULL, event TEXT NOT NULL, family TEXT NOT NULL,
    targets TEXT NOT NULL, by_version TEXT);
"""


def connect(path: Path) -> sqlite3.Connection:
    """Open (and create) the facts database."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    return conn


class FactsDB:
    """Typed access to ``facts.db``; one connection, explicit transactions."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.conn = connect(path)

    def close(self) -> None:
        self.conn.close()

    # ---- reading -------------------------------------------------------------------------

    def source_row(self, path: str) -> tuple[str, str, str, str, int] | None:
        row = self.conn.execute("SELECT slug, title, date, sha256, seq FROM sources WHERE path=?", (path,)).fetchone()
        return None if row is None else (row[0], row[1], row[2], row[3], row[4])

    def sources(self) -> list[tuple[str, str, str, str]]:
        """(path, slug, title, date) of every ingested source, in ingest order."""
        return [(r[0], r[1], r[2], r[3]) for r in self.conn.execute("SELECT path, slug, title, date FROM sources ORDER BY seq")]

    def entity_names(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT slug, name FROM entities"))

    def families(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT DISTINCT family FROM rule_events")}

    def alias_groups(self) -> dict[str, set[str]]:
        """entity slug -> every slug in its alias chain (itself included)."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b in self.conn.execute("SELECT a, b FROM aliases"):
            parent[find(a)] = find(b)
        groups: dict[str, set[str]] = {}
        for slug in list(parent):
            groups.setdefault(find(slug), set()).add(slug)
        return {slug: groups[find(slug)] for slug in parent}

    # ---- writing -------------------------------------------------------------------------

    def replace_source(self, path: str, slug: str, date: str, sha256: str, ex: Extraction) -> None:
        """Store one source's extraction, replacing what an earlier ingest of it stored."""
        c = self.conn
        with c:
            old = c.execute("SELECT seq FROM sources WHERE path=?", (path,)).fetchone()
            seq = old[0] if old else (c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM sources").fetchone()[0])
            self._delete_source(path)
            c.execute("INSERT INTO sources VALUES (?,?,?,?,?,?)", (path, slug, ex.title, date, sha256, seq))
            ids: dict[int, int] = {}
            for s in ex.sentences:
                cur = c.execute("INSERT INTO sentences(source, ordinal, text, section) VALUES (?,?,?,?)",
                                (path, s.ordinal, s.text, s.section))
                assert cur.lastrowid is not None
                ids[s.ordinal] = cur.lastrowid
                c.execute("INSERT INTO sentences_fts(rowid, terms) VALUES (?, ?)", (cur.lastrowid, " ".join(content_terms(s.text))))
            for ordinal, names in ex.mentions.items():
                for name in names:
                    es = slugify(name)
                    c.execute("INSERT OR IGNORE INTO entities VALUES (?, ?)", (es, name))
                    c.execute("INSERT INTO mentions VALUES (?, ?)", (ids[ordinal], es))
            for name, ordinals in ex.concepts.items():
                for ordinal in dict.fromkeys(ordinals):
                    c.execute("INSERT INTO concepts VALUES (?,?,?)", (slugify(name), name, ids[ordinal]))
            for f in ex.facts:
                c.execute(
                    "INSERT OR REPLACE INTO facts(key, value, source, kind, subject, sentence, ordinal, detail) VALUES (?,?,?,?,?,?,?,?)",
                    (f.key, f.value, path, f.kind, f.subject, f.sentence, f.ordinal, json.dumps(f.detail, sort_keys=True)),
                )
                if f.kind == "alias":
                    names = [str(n) for n in f.detail.get("names", [])]  # type: ignore[attr-defined]
                    if len(names) == 2:
                        c.execute("INSERT INTO aliases VALUES (?,?,?)", (slugify(names[0]), slugify(names[1]), path))
            for ev in ex.rule_events:
                c.execute("INSERT INTO rule_events VALUES (?,?,?,?,?,?)",
                          (path, ev["ordinal"], ev["event"], ev["family"], json.dumps(ev["targets"]), ev.get("by")))
            self.recompute_status()

    def _delete_source(self, path: str) -> None:
        c = self.conn
        rows = c.execute("SELECT id FROM sentences WHERE source=?", (path,)).fetchall()
        for (sid,) in rows:
            c.execute("DELETE FROM sentences_fts WHERE rowid=?", (sid,))
            c.execute("DELETE FROM mentions WHERE sentence_id=?", (sid,))
            c.execute("DELETE FROM concepts WHERE sentence_id=?", (sid,))
        for table, col in (("sentences", "source"), ("facts", "source"), ("aliases", "source"),
                           ("rule_events", "source"), ("sources", "path")):
            c.execute(f"DELETE FROM {table} WHERE {col}=?", (path,))

    def recompute_status(self) -> None:
        """Work out every fact's status from all rule events and quantity values."""
        c = self.conn
        order = {p: (d, s) for p, d, s in c.execute("SELECT path, date, seq FROM sources")}
        events = [
            RuleEvent(ev, fam, tuple(json.loads(t)), by, src, (order[src][0], order[src][1], ordinal))
            for src, ordinal, ev, fam, t, by in c.execute("SELECT source, ordinal, event, family, targets, by_version FROM rule_events")
            if src in order
        ]
        rules = rule_statuses(events)
        by_label = {f"{fam.capitalize()} {ver}": rs for (fam, ver), rs in rules.items()}
        by_slug = {slugify(f"{fam} {ver}"): rs for (fam, ver), rs in rules.items()}
        wanted: dict[str, tuple[str, str | None]] = {}
        current: dict[str, tuple[str, str | None]] = {}
        qrows: list[QuantityRow] = []
        for key, kind, source, ordinal, detail_s, status, status_by in c.execute(
            "SELECT key, kind, source, ordinal, detail, status, status_by FROM facts"
        ).fetchall():
            current[key] = (status, status_by)
            wanted[key] = ("current", None)
            if kind not in ("rule", "rule_change", "quantity") and '"rule"' not in detail_s:
                continue
            detail = json.loads(detail_s)
            st = by_label.get(str(detail.get("rule") or ""))
            if st is None and kind == "quantity":
                st = by_slug.get(key.split(":")[1])
            if st is None and kind == "quantity" and source in order:
                group = key.split("@")[0].split("#")[0]
                qrows.append(QuantityRow(key, group, float(detail["number"]), (order[source][0], order[source][1], ordinal), source))
            if st is not None and st.status != "current":
                wanted[key] = (st.status, st.by)
            elif st is not None and st.note in ("reinstated", "reaffirmed"):
                wanted[key] = ("current", f"{st.note} by {st.by}")
        for key, newer in quantity_replacements(qrows).items():
            wanted[key] = ("superseded", newer)
        changed = [(st, by, key) for key, (st, by) in wanted.items() if current.get(key) != (st, by)]
        c.executemany("UPDATE facts SET status=?, status_by=? WHERE key=?", changed)
