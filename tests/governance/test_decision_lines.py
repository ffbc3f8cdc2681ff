"""A decision rewrites only the lines it decides (issue 23), and still repairs a file with a bad line.

Real files in a real root: candidates captured as hosts capture them, decisions made through
``review.approve`` / ``review.reject`` as the CLI and the web app make them.
"""

from __future__ import annotations

import json
from pathlib import Path

from commonkeep.reviews.review import approve, reject
from commonkeep.store.core import Store
from tests.governance.conftest import WRITER, write_candidate

AGENT = {"agent": "omp"}  # an agent's candidate waits for a person


def _pending(root: Path, n: int) -> list[str]:
    texts = ["Deploys go out on Tuesdays after the freeze.", "The staging database is rebuilt every night.",
             "Run the linters before pushing to main.", "Release notes are written in the changelog folder."]
    return [str(write_candidate(root, texts[i], provenance=AGENT)["id"]) for i in range(n)]


def _hand_formatted(root: Path, cid: str) -> bytes:
    """Rewrite ``cid``'s line as another tool would format it (spaces after ':' and ','); returns it."""
    inbox = root / "inbox" / "captured.jsonl"
    lines = inbox.read_bytes().splitlines(keepends=True)
    for i, line in enumerate(lines):
        row = json.loads(line)
        if row["id"] == cid:
            lines[i] = json.dumps(row).encode() + b"\n"
            inbox.write_bytes(b"".join(lines))
            return lines[i]
    raise AssertionError(cid)


def _status(root: Path, cid: str) -> str:
    return next(str(c["status"]) for c in Store(root, warn=False).candidates() if c["id"] == cid)


def test_a_reject_changes_only_the_rejected_line_and_leaves_the_projection(root: Path) -> None:
    a, b, c = _pending(root, 3)
    other = _hand_formatted(root, b)
    inbox = root / "inbox" / "captured.jsonl"
    before = inbox.read_bytes()
    rendered = root / "rendered" / "MEMORY.md"
    projection = rendered.read_bytes() if rendered.exists() else None
    reject(root, [a], reason="not durable", role=WRITER)
    after = inbox.read_bytes()
    assert other in after.splitlines(keepends=True)  # another tool's line keeps its bytes
    assert [x for x in after.splitlines() if a.encode() not in x] == [x for x in before.splitlines() if a.encode() not in x]
    assert _status(root, a) == "rejected" and _status(root, b) == "new" and _status(root, c) == "new"
    assert (rendered.read_bytes() if rendered.exists() else None) == projection


def test_a_bad_line_in_the_inbox_is_still_quarantined_by_a_decision(root: Path) -> None:
    a, b = _pending(root, 2)
    reject(root, [a], reason="not durable", role=WRITER)  # the clean inbox is remembered in this process
    inbox = root / "inbox" / "captured.jsonl"
    with inbox.open("ab") as fh:  # another program appends a broken line after that
        fh.write(b'{"id": "cap_broken", "text": \n')
    reject(root, [b], reason="not durable", role=WRITER)
    assert b"cap_broken" not in inbox.read_bytes()  # the full rewrite moved it out
    kept = (root / "quarantine" / "lines.jsonl").read_text()
    assert "cap_broken" in kept
    assert _status(root, b) == "rejected"


def test_an_approve_rewrites_only_the_new_records_line_and_renders_it(root: Path) -> None:
    first, second = _pending(root, 2)
    approve(root, [first], role=WRITER)
    records = root / "memory" / "L2.playbooks.jsonl"
    lines = records.read_bytes().splitlines(keepends=True)
    assert len(lines) == 1
    odd = json.dumps(json.loads(lines[0])).encode() + b"\n"  # another tool's formatting of that record
    records.write_bytes(odd)
    approve(root, [second], role=WRITER)
    now = records.read_bytes().splitlines(keepends=True)
    assert now[0] == odd and len(now) == 2
    memory = (root / "rendered" / "MEMORY.md").read_text()
    assert "Deploys go out on Tuesdays" in memory and "The staging database is rebuilt every night." in memory
    assert _status(root, first) == "patched" and _status(root, second) == "patched"
