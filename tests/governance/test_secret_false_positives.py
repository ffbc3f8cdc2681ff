"""Benign text the secret gate destroys today (found while mutation-testing it, issue 28).

Each is marked ``xfail(strict=True)``: it fails now, and the day the gate keeps it, the test
passes and pytest says so, so the marker comes off and it guards the fix.
"""

from __future__ import annotations

import pytest

from commonkeep.governance.secrets import redact
from commonkeep.store.candidates import new_candidate


@pytest.mark.xfail(strict=True, reason="the high-entropy rule takes identifiers of acronyms and words for random tokens")
@pytest.mark.parametrize("name", ["HTTPSConnectionPoolV2", "MySQLReplicaForEUWest", "getHTTPResponseCodeFromURL",
                                  "IAMRoleForEC2InstanceV2", "OAuth2PKCEFlowForSPAs", "TLSv13CipherSuiteAES256"])
def test_an_identifier_in_prose_is_kept(name: str) -> None:
    text = f"the pool is configured in {name} since the last release"
    assert redact(text).text == text


def test_two_tags_of_a_word_and_a_number_are_kept() -> None:
    found: list[str] = []
    cand = new_candidate("The build image moved to the new base.", tags=["python3", "ubuntu2204"], findings=found)
    assert (cand["tags"], found) == (["python3", "ubuntu2204"], [])
