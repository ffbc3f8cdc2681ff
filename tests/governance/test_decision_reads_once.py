"""A decision reads the record files once: ``review.approve`` matches the candidate against the
records ``record_lines`` remembers, which the apply that follows reads (one parse per decision,
not two), and no decision changes one of those shared records in place, whatever its choice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from commonkeep.reviews.review import approve
from commonkeep.store import jsonl, record_lines
from commonkeep.store.core import Store
from tests.governance.conftest import WRITER, write_candidate

TABS = "Use tabs for indentation in Python code."
NO_TABS = "Never use tabs for indentation in Python code."
DOCS = "Deploy the docs site from the main branch only."


def _shared(root: Path) -> dict[int, tuple[dict[str, Any], bytes]]:
    """Every record the memo holds for ``root`` now: the object and its bytes as it is."""
    files = record_lines.records_by_file(Store(root, warn=False)) or {}
    return {id(r): (r, orjson.dumps(r)) for rows in files.values() for r in rows}


@pytest.mark.parametrize(("text", "choice"), [
    (TABS, None),  # a duplicate: reinforce (evidence merged into the record's)
    (TABS + " ", "replace"),  # a duplicate replaced: superseded
    (NO_TABS, "keep_both"),  # a conflict: both contested
    (NO_TABS, "replace"),  # a conflict replaced
    ("Use tabs for indentation in Python code and in Makefiles.", None),  # more than the record: a person's replace or add
])
def test_no_choice_changes_a_shared_record_in_place(root: Path, text: str, choice: str | None) -> None:
    for t in (TABS, DOCS):
        approve(root, [write_candidate(root, t)["id"]], role=WRITER)
    cand = write_candidate(root, text, evidence_refs=["daily/2026-12-03.md", "ci.log"])
    before = _shared(root)
    try:
        approve(root, [cand["id"]], role=WRITER, choice=choice)
    except Exception as exc:  # a refusal (a choice needed) is fine here; what it read must be unchanged
        assert "choice" in str(exc), exc
    for rec, dumped in before.values():
        assert orjson.dumps(rec) == dumped, rec["id"]


def test_an_approve_parses_each_record_line_once(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for t in (TABS, DOCS, "Run mypy in strict mode."):
        approve(root, [write_candidate(root, t)["id"]], role=WRITER)
    record_lines._MEMO.clear()  # as a new process starts: nothing remembered
    record_lines._VALID.clear()
    parsed: list[int] = []
    real = jsonl.fast_loads

    def counting(data: bytes) -> Any:
        got = real(data)
        if isinstance(got, list):  # record_lines parses a file's lines as one array
            parsed.append(sum(1 for r in got if isinstance(r, dict) and "statement" in r and "layer" in r))
        return got
    monkeypatch.setattr(jsonl, "fast_loads", counting)
    approve(root, [write_candidate(root, "Keep the changelog in the repository root.")["id"]], role=WRITER)
    assert [n for n in parsed if n] == [3]  # the three records, once: the apply and the projection read them from the memo
    assert len(Store(root).records()) == 4
