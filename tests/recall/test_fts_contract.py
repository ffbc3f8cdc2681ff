"""OMP's table: exact schema, WAL, only active non-tombstoned records, exact columns, queries."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from commonkeep.recall.search import fts, index
from tests.recall.conftest import make_record, seed

CONTRACT_SQL = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5(id UNINDEXED, layer UNINDEXED, rule_type UNINDEXED, "
    "confidence UNINDEXED, statement, tags, tokenize='porter unicode61')"
)


def _rows(root: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(root / "search" / "memory-fts.db")
    try:
        return sorted(
            conn.execute(
                "SELECT id, layer, rule_type, confidence, statement, tags FROM memory_fts"
            ).fetchall()
        )
    finally:
        conn.close()


def test_index_has_the_contract_schema_in_wal_mode(root: Path) -> None:
    seed(root, [make_record("mem_a", "Run the suite with pytest -q.")])
    index.sync_root(root, embed=False)
    conn = sqlite3.connect(root / "search" / "memory-fts.db")
    try:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name='memory_fts'").fetchone()[0]
        assert sql == CONTRACT_SQL
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        cols = [r[1] for r in conn.execute("PRAGMA table_info(memory_fts)")]
        assert cols == ["id", "layer", "rule_type", "confidence", "statement", "tags"]
    finally:
        conn.close()


def test_only_active_non_tombstoned_records_are_indexed_with_exact_columns(root: Path) -> None:
    seed(
        root,
        [
            make_record(
                "mem_active",
                "Prefer ruff over flake8.",
                ruleType="prefer_pattern",
                confidence=0.9,
                tags=["lint", "python"],
            ),
            make_record("mem_norule", "Deploys go out on Tuesdays.", tags=[]),
            make_record("mem_deleted", "Old deleted fact.", status="deleted"),
            make_record("mem_contested", "Disputed fact.", status="contested"),
            make_record("mem_superseded", "Replaced fact.", status="superseded"),
            make_record("mem_tomb", "Tombstoned but still listed active."),
        ],
    )
    seed(
        root, [make_record("mem_l1", "The user is called Ada.", layer="L1")], file="memory/L1.identity.jsonl"
    )
    seed(
        root,
        [make_record("mem_proj", "Project uses uv.", scope={"type": "project", "project": "p"})],
        file="memory/projects/p.jsonl",
    )
    seed(
        root,
        [
            {
                "id": "tomb_mem_tomb_0123456789",
                "deleted_record_id": "mem_tomb",
                "deleted_at": "2026-12-02T10:00:00.000Z",
                "deletion_mode": "audit_preserving",
                "deletion_reason": "user_requested",
                "content_removed": True,
            }
        ],
        file="memory/tombstones.jsonl",
    )
    index.sync_root(root, embed=False)
    assert _rows(root) == [
        ("mem_active", "L2", "prefer_pattern", 0.9, "Prefer ruff over flake8.", "lint python"),
        ("mem_l1", "L1", "", 0.8, "The user is called Ada.", "test"),
        ("mem_norule", "L2", "", 0.8, "Deploys go out on Tuesdays.", ""),
        ("mem_proj", "L2", "", 0.8, "Project uses uv.", "test"),
    ]


def test_sync_follows_changes_and_matches_a_full_rebuild(root: Path) -> None:
    seed(root, [make_record("mem_a", "Alpha fact."), make_record("mem_b", "Beta fact.")])
    index.sync_root(root, embed=False)
    path = root / "memory" / "L2.playbooks.jsonl"
    from commonkeep.store.core import Store

    def change(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        rows[0]["statement"] = "Alpha fact, revised."
        rows[1]["status"] = "deprecated"
        return rows

    Store(root).rewrite(path, change)
    seed(root, [make_record("mem_c", "Gamma fact.")])
    report = index.sync_root(root, embed=False)
    incremental = _rows(root)
    assert [r[0] for r in incremental] == ["mem_a", "mem_c"]
    assert incremental[0][4] == "Alpha fact, revised."
    assert report.fts.removed == 2 and report.fts.added == 2  # mem_a replaced, mem_b gone, mem_c new
    index.sync_root(root, full=True, embed=False)
    assert _rows(root) == incremental


def test_after_apply_hook_syncs_the_index(root: Path) -> None:
    from commonkeep.plugins import build_plugin_manager

    seed(root, [make_record("mem_a", "Use pnpm for node projects.")])
    errors = build_plugin_manager(load_entrypoints=False).after_apply(
        str(root), {"patch_id": "patch_x"}, ["op_001"]
    )
    assert errors == []
    assert [r[0] for r in _rows(root)] == ["mem_a"]


def test_hyphenated_and_punctuated_queries_work_instead_of_erroring(root: Path) -> None:
    seed(
        root,
        [
            make_record("mem_a", "The root lives in pi-memory under the agent folder."),
            make_record("mem_b", "Memory is pi based."),
        ],
    )
    index.sync_root(root, embed=False)
    conn = fts.connect(root / "search" / "memory-fts.db")
    try:
        # Upstream's sanitised query is an FTS5 error for a hyphen (contract §14.12): no results.
        assert fts.run_match(conn, fts.contract_query("pi-memory"), 8) == []
        hits = fts.search_keyword(conn, "pi-memory", 8)
        assert hits[0].id == "mem_a"
        for query in ['"unbalanced', "a AND (b", "col:umn", "NEAR(", "*", "x OR", "--"]:
            fts.search_keyword(conn, query, 8)  # must not raise
    finally:
        conn.close()


def test_reads_an_index_written_the_contract_way(tmp_path: Path) -> None:
    """An index built by another writer (OMP) with the contract's DDL and inserts is searchable."""
    db = tmp_path / "memory-fts.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(CONTRACT_SQL)
    conn.execute(
        "INSERT INTO memory_fts VALUES ('mem_x', 'L2', 'testing', 0.88, 'Run the test suite with pytest -q.', 'tooling pytest')"
    )
    conn.commit()
    conn.close()
    conn = fts.connect(db)
    try:
        hits = fts.search_keyword(conn, "pytest", 8)
        assert [(h.id, h.layer, h.rule_type, h.confidence) for h in hits] == [
            ("mem_x", "L2", "testing", 0.88)
        ]
        assert hits[0].score > 0  # abs(bm25)
    finally:
        conn.close()


def test_all_terms_match_ranks_before_any_term_match(root: Path) -> None:
    seed(
        root,
        [
            make_record("mem_any", "Coffee is brewed every morning in the office kitchen with care."),
            make_record("mem_all", "Coffee machine descaling happens monthly."),
        ],
    )
    index.sync_root(root, embed=False)
    conn = index.connect_recall(index.recall_db_path(root))
    try:
        hits = index.search_recall(conn, "coffee machine descaling", 8)
    finally:
        conn.close()
    assert [h.id for h in hits][:2] == ["mem_all", "mem_any"]


def test_source_context_is_built_from_neighbours_of_the_same_source() -> None:
    recs = [
        make_record(
            f"mem_{i}",
            f"turn {i}",
            evidence=[{"type": "conversation", "ref": f"chat/{'a' if i < 5 else 'b'}#t{i}", "note": "n"}],
        )
        for i in range(7)
    ]
    rows = index.index_rows(recs)
    # one record on each side (CONTEXT_NEIGHBOURS), never across sources
    assert rows["mem_2"].context == "turn 1 turn 3"
    assert rows["mem_0"].context == "turn 1"
    assert rows["mem_4"].context == "turn 3"  # mem_5 is another source
    assert rows["mem_5"].context == "turn 6"


def test_a_patch_applied_by_the_librarian_reaches_the_index(root: Path) -> None:
    """The whole write path: candidate -> curate -> apply_patch -> after_apply -> memory_fts."""
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store.candidates import new_candidate
    from commonkeep.store.core import Store

    index.sync_root(root, embed=False)
    assert _rows(root) == []
    Store(root).append_candidate(
        new_candidate(
            "Deploys to staging go through the blue-green switch.",
            evidence_refs=["a.md", "b.md"],
            confidence=0.9,
        )
    )
    prop = curate(root, role="librarian", min_confidence=0.0, min_evidence=1)
    result = apply_patch(
        root, prop.patch["patch_id"], role="librarian", op_ids=[o["op_id"] for o in prop.ops]
    )
    assert result.hook_errors == []
    rows = _rows(root)
    assert len(rows) == 1 and rows[0][4] == "Deploys to staging go through the blue-green switch."
    assert str(rows[0][0]).startswith("mem_")
    conn = fts.connect(root / "search" / "memory-fts.db")
    try:
        assert [h.id for h in fts.search_keyword(conn, "blue-green", 8)] == [rows[0][0]]
    finally:
        conn.close()


def test_doctor_flags_a_memory_fts_table_that_is_not_the_contracts(root: Path) -> None:
    from commonkeep.recall.search.plugin import commonkeep_doctor_checks

    (root / "search").mkdir(exist_ok=True)
    conn = sqlite3.connect(root / "search" / "memory-fts.db")
    conn.execute("CREATE VIRTUAL TABLE memory_fts USING fts5(id, statement)")
    conn.commit()
    conn.close()
    [finding] = [f for f in commonkeep_doctor_checks(str(root)) if f["code"] != "search_model"]
    assert finding["code"] == "index_schema" and finding["severity"] == "error"
    assert "reindex --recreate" in finding["message"]


def test_a_same_size_rewrite_in_the_same_mtime_tick_is_still_seen(root: Path) -> None:
    """A writer that replaces the file atomically (temp file + rename) can keep its size and land
    within one modification-time tick: the new inode still tells the index to re-sync."""
    import os

    from commonkeep.recall.search.hybrid import search

    seed(root, [make_record("mem_a", "The release branch is blue.")])
    index.sync_root(root, embed=False)
    path = root / "memory" / "L2.playbooks.jsonl"
    before = os.stat(path)
    tmp = path.with_name("L2.playbooks.jsonl.tmp")
    tmp.write_bytes(path.read_bytes().replace(b"blue", b"teal"))
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same tick
    os.replace(tmp, path)
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    hits = search(root, "teal", "keyword", 5).results
    assert [h.id for h in hits] == ["mem_a"] and "teal" in hits[0].statement
    assert _rows(root)[0][4] == "The release branch is teal."
