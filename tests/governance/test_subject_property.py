"""Property (issue 36): no sequence of review decisions — approve, batch approve, approve with an
edit, keep both, undo, reject — removes or rewrites a record whose subject differs from the
candidate's. A record leaves the records that say something (active, contested), or has its
statement changed, only by a decision on a candidate about the same subject
(``matching.subject_change``); a replace is never taken unless a person names it, which this
property never does."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from commonkeep.errors import BadInput
from commonkeep.gate.matching import subject_change
from commonkeep.reviews.review import approve, reject
from commonkeep.reviews.undo import undo
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from tests.governance.conftest import WRITER, write_candidate

# near-matches about different subjects (issue 36's own), a lossy rewrite, a value change, a contradiction
TEXTS = [
    "Hiro is the on-call contact for kazorzor this quarter.",
    "Hiro is the on-call contact for terpolvex this quarter.",
    "The staging database runs postgres 16 on port 6543.",
    "The staging database runs postgres, as before.",
    "The staging database runs postgres 16 on port 5433.",
    "The build uses uv and a lock file.",
    "Build caches are keyed on the lock file hash.",
    "The build uses uv and a lock file, and CI checks the lock.",
    "Do not use uv for the build.",
    "The staging database runs postgres.",  # says less than a record: reinforcing it never rewrites the record
]
CHOICES = [None, "add", "reinforce", "keep_both"]  # every choice but the one a person must name (replace)
SAYS = ("active", "contested")

n = st.integers(0, 4)
step = st.one_of(
    st.tuples(st.just("write"), st.integers(0, len(TEXTS) - 1)),
    st.tuples(st.just("approve"), n, st.sampled_from(CHOICES)),
    st.tuples(st.just("batch"), n, n, n),
    st.tuples(st.just("edit"), n, st.integers(0, len(TEXTS) - 1)),
    st.tuples(st.just("reject"), n),
    st.tuples(st.just("undo"), n),
)


def _pick(rows: list[str], k: int) -> str | None:
    return rows[-1 - k % len(rows)] if rows else None


def _standing(root: Path) -> dict[str, tuple[str, str]]:
    """Every record: (status, statement)."""
    return {str(r["id"]): (str(r["status"]), str(r["statement"])) for r in Store(root, warn=False).records(active_only=False)}


def _run(root: Path, s: tuple[Any, ...]) -> list[str]:
    """Run one step; the texts of the candidates it decided (as decided: an edit's text)."""
    cands = Store(root, warn=False).candidates()
    text = {str(c["id"]): str(c["text"]) for c in cands}
    new = [str(c["id"]) for c in cands if c["status"] == "new"]
    done = [str(c["id"]) for c in cands if c["status"] != "new"]
    kind = s[0]
    if kind == "write":
        write_candidate(root, TEXTS[s[1]], tags=["ops"])
        return []
    if kind == "approve" and new:
        cid = str(_pick(new, s[1]))
        approve(root, [cid], role=WRITER, choice=s[2])
        return [text[cid]]
    if kind == "batch" and new:
        ids = list(dict.fromkeys(str(_pick(new, k)) for k in s[1:]))
        approve(root, ids, role=WRITER)
        return [text[i] for i in ids]
    if kind == "edit" and new:
        cid = str(_pick(new, s[1]))
        approve(root, [cid], role=WRITER, edits={cid: TEXTS[s[2]]})
        return [TEXTS[s[2]]]
    if kind == "reject" and new:
        reject(root, [str(_pick(new, s[1]))], reason="not wanted", role=WRITER)
        return []
    if kind == "undo" and done:
        cid = str(_pick(done, s[1]))
        undo(root, [cid], role=WRITER)
        return [text[cid]]
    return []


def _check(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]], texts: list[str], s: Any) -> None:
    for rid, (status, statement) in before.items():
        if status not in SAYS:
            continue
        now = after.get(rid)
        if now is not None and now[0] in SAYS and now[1] == statement:
            continue  # still says what it said
        if s[0] == "undo":
            continue  # an undo puts back what its decision did (test_guarantees_forget_undo checks how)
        assert any(not subject_change(t, statement) for t in texts), (
            f"{s}: record {rid} ({statement!r}) was {now} after deciding {texts}")


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, min_size=3, max_size=12))
# issue 36: approving "… for terpolvex …" replaced the record "… for kazorzor …"
@example([("write", 0), ("approve", 0, None), ("write", 1), ("approve", 0, None)])
# "… postgres 16 on port 6543." became "…, as before."
@example([("write", 2), ("approve", 0, None), ("write", 3), ("batch", 0, 0, 0)])
# a batch of two that only look alike: A's record-to-be is never B's conflict
@example([("write", 5), ("write", 6), ("batch", 0, 1, 1), ("write", 8), ("write", 7), ("batch", 0, 1, 0)])
# an edit that says less than the record it reinforces: the record keeps its statement
@example([("write", 2), ("approve", 0, None), ("write", 4), ("edit", 0, 9)])
# an edit to another subject, then undone
@example([("write", 0), ("approve", 0, None), ("write", 0), ("edit", 0, 1), ("undo", 0)])
def test_no_decision_removes_or_rewrites_a_record_about_another_subject(steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory(prefix="ck-subject-prop-") as tmp:
        root = ensure_layout(Path(tmp) / "root").root
        for s in steps:
            before = _standing(root)
            texts: list[str] = []
            with contextlib.suppress(BadInput):  # a refusal (a choice needed, nothing to undo) changes nothing
                texts = _run(root, s)
            _check(before, _standing(root), texts, s)


def test_the_issue_36_near_match_is_a_new_record_and_the_old_one_stays(root: Path) -> None:
    """The reproduction: approving "… for terpolvex …" with "… for kazorzor …" in memory adds a
    record; both stand (on e82304b the kazorzor record was updated away)."""
    a = write_candidate(root, TEXTS[0], tags=["ops"])
    approve(root, [str(a["id"])], role=WRITER)
    b = write_candidate(root, TEXTS[1], tags=["ops"])
    approve(root, [str(b["id"])], role=WRITER)
    assert sorted(st_ for s_, st_ in _standing(root).values() if s_ == "active") == sorted(TEXTS[:2])


def test_a_lossy_rewrite_is_a_new_record(root: Path) -> None:
    a = write_candidate(root, TEXTS[2], tags=["ops"])
    approve(root, [str(a["id"])], role=WRITER)
    b = write_candidate(root, TEXTS[3], tags=["ops"])
    approve(root, [str(b["id"])], role=WRITER)
    assert sorted(st_ for s_, st_ in _standing(root).values() if s_ == "active") == sorted(TEXTS[2:4])


def test_a_batch_of_two_lookalikes_applies_both(root: Path) -> None:
    """issue 36: `review --approve A,B` failed with "B contradicts mem_<A's id>", a record that did
    not exist yet, and applied nothing."""
    a = write_candidate(root, TEXTS[5], tags=["build"])
    b = write_candidate(root, TEXTS[6], tags=["build"])
    approve(root, [str(a["id"]), str(b["id"])], role=WRITER)
    assert sorted(st_ for s_, st_ in _standing(root).values()) == sorted([TEXTS[5], TEXTS[6]])
    assert {s_ for s_, _ in _standing(root).values()} == {"active"}  # no contested pair
