"""A made-up scenario in the shape of a long-memory benchmark, in other words and names:
a renamed component, a rule history with a revert, a long memo, and revised estimates."""

from __future__ import annotations

from pathlib import Path

from commonkeep import wiki
from tests.wiki.conftest import WriteRaw

MEMO_FILLER = " ".join(
    f"Item {i}: the facilities team will repaint the {room} meeting room and replace its chairs before the audit."
    for i, room in enumerate(["north", "south", "east", "west", "blue", "green", "amber", "harbour"], start=1)
)
SOURCES = [
    ("s01.md", "2024-03-01", "Team Orca stores its backups with the Bluebird archiver (internal codename BB-7)."),
    ("s02.md", "2024-03-04", "Bluebird was renamed to 'Kite' last spring."),
    ("s03.md", "2024-03-08", "Kite is now called Hawk-2 in the runbooks."),
    ("s04.md", "2024-03-12", "Rule 1: Hawk-2 may write up to 10 GB per hour."),
    ("s05.md", "2024-03-20", "Rule 2: BB-7 is limited to 6 GB per hour."),
    ("s06.md", "2024-04-02", "Rule 3: Hawk-2 writes are unlimited on weekends (supersedes Rule 2)."),
    ("s07.md", "2024-04-09", "Rule 4: Rule 3 was a mistake; revert to Rule 2. The 6 GB per hour cap from Rule 2 is reinstated."),
    ("s08.md", "2024-04-20", f"{MEMO_FILLER} For the record, Rule 2 remains the only binding cap for the Kite archiver. {MEMO_FILLER}"),
    ("s09.md", "2024-04-11", "Orca expects to back up 5 GB per hour."),
    ("s10.md", "2024-04-25", "Final estimate: Orca will back up 8 GB per hour."),
]


def test_aliases_rule_history_and_revised_estimates_come_back_marked(project: Path, write_raw: WriteRaw) -> None:
    for name, date, text in SOURCES:
        wiki.ingest(project, write_raw(name, text, date=date))
        wiki.gardener(project)
    result = wiki.query(project, "Which rule caps how much Orca can write to Hawk-2 per hour, and what is Hawk-2 also called?")
    by_source: dict[str, list[str]] = {}
    for e in result.evidence:
        by_source.setdefault(e.source, []).append(e.status)
    # every source that bears on the answer is there, within the default 2,000-char budget
    assert set(by_source) >= {f"raw/s{i:02d}.md" for i in range(1, 9)} | {"raw/s10.md"}
    assert len(result.context()) <= 2000
    # the rule history is marked: 1 superseded, 3 revoked by the revert, 2 and 4 in force
    assert by_source["raw/s04.md"] == ["superseded"]
    assert by_source["raw/s06.md"] == ["revoked"]
    assert set(by_source["raw/s05.md"]) == {"current"} and set(by_source["raw/s07.md"]) == {"current"}
    # the memo's one relevant sentence is found, not its filler
    [memo] = [e for e in result.evidence if e.source == "raw/s08.md"]
    assert "Rule 2 remains the only binding cap" in memo.text
    # the revised estimate is marked superseded and ranks below the final one
    ranks = {e.source: i for i, e in enumerate(result.evidence)}
    if "raw/s09.md" in ranks:
        assert by_source["raw/s09.md"] == ["superseded"] and ranks["raw/s09.md"] > ranks["raw/s10.md"]
    assert result.entities == ["Hawk-2 = BB-7, Bluebird, Kite"]
