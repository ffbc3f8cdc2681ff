"""Property: whatever the interleaving of write / approve / update / forget --purge / sync on two
or three clones, and wherever syncs are killed (SIGKILL of a separate process, or an exception
raised at one of sync's steps, or SIGKILL from inside the merge driver), once every clone has
synced again no purged statement is left in
any clone's working tree or in the remote's HEAD. Real git, real files, real processes; bounded
(a few examples of a dozen steps) to stay well under a minute and a half."""

from __future__ import annotations

import contextlib
import itertools
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import commonkeep.share.sync as share_sync
from commonkeep.errors import CommonkeepError
from tests.share.helpers import (
    L2,
    WRITER,
    clone,
    git,
    holders,
    manual_patch,
    remote_holders,
    run_sync_process,
    sync_killed,
)

STEPS = ("recovering", "committed", "fetched", "merged", "settled", "merge_committed", "pushed")
COLOURS = ("amber", "cobalt", "crimson", "jade", "ochre", "violet", "teal", "umber")


class Killed(Exception):
    pass


@dataclass
class World:
    remote: Path
    clones: list[Path]
    texts: dict[str, set[str]] = field(default_factory=dict)  # record id -> every statement it had anywhere
    purged: set[str] = field(default_factory=set)
    counter: itertools.count[int] = field(default_factory=itertools.count)

    def fresh(self) -> str:
        n = next(self.counter)
        return f"The {COLOURS[n % len(COLOURS)]} team convention number {n:03d} is to tag releases on Fridays."


def _world(base: Path, n: int) -> World:
    from commonkeep.share.setup import init
    from commonkeep.store.layout import ensure_layout

    remote = base / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    first = ensure_layout(base / "m0").root
    init(first, remote_url=str(remote))
    share_sync.sync(first, role=WRITER)
    return World(remote, [first, *(clone(remote, base / f"m{i}") for i in range(1, n))])


def _sync(root: Path, kill: tuple[str, str] | None) -> None:
    if kill is None:
        share_sync.sync(root, role=WRITER)
    elif kill[0] == "sigkill":
        sync_killed(root, kill[1])
    elif kill[0] == "driver":  # SIGKILL of the whole sync from inside the merge driver, if it runs
        key = "merge.commonkeep-jsonl.driver"
        real = git(root, "config", "--get", key).strip()
        git(root, "config", key, f"{shlex.quote(sys.executable)} -m commonkeep.share.merge %O %A %B %P; kill -9 0")
        try:
            killed = run_sync_process(root).returncode in (-9, 137)
            event("sync killed inside the merge driver" if killed else "merge driver not reached")
        finally:
            git(root, "config", key, real)
    else:
        def boom(step: str, at: str = kill[1]) -> None:
            if step == at:
                raise Killed(step)

        share_sync.checkpoint = boom
        try:
            share_sync.sync(root, role=WRITER)
        except Killed:
            pass
        finally:
            share_sync.checkpoint = _noop


def _noop(step: str) -> None:
    return None


def _apply(w: World, op: tuple[Any, ...]) -> None:
    from commonkeep.gate.capture import capture
    from commonkeep.patches.forget import forget
    from commonkeep.patches.patch import apply_patch
    from commonkeep.reviews.review import approve
    from commonkeep.store.core import Store
    from commonkeep.store.ids import memory_id_for

    kind, m, k = op[0], w.clones[op[1] % len(w.clones)], op[2]
    if kind == "sync":
        _sync(m, op[3])
        return
    store = Store(m, warn=False)
    if kind == "select":  # this machine's own copies: runtime/context.md, selected_memory.json
        from commonkeep.recall.select import select_for_prompt

        select_for_prompt(m, "which team convention applies to releases")
        return
    if kind == "write":
        text = w.fresh()
        cid = str(capture(m, text, evidence_refs=["chat:1", "chat:2"]).candidate["id"])
        w.texts.setdefault(memory_id_for(cid), set()).add(text)
        return
    if kind == "approve":
        new = sorted(str(c["id"]) for c in store.candidates(status="new") if "contested" not in (c.get("tags") or []))
        if new:
            with contextlib.suppress(CommonkeepError):  # e.g. its record was deleted meanwhile: refused
                approve(m, [new[k % len(new)]], role=WRITER)
        return
    live = sorted(str(r["id"]) for r in store.records() if r.get("status") == "active")
    if not live:
        return
    rid = live[k % len(live)]
    if kind == "update":
        text = w.fresh()
        w.texts.setdefault(rid, set()).add(text)
        apply_patch(m, manual_patch(f"u{next(w.counter):05d}", {"op": "update", "target": L2, "target_id": rid,
                                                                "updates": {"statement": text}}), role=WRITER)
    elif kind == "purge":
        forget(m, rid, reason="privacy_sensitive", role=WRITER, purge=True)
        w.purged.add(rid)


kills = st.one_of(st.none(), st.tuples(st.sampled_from(["sigkill", "exception"]), st.sampled_from(STEPS)),
                 st.just(("driver", "")))
ops = st.one_of(
    st.tuples(st.just("write"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("approve"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("update"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("purge"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("select"), st.integers(0, 2), st.integers(0, 9)),
    st.tuples(st.just("sync"), st.integers(0, 2), st.integers(0, 9), kills),
)
# every history starts with a record on two machines, so a purge always has something to meet
PRELUDE = [("write", 0, 0), ("approve", 0, 0), ("sync", 0, 0, None), ("sync", 1, 0, None), ("select", 0, 0)]


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(n=st.integers(2, 3), steps=st.lists(ops, min_size=6, max_size=12))
def test_no_purged_statement_survives_any_interleaving_of_syncs_and_kills(
        n: int, steps: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory(prefix="ck-share-prop-") as tmp:
        w = _world(Path(tmp), n)
        history = [*PRELUDE, ("purge", 1, 0), *steps]
        for op in history:
            _apply(w, op)
        for m in [*w.clones, *w.clones]:  # every clone syncs again, twice round, nothing killed
            share_sync.sync(m, role=WRITER)
        gone = sorted({t for rid in w.purged for t in w.texts.get(rid, ())})
        assert gone, history
        left = remote_holders(w.remote, *gone)
        for m in w.clones:
            left += [f"{m.name}/{x}" for x in holders(m, *gone)]
        assert left == [], (history, left)
