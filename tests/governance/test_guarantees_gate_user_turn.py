"""The ``user_turn`` stamp's promises as a user depends on them (issue 28: written for the
mutants of ``core/gate/user_turn.py`` that the other gate tests let live)."""

from __future__ import annotations

import pytest

from commonkeep.gate.user_turn import ORIGIN, RULE, message_digest, stamp, stamp_from_hosts, supported
from commonkeep.hookspecs import hookimpl


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
    assert found.ok is False and found.reason == reason
    assert found.message is None and found.digest is None


def test_the_latest_supporting_message_is_the_one_named() -> None:
    said = ["We deploy with make release.", 42, "Sure. We deploy with make release. Thanks!", "Thanks"]
    found = supported("We deploy with make release.", said)  # type: ignore[arg-type]
    assert found.ok and found.message == 2 and found.digest == message_digest(said[2])  # type: ignore[arg-type]
    assert found.reason == "every sentence of the statement is in one user message"


def test_a_message_that_is_not_text_is_passed_over() -> None:
    said = ["We deploy with make release.", 42]
    found = supported("We deploy with make release.", said)  # type: ignore[arg-type]
    assert found.ok and found.message == 0


def test_every_sentence_must_be_in_the_same_message_in_order() -> None:
    swapped = ["Thanks. Staging uses port 5432. We deploy with make release."]
    assert not supported("We deploy with make release. Staging uses port 5432.", swapped).ok
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
    ("We don’t deploy on Mondays.", "We do not deploy on Mondays.", True),            # a curly apostrophe too
    ("We make releases on Fridays.", "We are making releases on Fridays.", True),     # make / making
    ("The job runs nightly.", "The job should run nightly.", True),                   # runs / run
    ("The build is red.", "The build rings.", False),                                 # short words keep their letters
    ("The motto is \"ship it.\"", "The motto is ship it.", True),                    # quotes around a full stop
    ("Builds run ninja ** and make.", "Builds run ninja.", False),                    # a stray ** hides nothing after it
    ("We never deploy tests.", "We never deploy without tests.", False),             # one of two negations dropped
    ("The team's CI runs nightly.", "The team CI runs nightly.", True),              # a possessive's 's may be added
    ("Alice's team owns deploys.", "Alice and her team own deploys.", False),         # "and" dropped inside a clause
    ("Alice's team owns deploys.", "Alicia and her team own deploys.", False),
    ("Delete the database.", "Delete the test data from the database.", False),       # words dropped inside a clause
    ("The database is postgres 16.", "The database, set up last week, is postgres 16.", True),  # a clause set apart
    ("The cache lives in /srv/c.", "The cache (on the CI box) lives in /srv/c.", True),
    ("Run the migrations.", "After the backup, run the migrations.", False),          # a condition dropped
    ("Builds use ninja.", "Builds, as a rule, use ninja.", True),                    # a clause right after the first word
    ("Builds use ninja.", "Builds , as a rule , use ninja.", True),                  # commas standing alone
    ("The cache lives in /srv/c.", "The cache — on the CI box — lives in /srv/c.", True),  # dashes set a clause apart
    ("Delete, then restart.", "Delete the test data from staging, then restart.", False),  # a cut must start at a boundary
    ("Builds use ninja, that is.", "Builds use ninja.", True),                       # addable words may follow the end
    ("We never deploy on Fridays.", "We never deploy on Fridays without tests.", False),  # a negation in the dropped end
    ("Sam's laptop runs Linux.", "Sam laptop runs Linux.", True),                     # "'s" is split off and may be added
    ("We deploy on Fridays.", "**We deploy on Fridays?** ", False),                   # a question in bold
])
def test_what_counts_as_the_same_words(statement: str, said: str, ok: bool) -> None:
    assert supported(statement, [said]).ok is ok


def test_a_digest_of_a_message_with_a_lone_surrogate_is_still_made() -> None:
    assert len(message_digest("half \ud800 a pair")) == 64
    assert message_digest("x") == "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"


class _Stamper:
    """A real pluggy plugin with the stamping hook, registered on the process's plugin manager."""

    def __init__(self, fail: str | None = None) -> None:
        self.fail = fail
        self.seen: list[tuple[object, list[dict[str, object]]]] = []

    @hookimpl
    def commonkeep_stamp_candidates(self, store: object, candidates: list[dict[str, object]]) -> list[str]:
        self.seen.append((store, candidates))
        if self.fail:
            raise RuntimeError(self.fail)
        return [str(c["id"]) for c in candidates]


def test_stamp_from_hosts_asks_every_host_and_logs_a_failed_pass(caplog: pytest.LogCaptureFixture) -> None:
    from commonkeep.plugins import plugin_manager

    pm = plugin_manager().pm
    good, bad, worse = _Stamper(), _Stamper("transcript unreadable"), _Stamper("no session")
    for name, plugin in (("good", good), ("bad", bad), ("worse", worse)):
        pm.register(plugin, name=f"test_stamper_{name}")
    try:
        store, cands = object(), [{"id": "cand_1"}, {"id": "cand_2"}]
        with caplog.at_level("WARNING", logger="commonkeep"):
            assert stamp_from_hosts(store, cands) == ["cand_1", "cand_2"]
        assert good.seen == [(store, cands)] and bad.seen == [(store, cands)]
        [record] = [r for r in caplog.records if r.name == "commonkeep"]
        assert record.getMessage() in (
            "user_turn: a stamping pass failed: test_stamper_bad: transcript unreadable; test_stamper_worse: no session",
            "user_turn: a stamping pass failed: test_stamper_worse: no session; test_stamper_bad: transcript unreadable")
    finally:
        for name in ("good", "bad", "worse"):
            pm.unregister(name=f"test_stamper_{name}")
