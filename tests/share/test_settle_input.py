"""``settle`` after a merge reads lines another machine (or a hand edit) wrote: ids, tags and
ops of the wrong JSON type name nothing and never stop the scrub of the rest (real files)."""

from __future__ import annotations

import json
from pathlib import Path

from commonkeep.share.settle import Tombs, settle
from commonkeep.store.layout import ensure_layout
from tests.share.helpers import L2, record

X = "mem_20261202000020_xxxxxxxx"
SECRET = "The vault door code lives in the blue binder on shelf three."


def test_lines_of_the_wrong_shape_are_passed_over_and_the_purged_text_still_scrubbed(tmp_path: Path) -> None:
    lay = ensure_layout(tmp_path / "r")
    root = lay.root
    (root / L2).write_text(json.dumps(record(X, SECRET)) + "\n", encoding="utf-8")
    odd = [
        {"id": "cand_odd1", "text": "unrelated", "tags": "contested", "matched_memory_ids": [{"id": X}]},
        {"id": "cand_odd2", "text": "unrelated too", "contested": {"id": [X]}},
        {"id": ["cand_odd3"], "text": SECRET},
    ]
    lay.inbox.write_text("".join(json.dumps(c) + "\n" for c in odd), encoding="utf-8")
    lay.patches_dir.mkdir(parents=True, exist_ok=True)
    (lay.patches_dir / "patch_odd.json").write_text(json.dumps({"ops": 5}), encoding="utf-8")
    (lay.patches_dir / "patch_odd2.json").write_text(
        json.dumps({"ops": [{"op": "update", "target_id": {"id": X}, "updates": {"statement": "x"}},
                            {"op": "add", "record": {"id": [X], "statement": "y"}}]}), encoding="utf-8")
    done = settle(lay, Tombs({X}, {X}))
    assert done.dropped == [f"{L2}#{X}"]
    assert SECRET not in (root / L2).read_text(encoding="utf-8")
    assert SECRET not in lay.inbox.read_text(encoding="utf-8")  # found by value in the odd candidate's line
