"""A replace is always named, and approving means one thing on every surface (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.reviews.review import approve
from commonkeep.store.core import Store
from commonkeep.web import decisions
from tests.governance.conftest import WRITER, write_candidate

OLD = "The staging database runs postgres 16 on port 5433."
NEW = "The staging database runs postgres 16 on port 6543."


def _standing(root: Path) -> dict[str, tuple[str, str]]:
    return {str(r["id"]): (str(r["status"]), str(r["statement"])) for r in Store(root, warn=False).records(active_only=False)}


def _record(root: Path, text: str) -> str:
    c = write_candidate(root, text, tags=["db"])
    approve(root, [str(c["id"])], role=WRITER)
    return f"mem_{str(c['id'])[4:]}"


def test_the_cli_says_what_it_would_replace_and_changes_nothing_without_replace(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rid = _record(root, OLD)
    cid = str(write_candidate(root, NEW, tags=["db"])["id"])
    before = _standing(root)
    code = main(["review", "--approve", cid, "--root", str(root), "--role", WRITER])
    err = capsys.readouterr().err
    assert code != 0 and f'{rid} ("{OLD}")' in err and "'replace'" in err and "--replace" in err
    assert _standing(root) == before and [c["id"] for c in Store(root).candidates(status="new")] == [cid]
    assert main(["review", "--approve", cid, "--replace", "--root", str(root), "--role", WRITER]) == 0
    after = _standing(root)
    assert after[rid] == ("superseded", OLD)  # the old text stays in the history
    assert sorted(st for s, st in after.values() if s == "active") == [NEW]


def test_replace_and_another_choice_together_are_refused(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _record(root, OLD)
    cid = str(write_candidate(root, NEW, tags=["db"])["id"])
    before = _standing(root)
    assert main(["review", "--approve", cid, "--replace", "--choice", "keep_both", "--root", str(root), "--role", WRITER]) != 0
    assert "say two different things" in capsys.readouterr().err and _standing(root) == before


NEAR = ("Run the test suite with pytest -q before committing.", "Always run the test suite with pytest -q before committing, in CI too.")


@pytest.mark.parametrize("surface", ["cli", "web", "web_batch"])
def test_approving_a_near_repeat_reinforces_its_record_on_every_surface(root: Path, surface: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI, the web app's action (the Hermes tab calls the same ``decisions.decide``) and a batch:
    the record keeps its statement and gains the evidence; nothing is replaced."""
    rid = _record(root, NEAR[0])
    cid = str(write_candidate(root, NEAR[1], tags=["testing"], evidence_refs=["ci.yml", "Makefile"])["id"])
    other = str(write_candidate(root, "Releases are tagged from the main branch.", tags=["release"])["id"])
    if surface == "cli":
        assert main(["review", "--approve", cid, "--root", str(root), "--role", WRITER]) == 0
    elif surface == "web":
        decisions.decide(root, WRITER, "approve", [cid])
    else:
        decisions.decide(root, WRITER, "approve", [cid, other])
    rec = next(r for r in Store(root).records() if r["id"] == rid)
    assert rec["statement"] == NEAR[0] and {"ci.yml", "Makefile"} <= {e["ref"] for e in rec["evidence"]}


def test_the_batch_plan_lists_each_candidate_with_its_own_choice_in_plain_words(root: Path) -> None:
    rid = _record(root, OLD)
    near = _record(root, NEAR[0])
    conflict = str(write_candidate(root, NEW, tags=["db"])["id"])
    repeat = str(write_candidate(root, NEAR[1], tags=["testing"], evidence_refs=["ci.yml", "Makefile"])["id"])
    fresh = str(write_candidate(root, "Releases are tagged from the main branch.", tags=["release"])["id"])
    plans = {p["id"]: p for p in decisions.plan(root, [conflict, repeat, fresh])}
    assert plans[conflict]["needs_choice"] and plans[conflict]["target_id"] == rid and plans[conflict]["target_text"] == OLD
    assert [c["words"] for c in plans[conflict]["choices"]] == [
        "replace the existing record with this statement (the old text stays in the history)", "keep both, marked contested"]
    assert (plans[repeat]["choice"], plans[repeat]["target_id"], plans[repeat]["replaces"]) == ("reinforce", near, False)
    assert plans[fresh]["choice"] == "add" and plans[fresh]["choice_words"] == "add it as a new record"
    chosen = {p["id"]: p for p in decisions.plan(root, [conflict, repeat, fresh], choices={conflict: "keep_both"})}
    assert chosen[conflict]["choice"] == "keep_both" and not chosen[conflict]["needs_choice"]
    json.dumps(chosen)  # a page can send it as it is
    decisions.decide(root, WRITER, "approve", [conflict, repeat, fresh], choices={conflict: "keep_both"})
    assert _standing(root)[rid] == ("contested", OLD)
