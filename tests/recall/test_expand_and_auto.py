"""Pseudo-relevance feedback (``expand``, off by default), the ``terms`` table behind it, and the
``auto`` search mode, through the Python API, the CLI, the agent tool and the LoCoMo bench."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.bench import locomo as bench_locomo
from commonkeep.cli import main
from commonkeep.errors import BadInput
from commonkeep.recall.search import index, semantic
from commonkeep.recall.search.hybrid import search
from commonkeep.tools.agent import core_tools
from tests.recall.conftest import make_record, seed

TOY = Path(__file__).parent / "data" / "locomo_toy.json"

# 30 records that share only their own filler words, so the topical words below are rare.
FILLER = [
    make_record(f"mem_fill_{i:02d}", f"Filler note number {i} mentions topic{i} only.") for i in range(30)
]
PARTY = [
    make_record("mem_menu", "The garden party menu had lasagna and tiramisu."),
    make_record("mem_lasagna", "Grandma's lasagna recipe uses ricotta and basil."),
    make_record("mem_tiramisu", "For dessert we served tiramisu with espresso."),
]


def _ids(hits: list[Any]) -> list[str]:
    return [h.id for h in hits]


def test_expansion_terms_come_from_the_feedback_records_and_skip_query_words(root: Path) -> None:
    seed(root, [*FILLER, *PARTY])
    conn = index.open_fresh(root)
    words = dict(index.expansion_terms(conn, "garden party menu", [("mem_menu", 5.0)]))
    assert set(words) == {"lasagna", "tiramisu"}  # not garden/party/menu, not "the", "had", "and"
    assert all(w > 0 for w in words.values())
    assert index.expansion_terms(conn, "garden party menu", []) == []


def test_terms_in_more_than_a_tenth_of_the_records_are_not_expansion_terms(root: Path) -> None:
    common = [make_record(f"mem_common_{i}", f"Lasagna night number {i}.") for i in range(4)]
    seed(root, [*FILLER, *PARTY, *common])  # lasagna: 6 of 37 records
    conn = index.open_fresh(root)
    words = dict(index.expansion_terms(conn, "garden party menu", [("mem_menu", 5.0)]))
    assert set(words) == {"tiramisu"}


def test_expanded_search_finds_records_that_share_no_query_word(root: Path) -> None:
    seed(root, [*FILLER, *PARTY])
    conn = index.open_fresh(root)
    assert _ids(index.search_recall(conn, "garden party menu", 5)) == ["mem_menu"]
    expanded = index.search_recall(conn, "garden party menu", 5, expand=True)
    assert expanded[0].id == "mem_menu"
    assert set(_ids(expanded)) == {"mem_menu", "mem_lasagna", "mem_tiramisu"}
    # The interpolated score is on the first query's BM25 scale: the original hit keeps the top.
    assert expanded[0].score > expanded[1].score > 0


def test_records_with_every_query_word_stay_first_when_expanding(root: Path) -> None:
    seed(root, [*FILLER, *PARTY, make_record("mem_exact", "Lasagna recipe card.")])
    conn = index.open_fresh(root)
    hits = index.search_recall(conn, "lasagna recipe", 5, expand=True)
    assert hits[0].id in {"mem_exact", "mem_lasagna"} and hits[1].id in {"mem_exact", "mem_lasagna"}


def test_expansion_is_off_by_default_and_on_by_flag(root: Path) -> None:
    seed(root, [*FILLER, *PARTY])
    plain = search(root, "garden party menu", "keyword", 5)
    assert _ids(plain.results) == ["mem_menu"] and plain.expand is False
    expanded = search(root, "garden party menu", "keyword", 5, expand=True)
    assert len(expanded.results) == 3 and expanded.to_json()["expand"] is True


def _vocab(conn: Any) -> dict[str, int]:
    index._temp_tables(conn)
    return {str(t): int(d) for t, d in conn.execute("SELECT term, doc FROM temp.recall_df")}


def _terms(conn: Any) -> dict[str, int]:
    return {str(t): int(d) for t, d in conn.execute("SELECT term, df FROM terms")}


def test_the_terms_table_follows_full_and_incremental_syncs(root: Path) -> None:
    seed(root, [*FILLER, *PARTY])
    index.sync_root(root, full=True, embed=False)
    conn = index.open_fresh(root)
    assert _terms(conn) == _vocab(conn) and _terms(conn)["lasagna"] == 2
    # An edit, an addition and a retirement, as a curation pass would write them.
    path = root / "memory" / "L2.playbooks.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for rec in records:
        if rec["id"] == "mem_lasagna":
            rec["statement"] = "Grandma's pizza recipe uses ricotta."
        if rec["id"] == "mem_fill_03":
            rec["status"] = "deprecated"
    records.append(make_record("mem_new", "Tiramisu again, with more espresso."))
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    report = index.sync_root(root, embed=False)
    assert 0 < report.recall_added < index.TERMS_DELTA_MAX  # the incremental path, not a recount
    conn = index.open_fresh(root)
    assert _terms(conn) == _vocab(conn)
    assert _terms(conn)["lasagna"] == 1 and _terms(conn)["tiramisu"] == 3 and "topic3" not in _terms(conn)
    docs = conn.execute("SELECT value FROM meta WHERE key = 'docs'").fetchone()[0]
    assert int(docs) == len(records) - 1


def test_an_index_without_the_terms_table_still_expands_and_is_recounted(root: Path) -> None:
    seed(root, [*FILLER, *PARTY])
    conn = index.open_fresh(root)
    conn.execute("DELETE FROM terms")
    conn.execute("DELETE FROM meta WHERE key IN ('terms', 'docs')")  # as an older commonkeep left it
    words = dict(index.expansion_terms(conn, "garden party menu", [("mem_menu", 5.0)]))
    assert set(words) == {"lasagna", "tiramisu"}  # counted by FTS5 itself meanwhile
    seed(root, [make_record("mem_more", "One more filler line.")])
    index.sync_root(root, embed=False)
    assert _terms(conn) == _vocab(conn)


def test_auto_is_keyword_without_a_semantic_backend_and_says_nothing(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(root, PARTY)
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")
    resp = search(root, "tiramisu")
    assert (resp.mode, resp.resolved, resp.used) == ("auto", "keyword", "keyword")
    assert resp.notices == [] and capsys.readouterr().err == ""
    assert resp.to_json()["resolved"] == "keyword"
    assert _ids(resp.results) == _ids(search(root, "tiramisu", "keyword").results)


def test_auto_is_rerank_with_the_local_embedder(root: Path) -> None:
    seed(root, PARTY)
    resp = search(root, "what did we eat for dessert", "auto", 3, backends=[semantic.LocalMiniLM()])
    assert (resp.mode, resp.resolved, resp.used) == ("auto", "rerank", "fts+local-minilm rerank")
    assert all("semantic" in r.score_provenance for r in resp.results)
    explicit = search(root, "what did we eat for dessert", "rerank", 3, backends=[semantic.LocalMiniLM()])
    assert _ids(resp.results) == _ids(explicit.results) and explicit.resolved == "rerank"


def test_search_cli_defaults_to_keyword_and_auto_reports_what_it_resolved_to(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(root, [*FILLER, *PARTY])
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")
    # the CLI runs once per host tool call: its default never pays for loading an embedder
    assert main(["search", "--root", str(root), "--json", "tiramisu"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "keyword"
    assert main(["search", "--root", str(root), "--mode", "auto", "tiramisu"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0].startswith("- mem_")  # stdout keeps memory_search's lines
    assert "search mode auto -> keyword (keyword)" in out.err
    assert main(["search", "--root", str(root), "--mode", "auto", "--json", "garden party menu"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["mode"], data["resolved"], data["expand"]) == ("auto", "keyword", False)
    assert [r["id"] for r in data["results"]] == ["mem_menu"]
    assert main(["search", "--root", str(root), "--mode", "auto", "--json", "--expand", "garden party menu"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["expand"] is True and len(data["results"]) == 3


def test_the_search_tool_takes_auto_and_rerank_and_expand(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(root, [*FILLER, *PARTY])
    monkeypatch.setenv("OMP_MEMORY_ROOT", str(root))
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")
    tool = {t.name: t for t in core_tools()}["commonkeep_search"]
    assert set(tool.input_schema["properties"]["mode"]["enum"]) == {
        "auto",
        "keyword",
        "semantic",
        "deep",
        "rerank",
        "llm",
    }
    text = tool.call({"query": "garden party menu"}, None)
    assert text.startswith("1 memory record(s) for 'garden party menu' (auto -> keyword: keyword search)")
    text = tool.call({"query": "garden party menu", "expand": True}, None)
    assert text.startswith("3 memory record(s)") and "mem_tiramisu" in text
    text = tool.call({"query": "garden party menu", "mode": "rerank"}, None)
    assert "(keyword search)" in text and "note: no semantic backend available" in text
    with pytest.raises(BadInput):
        tool.call({"query": "x", "expand": "yes"}, None)


def test_locomo_bench_scores_auto_and_expanded_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_SEMANTIC", "off")
    report = bench_locomo.run_bench(TOY, ["auto", "keyword:expand"])
    assert set(report["systems"]) == {"bm25-baseline", "auto", "keyword:expand"}
    assert report["resolved"] == {"auto": ["keyword"], "keyword:expand": ["keyword"]}
    assert "auto ->keyword (keyword)" in bench_locomo.format_report(report)
    assert bench_locomo.split_mode("rerank:expand") == ("rerank", True)
    assert bench_locomo.split_mode("rerank") == ("rerank", False)


def test_locomo_bench_refuses_an_unknown_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "locomo", "--data", str(TOY), "--modes", "keyword:sideways"]) == 2
    assert "unknown mode" in capsys.readouterr().err


def test_a_search_survives_its_backend_touching_recall_db_meanwhile(root: Path) -> None:
    """The semantic backend re-syncs and embeds inside a search; a write (or a WAL checkpoint)
    gives recall.db a new ctime, so the thread's shared connection is reopened — the one the
    search holds must stay usable (it used to be closed under it: "closed database")."""
    import os

    seed(root, [make_record("mem_cat", "Our cat Tom sleeps on the printer."),
                make_record("mem_db", "The staging database is restored from Sunday's backup.")])

    class Touching:
        name = "touching"

        def available(self) -> str | None:
            return None

        def search(self, root_: str, query: str, limit: int) -> list[str]:
            path = index.recall_db_path(root_)
            os.utime(path)  # a new ctime, as a write plus checkpoint gives it
            index.ensure_fresh(root_)
            index.reader(path)
            return ["mem_cat"]

    resp = search(root, "printer", "deep", 5, backends=[Touching()])
    assert [r.id for r in resp.results][:1] == ["mem_cat"]
    held = index.open_fresh(root)
    os.utime(index.recall_db_path(root))
    assert index.reader(index.recall_db_path(root)) is not held
    assert held.execute("SELECT count(*) FROM records").fetchone()[0] == 2  # still open
