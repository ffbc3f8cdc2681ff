"""The ``user_turn`` stamp's promises as a user depends on them (issue 28, rewritten for the request
rule of issue 35: written for the mutants of ``core/gate/user_turn.py`` the other tests let live)."""

from __future__ import annotations

import pytest

from commonkeep.gate.user_turn import (
    ORIGIN,
    RULE,
    message_digest,
    requests,
    same_clause,
    stamp,
    stamp_from_hosts,
    supported,
)
from commonkeep.hookspecs import hookimpl

ASKED = "Please remember that we deploy with make release."
NOT_ASKED = ("the person did not ask to remember exactly this (a message that is only an explicit request such as "
             "\"remember that …\", the same words up to case, punctuation and perspective)")
SAID_MORE = "the person asked to remember this, but said more since (only a request in their latest message counts)"


def test_the_stamp_records_what_was_verified_and_keeps_the_writers_origin() -> None:
    found = supported("We deploy with make release.", [ASKED])
    assert found.ok and RULE == "user_turn/3"
    out = stamp({"origin": "memory_tool", "session": "s1"}, host="hermes", stamped_by="commonkeep_hermes",
                session_id="s1", support=found, turn=3)
    assert out["origin"] == ORIGIN == "user_turn"
    assert out["write_origin"] == "memory_tool"  # what the agent's write said, kept apart
    assert out["stamped_by"] == "commonkeep_hermes"
    assert out["session"] == "s1"
    assert out["user_turn"] == {"rule": RULE, "host": "hermes", "session_id": "s1",
                                "message_sha256": message_digest(ASKED), "message_index": 0, "turn": 3}
    again = stamp(out, host="hermes", stamped_by="commonkeep_hermes", session_id="s1", support=found)
    assert again["write_origin"] == "memory_tool"  # a second stamp does not lose it
    assert "write_origin" not in stamp({}, host="omp", stamped_by="x", session_id="s", support=found)


@pytest.mark.parametrize(("statement", "reason"), [
    ("", "empty statement"),
    ("   ", "empty statement"),
    (None, "empty statement"),
    ("We deploy with make\u200brelease.", "the statement holds invisible or control characters"),
    ("We deploy with make\u202erelease.", "the statement holds invisible or control characters"),
    ("We deploy with make\x1brelease.", "the statement holds invisible or control characters"),
    ("We deploy with ｍａｋｅ release.", "the statement is not plain text (it changes under Unicode NFKC)"),
    ("We deploy with make publish.", NOT_ASKED),
])
def test_a_statement_that_cannot_be_verified_says_why(statement: str, reason: str) -> None:
    found = supported(statement, [ASKED])
    assert found.ok is False and found.reason == reason
    assert found.message is None and found.digest is None


def test_the_latest_message_is_the_one_named() -> None:
    said = [ASKED, 42, "Ok. " + ASKED + " Thanks!", None]
    found = supported("We deploy with make release.", said)  # type: ignore[arg-type]
    assert found.ok and found.message == 2 and found.digest == message_digest(said[2])  # type: ignore[arg-type]
    assert found.reason == "the person asked to remember exactly this"


def test_a_message_that_is_not_text_is_passed_over() -> None:
    found = supported("We deploy with make release.", [ASKED, 42, None])  # type: ignore[list-item]
    assert found.ok and found.message == 0


@pytest.mark.parametrize("later", [
    "Actually, we use yarn now.", "never mind", "lol", "Scratch that.", "Forget that.", "Not.", "Don't remember that.",
    "Correction: it is make ship.", "I take that back.", "Eigentlich nicht.", "En fait, non.",
])
def test_a_later_message_that_takes_it_back_withdraws_the_request(later: str) -> None:
    """Only the person's latest message counts (wave 36): whatever they said after asking, in words
    the rule knows or not, the write is no longer the one they asked for."""
    found = supported("We deploy with make release.", [ASKED, later])
    assert found.ok is False and found.reason == SAID_MORE
    assert found.message is None and found.digest is None
    assert not supported("We deploy with make release.", [ASKED, "Thanks, can you run the tests?"]).ok
    assert supported("We deploy with make release.", [later, ASKED]).ok  # only the latest counts


@pytest.mark.parametrize(("message", "clauses"), [
    ("Remember: we use pnpm.", ["we use pnpm."]),
    ("Remember:\nwe use pnpm.\nthe cache lives in /srv/c", []),    # a bare request takes one line; the next is more
    ("Remember:\n\nwe use pnpm", ["we use pnpm"]),
    ("Remember: x. Remember:", []),                                              # a bare request at the end
    ("Remember. we use pnpm", []),
    ("Remember that we use pnpm. Remember that the cache lives in /srv/c.", ["we use pnpm.", "the cache lives in /srv/c."]),
    ("Remember that we use pnpm, thanks.", ["we use pnpm."]),
    ("Remember that we use pnpm por favor", ["we use pnpm"]),
    ("/commonkeep-remember We use pnpm. The lockfile is committed.", ["We use pnpm. The lockfile is committed."]),
    ("/commonkeep-remember should we use pnpm", []),
    ("  /commonkeep-remember   we use pnpm", ["we use pnpm"]),
    ("we use pnpm /commonkeep-remember", []),
    ("Remember that pnpm", []),                                                  # says too little
    ("Remember that do not push to main.", ["do not push to main."]),            # an order, not a question
    ("Remember that do we push to main.", []),
    ("Remember that in case of fire, page ops.", []),
    ("Remember that in the web folder we use pnpm.", ["in the web folder we use pnpm."]),
    ("Remember that we use pnpm, right", []),
    ("Remember that we use pnpm?!", []),
    ("Remember that we use pnpm ?", []),
    ("Remember that the URL is https://x.example/?a=1", ["the URL is https://x.example/?a=1"]),
    ("Remember that we use pnpm, says the vendor.", []),
    ("Here is the vendor's note:\nRemember that we use pnpm.", []),              # after a line that introduces
    ("Remember that we use pnpm.\nHere is the log:\nRemember that x y.", []),     # more than requests
    ('He wrote "ok.\nRemember that we use pnpm."', []),                          # inside a quotation
    ('The "ok" tag.\nRemember that we use pnpm.', []),
    ("Remember that we use pnpm. But only on staging.", []),                    # narrowed by another sentence
    ("Remember that we use pnpm. Only for now.", []),
    ("Sam: hi\nremember that we use pnpm", []),                                  # a speaker's line
    ("Recuerda: usamos pnpm.", ["usamos pnpm."]),                                # a request shaped like one
    ("Remember, please: we use pnpm.", ["we use pnpm."]),
    ("Remember that we use pnpm, right.", []),
    ("Remember: (should we deploy on Fridays).", []),
    ("Remember:\nwe use pnpm. Remember that the cache lives in /srv/c.", ["we use pnpm.", "the cache lives in /srv/c."]),
    ('The label "ok.\nRemember that we use pnpm." stays', []),                 # inside a quotation from a line before
    ("Sure (I said so). Remember that we use pnpm.", []),                      # a sentence besides the request
    ("Thanks! Remember that we use pnpm. Ok.", ["we use pnpm."]),                # courtesies are not more
    ("Remember that Bob\u2018s script runs nightly.", ["Bob's script runs nightly."]),
    ("Remember:\n- we use pnpm", ["we use pnpm"]),                                # a bullet after a bare request
    ("Remember: Xcode builds the app.", ["Xcode builds the app."]),
    ("Recuerda que ¿desplegamos los viernes", []),                              # an opening ¿ alone asks
    ('A "b" c "d\nRemember that we use pnpm." e', []),                         # three quotes before: still inside
])
def test_which_clauses_a_message_requests(message: str, clauses: list[str]) -> None:
    assert requests(message) == clauses


@pytest.mark.parametrize(("statement", "clause", "same"), [
    ("The user prefers tabs.", "I prefer tabs", True),
    ("The user prefer tabs.", "I prefer tabs", True),
    ("The person prefers tabs.", "I prefer tabs", True),
    ("The team prefers tabs.", "I prefer tabs", False),
    ("The team uses pnpm.", "we use pnpm", True),
    ("The team carries the pager.", "we carry the pager", True),
    ("The team pushes to main.", "we push to main", True),
    ("The team passes the check.", "we pass the check", True),
    ("The user goes first.", "I go first", True),
    ("The user has access.", "I have access", True),
    ("The user had access.", "I have access", False),
    ("The user is admin.", "I am admin", True),
    ("The user was admin.", "I am admin", False),
    ("The team was on call.", "we were on call", True),
    ("The team does not deploy.", "we don't deploy", True),
    ("The team won't deploy.", "we will not deploy", True),
    ("The team can't deploy.", "we cannot deploy", True),
    ("The user's editor is vim.", "my editor is vim", True),
    ("The team's editor is vim.", "my editor is vim", False),
    ("User prefers tabs.", "I prefer tabs", True),
    ("The user asks.", "I ask", True),
    ("The team watches CI.", "we watch CI", True),
    ("The team fixes builds.", "we fix builds", True),
    ("The team buzzes ops.", "we buzz ops", True),
    ("The user flies to Berlin.", "I fly to Berlin", True),
    ("The user lies low.", "I lie low", True),
    ("The user uses it.", "I used it", False),
    ("Secrets live in env.", "secrets live in .env", False),                   # a leading dot is kept
    ("Use pnpm (not npm).", "use pnpm, not npm", True),
    ("Bob’s script runs nightly.", "Bob's script runs nightly", True),
    ("We deploy", "we deploy", True),
    ("Deploy", "deploy", False),                                               # says too little
    ("Remember: we use pnpm.", "we use pnpm", True),
])
def test_what_counts_as_the_same_clause(statement: str, clause: str, same: bool) -> None:
    assert same_clause(statement, clause) is same


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
