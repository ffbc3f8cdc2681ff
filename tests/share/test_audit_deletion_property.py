"""Property: whatever the interleaving of write / approve / update / forget (audit-preserving or
privacy purge) / sync on two or three clones, and wherever syncs are killed, once every clone has
synced again: every record deleted audit-preserving while it had a line keeps exactly one line,
``status: "deleted"``, the same bytes on every clone and in the remote's HEAD; a purged record
keeps none; the record files are the same on every clone. Real git, real files, real processes;
bounded (a few examples of a dozen steps)."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import commonkeep.share.sync as share_sync
from commonkeep.errors import CommonkeepError
from tests.share.helpers import L2, WRITER, git
from tests.share.test_purge_property import PRELUDE, World, _apply, _world, kills


def _forget(w: World, m: Path, k: int, purge: bool, deleted: dict[str, set[str]]) -> None:
    from commonkeep.patches.forget import forget
    from commonkeep.store.core import Store

    live = sorted(str(r["id"]) for r in Store(m, warn=False).records() if r.get("status") == "active")
    if not live:
        return
    rid = live[k % len(live)]
    with contextlib.suppress(CommonkeepError):
        forget(m, rid, reason="privacy_sensitive" if purge else "invalid", role=WRITER, purge=purge)
        deleted.setdefault(rid, set()).add("purge" if purge else "audit")
        if purge:
            w.purged.add(rid)


def _lines(data: bytes, rid: str) -> list[bytes]:
    return [ln for ln in data.split(b"\n") if ln.strip() and f'"id":"{rid}"'.encode() in ln]


ops = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("approve"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("update"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("forget"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("purge"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("sync"), st.integers(0, 2), st.integers(0, 9), kills),
)


@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(n=st.integers(2, 3), steps=st.lists(ops, min_size=6, max_size=12))
def test_an_audit_deletion_keeps_one_line_on_every_clone_whatever_the_interleaving(
        n: int, steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory(prefix="ck-share-audit-") as tmp:
        w = _world(Path(tmp), n)
        deleted: dict[str, set[str]] = {}
        history = [*PRELUDE, ("forget", 1, 0), *steps]
        for op in history:
            if op[0] in ("forget", "purge"):
                _forget(w, w.clones[op[1] % len(w.clones)], op[2], op[0] == "purge", deleted)
            else:
                _apply(w, op)
        for m in [*w.clones, *w.clones]:  # every clone syncs again, twice round, nothing killed
            share_sync.sync(m, role=WRITER)
        assert deleted, history
        files = {(m / L2).read_bytes() for m in w.clones}
        assert len(files) == 1, history  # the same record file on every clone
        [data] = files
        assert data == git(w.remote, "show", f"HEAD:{L2}").encode("utf-8")
        for rid, how in deleted.items():
            kept = _lines(data, rid)
            if "purge" in how:
                assert kept == [], (history, rid)
            else:
                assert len(kept) == 1 and json.loads(kept[0])["status"] == "deleted", (history, rid, kept)
