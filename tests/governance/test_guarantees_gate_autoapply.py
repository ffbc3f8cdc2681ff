"""The provenance gate's promises, each as a user depends on it (issue 28: written for the
mutants of ``core/governance/autoapply.py`` that the other gate tests let live).

Only a stamp set by code the model does not control lets a candidate auto-apply: a claim of
trust, an unknown host or origin, or a writer-looking candidate that an agent tool wrote counts
for nothing."""

from __future__ import annotations

from typing import Any

import pytest

from commonkeep.governance.autoapply import NOT_STAMPED, policy_blockers, stamped_trust


def _cand(**prov: Any) -> dict[str, Any]:
    return {"text": "The build uses pnpm.", "primary_trust_class": "direct_user_instruction",
            "source": {"type": "manual"}, "provenance": prov}


@pytest.mark.parametrize("prov", [
    {"stamped_by": "commonkeep_hermes", "origin": "made_up"},       # a known host, an origin it never stamps
    {"stamped_by": "commonkeep_omp", "origin": "import"},            # an origin only Hermes stamps
    {"stamped_by": "someone_else", "origin": "user_turn"},           # a host commonkeep does not have
    {"stamped_by": "", "origin": "user_turn"},
    {"origin": "user_turn"},                                         # an origin with no host
])
def test_a_stamp_from_an_unknown_host_or_origin_counts_for_nothing(prov: dict[str, Any]) -> None:
    cand = _cand(**prov)
    assert stamped_trust(cand) is None
    assert any(b.startswith(NOT_STAMPED) for b in policy_blockers(cand))


@pytest.mark.parametrize(("host", "origin"), [
    ("commonkeep_hermes", "import"), ("commonkeep_hermes", "external_edit"), ("commonkeep_hermes", "user_turn"),
    ("commonkeep_omp", "user_turn"), ("commonkeep_mcp", "user_turn"), ("commonkeep_roundtable", "user_turn"),
])
def test_each_host_stamp_is_trusted_as_the_users_own_word(host: str, origin: str) -> None:
    cand = _cand(stamped_by=host, origin=origin)
    assert stamped_trust(cand) == "direct_user_instruction"
    assert policy_blockers(cand) == []
