"""``commonkeep_wiki_extractors``: plugins' extractors pass the core's gate (grounding, secrets) and
a broken one is a notice, never a failed ingest. Each test registers a throwaway plugin on the real
plugin manager and always unregisters it."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from commonkeep import wiki
from commonkeep.hookspecs import hookimpl
from commonkeep.plugins import plugin_manager
from tests.wiki.conftest import WriteRaw

KEY = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
TOKEN = "ghp_" + "Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1z"
SOURCE = "The Heron service stores invoices. Heron keeps them for seven years."


class Extractor:
    def __init__(self, name: str, proposals: Any = None, error: Exception | None = None) -> None:
        self.name = name
        self.proposals = proposals if proposals is not None else []
        self.error = error
        self.seen: list[str] = []

    def propose(self, body: str) -> Any:
        self.seen.append(body)
        if self.error is not None:
            raise self.error
        return self.proposals


class Plugin:
    def __init__(self, *extractors: Any, error: Exception | None = None) -> None:
        self.extractors = list(extractors)
        self.error = error

    @hookimpl
    def commonkeep_wiki_extractors(self) -> list[Any]:
        if self.error is not None:
            raise self.error
        return self.extractors


@pytest.fixture
def register() -> Iterator[Any]:
    names: list[str] = []

    def add(plugin: Plugin, name: str = "throwaway-extractors") -> Plugin:
        plugin_manager().pm.register(plugin, name=name)
        names.append(name)
        return plugin

    try:
        yield add
    finally:
        for name in names:
            if plugin_manager().pm.get_plugin(name) is not None:
                plugin_manager().pm.unregister(name=name)


def _facts(project: Path) -> dict[str, tuple[str, str, str, dict[str, Any]]]:
    rows = sqlite3.connect(project / ".hmlr/facts.db").execute("SELECT key, kind, value, sentence, detail FROM facts")
    return {k: (kind, v, s, json.loads(d)) for k, kind, v, s, d in rows}


def test_grounded_proposals_become_facts_and_the_rest_is_dropped(
    project: Path, write_raw: WriteRaw, register: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMMONKEEP_WIKI_LLM_URL", raising=False)
    mine = Extractor("myplugin", [
        {"kind": "fact", "subject": "Heron", "value": "keeps invoices seven years",
         "sentence": "  heron KEEPS them for seven years. "},  # whitespace and case aside: verbatim
        {"kind": "fact", "subject": "Heron", "value": "stores bills",
         "sentence": "The Heron service stores bills."},  # a paraphrase: not grounded
        {"kind": "definition", "subject": TOKEN, "value": "a token",
         "sentence": "The Heron service stores invoices."},  # a secret as a name
        {"kind": "alias", "subject": "Heron", "other": TOKEN,
         "sentence": "The Heron service stores invoices."},  # a secret as the other name
        {"kind": "fact", "subject": "Invoices", "value": f"stored with {TOKEN}",
         "sentence": "The Heron service stores invoices."},  # a secret in the value: redacted
        {"kind": "quantity", "subject": "Heron", "value": "1 GiB", "sentence": "The Heron service stores invoices."},
        {"kind": "opinion", "subject": "Heron", "value": "nice", "sentence": "The Heron service stores invoices."},
        {"kind": "fact", "subject": " ", "value": "x", "sentence": "The Heron service stores invoices."},
    ])
    register(Plugin(mine))
    report = wiki.ingest(project, write_raw("h.md", SOURCE))
    assert report.extractor == "deterministic+myplugin (2 fact(s) added)"
    assert report.notices == []
    assert mine.seen == [SOURCE + "\n"]
    facts = _facts(project)
    assert facts["myplugin:fact:heron@h"] == ("fact", "keeps invoices seven years", "Heron keeps them for seven years.",
                                               {"extractor": "myplugin"})
    assert facts["myplugin:fact:invoices@h"] == ("fact", "stored with [REDACTED:github_token]",
                                                     "The Heron service stores invoices.", {"extractor": "myplugin"})
    mine_only = {k for k, v in facts.items() if v[3].get("extractor") == "myplugin"}
    assert mine_only == {"myplugin:fact:heron@h", "myplugin:fact:invoices@h"}  # no number: no quantity
    assert not [v for v in facts.values() if "bills" in v[1] + v[2]]
    page = (project / "wiki/sources/h.md").read_text(encoding="utf-8")
    assert "keeps invoices seven years" in page
    for path in project.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    objects = subprocess.run(["git", "-C", str(project), "cat-file", "--batch-all-objects", "--batch"],
                             capture_output=True, check=True).stdout
    assert TOKEN.encode() not in objects


def test_a_quantity_records_the_number_of_its_sentence(
    project: Path, write_raw: WriteRaw, register: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMMONKEEP_WIKI_LLM_URL", raising=False)
    sentence = "The Heron batch moves 4.2 million records daily."
    register(Plugin(Extractor("myplugin", [{"kind": "quantity", "subject": "Heron", "value": "lots", "sentence": sentence}])))
    report = wiki.ingest(project, write_raw("h.md", sentence))
    assert report.extractor == "deterministic+myplugin (1 fact(s) added)"
    kind, value, _, detail = _facts(project)["myplugin:quantity:heron@h"]
    assert (kind, value) == ("quantity", "lots")
    assert detail == {"extractor": "myplugin", "number": 4200000.0, "unit": "record/day"}


def test_an_extractor_sees_only_the_redacted_source(
    project: Path, write_raw: WriteRaw, register: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMMONKEEP_WIKI_LLM_URL", raising=False)
    redacted = "The Heron service calls billing with [REDACTED:openai_key] daily."
    mine = Extractor("myplugin", [
        {"kind": "fact", "subject": "Heron", "value": "calls billing", "sentence": redacted},
        {"kind": "fact", "subject": "Billing", "value": "is called",
         "sentence": f"The Heron service calls billing with {KEY} daily."},  # the unredacted text: not grounded
    ])
    register(Plugin(mine))
    report = wiki.ingest(project, write_raw("h.md", f"The Heron service calls billing with {KEY} daily."))
    assert report.redacted == ["openai_key"] and report.extractor == "deterministic+myplugin (1 fact(s) added)"
    assert KEY not in mine.seen[0] and redacted in mine.seen[0]
    assert _facts(project)["myplugin:fact:heron@h"][2] == redacted


def test_a_failing_extractor_is_a_notice_and_the_ingest_still_commits(
    project: Path, write_raw: WriteRaw, register: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COMMONKEEP_WIKI_LLM_URL", raising=False)
    good = Extractor("good", [{"kind": "fact", "subject": "Heron", "value": "stores invoices",
                               "sentence": "The Heron service stores invoices."}])
    boom = Extractor("boom", error=RuntimeError(f"endpoint refused key {KEY}\nsecond line"))
    junk = Extractor("junk", {"kind": "fact"})  # a dict, not a list of dicts
    mixed = Extractor("mixed", [{"kind": "fact", "subject": "Heron", "value": "v",
                                 "sentence": "The Heron service stores invoices."}, "not a dict"])
    register(Plugin(boom, junk, mixed, object(), good))
    register(Plugin(error=RuntimeError("hook exploded")), name="broken-hook")
    report = wiki.ingest(project, write_raw("h.md", SOURCE))
    assert report.commit
    assert report.extractor == "deterministic+boom (failed)+junk (failed)+mixed (failed)+good (1 fact(s) added)"
    assert len(report.notices) == 5
    assert all("\n" not in n and KEY not in n for n in report.notices)
    boom_notice = next(n for n in report.notices if "'boom'" in n)
    assert "RuntimeError: endpoint refused key [REDACTED:openai_key] second line" in boom_notice
    assert any("'junk'" in n and "returned dict" in n for n in report.notices)
    assert any("'mixed'" in n and "holding str" in n for n in report.notices)
    assert any("needs a name" in n for n in report.notices)
    assert any("broken-hook: hook exploded" in n for n in report.notices)
    err = capsys.readouterr().err
    assert err.count("commonkeep: warning: wiki extractor") == 5 and KEY not in err
    facts = _facts(project)
    assert facts["good:fact:heron@h"][3] == {"extractor": "good"}
    assert not [k for k in facts if k.startswith(("boom:", "junk:", "mixed:"))]
    log = subprocess.run(["git", "-C", str(project), "log", "--oneline"], capture_output=True, text=True, check=True).stdout
    assert "wiki ingest: raw/h.md" in log


def test_the_llm_extractor_and_a_plugin_share_the_gate_and_the_report(
    project: Path, write_raw: WriteRaw, register: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMMONKEEP_WIKI_LLM_URL", raising=False)
    llm = Extractor("llm", [
        {"kind": "fact", "subject": "Heron", "value": "keeps invoices", "sentence": "Heron keeps them for seven years."},
        {"kind": "fact", "subject": "Heron", "value": "in Paris", "sentence": "Heron runs in Paris."},
    ])
    mine = Extractor("myplugin", [
        {"kind": "fact", "subject": "Heron", "value": "stores invoices", "sentence": "The Heron service stores invoices."},
    ])
    register(Plugin(mine))
    report = wiki.ingest(project, write_raw("h.md", SOURCE), llm=llm)
    assert report.extractor == "deterministic+llm (1 fact(s) added)+myplugin (1 fact(s) added)"
    facts = _facts(project)
    assert facts["llm:fact:heron@h"][3] == {"extractor": "llm"}
    assert facts["myplugin:fact:heron@h"][3] == {"extractor": "myplugin"}


def test_the_llm_extractor_given_to_ingest_still_fails_the_ingest(
    project: Path, write_raw: WriteRaw, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("COMMONKEEP_WIKI_LLM_URL", raising=False)
    with pytest.raises(RuntimeError, match="model down"):
        wiki.ingest(project, write_raw("h.md", SOURCE), llm=Extractor("llm", error=RuntimeError("model down")))
    assert not (project / ".git").exists()


def test_the_wiki_doctor_names_plugin_extractors_and_plugins_that_failed(project: Path, register: Any) -> None:
    from commonkeep.wiki.doctor import doctor

    register(Plugin(Extractor("myplugin")))
    register(Plugin(error=RuntimeError(f"no config at {TOKEN}")), name="broken-extractors")
    ok, lines = doctor(project)
    assert any(ln.startswith("extractor: deterministic") and "plugin extractor(s): myplugin" in ln for ln in lines), lines
    failed = [ln for ln in lines if ln.startswith("extractor plugin failed to load")]
    assert len(failed) == 1 and "broken-extractors" in failed[0] and TOKEN not in failed[0]
