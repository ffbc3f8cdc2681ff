"""``poisoning_literals``: the literals worked out ahead for every poisoning rule are the ones the
rule's pattern requires, and a rule that uses them finds exactly what its regular expression finds."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.gate import autoapply, poisoning, poisoning_literals  # noqa: F401  (autoapply: its rules)


def test_every_rule_has_its_literals_worked_out_ahead() -> None:
    computed = poisoning_literals.compute()
    missing = sorted(set(computed) - set(poisoning_literals.TABLE))
    assert not missing, f"{len(missing)} rule(s) changed: run python -m commonkeep.gate.poisoning_literals"
    if sys.version_info[:2] == poisoning_literals.PYTHON:  # another Python's parser may find other (sound) literals
        assert computed == poisoning_literals.TABLE
    for rule in poisoning.RULES:
        assert rule._asked >= poisoning._ASKS_BEFORE_NEEDLES, "a rule whose literals are known waits for nothing"


_PIECES = sorted({n for v in poisoning_literals.TABLE.values() for n in v or ()} |
                 {"ignore", "previous", "instructions", "you", "are", "now", "the", "system", "prompt", "all", "rules",
                  "From now on", "Assistant:", "<|im_start|>", "disregard", "earlier", "guidance", "tell", "user", "."})


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=14),
       st.sampled_from([" ", "", "  ", "\n", "-"]), st.booleans())
def test_a_rule_with_its_literals_finds_what_its_expression_finds(pieces: list[str], sep: str, upper: bool) -> None:
    text = sep.join(pieces)
    text = text.upper() if upper else text
    for rule in poisoning.RULES:
        rule._last = ("\x00", None)
        assert bool(rule.search(text)) == bool(rule.rx.search(text)), (rule.pattern[:80], text)
