"""The deterministic extractor on made-up texts: names, aliases, definitions, quantities, rules."""

from __future__ import annotations

from commonkeep.wiki.extract import extract
from commonkeep.wiki.quantities import find_quantities
from commonkeep.wiki.text import split_sentences


def _facts(text: str, known: set[str] | None = None, families: set[str] | None = None) -> dict[str, list[str]]:
    ex = extract(text, source_slug="s", known_names=known or set(), known_families=families or set())
    out: dict[str, list[str]] = {}
    for f in ex.facts:
        out.setdefault(f.kind, []).append(f.value)
    return out


def test_alias_phrasings_link_the_two_names_and_keep_the_sentence() -> None:
    text = (
        "The Orbit scheduler is the same as 'Comet'. Blue Harbor was renamed to 'Green Dock' in 2022. "
        "Nimbus-7 is now called Stratus. Atlas, formerly known as Hermes-2, stores logs."
    )
    ex = extract(text, source_slug="s", known_names=set(), known_families=set())
    aliases = {f.value: f.sentence for f in ex.facts if f.kind == "alias"}
    assert aliases == {
        "Orbit = Comet": "The Orbit scheduler is the same as 'Comet'.",
        "Blue Harbor = Green Dock": "Blue Harbor was renamed to 'Green Dock' in 2022.",
        "Nimbus-7 = Stratus": "Nimbus-7 is now called Stratus.",
        "Atlas = Hermes-2": "Atlas, formerly known as Hermes-2, stores logs.",
    }


def test_negated_and_unrelated_sentences_make_no_alias() -> None:
    facts = _facts("Orbit is not the same as Comet. Orbit talks to Comet every night.")
    assert "alias" not in facts


def test_capitalised_sentence_starters_are_not_entities() -> None:
    ex = extract("Ignore the noise. Final numbers arrive Monday. Please check the Kestrel dashboard.",
                 source_slug="s", known_names=set(), known_families=set())
    assert ex.entities == ["Kestrel"]


def test_project_designator_is_dropped_so_both_spellings_are_one_entity() -> None:
    ex = extract("Project Lantern ships soon. Lantern needs review.", source_slug="s",
                 known_names=set(), known_families=set())
    assert ex.entities == ["Lantern"]


def test_definitions_are_extracted_with_their_term() -> None:
    ex = extract("A bridge block is a short-lived unit of conversation memory.", source_slug="s",
                 known_names=set(), known_families=set())
    [d] = [f for f in ex.facts if f.kind == "definition"]
    assert (d.subject, d.value) == ("bridge block", "a short-lived unit of conversation memory")
    assert "bridge block" in ex.concepts


def test_quantities_need_a_unit_and_rates_are_normalised() -> None:
    found = {q.display for q in find_quantities(
        "The cache holds 512 MB. Ingest runs at 1.5 million rows per hour, 3,000 requests/min, "
        "and 4.2 million client records daily. Latency stays under 40ms. It started in 2021 on March 3rd."
    )}
    assert found == {"512 MB", "1,500,000 row/h", "3,000 request/min", "4,200,000 record/day", "40 ms"}


def test_rate_spellings_compare_equal() -> None:
    units = {q.unit for q in find_quantities("9 records per day; 9 records/day; 9 records daily; 9,000-record daily cap")}
    assert units == {"record/day"}


def test_versioned_rules_and_their_changes_are_found() -> None:
    ex = extract("Guideline v2: builds may run for 45 minutes (supersedes v1).", source_slug="s",
                 known_names=set(), known_families={"guideline"})
    events = [(e["event"], e["targets"]) for e in ex.rule_events]
    assert events == [("declare", ["v2"]), ("supersede", ["v1"])]
    [q] = [f for f in ex.facts if f.kind == "quantity"]
    assert q.subject == "Guideline v2"


def test_revocations_voids_and_reverts_name_their_targets() -> None:
    ex = extract(
        "Rule 4 was revoked by the board. Ignore Rule 5, it was a draft. Rule 7: go back to Rule 3.",
        source_slug="s", known_names=set(), known_families=set(),
    )
    events = {(e["event"], tuple(e["targets"])) for e in ex.rule_events}
    assert {("revoke", ("v4",)), ("void", ("v5",)), ("reinstate", ("v3",)), ("declare", ("v7",))} <= events


def test_document_level_declaration_covers_every_sentence() -> None:
    ex = extract("New cap: 80 jobs per hour. This is Standard v3.", source_slug="s",
                 known_names=set(), known_families=set())
    [q] = [f for f in ex.facts if f.kind == "quantity"]
    assert q.subject == "Standard v3"
    assert [f.subject for f in ex.facts if f.kind == "rule"] == ["Standard v3"]


def test_every_fact_carries_a_sentence_that_is_in_the_text() -> None:
    text = "Kestrel is now called Falcon. Falcon moves 12 TB per day. Policy v1: Falcon may use 20 TB/day."
    ex = extract(text, source_slug="s", known_names=set(), known_families=set())
    assert ex.facts
    assert all(f.sentence in text for f in ex.facts)


def test_each_exported_room_message_is_its_own_sentence_block() -> None:
    transcript = (
        "[2026-01-05T10:00:00.000Z] planner#1: we need a limiter\n"
        "[2026-01-05T10:01:00.000Z] architect#2: Decision: GCRA locally\n"
        "continued on a second line\n"
    )
    texts = [s.text for s in split_sentences(transcript)]
    assert texts == [
        "[2026-01-05T10:00:00.000Z] planner#1: we need a limiter",
        "[2026-01-05T10:01:00.000Z] architect#2: Decision: GCRA locally continued on a second line",
    ]
