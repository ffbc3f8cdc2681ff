"""Ingest and query end to end on real git repositories and a real SQLite facts.db."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import git

from commonkeep import wiki
from commonkeep.wiki.pages import parse_page
from tests.wiki.conftest import WriteRaw

CHAIN = [
    ("a.md", "2025-01-01", "The Kestrel pipeline ships nightly builds."),
    ("b.md", "2025-01-05", "Kestrel was renamed to 'Falcon' in March."),
    ("c.md", "2025-01-09", "Falcon is now called Osprey in all new docs."),
    ("d.md", "2025-01-12", "Osprey moves 12 TB per day across regions."),
]


def _ingest_all(project: Path, write_raw: WriteRaw, items: list[tuple[str, str, str]]) -> None:
    for name, date, text in items:
        wiki.ingest(project, write_raw(name, text, date=date))


def test_layout_pages_and_facts_follow_the_contract(project: Path, write_raw: WriteRaw) -> None:
    _ingest_all(project, write_raw, CHAIN[:2])
    for sub in ("wiki/entities", "wiki/concepts", "wiki/sources", "wiki/index.md", "wiki/log.md", ".hmlr/facts.db"):
        assert (project / sub).exists(), sub
    page = parse_page((project / "wiki/entities/falcon.md").read_text(encoding="utf-8"))
    assert (page.meta["kind"], page.meta["name"], page.meta["edited_by"]) == ("entity", "Falcon", "llm")
    assert "## Evidence\n- Kestrel was renamed to 'Falcon' in March. [[sources/b]]" in page.body
    assert "[[entities/kestrel]]" in page.body
    src = (project / "wiki/sources/b.md").read_text(encoding="utf-8")
    assert "## Entities (2)\n- [[entities/falcon]]\n- [[entities/kestrel]]" in src
    assert "## Concepts (0)\n_none detected_" in src
    rows = sqlite3.connect(project / ".hmlr/facts.db").execute("SELECT key, value, source FROM facts").fetchall()
    assert ("alias:falcon~kestrel@b", "Kestrel = Falcon", "raw/b.md") in rows
    log = (project / "wiki/log.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^## \[\d{4}-\d{2}-\d{2}\] ingest \| ", log, re.M)) == 2


def test_log_is_append_only(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("a.md", "Kestrel ships nightly."))
    before = (project / "wiki/log.md").read_text(encoding="utf-8")
    wiki.gardener(project)
    after = (project / "wiki/log.md").read_text(encoding="utf-8")
    assert after.startswith(before) and "] gardener | " in after[len(before):]


def test_asking_about_the_oldest_name_finds_what_was_said_under_the_newest(project: Path, write_raw: WriteRaw) -> None:
    _ingest_all(project, write_raw, CHAIN)
    result = wiki.query(project, "How much data does Kestrel move?")
    texts = [e.text for e in result.evidence]
    assert texts[0] == "Osprey moves 12 TB per day across regions."
    assert result.entities == ["Kestrel = Falcon, Osprey"]
    assert all(e.source.startswith("raw/") for e in result.evidence)


def test_unknown_question_returns_no_candidates(project: Path, write_raw: WriteRaw) -> None:
    _ingest_all(project, write_raw, CHAIN[:1])
    result = wiki.query(project, "zzz qqq")
    assert (result.candidates, result.evidence) == ([], [])


def test_query_output_matches_the_dossier_parsers(project: Path, write_raw: WriteRaw) -> None:
    _ingest_all(project, write_raw, CHAIN)
    out = wiki.query(project, "What is Osprey?", limit=5).render()
    lines = out.splitlines()
    assert lines[0] == "question: What is Osprey?"
    n = int(re.fullmatch(r"candidates \((\d+)\):", lines[1]).group(1))  # type: ignore[union-attr]
    assert 0 < n <= 5
    cand = lines[2 : 2 + n]
    assert all(re.match(r"^\s+wiki\s+(\S+\.md)\s+score=\d+\.\d\d$", c) or re.match(r"^\s+fact\s+(\S+)\s+score=\d+\.\d\d$", c) for c in cand)
    for c in cand:
        m = re.match(r"^\s+wiki\s+(\S+\.md)\s+score=", c)
        if m:
            assert (project / "wiki" / m.group(1)).is_file()


def test_newer_value_supersedes_older_estimate_and_is_marked(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("e1.md", "Kestrel expects 2.1 million events per day.", date="2025-02-01"))
    wiki.ingest(project, write_raw("e3.md", "Final sign-off: Kestrel handles 2,900,000 events per day.", date="2025-04-01"))
    # arrives last but is dated in between: still older than the sign-off
    wiki.ingest(project, write_raw("e2.md", "Update: Kestrel expects 2.6 million events/day.", date="2025-03-01"))
    result = wiki.query(project, "How many events per day does Kestrel handle?")
    by_source = {e.source: e for e in result.evidence}
    assert by_source["raw/e3.md"].status == "current"
    assert (by_source["raw/e1.md"].status, by_source["raw/e1.md"].status_by) == ("superseded", "raw/e3.md")
    assert by_source["raw/e2.md"].status == "superseded"
    assert result.evidence[0].source == "raw/e3.md"
    assert "(superseded by raw/e3.md)" in result.render()


def test_equal_values_confirm_rather_than_supersede(project: Path, write_raw: WriteRaw) -> None:
    wiki.ingest(project, write_raw("x.md", "Kestrel handles 5 TB per day.", date="2025-01-01"))
    wiki.ingest(project, write_raw("y.md", "Kestrel handles 5 TB/day.", date="2025-02-01"))
    result = wiki.query(project, "Kestrel TB per day")
    assert {e.status for e in result.evidence} == {"current"}


def test_rule_history_is_replayed_in_date_order(project: Path, write_raw: WriteRaw) -> None:
    texts = [
        ("r1.md", "2025-01-01", "Guideline v1: builds may run for 30 minutes."),
        ("r2.md", "2025-02-01", "Guideline v2: builds may run for 45 minutes (supersedes v1)."),
        ("r3.md", "2025-03-01", "Guideline v3: builds may run for 90 minutes."),
        ("r4.md", "2025-04-01", "Guideline v4: v3 was a mistake; revert to v2."),
    ]
    _ingest_all(project, write_raw, texts)
    conn = sqlite3.connect(project / ".hmlr/facts.db")
    status = dict(conn.execute("SELECT subject, status FROM facts WHERE kind='rule'"))
    assert status == {"Guideline v1": "superseded", "Guideline v2": "current", "Guideline v3": "revoked", "Guideline v4": "current"}
    result = wiki.query(project, "Which guideline limits build minutes?")
    marks = {e.source: e.status for e in result.evidence}
    assert marks["raw/r3.md"] == "revoked" and marks["raw/r2.md"] == "current"


def test_grounding_filter_drops_sentences_no_longer_in_their_source(project: Path, write_raw: WriteRaw) -> None:
    _ingest_all(project, write_raw, CHAIN)
    (project / "raw/d.md").write_text("Osprey was retired.\n", encoding="utf-8")  # raw/ edited behind our back
    result = wiki.query(project, "How much data does Osprey move?")
    assert "Osprey moves 12 TB per day across regions." not in [e.text for e in result.evidence]
    assert result.ungrounded_dropped == 1
    assert "dropped 1 sentence(s) not found in their source" in result.render()


def test_long_sentences_are_clipped_to_a_verbatim_span(project: Path, write_raw: WriteRaw) -> None:
    filler = "the quarterly review covered travel budgets, hiring plans, office moves, catering, parking, the new badge readers and the holiday rota"
    text = f"As noted in the meeting, {filler}, and the Heron archive was renamed to Egret for the launch next spring."
    wiki.ingest(project, write_raw("long.md", text))
    [ev] = [e for e in wiki.query(project, "What is Egret also called?").evidence]
    assert ev.text.startswith("…") and "Heron archive was renamed to Egret" in ev.text and len(ev.text) <= 262
    assert ev.text.strip("…") in text


def test_reingesting_a_changed_source_replaces_its_facts(project: Path, write_raw: WriteRaw) -> None:
    rel = write_raw("a.md", "Kestrel is now called Falcon.")
    wiki.ingest(project, rel)
    write_raw("a.md", "Kestrel is now called Swift.")
    wiki.ingest(project, rel)
    keys = [r[0] for r in sqlite3.connect(project / ".hmlr/facts.db").execute("SELECT key FROM facts WHERE kind='alias'")]
    assert keys == ["alias:kestrel~swift@a"]
    assert git.Repo(project).head.commit.message.startswith("wiki ingest: raw/a.md")


def test_windows_line_endings_and_frontmatter_title_are_understood(project: Path) -> None:
    (project / "raw/w.md").write_bytes(b"---\r\ndate: 2024-05-06\r\ntitle: \"Ops\\nnotes\"\r\n---\r\nKestrel is now called Falcon.\r\n")
    report = wiki.ingest(project, "raw/w.md")
    assert report.date == "2024-05-06"
    assert "## [" in (project / "wiki/log.md").read_text(encoding="utf-8")
    assert "] ingest | Ops notes\n" in (project / "wiki/log.md").read_text(encoding="utf-8")
    assert wiki.query(project, "What is Kestrel called now?").evidence[0].text == "Kestrel is now called Falcon."
