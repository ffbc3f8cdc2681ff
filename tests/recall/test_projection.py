"""The budgeted projection: Hermes' § format never exceeds a limit, and is deterministic."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.recall.projection import HERMES_DELIMITER, project_records, render_projection
from tests.recall.conftest import make_record, seed

statements = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=400).filter(
    lambda s: s.strip() != ""
)
record_lists = st.lists(
    st.builds(
        lambda i, s, c, layer, rule: make_record(
            f"mem_{i}", s, confidence=c, layer=layer, **({"ruleType": rule} if rule else {})
        ),
        st.integers(0, 10_000),
        statements | st.sampled_from(["a\n§\nb", "§", "x \n§\n y", "tab\tand\nnewline"]),
        st.floats(0, 1),
        st.sampled_from(["L1", "L2"]),
        st.sampled_from([None, "convention", "testing", "avoid_pattern"]),
    ),
    max_size=40,
).map(lambda rs: [dict(r, id=f"mem_{k:03d}") for k, r in enumerate(rs)])  # unique ids, as in a store


def hermes_read(text: str) -> list[str]:
    """Hermes' reader (hermes-host.md §5.1): split on the delimiter, strip, drop empties, dedupe."""
    out: list[str] = []
    for part in text.split(HERMES_DELIMITER):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


@settings(max_examples=300, deadline=None)
@given(
    records=record_lists,
    budget=st.integers(0, 3000),
    target=st.sampled_from(["memory", "user"]),
    max_entry=st.none() | st.integers(1, 500),
)
def test_hermes_projection_never_exceeds_its_limits(
    records: list[dict[str, Any]], budget: int, target: str, max_entry: int | None
) -> None:
    proj = project_records(records, budget, fmt="hermes", target=target, max_entry_chars=max_entry)
    assert len(proj.text) <= budget
    texts = [e.text for e in proj.entries]
    assert proj.text == HERMES_DELIMITER.join(texts)
    for t in texts:
        assert 0 < len(t) <= budget
        assert max_entry is None or len(t) <= max_entry
        assert HERMES_DELIMITER not in t and t == t.strip()
    assert hermes_read(proj.text) == texts  # Hermes reads back exactly the entries we wrote
    layer = "L1" if target == "user" else "L2"
    by_id = {r["id"]: r for r in records}
    assert all(by_id[e.id]["layer"] == layer for e in proj.entries)


@settings(max_examples=100, deadline=None)
@given(records=record_lists, budget=st.integers(0, 3000))
def test_projection_is_deterministic_whatever_the_input_order(
    records: list[dict[str, Any]], budget: int
) -> None:
    unique = records
    shuffled = unique[:]
    random.Random(budget).shuffle(shuffled)
    a = project_records(unique, budget).text
    assert project_records(shuffled, budget).text == a


def test_hard_rules_come_first_then_confidence() -> None:
    recs = [
        make_record("mem_low", "Low confidence fact.", confidence=0.5),
        make_record("mem_high", "High confidence fact.", confidence=0.95),
        make_record("mem_rule", "Never force-push to main.", confidence=0.9, ruleType="avoid_pattern"),
        make_record("mem_user", "The user is Ada.", layer="L1"),
        make_record("mem_old", "Inactive.", status="deprecated", confidence=1.0),
    ]
    proj = project_records(recs, 2200)
    assert [e.id for e in proj.entries] == ["mem_rule", "mem_high", "mem_low"]
    assert project_records(recs, 2200, target="user").text == "The user is Ada."
    tight = project_records(recs, len("Never force-push to main.") + 3 + len("Low confidence fact."))
    assert [e.id for e in tight.entries] == ["mem_rule", "mem_low"] and tight.omitted == ["mem_high"]


def test_render_projection_reads_the_store_and_gives_the_same_bytes_twice(root: Path) -> None:
    seed(
        root,
        [
            make_record(f"mem_{i:03d}", f"Fact number {i} about the build.", confidence=0.5 + i / 100)
            for i in range(40)
        ],
    )
    first = render_projection(root, 300)
    assert first == render_projection(root, 300)
    assert len(first) <= 300 and first.startswith("Fact number 39")
    assert len(render_projection(root)) <= 2200  # Hermes' default memory limit
    assert render_projection(root, target="user") == ""


def test_markdown_format_is_a_bullet_list_within_budget() -> None:
    recs = [make_record("mem_a", "One."), make_record("mem_b", "Two.", confidence=0.9)]
    assert project_records(recs, 100, fmt="markdown").text == "- Two.\n- One."
