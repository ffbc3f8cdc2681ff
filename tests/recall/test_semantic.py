"""Semantic backends: the local MiniLM embedder, qmd's argv, and the fallback to keyword search."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.recall.search import index, semantic
from commonkeep.recall.search.hybrid import search
from tests.recall.conftest import make_record, seed

FACTS = [
    make_record("mem_tests", "Run the unit test suite with pytest before every commit."),
    make_record("mem_cat", "The office cat is named Tom and sleeps on the printer."),
    make_record("mem_deploy", "Production deploys happen on Tuesday afternoons."),
]


class Unavailable:
    name = "broken"

    def available(self) -> str | None:
        return "its model file is missing"

    def search(self, root: str, query: str, limit: int) -> list[str]:  # pragma: no cover - never called
        raise AssertionError("an unavailable backend must not be searched")


class Failing:
    name = "flaky"

    def available(self) -> str | None:
        return None

    def search(self, root: str, query: str, limit: int) -> list[str]:
        raise RuntimeError("model crashed")


def test_no_usable_backend_falls_back_to_keyword_and_says_so_once(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(root, FACTS)
    semantic._warned.clear()
    first = search(root, "pytest commit", "deep", 5, backends=[Unavailable()])
    second = search(root, "pytest commit", "semantic", 5, backends=[Unavailable()])
    assert first.used == second.used == "keyword"
    assert [r.id for r in first.results] == ["mem_tests"]
    assert "broken: its model file is missing" in first.notices[0]
    assert capsys.readouterr().err.count("its model file is missing") == 1


def test_a_backend_that_fails_while_searching_falls_back_too(root: Path) -> None:
    seed(root, FACTS)
    resp = search(root, "pytest", "deep", 5, backends=[Failing()])
    assert resp.used == "keyword" and "model crashed" in resp.notices[0]
    assert [r.id for r in resp.results] == ["mem_tests"]


def test_semantic_off_by_environment(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root, FACTS)
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")
    assert search(root, "pytest", "deep", 5).used == "keyword"


def test_local_minilm_finds_meaning_without_shared_words(root: Path) -> None:
    seed(root, FACTS)
    backend = semantic.LocalMiniLM()
    assert backend.available() is None
    ids = backend.search(str(root), "which pet lives at work", 3)
    assert ids[0] == "mem_cat"
    resp = search(root, "when do we ship to prod", "semantic", 3, backends=[backend])
    assert resp.used == "local-minilm" and resp.results[0].id == "mem_deploy"
    deep = search(root, "pytest before commit", "deep", 3, backends=[backend])
    top = deep.results[0]
    assert top.id == "mem_tests" and top.sources == ["fts", "local-minilm"]
    assert top.score == pytest.approx(0.45 / 61 + 0.55 / 61)


def test_vectors_are_float32_blobs_with_the_model_id_and_follow_the_records(root: Path) -> None:
    seed(root, FACTS)
    index.sync_root(root)  # embeds, since the extra is installed
    conn = index.connect_recall(index.recall_db_path(root))
    try:
        rows = conn.execute("SELECT id, model, dim, length(vec) FROM vectors ORDER BY id").fetchall()
        assert rows == [
            (r["id"], semantic.MODEL_ID, 384, 384 * 4) for r in sorted(FACTS, key=lambda r: r["id"])
        ]
        import numpy as np

        vec = np.frombuffer(
            conn.execute("SELECT vec FROM vectors WHERE id='mem_cat'").fetchone()[0], dtype="<f4"
        )
        assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-4
    finally:
        conn.close()
    from commonkeep.store.core import Store

    Store(root).rewrite(
        root / "memory" / "L2.playbooks.jsonl", lambda rows: [r for r in rows if r["id"] != "mem_cat"]
    )
    index.sync_root(root)
    conn = index.connect_recall(index.recall_db_path(root))
    try:
        assert [r[0] for r in conn.execute("SELECT id FROM vectors ORDER BY id")] == [
            "mem_deploy",
            "mem_tests",
        ]
    finally:
        conn.close()


def test_importing_search_does_not_import_numpy_or_onnxruntime() -> None:
    code = (
        "import sys, commonkeep.recall.search.hybrid, commonkeep.recall.search.semantic, commonkeep.recall.search.cli, commonkeep.recall.search.plugin;"
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "[]"


def test_qmd_backend_runs_the_contract_argv_and_extracts_ids(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.txt"
    fake = bindir / "qmd"
    fake.write_text(
        "#!" + sys.executable + "\n"
        "import json, sys\n"
        f"open({str(log)!r}, 'w').write(json.dumps(sys.argv[1:]))\n"
        "print(json.dumps({'results': [{'path': 'qmd://c/rendered/MEMORY.md#mem_20261202_ab12'}, {'id': 'x mem_other_1 y'}, {'path': 'no id'}]}))\n",
        encoding="utf-8",
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    (root / "config.json").write_text('{"qmd": {"collection": "shared-mem"}}', encoding="utf-8")
    backend = semantic.Qmd()
    assert backend.available() is None
    assert backend.search(str(root), "pi-memory root", 7) == ["mem_20261202_ab12", "mem_other_1"]
    import json

    assert json.loads(log.read_text()) == [
        "vsearch",
        "--json",
        "-c",
        "shared-mem",
        "-n",
        "7",
        "pi-memory root",
    ]


def test_qmd_is_unavailable_without_the_binary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert semantic.Qmd().available() == "qmd is not on PATH"


def test_rerank_rescores_keyword_candidates_with_the_embedder(root: Path) -> None:
    seed(
        root,
        [
            make_record("mem_a", "The printer on floor two jams often."),
            make_record("mem_b", "Our cat Tom sleeps on the printer."),
            make_record("mem_c", "Deploys happen on Tuesday."),
        ],
    )
    backend = semantic.LocalMiniLM()
    resp = search(root, "which pet sleeps on the printer", "rerank", 3, backends=[backend])
    assert resp.used == "fts+local-minilm rerank"
    # the keyword candidates re-scored first; the record sharing no word with the query comes
    # from the embedder's nearest records, scored by its cosine alone
    assert [r.id for r in resp.results] == ["mem_b", "mem_a", "mem_c"]
    top = resp.results[0]
    prov = top.score_provenance
    assert top.score == pytest.approx(prov["fts"]["normalised"] + prov["semantic"]["cosine"])
    assert 0.0 <= prov["fts"]["normalised"] <= 1.0
    last = resp.results[2]
    assert last.sources == ["local-minilm"] and "fts" not in last.score_provenance
    assert last.score == pytest.approx(last.score_provenance["semantic"]["cosine"])


def test_rerank_finds_a_record_that_shares_no_word_with_the_query(root: Path) -> None:
    seed(
        root,
        [
            make_record("mem_cat", "Our cat Tom sleeps on the printer every afternoon."),
            make_record("mem_deploy", "Deploys happen on Tuesday after the standup."),
            make_record("mem_db", "The staging database is restored from Sunday's backup."),
        ],
    )
    assert search(root, "feline naps", "keyword", 3).results == []
    resp = search(root, "feline naps", "rerank", 1, backends=[semantic.LocalMiniLM()])
    assert [r.id for r in resp.results] == ["mem_cat"]


def test_rerank_with_a_backend_that_cannot_rerank_uses_deep(root: Path) -> None:
    class RankOnly:
        name = "rank-only"

        def available(self) -> str | None:
            return None

        def search(self, root: str, query: str, limit: int) -> list[str]:
            return ["mem_cat"]

    seed(root, FACTS)
    resp = search(root, "pytest", "rerank", 3, backends=[RankOnly()])
    assert resp.used == "fts+rank-only" and "cannot rerank" in resp.notices[0]
    assert [r.id for r in resp.results] == ["mem_cat", "mem_tests"]  # 0.55/61 beats 0.45/61


def test_a_search_embeds_a_bounded_batch_of_missing_vectors(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(root, [make_record(f"mem_{i:02d}", f"Fact number {i} about deploys.") for i in range(12)])
    index.sync_root(root, embed=False)
    monkeypatch.setattr(semantic, "QUERY_EMBED_LIMIT", 5)
    backend = semantic.LocalMiniLM()

    def count() -> int:
        conn = index.connect_recall(index.recall_db_path(root))
        try:
            return int(conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
        finally:
            conn.close()

    backend.search(str(root), "deploys", 3)
    assert count() == 5
    backend.search(str(root), "deploys", 3)
    assert count() == 10
    index.sync_root(root)  # reindex / after-apply embed the rest
    assert count() == 12


def test_the_sync_after_a_one_op_change_embeds_that_record_alone(root: Path) -> None:
    """A one-op apply embeds the record it wrote, not the store's backlog of records without a vector
    (issue 38: 2,048 re-embedded, 51-79 s at 100,000 records); a search or `reindex` embeds those."""
    from commonkeep.store.core import Store

    seed(root, [make_record(f"mem_{i:02d}", f"Fact number {i} about deploys.") for i in range(12)])
    index.sync_root(root, embed=False)  # a backlog: no record has a vector
    path = next(p for p in (root / "memory").rglob("*.jsonl") if "mem_03" in p.read_text(encoding="utf-8"))

    def change(rs: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{**r, "statement": "Deploys moved to Wednesday."} if r["id"] == "mem_03" else r for r in rs]

    Store(root).rewrite_records(path, change)
    report = index.sync_root(root)
    conn = index.connect_recall(index.recall_db_path(root))
    try:
        assert [r[0] for r in conn.execute("SELECT id FROM vectors")] == ["mem_03"]
    finally:
        conn.close()
    assert report.vectors == 1
    assert index.sync_root(root, full=True).vectors == 11  # reindex embeds the backlog


def test_a_change_that_keeps_every_statement_loads_no_model(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sync after a confidence change embeds nothing, so it never loads the embedder (~0.3 s of
    a new process: issue 38's one-op apply at 100,000 records)."""
    from commonkeep.store.core import Store

    seed(root, [make_record(f"mem_{i:02d}", f"Fact number {i} about deploys.") for i in range(6)])
    index.sync_root(root)  # every record has its vector
    path = next(p for p in (root / "memory").rglob("*.jsonl") if "mem_03" in p.read_text(encoding="utf-8"))
    loaded: list[object] = []
    real = semantic.load_model
    monkeypatch.setattr(semantic, "load_model", lambda spec=None: loaded.append(spec) or real(spec))
    Store(root).rewrite_records(path, lambda rs: [{**r, "confidence": 0.42} if r["id"] == "mem_03" else r for r in rs])
    assert index.sync_root(root).vectors == 0
    assert loaded == []
    Store(root).rewrite_records(path, lambda rs: [{**r, "statement": "Deploys moved."} if r["id"] == "mem_03" else r for r in rs])
    assert index.sync_root(root).vectors == 1
    assert len(loaded) == 1
