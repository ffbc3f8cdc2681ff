"""A hand-broken line holding a secret is quarantined without it (issue 15 §4, hand edits).

A bad line in a canonical file is copied to ``quarantine/`` and left out by the next rewrite, so
the quarantine would be the one place the secret lives on."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.bench import secrets_corpus as corpus
from tests.governance.conftest import WRITER, write_candidate
from tests.governance.test_secrets_e2e import leaks


def test_quarantined_lines_and_spilled_lines_hold_no_secret(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store import jsonl
    from commonkeep.store.core import Store

    items = [i for i in corpus.planted(40, seed=31) if len(i.fields) == 1]
    l2 = root / "memory" / "L2.playbooks.jsonl"
    with l2.open("a", encoding="utf-8") as fh:
        for item in items[:-1]:  # hand edits that broke the JSON
            fh.write('{"id": "mem_20261202120000_hand", "statement": "' + item.fields[0].replace("\n", " ") + '"\n')
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 4096)  # a long line is spilled to a file of its own
    with l2.open("a", encoding="utf-8") as fh:
        fh.write('{"statement": "' + "x" * 5000 + " " + items[-1].fields[0].replace("\n", " ") + '"\n')
    Store(root).records()
    write_candidate(root, "Run the linters before every commit.")  # a rewrite leaves the bad lines out
    prop = curate(root, role=WRITER, min_evidence=1, min_confidence=0.0)
    apply_patch(root, prop.patch["patch_id"], role=WRITER)

    quarantine = (root / "quarantine" / "lines.jsonl").read_text(encoding="utf-8")
    assert quarantine.count("\n") == len(items) and "[REDACTED:" in quarantine
    assert list((root / "quarantine").glob("line-*.txt"))
    assert leaks(root, items) == []
