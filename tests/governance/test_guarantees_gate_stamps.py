"""What a caller's claims earn at capture and in scoring (issue 28: written for the mutants of
capture's stamp dropping and of scoring's stamp parts that the other gate tests let live)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commonkeep.gate.autoapply import stamped_trust
from commonkeep.gate.capture import capture
from tests.governance.conftest import WRITER, bind_stamp, read_rows

R = "/tmp/ck-root-of-the-stamp-tests"  # the root stamps are bound for (only its name counts)
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


HOST = {"stamped_by": "commonkeep_hermes", "origin": "user_turn"}


def _ok(**kw: Any) -> dict[str, Any]:
    return {"text": TEXT, "primary_trust_class": "direct_user_instruction", "provenance": HOST, "poisoning_risk": "low",
            "promotion_eligibility": "auto_candidate", "durability_signal": "long_term", **kw}


def blockers(cand: dict[str, Any], governance_mode: str = "compatibility", writer_role: str | None = None) -> list[str]:
    """``auto_apply_blockers`` for ``cand`` in ``R``, its stamp (if it claims one) bound as its adapter binds it."""
    from commonkeep.gate.scoring import auto_apply_blockers

    bind_stamp(R, cand, writer_role)
    return auto_apply_blockers(cand, governance_mode, writer_role, R)


def test_a_stamped_candidate_passes_and_each_hold_back_is_named() -> None:
    assert blockers(_ok()) == [] and blockers(_ok(promotion_eligibility="auto_apply_l2")) == []
    assert blockers(_ok(text="key [REDACTED:api_key]")) == ["secrets were redacted from the text"]
    assert blockers(_ok(poisoning_risk="high")) == ["poisoning risk is high"]
    assert blockers(_ok(verification_status="rejected")) == ["verification_status is rejected"]
    assert blockers(_ok(verification_status="review_required")) == ["verification_status is review_required"]
    for kind in ("potential_conflict", "supersedes_existing", "ambiguous"):
        assert blockers(_ok(match_kind=kind)) == [f"match is {kind}"]
    assert blockers(_ok(match_kind="duplicate")) == []
    for durability in ("temporary", "session", "task"):
        assert blockers(_ok(durability_signal=durability)) == [f"durability is {durability}"]
    assert blockers(_ok(promotion_eligibility="review_only")) == ["eligibility is review_only"]
    assert blockers(_ok(promotion_eligibility=None)) == ["eligibility is missing"]


def test_a_claim_without_a_stamp_only_holds_back_never_lifts() -> None:
    claimed = _ok(provenance={"agent": "planner"})
    assert blockers(claimed) == ["not stamped by a person: no host, writer or user_turn stamp"]
    assert blockers({**claimed, "promotion_eligibility": None}) == blockers(claimed)  # nothing claimed: nothing more
    assert blockers({**claimed, "promotion_eligibility": "never"})[-1] == "eligibility is never"
    assert blockers(claimed, "strict")[-1] == "its trust is claimed, not stamped by a host or the writer"
    legacy = {"text": TEXT, "provenance": HOST, "poisoning_risk": "low"}
    assert blockers(legacy) == [] and blockers(legacy, "strict") == ["strict governance requires trust metadata"]


def test_strict_governance_asks_a_stamped_candidate_for_verification_and_evidence() -> None:
    inferred = _ok(primary_trust_class="agent_inference")
    assert blockers(inferred, "strict") == ["strict governance requires a non-legacy verification",
                                            "strict governance requires evidence_ids"]
    assert blockers(_ok(verification_status="legacy_unverified"), "strict") == [
        "strict governance requires a non-legacy verification"]
    assert blockers(_ok(verification_status="verified", evidence_ids=["ev_1"]), "strict") == []
    assert blockers(_ok(verification_status="verified"), "strict") == []  # the user's own word needs no evidence


def test_the_writers_own_capture_keeps_its_eligibility_and_says_where_it_went(root: Path) -> None:
    from tests.governance.conftest import write_candidate

    (root / "config.json").write_text('{"commonkeep": {"writerRole": "curator"}}', encoding="utf-8")
    cand = write_candidate(root, TEXT, provenance={"agent": "cli", "role": "curator"})
    assert cand["promotion_eligibility"] == "auto_candidate"  # the configured writer's stamp is seen at capture
    done = capture(root, "Release notes are written in the CHANGELOG before tagging.")
    assert done.inbox == root / "inbox" / "captured.jsonl"


def test_a_writer_stamped_candidate_without_an_eligibility_is_held_for_it() -> None:
    cand = {**_ok(provenance={"agent": "cli", "role": WRITER}, promotion_eligibility=None), "source": {"type": "manual"}}
    assert blockers(cand, writer_role=WRITER) == ["eligibility is missing"]  # stamped: a missing eligibility holds
    assert blockers(cand) == ["not stamped by a person: no host, writer or user_turn stamp"]
