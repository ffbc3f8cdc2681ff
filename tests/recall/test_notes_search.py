"""Daily logs (L3) and evidence records are searchable through commonkeep's own ``notes_fts``
(in ``search/recall.db``), never through OMP's ``memory_fts``. Real files, real SQLite."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from commonkeep.cli import main
from commonkeep.recall.search import index, notes
from commonkeep.recall.search.hybrid import search
from commonkeep.store.core import Store
from commonkeep.store.jsonl import append_jsonl
from tests.recall.conftest import make_record, seed

DAY = "2026-12-02"
LOG = """<!-- 2026-12-02T09:00:00.000Z -->
## Planning

We agreed to move the archive to the zanzibar bucket.

Unrelated paragraph about the coffee machine.
"""
# Line 4 is the zanzibar paragraph, but its block starts at the heading's marker (line 1).
ZANZIBAR_REF = f"daily/{DAY}.md:1"
COFFEE_REF = f"daily/{DAY}.md:6"
SECRET = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"


def evidence(eid: str, summary: str, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": eid,
        "resource_id": "user:default",
        "profile_id": "project:default",
        "created_at": "2026-12-01T08:30:00.000Z",
        "source_kind": "file",
        "source_ref": "docs/bench.md",
        "source_summary": summary,
        "redaction_status": "none",
        "trust_class": "direct_user_instruction",
        "polarity": "supports",
        "related_memory_ids": [],
    }
    row.update(extra)
    return row


def write_daily(root: Path, text: str, day: str = DAY) -> Path:
    path = root / "daily" / f"{day}.md"
    path.write_text(text, encoding="utf-8")
    return path


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_finds_a_daily_paragraph_and_an_evidence_note_by_a_word_only_they_contain(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(root, [make_record("mem_a", "Archives live in object storage.")])
    write_daily(root, LOG)
    append_jsonl(root / "memory" / "evidence.jsonl", [evidence("e" * 32, "The quokka benchmark took 41 s.")])

    [hit] = notes.search_notes(root, "zanzibar")
    assert (hit.kind, hit.ref, hit.date) == ("daily", ZANZIBAR_REF, DAY)
    assert "zanzibar bucket" in hit.text and "coffee" not in hit.text
    [coffee] = notes.search_notes(root, "coffee machine")
    assert coffee.ref == COFFEE_REF
    [ev] = notes.search_notes(root, "quokka")
    assert (ev.kind, ev.ref, ev.date) == ("evidence", "e" * 32, "2026-12-01")
    assert "quokka benchmark" in ev.text and "docs/bench.md" in ev.text

    code, out, _ = cli(capsys, "search", "--root", str(root), "--notes", "zanzibar quokka")
    assert code == 0
    records, block = out.split("\n\nNotes (daily logs and evidence):\n")
    assert records == "No memory matched."
    lines = block.splitlines()
    assert {ln.split(" ", 2)[1] for ln in lines} == {ZANZIBAR_REF, "e" * 32}
    assert f"- {ZANZIBAR_REF} [daily, {DAY}] " in block and f"- {'e' * 32} [evidence, 2026-12-01] " in block

    code, out, _ = cli(capsys, "search", "--root", str(root), "--notes", "--json", "quokka")
    data = json.loads(out)
    assert data["notes"][0]["ref"] == "e" * 32 and set(data["notes"][0]) == {"kind", "ref", "date", "text", "score"}

    # OMP's table is untouched: only records, never notes.
    conn = sqlite3.connect(root / "search" / "memory-fts.db")
    assert [r[0] for r in conn.execute("SELECT id FROM memory_fts")] == ["mem_a"]
    conn.close()

    # The agent tool: an optional boolean, still no unknown arguments.
    from commonkeep.tools.agent import core_tools

    monkeypatch.setenv("OMP_MEMORY_ROOT", str(root))
    tool = {t.name: t for t in core_tools()}["commonkeep_search"]
    assert tool.input_schema["properties"]["notes"] == {"type": "boolean"}
    assert tool.input_schema["additionalProperties"] is False
    said = tool.call({"query": "zanzibar", "mode": "keyword", "notes": True}, None)
    assert f"[{ZANZIBAR_REF} · daily · {DAY}]" in said and "zanzibar bucket" in said
    assert ZANZIBAR_REF not in tool.call({"query": "zanzibar", "mode": "keyword"}, None)


def test_appending_to_todays_log_is_seen_by_the_next_search_without_reindex(root: Path) -> None:
    write_daily(root, LOG)
    write_daily(root, "Older day, nothing to see.\n", day="2026-12-01")
    assert notes.search_notes(root, "walrus") == []
    Store(root).append_daily("The walrus deployment finished at noon.", date=DAY)
    [hit] = notes.search_notes(root, "walrus")
    lines = (root / "daily" / f"{DAY}.md").read_text().splitlines()
    assert hit.ref == f"daily/{DAY}.md:9" and hit.kind == "daily" and "walrus" in lines[9 - 1]
    # Nothing moved: no file is re-read. One file moved: only that one, only the new block written.
    conn = index.reader(index.recall_db_path(root))
    assert notes.sync_notes(root, conn).files == 0
    Store(root).append_daily("A second entry about otters.", date=DAY)
    done = notes.sync_notes(root, conn)
    assert (done.files, done.added, done.removed) == (1, 1, 0)
    assert [h.ref for h in search(root, "otters", "keyword", notes=True).notes or []] == [f"daily/{DAY}.md:12"]


def test_an_old_recall_db_without_the_notes_table_gets_it_silently(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(root, [make_record("mem_a", "Zanzibar is the archive bucket.")])
    write_daily(root, LOG)
    assert [r.id for r in search(root, "zanzibar", "keyword").results] == ["mem_a"]
    # Make it the recall.db an earlier version wrote: no notes tables, no notes fingerprint.
    index.forget_readers()
    db = index.recall_db_path(root)
    conn = sqlite3.connect(db)
    for table in ("notes_fts", "notes_src", "notes_files"):
        conn.execute(f"DROP TABLE {table}")
    conn.execute("DELETE FROM meta WHERE key = 'notes_fingerprint'")
    conn.commit()
    conn.close()
    capsys.readouterr()

    code, out, err = cli(capsys, "search", "--root", str(root), "--notes", "zanzibar")
    assert code == 0 and err == ""
    assert out.startswith("- mem_a [L2, conf 0.80] Zanzibar is the archive bucket.\n\nNotes")
    assert f"- {ZANZIBAR_REF} [daily, {DAY}]" in out

    # ``reindex`` rebuilds the table from the files.
    index.forget_readers()
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM notes_fts")
    conn.commit()
    conn.close()
    code, out, _ = cli(capsys, "reindex", "--root", str(root), "--no-embed", "--json")
    assert code == 0 and json.loads(out)["notes"] == 2
    assert [h.ref for h in notes.search_notes(root, "zanzibar")] == [ZANZIBAR_REF]


def test_a_secret_in_a_daily_log_never_appears_in_search_output(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Written straight to the file (as an editor or another tool might), not via append_daily.
    write_daily(root, f"Deploy token for the wombat service: {SECRET}\n")
    code, text_out, _ = cli(capsys, "search", "--root", str(root), "--notes", "wombat")
    assert code == 0 and "wombat service" in text_out and "[REDACTED:github_token]" in text_out
    code, json_out, _ = cli(capsys, "search", "--root", str(root), "--notes", "--json", "wombat")
    data = json.loads(json_out)
    assert "[REDACTED:github_token]" in data["notes"][0]["text"]
    for out in (text_out, json_out):
        assert SECRET not in out and SECRET[4:] not in out
    # Not in the index either: the secret itself finds nothing, and the database never held it.
    assert notes.search_notes(root, SECRET) == []
    for path in (root / "search").iterdir():
        assert SECRET[4:].encode() not in path.read_bytes(), path
    assert SECRET in (root / "daily" / f"{DAY}.md").read_text()  # the source is left as it is


def test_records_output_is_unchanged_without_notes(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed(root, [make_record("mem_a", "Run the test suite with pytest -q.", ruleType="testing", confidence=0.125)])
    write_daily(root, "We ran pytest twice today.\n")
    plain = "- mem_a [L2, conf 0.13, testing] Run the test suite with pytest -q.\n"
    assert cli(capsys, "search", "--root", str(root), "pytest")[1] == plain
    code, with_notes, _ = cli(capsys, "search", "--root", str(root), "--notes", "pytest")
    assert code == 0
    assert with_notes == plain + f"\nNotes (daily logs and evidence):\n- daily/{DAY}.md:1 [daily, {DAY}] We ran pytest twice today.\n"

    without = json.loads(cli(capsys, "search", "--root", str(root), "--json", "pytest")[1])
    assert "notes" not in without
    both = json.loads(cli(capsys, "search", "--root", str(root), "--json", "--notes", "pytest")[1])
    assert list(both) == [*without, "notes"]
    for data in (without, both):
        data.pop("elapsed_ms")
    both.pop("notes")
    assert both == without


def test_plain_search_does_not_touch_the_notes_index(root: Path) -> None:
    seed(root, [make_record("mem_a", "Alpha.")])
    write_daily(root, "Alpha in the log.\n")
    search(root, "alpha", "keyword")
    conn = index.reader(index.recall_db_path(root))
    assert conn.execute("SELECT count(*) FROM notes_fts").fetchone()[0] == 0
    assert conn.execute("SELECT 1 FROM meta WHERE key = 'notes_fingerprint'").fetchone() is None
    assert [n.ref for n in search(root, "alpha", "keyword", notes=True).notes or []] == [f"daily/{DAY}.md:1"]


def test_forget_purge_leaves_nothing_findable_through_notes(root: Path) -> None:
    from commonkeep.patches.forget import forget

    statement = "The vault combination is heliotrope at the east door."
    seed(root, [make_record("mem_vault", statement)])
    Store(root).append_daily(f"User said: {statement}", date=DAY)
    append_jsonl(
        root / "memory" / "evidence.jsonl",
        [evidence("f" * 32, "vault combination", source_excerpt=statement, related_memory_ids=["mem_vault"])],
    )
    before = search(root, "heliotrope", "keyword", notes=True)
    assert [r.id for r in before.results] == ["mem_vault"]
    assert {n.kind for n in before.notes or []} == {"daily", "evidence"}

    forget(root, "mem_vault", reason="privacy_sensitive", role="librarian", purge=True)
    after = search(root, "heliotrope", "keyword", notes=True)
    assert after.results == [] and after.notes == []
    assert notes.search_notes(root, "heliotrope vault combination east door") == []
    for path in (root / "search").iterdir():
        assert b"heliotrope" not in path.read_bytes(), path


def test_malformed_input_gives_a_notice_and_the_rest_is_still_indexed(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ev_path = root / "memory" / "evidence.jsonl"
    good = json.dumps(evidence("a" * 32, "The pangolin survey is done."))
    other = json.dumps(evidence("b" * 32, "The pangolin count was 12."))
    ev_path.write_text(f"{good}\n{{not json at all\n{other}\n", encoding="utf-8")
    write_daily(root, "The pangolin enclosure was cleaned.\n")
    bad_day = root / "daily" / "2026-12-03.md"
    bad_bytes = b"First line about pangolin.\nSecond line \xff\xfe broken.\n"
    bad_day.write_bytes(bad_bytes)
    ev_before = ev_path.read_bytes()

    code, out, err = cli(capsys, "search", "--root", str(root), "--notes", "--json", "pangolin")
    assert code == 0
    refs = {n["ref"] for n in json.loads(out)["notes"]}
    assert refs == {"a" * 32, "b" * 32, f"daily/{DAY}.md:1"}
    notices = err.splitlines()
    assert len(notices) == 2, err
    assert any("memory/evidence.jsonl line 2 (invalid JSON" in n for n in notices)
    assert any("daily/2026-12-03.md: line 2 is not UTF-8" in n for n in notices)
    assert json.loads(out)["notices"] == [n.removeprefix("commonkeep: notice: ") for n in notices]
    # Nothing is written to the sources; the next search (nothing moved) is quiet.
    assert ev_path.read_bytes() == ev_before and bad_day.read_bytes() == bad_bytes
    code, out, err = cli(capsys, "search", "--root", str(root), "--notes", "pangolin")
    assert code == 0 and err == "" and out.count("\n- ") >= 1
