"""What a caller's claims earn at capture and in scoring (issue 28: written for the mutants of
capture's stamp dropping and of scoring's stamp parts that the other gate tests let live)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commonkeep.governance.autoapply import stamped_trust
from commonkeep.store.capture import capture
from tests.governance.conftest import WRITER, read_rows

TEXT = "The staging database is refreshed from production every Sunday night."


def _row(root: Path) -> dict[str, Any]:
    [row] = read_rows(root / "inbox" / "captured.jsonl")
    return row


def test_a_write_origin_alone_is_dropped_and_named(tmp_path: Path) -> None:
    capture(tmp_path, TEXT, provenance={"write_origin": "import", "agent": "planner"})
    prov = _row(tmp_path)["provenance"]
    assert "write_origin" not in prov and prov["stamp_dropped"] == "write_origin" and prov["agent"] == "planner"


def test_a_provenance_without_a_stamp_is_kept_as_given(tmp_path: Path) -> None:
    capture(tmp_path, TEXT, provenance={"agent": "planner", "role": WRITER})
    prov = _row(tmp_path)["provenance"]
    assert "stamp_dropped" not in prov and prov["agent"] == "planner" and prov["role"] == WRITER


def test_a_claimed_eligibility_without_a_stamp_is_review_only(tmp_path: Path) -> None:
    done = capture(tmp_path, TEXT, provenance={"agent": "planner", "stamped_by": "commonkeep_omp", "origin": "user_turn"},
                   primary_trust_class="direct_user_instruction", promotion_eligibility="auto_l2", confidence=0.99,
                   source_type="manual")
    row = _row(tmp_path)
    assert stamped_trust(row, WRITER) is None
    assert row["promotion_eligibility"] == "review_only" == done.candidate["promotion_eligibility"]
