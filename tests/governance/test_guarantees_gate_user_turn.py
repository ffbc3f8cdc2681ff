"""The ``user_turn`` stamp's promises as a user depends on them (issue 28: written for the
mutants of ``core/governance/user_turn.py`` that the other gate tests let live)."""

from __future__ import annotations

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
