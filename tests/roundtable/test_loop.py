"""The loop scenario end to end (contracts/roundtable.md §9), on a real broker and the real wiki.

Four roles deliberate; a late reviewer's bounded digest collapses the oldest messages; the
planner may not export; the librarian exports every retained message (the collapsed decision
included), ingests the file with our Dossier-compatible CLI (``python -m commonkeep.dossier``,
spawned as an argv vector), and a fresh query finds the decision the digest had collapsed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commonkeep.errors import RoleRefused
from commonkeep_roundtable import LocalRoundtable

DECISION = "Decision: GCRA locally for per-tenant rate limiting, with the burst allowance set to twenty requests."
DISCUSSION = [
    ("planner", DECISION),
    ("researcher", "Benchmarks of the sliding window log showed memory growing with every tenant, which rules it out at our scale of forty thousand tenants."),
    ("critic", "The leaky bucket variant smooths bursts too aggressively for the batch import clients, and they already complain about throttling today."),
    ("researcher", "Redis-backed counters add a network hop per request; the latency budget of two milliseconds leaves no room for that on the hot path."),
    ("critic", "Clock skew between nodes matters less for GCRA than for fixed windows, because only the theoretical arrival time is stored per key."),
    ("planner", "Rollout plan: shadow mode for one week, compare rejections against the current limiter, then switch the gateway flag tenant by tenant."),
    ("librarian", "Noted. I will export this room after the task ends and ingest it, so the rationale survives the room itself."),
]


def test_four_roles_deliberate_and_the_collapsed_decision_reaches_the_wiki(agent_base: Path) -> None:
    memory_dir = agent_base / "memory"
    with LocalRoundtable(agent_base, memory_dir=memory_dir) as rt:
        posted = [rt.post(role, "ratelimit", text, topic="rate limiting") for role, text in DISCUSSION]
        assert [m["seq"] for m in posted] == list(range(1, 8))

        late = rt.digest("reviewer", "ratelimit", budget=700)
        header, *body = late.text.splitlines()
        collapsed = int(re.search(r"(\d+) collapsed", header).group(1))  # type: ignore[union-attr]
        assert collapsed >= 1
        assert body[0] == f"({collapsed} older messages collapsed — fetch with after_seq 0 to read them)"
        assert "GCRA locally" not in late.text  # the decision is not in what the reviewer saw
        assert late.details["consumedSeq"] == 7
        assert rt.digest("reviewer", "ratelimit", peek=True).text.endswith(" collapsed · 0 chars · peek (cursor unchanged)\nNo new messages.")

        with pytest.raises(RoleRefused) as denied:
            rt.export("planner", "ratelimit", "raw/ratelimit.md")
        assert str(denied.value) == (
            'Only the "librarian" role may export rooms for memory; this session is "planner". Ask the librarian to write.'
        )

        exported = rt.export("librarian", "ratelimit", "raw/ratelimit.md")
        assert (exported.messages, exported.first_seq, exported.last_seq, exported.truncated) == (7, 1, 7, False)
        transcript = (memory_dir / "raw" / "ratelimit.md").read_text(encoding="utf-8")
        assert f"planner#1: {DECISION}\n" in transcript
        assert rt.session("reviewer").cursor("ratelimit") == 7  # export moved no cursor

        with pytest.raises(RoleRefused):
            rt.memory("critic", "ingest", source="raw/ratelimit.md")
        rt.memory("librarian", "ingest", source="raw/ratelimit.md")

        answer = rt.memory("reviewer", "query", question="which rate limiting algorithm did we decide on")
    # Dossier's query format (contracts/dossier.md §2.1): candidate pages, then grounded evidence
    pages = re.findall(r"^\s+wiki\s+(\S+\.md)\s+score=", answer, flags=re.MULTILINE)
    assert pages, answer
    found_in = [answer] + [(memory_dir / "wiki" / page).read_text(encoding="utf-8") for page in pages]
    assert any(DECISION in text for text in found_in), answer
