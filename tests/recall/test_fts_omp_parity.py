"""OMP's table as OmpKeep leaves it: an integral confidence stored as the INTEGER 1, and OMP's
column filters (``tags:python``) in a search query, or a clear refusal for a column not indexed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from commonkeep.errors import BadInput
from commonkeep.recall.search import index
from tests.recall.conftest import make_record, seed


def test_reindex_stores_an_integral_confidence_as_an_integer(root: Path) -> None:
    seed(root, [make_record("mem_one", "Always run ruff.", confidence=1), make_record("mem_half", "Maybe.", confidence=0.5),
                make_record("mem_float_one", "Written by Python.", confidence=1.0)])
    index.sync_root(root, embed=False)
    conn = sqlite3.connect(root / "search" / "memory-fts.db")
    try:
        got = dict(conn.execute("SELECT id, typeof(confidence) || ':' || confidence FROM memory_fts").fetchall())
    finally:
        conn.close()
    assert got == {"mem_one": "integer:1", "mem_float_one": "integer:1", "mem_half": "real:0.5"}


def _ids(root: Path, query: str) -> list[str]:
    from commonkeep.recall.search.hybrid import search

    return [r.id for r in search(root, query, "keyword", 8).results]


def test_a_column_filter_searches_that_column_only(root: Path) -> None:
    seed(root, [make_record("mem_tagged", "Format code before committing.", tags=["python"]),
                make_record("mem_said", "The python interpreter is 3.12.", tags=["runtime"])])
    index.sync_root(root, embed=False)
    assert _ids(root, "tags:python") == ["mem_tagged"]
    assert _ids(root, "statement:python") == ["mem_said"]
    assert set(_ids(root, "python")) == {"mem_tagged", "mem_said"}


def test_a_filter_on_a_column_the_table_does_not_index_is_refused_by_name(root: Path) -> None:
    seed(root, [make_record("mem_a", "Use pytest.")])
    index.sync_root(root, embed=False)
    with pytest.raises(BadInput, match="layer.*does not index"):
        _ids(root, "layer:L2")
