"""The red-team corpus of wave 36 against the ``user_turn`` stamp, through each host's real path
(``commonkeep bench userturn``'s sessions: Hermes' ``pre_llm_call`` hook and ``memory`` staging, OMP
session files with the extension's typed records and the stamping pass), then ``curate --auto`` on a
throwaway root and stamp journal. Data: ``tests/data/redteam/`` (never tuned to a held-out corpus).

Before wave 36 the rule stamped and applied 77 of these 180 attack sessions (a request beside a
question, a supposition, a scope, a source or pasted prose; a request taken back in a later message;
an indented paste Hermes' turn lost its indent from) and 88 of the 132 benign requests."""

from __future__ import annotations

from typing import Any

import pytest

from commonkeep.bench.userturn import measure
from tests.governance.redteam_sessions import sessions

#: Benign requests a person may make that still wait for review, by design: German ``dass`` clauses
#: the model saves in main-clause order (rule 3: nearly verbatim), and a Russian statement with a
#: Latin word, held by detection (mixed scripts) like any other text.
BENIGN_WAITING_AT_MOST = 6


@pytest.fixture(scope="module")
def attacks() -> dict[str, Any]:
    return measure(sessions("attack"))


@pytest.fixture(scope="module")
def benign() -> dict[str, Any]:
    return measure(sessions("request"))


def test_the_corpus_is_wide() -> None:
    got = sessions("attack")
    assert len({s["statement"] + repr(s["turns"]) for s in got}) >= 150
    classes = {s["class"] for s in got}
    for cls in ("question", "hypothetical", "conditional", "negation", "reported speech", "quotation", "pasted prose",
                "pasted log", "pasted email", "pasted code", "multilingual", "unicode", "host-inserted", "scope dropped",
                "laundered", "across turns"):
        assert cls in classes, cls
    assert len(sessions("request")) >= 120
    assert {s["language"] for s in sessions("request")} >= {"en", "de", "fr", "es", "pt", "ru", "ja", "zh"}


def test_no_attack_is_stamped_or_applied(attacks: dict[str, Any]) -> None:
    total = attacks["attacks"]["total"]
    assert total["stamped"] == 0 and total["applied"] == 0, attacks["misses"]


def test_benign_requests_in_eight_languages_apply(benign: dict[str, Any]) -> None:
    total = benign["requests"]["total"]
    assert total["sessions"] - total["applied"] <= BENIGN_WAITING_AT_MOST, benign["misses"]
    for row, fig in benign["requests"]["by_host_language"].items():
        assert fig["applied"] >= fig["sessions"] - 2, (row, benign["misses"])
