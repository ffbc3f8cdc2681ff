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


def test_a_record_deprecated_by_a_patch_is_not_in_the_next_plain_handoff_either(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The handoff lists only records still live, whatever changed them since the selection."""
    from commonkeep.patches.patch import apply_patch
    from commonkeep.recall.select import select_for_prompt
    from tests.share.helpers import L2, manual_patch

    add(root, record(RID, "The nightly build publishes to the staging bucket."))
    add(root, record(KEEP, "The nightly build runs at two in the morning."))
    select_for_prompt(root, "where does the nightly build publish")
    res = apply_patch(root, manual_patch("deprec", {"op": "deprecate", "target": L2, "target_id": RID,
                                                    "reason": "the bucket moved"}), role=WRITER)
    assert res.applied == ["op_001"], res.skipped
    code, out, err = cli(capsys, "handoff", "--root", str(root))
    assert code == 0, err
    brief = " ".join(json.loads(Path(out.strip()).read_text(encoding="utf-8"))["selected_memory_brief"])
    assert RID not in brief and KEEP in brief


def test_a_purge_scrubs_earlier_versions_of_the_record_from_local_copies(root: Path) -> None:
    """The runtime files quote the statement as it was when selected; an update changed it since.
    The purge must scrub every version this root holds, not only the last (the property test of
    sharing found this: a clone that edits and then purges)."""
    from commonkeep.gate.capture import capture
    from commonkeep.patches.forget import forget
    from commonkeep.patches.patch import apply_patch
    from commonkeep.recall.select import select_for_prompt
    from commonkeep.reviews.review import approve
    from commonkeep.store.ids import memory_id_for
    from tests.share.helpers import holders, manual_patch

    first = "Alice's home address is 12 Elm Street."
    later = "Alice's home address is 14 Elm Street, flat 3."
    cid = str(capture(root, first, evidence_refs=["chat:1", "chat:2"]).candidate["id"])
    approve(root, [cid], role=WRITER)  # the approving patch and the candidate hold the first version
    rid = memory_id_for(cid)
    select_for_prompt(root, "what is Alice's home address")
    (root / "daily").mkdir(exist_ok=True)
    (root / "daily/2026-12-02.md").write_text(f"# 2026-12-02\n- noted: {first}\n", encoding="utf-8")
    apply_patch(root, manual_patch("upd001", {"op": "update", "target": "memory/L2.playbooks.jsonl", "target_id": rid,
                                              "updates": {"statement": later}}), role=WRITER)
    assert first in (root / "runtime/context.md").read_text(encoding="utf-8")
    forget(root, rid, reason="privacy_sensitive", role=WRITER, purge=True)
    assert holders(root, first, later) == []
    from commonkeep.recall.search.hybrid import search

    assert search(root, "Elm Street", "keyword", 5).results == []
    purge_patch = max((root / "patches").glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert json.loads(purge_patch.read_text(encoding="utf-8")).get("scrubbed_lines")  # the daily line, by hash
