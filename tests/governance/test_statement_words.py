"""``reviews.statement_words``: a decision's index and statement keys from the entries the last
decision left are those worked out anew; a statement changed since, a changed module and a file of
another shape are worked out again; an active statement is still refused a second copy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.errors import BadInput
from commonkeep.gate import matching
from commonkeep.reviews import statement_words
from commonkeep.reviews.decide import load_context
from commonkeep.reviews.review import approve
from tests.governance.conftest import WRITER, write_candidate

TEXTS = ("Use tabs for indentation in Python code.", "Never deploy on Fridays; no longer on Thursdays either.",
         "Deploy the docs site from the main branch only.")


def _context_facts(root: Path) -> tuple[Any, ...]:
    ctx = load_context(root)
    entries = [(e.id, e.tokens, e.tags, e.key, e.cue) for e in ctx.index._entries]
    return entries, ctx.order, ctx.statements, dict(ctx.index._postings)


def _worked_out(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = matching.statement_words
    monkeypatch.setattr(statement_words, "statement_words", lambda t: seen.append(t) or real(t))
    return seen


def _root_with_records(root: Path) -> Path:
    for t in TEXTS:
        approve(root, [write_candidate(root, t)["id"]], role=WRITER)
    return root / "runtime" / statement_words.NAME


def test_the_kept_entries_give_the_context_worked_out_anew(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = _root_with_records(root)
    assert kept.is_file()
    seen = _worked_out(monkeypatch)
    _context_facts(root)
    assert seen == [TEXTS[-1]]  # the statement the last decision added; the others from the file
    seen.clear()
    from_file = _context_facts(root)
    assert seen == []  # every statement from the file
    kept.unlink()
    anew = _context_facts(root)
    assert sorted(seen) == sorted(TEXTS)
    assert from_file == anew
    assert any(e[4] for e in anew[0])  # the cue of "no longer" is kept too


def test_a_statement_changed_in_place_is_worked_out_again(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _root_with_records(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    l2.write_bytes(l2.read_bytes().replace(b"main branch only.", b"release branch only."))
    seen = _worked_out(monkeypatch)
    facts = _context_facts(root)
    assert seen == ["Deploy the docs site from the release branch only."]
    assert any("release" in e[1] and "main" not in e[1] for e in facts[0])


@pytest.mark.parametrize("change", ["code", "shape", "torn"])
def test_a_file_of_other_code_or_shape_is_not_used(root: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    kept = _root_with_records(root)
    if change == "code":
        monkeypatch.setattr(statement_words, "fingerprint", lambda: "gate/matching.py:1:2")
    elif change == "shape":
        doc = json.loads(kept.read_text())
        doc["statements"][TEXTS[0]] = ["tabs", 2, "x"]
        kept.write_text(json.dumps(doc))
    else:
        kept.write_bytes(kept.read_bytes()[:40])
    seen = _worked_out(monkeypatch)
    _context_facts(root)
    assert sorted(seen) == sorted(TEXTS)


def test_a_second_copy_of_an_active_statement_is_still_refused(root: Path) -> None:
    kept = _root_with_records(root)
    doc = json.loads(kept.read_text())
    assert TEXTS[0] in doc["statements"]
    dup = write_candidate(root, TEXTS[0].upper())  # the same statement, another case: the same key
    with pytest.raises(BadInput, match="does not apply to a duplicate candidate"):
        approve(root, [dup["id"]], role=WRITER, choice="add")
