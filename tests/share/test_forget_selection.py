"""A record deleted with plain ``forget`` no longer appears in the next plain ``handoff`` (issue 18):
the handoff reads the last selection file, which forget filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.store.test_share import WRITER, add, cli, record

RID = "mem_20261202000030_ffffffff"
KEEP = "mem_20261202000031_kkkkkkkk"


def test_a_plainly_forgotten_record_is_not_in_the_next_plain_handoff(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.recall.select import select_for_prompt

    add(root, record(RID, "The nightly build publishes to the staging bucket."))
    add(root, record(KEEP, "The nightly build runs at two in the morning."))
    select_for_prompt(root, "where does the nightly build publish")
    selected = json.loads((root / "runtime/selected_memory.json").read_text(encoding="utf-8"))
    assert RID in {r["id"] for r in selected} and KEEP in {r["id"] for r in selected}
    code, _, err = cli(capsys, "forget", RID, "--reason", "invalid", "--root", str(root), "--role", WRITER)
    assert code == 0, err
    code, out, err = cli(capsys, "handoff", "--root", str(root))
    assert code == 0, err
    snap = json.loads(Path(out.strip()).read_text(encoding="utf-8"))
    brief = " ".join(snap["selected_memory_brief"])
    assert RID not in brief and "staging bucket" not in brief
    assert KEEP in brief  # the rest of the selection stays
