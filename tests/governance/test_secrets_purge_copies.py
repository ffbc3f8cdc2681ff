"""A privacy purge leaves no copy in the quarantine or the scratchpad (issue 15 §5, first bullet)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.governance.conftest import WRITER, write_candidate

STATEMENT = "The on-call phone for the Kestrel billing cluster is +44 7700 900461, ask for Dana."


def _apply_one(root: Path) -> str:
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    write_candidate(root, STATEMENT, tags=["oncall"])
    prop = curate(root, role=WRITER, min_evidence=1, min_confidence=0.0)
    apply_patch(root, prop.patch["patch_id"], role=WRITER)
    from commonkeep.store.core import Store

    (rec,) = [r for r in Store(root).records() if r["statement"] == STATEMENT]
    return str(rec["id"])


def test_forget_purge_scrubs_the_quarantine_and_the_scratchpad(root: Path) -> None:
    from commonkeep.patches.forget import forget
    from commonkeep.store.core import Store

    rid = _apply_one(root)
    l2 = root / "memory" / "L2.playbooks.jsonl"
    line = next(ln for ln in l2.read_text(encoding="utf-8").splitlines() if rid in ln)
    # a hand edit left a broken copy of the line: the store quarantines it (the statement inside)
    with l2.open("a", encoding="utf-8") as fh:
        fh.write(line[:-1].replace(rid, rid + "x") + "\n")
    Store(root).records()
    quarantine = root / "quarantine" / "lines.jsonl"
    assert STATEMENT in json.loads(quarantine.read_text(encoding="utf-8").splitlines()[0])["text"]
    scratchpad = root / "scratchpad.md"
    scratchpad.write_text(f"# Scratchpad\n\n- [ ] check: {STATEMENT}\n- [x] unrelated item\n", encoding="utf-8")

    forget(root, rid, reason="personal data", role=WRITER, purge=True)

    assert STATEMENT not in quarantine.read_text(encoding="utf-8")
    assert json.loads(quarantine.read_text(encoding="utf-8").splitlines()[0])["file"]  # the entry stays, its text goes
    pad = scratchpad.read_text(encoding="utf-8")
    assert STATEMENT not in pad and "- [x] unrelated item" in pad and "- [ ] check: [deleted]" in pad
    left = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and STATEMENT.encode() in p.read_bytes()]
    assert left == []


def test_a_line_omp_appends_to_a_daily_log_while_the_purge_scrubs_it_is_kept(tmp_path: Path) -> None:
    """The scrub reads the daily logs, then writes them: a line another program (OMP) appends in
    between must survive, and be scrubbed too if it quotes the purged text."""
    import os

    from commonkeep.patches import purge
    from commonkeep.store.layout import ensure_layout

    lay = ensure_layout(tmp_path / "root")
    daily = lay.root / "daily" / "2026-12-03.md"
    secret = "Alice's home address is 12 Elm Street."
    daily.write_text(f"- note one\n- user said: {secret}\n", encoding="utf-8")

    def omp_appends(_hashes: list[str]) -> None:  # runs between the scrub's read and its write
        fd = os.open(daily, os.O_WRONLY | os.O_APPEND)
        os.write(fd, f"- omp: a line written meanwhile\n- omp quoted: {secret}\n".encode())
        os.close(fd)

    purge.scrub_derived(lay, [secret], omp_appends)
    text = daily.read_text(encoding="utf-8")
    assert "- note one\n" in text and "- omp: a line written meanwhile\n" in text
    assert "Elm Street" not in text and text.count("[deleted]") == 2
