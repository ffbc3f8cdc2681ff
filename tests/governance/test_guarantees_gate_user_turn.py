"""The ``user_turn`` stamp's promises as a user depends on them (issue 28: written for the
mutants of ``core/governance/user_turn.py`` that the other gate tests let live)."""

from __future__ import annotations

import pytest

from commonkeep.governance.user_turn import ORIGIN, RULE, message_digest, stamp, supported


def test_the_stamp_records_what_was_verified_and_keeps_the_writers_origin() -> None:
    said = ["Please remember that we deploy with make release."]
    found = supported("We deploy with make release.", said)
    assert found.ok
    out = stamp({"origin": "memory_tool", "session": "s1"}, host="hermes", stamped_by="commonkeep_hermes",
                session_id="s1", support=found, turn=3)
    assert out["origin"] == ORIGIN == "user_turn"
    assert out["write_origin"] == "memory_tool"  # what the agent's write said, kept apart
    assert out["stamped_by"] == "commonkeep_hermes"
    assert out["session"] == "s1"
    assert out["user_turn"] == {"rule": RULE, "host": "hermes", "session_id": "s1",
                                "message_sha256": message_digest(said[0]), "message_index": 0, "turn": 3}
    again = stamp(out, host="hermes", stamped_by="commonkeep_hermes", session_id="s1", support=found)
    assert again["write_origin"] == "memory_tool"  # a second stamp does not lose it


@pytest.mark.parametrize(("statement", "reason"), [
    ("", "empty statement"),
    ("   ", "empty statement"),
    ("We deploy with make\u200brelease.", "the statement holds invisible or control characters"),
    ("We deploy with make\x1brelease.", "the statement holds invisible or control characters"),
    ("We deploy with ｍａｋｅ release.", "the statement is not plain text (it changes under Unicode NFKC)"),
    ("Deploy.", "the statement says too little to match (fewer than two content words)"),
    ("Remember that the user is deploying.", "the statement says too little to match (fewer than two content words)"),
    ("We deploy with make publish.",
     "no user message of this session says it (words, numbers, commands or negations differ)"),
])
def test_a_statement_that_cannot_be_verified_says_why(statement: str, reason: str) -> None:
    found = supported(statement, ["Please remember that we deploy with make release, always."])
    assert not found.ok and found.reason == reason
    assert found.message is None and found.digest is None


def test_the_latest_supporting_message_is_the_one_named() -> None:
    said = ["We deploy with make release.", 42, "Sure. We deploy with make release. Thanks!", "Thanks"]
    found = supported("We deploy with make release.", said)  # type: ignore[arg-type]
    assert found.ok and found.message == 2 and found.digest == message_digest(said[2])  # type: ignore[arg-type]
    assert found.reason == "every sentence of the statement is in one user message"


def test_every_sentence_must_be_in_the_same_message_in_order() -> None:
    said = ["We deploy with make release.", "Staging uses port 5432."]
    assert not supported("We deploy with make release. Staging uses port 5432.", said).ok
    one = ["We deploy with make release. Staging uses port 5432."]
    assert supported("We deploy with make release. Staging uses port 5432.", one).ok
    assert not supported("Staging uses port 5432. We deploy with make release.", one).ok
    assert not supported("We deploy with make release. We deploy with make release.", one).ok


def test_a_question_is_never_a_statement() -> None:
    assert not supported("We deploy on Fridays.", ["We deploy on Fridays?"]).ok
    assert not supported("We deploy on Fridays.", ["We deploy on Fridays?)"]).ok
    assert supported("We deploy on Fridays.", ["We deploy on Fridays!"]).ok


@pytest.mark.parametrize(("statement", "said", "ok"), [
    ("The user deploys releases on Mondays.", "I deploy releases on Mondays", True),   # stems and perspective
    ("Deploying happens on Mondays.", "Deploy happens on Mondays.", True),
    ("We deploy only on Mondays.", "We deploy on Mondays.", False),                   # a scope word added
    ("We deploy on Mondays.", "We deploy only on Mondays.", False),                   # a scope word dropped
    ("We don't deploy on Mondays.", "We do not deploy on Mondays.", True),            # contractions read out
    ("We won't deploy on Mondays.", "We will not deploy on Mondays.", True),
    ("We can't deploy on Mondays.", "We cannot deploy on Mondays.", True),
    ("We deploy on Mondays.", "We never deploy on Mondays.", False),
    ("Bob's script runs nightly.", "Bob’s script runs nightly.", True),               # a curly apostrophe
    ("The repo uses `pnpm` (not npm).", "The repo uses pnpm, not npm.", True),
    ("The port is 5432.", "The port is 5433.", False),
    ("The tests run in CI quickly.", "The tests run in CI.", False),                  # a word added
    ("The tests run in ci", "The TESTS run in CI.", True),                            # case does not matter
    ("Note: builds use ninja.", "Builds use ninja, FYI.", True),                     # the frame is dropped
    ("Builds use ninja.", "Okay, so please remember that builds use ninja.", True),
    ("Builds use ninja.", "<memory-context>x</memory-context> Builds use ninja.", True),
])
def test_what_counts_as_the_same_words(statement: str, said: str, ok: bool) -> None:
    assert supported(statement, [said]).ok is ok


def test_a_digest_of_a_message_with_a_lone_surrogate_is_still_made() -> None:
    assert len(message_digest("half \ud800 a pair")) == 64
    assert message_digest("x") == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
