"""``matching.slug`` kept per value gives the contract's slug of every value (§2.1)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.gate.matching import slug


def _contract_slug(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-") or "project"


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=300) | st.sampled_from(["legacy", "global", "Ops", "K8s", "İstanbul", "ß", "---", "", "a" * 300]))
def test_slug_is_the_contracts(value: str) -> None:
    assert slug(value) == _contract_slug(value)
    assert slug(value) == _contract_slug(value)  # asked again: from the cache
