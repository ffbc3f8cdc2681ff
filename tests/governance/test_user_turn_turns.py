"""Dropping a word may turn a person's sentence around without any negation: "avoid pushing to main"
is not "push to main". The ``user_turn`` rule keeps such words like negations (``TURNS``)."""

from __future__ import annotations

import pytest

from commonkeep.gate.user_turn import supported


@pytest.mark.parametrize(("statement", "said"), [
    ("Push directly to main.", "Please avoid pushing directly to main."),
    ("Use npm.", "Remember: use pnpm instead of npm."),
    ("Use npm in the web folder.", "Use pnpm rather than npm in the web folder."),
    ("Prefer spaces.", "Prefer tabs over spaces."),
    ("We deploy on Fridays.", "We used to deploy on Fridays."),
    ("We deploy on Fridays.", "We stopped deploying on Fridays."),
    ("We deploy on Fridays.", "It is false that we deploy on Fridays."),
    ("We deploy on Fridays.", "Maybe we deploy on Fridays."),
    ("Page the ops channel.", "When the build is red, page the ops channel."),
    ("Run the migrations by hand.", "Forget that we run the migrations by hand."),
])
def test_dropping_a_word_that_turns_the_sentence_around_is_not_supported(statement: str, said: str) -> None:
    assert not supported(statement, [said]).ok


@pytest.mark.parametrize(("statement", "said"), [
    ("Avoid pushing directly to main.", "Please avoid pushing directly to main."),
    ("Use pnpm instead of npm.", "Remember: use pnpm instead of npm."),
    ("When the build is red, page the ops channel.", "FYI when the build is red, page the ops channel."),
    ("Use pnpm.", "Use pnpm in the web folder."),  # a dropped place, no turning word: still the person's
])
def test_keeping_the_turning_word_is_supported(statement: str, said: str) -> None:
    assert supported(statement, [said]).ok
