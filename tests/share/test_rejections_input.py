"""A patch file that does not hold the shapes a patch has (from another machine, or a hand edit)
names no poisoning rejection and does not stop the others from being found (real files)."""

from __future__ import annotations

import json
from pathlib import Path

from commonkeep.share.rejections import poisoning_rejections
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout


def test_malformed_patch_files_are_passed_over_and_the_rejections_of_the_others_found(tmp_path: Path) -> None:
    root = ensure_layout(tmp_path / "r").root
    patches = Store(root).layout.patches_dir
    patches.mkdir(parents=True, exist_ok=True)
    (patches / "patch_a.json").write_text(json.dumps({"applied_ops": [{"op_id": "op_001"}], "ops": 5}), encoding="utf-8")
    (patches / "patch_b.json").write_text(json.dumps({"applied_ops": "op_001", "ops": {"op": "x"}}), encoding="utf-8")
    good = {"applied_ops": ["op_001"], "ops": [{"op_id": "op_001", "op": "reject_candidate",
                                               "candidate_id": "cand_1", "reason": "prompt injection"}]}
    (patches / "patch_c.json").write_text(json.dumps(good), encoding="utf-8")
    assert poisoning_rejections(Store(root)) == {"cand_1": "prompt injection"}
