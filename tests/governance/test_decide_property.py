"""Property: no sequence of review decisions, undos, curations and applies of older (stale) patch ops
ever leaves two records with the same statement standing (active or contested; issue 23)."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from commonkeep.errors import BadInput
from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.patches.waiting import record_key
from commonkeep.reviews.review import approve, reject
from commonkeep.reviews.undo import undo
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from tests.governance.conftest import WRITER, write_candidate

TEXTS = [
    "Use tabs for indentation in Makefiles.",
    "use  tabs for indentation in makefiles",  # the same statement, spelled a little differently
    "Do not use tabs for indentation in Makefiles.",
    "The maximum line length is 120 characters.",
]
CHOICES = [None, "add", "reinforce", "replace", "keep_both"]

n = st.integers(0, 3)  # small: the newest candidates and patches are picked most (see _pick)
step = st.one_of(
    st.tuples(st.just("write"), st.integers(0, len(TEXTS) - 1)),
    st.tuples(st.just("curate"), st.just(0)),
    st.tuples(st.just("approve"), n, st.sampled_from(CHOICES)),
    st.tuples(st.just("batch"), n, n),
    st.tuples(st.just("reject"), n),
    st.tuples(st.just("undo"), n),
    st.tuples(st.just("apply_old"), n, n),
)


def _pick(rows: list[Any], n: int) -> Any:
    return rows[-1 - n % len(rows)] if rows else None  # the newest first


def _active_keys(root: Path) -> list[str]:
    return [record_key(r) for r in Store(root, warn=False).records(active_only=False) if r["status"] in ("active", "contested")]


def _run(root: Path, s: tuple[Any, ...]) -> None:
    store = Store(root, warn=False)
    cands = store.candidates()
    ids = [str(c["id"]) for c in cands]
    new = [str(c["id"]) for c in cands if c["status"] == "new"]
    kind = s[0]
    if kind == "write":
        write_candidate(root, TEXTS[s[1]], tags=["style"])
    elif kind == "curate":
        curate(root, role=WRITER)
    elif kind == "approve" and new:
        approve(root, [_pick(new, s[1])], role=WRITER, choice=s[2])
    elif kind == "batch" and new:
        approve(root, list(dict.fromkeys([_pick(new, s[1]), _pick(new, s[2])])), role=WRITER)
    elif kind == "reject" and new:
        reject(root, [_pick(new, s[1])], reason="not wanted", role=WRITER)
    elif kind == "undo" and ids:
        undo(root, [_pick(ids, s[1])], role=WRITER)
    elif kind == "apply_old":
        patches = [p for p in sorted((root / "patches").glob("*.json")) if '"proposed"' in p.read_text()]
        path = _pick(patches, s[1])
        if path is None:
            return
        doc = json.loads(path.read_text())
        decided = {str(c["id"]) for c in cands if c["status"] != "new"}
        left = [o for o in doc["ops"] if o["op_id"] not in (doc.get("applied_ops") or [])]
        stale = [o["op_id"] for o in left if o.get("candidate_id") in decided]  # what issue 23 saw make a duplicate
        op = _pick(stale or [o["op_id"] for o in left], s[2])
        if op is not None and doc["status"] != "applied":
            apply_patch(root, doc["patch_id"], role=WRITER, op_ids=[op])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(step, min_size=4, max_size=16))
# issue 23: a candidate approved in the inbox, then its op applied from the older proposed patch
@example([("write", 0), ("curate", 0), ("write", 1), ("approve", 0, None), ("approve", 0, None), ("apply_old", 0, 0)])
# a statement approved again while a contested record says it, then the contest undone: two copies
@example([("write", 2), ("write", 0), ("write", 0), ("approve", 0, None), ("approve", 1, "keep_both"), ("approve", 0, None),
          ("undo", 2)])
# the same statement approved from another candidate while the first one's patch still waits
@example([("write", 0), ("curate", 0), ("write", 1), ("approve", 0, None), ("apply_old", 0, 0)])
def test_no_sequence_of_decisions_and_stale_applies_makes_a_duplicate(steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory(prefix="ck-decide-prop-") as tmp:
        root = ensure_layout(Path(tmp) / "root").root
        for s in steps:
            with contextlib.suppress(BadInput):  # a refusal (a choice needed, nothing to undo) changes nothing
                _run(root, s)
            keys = _active_keys(root)
            assert len(keys) == len(set(keys)), (s, keys)
