"""A decision through ``serve`` answers once the canonical files are written; the projection
(``rendered/``) and the search index follow right after the response (``after_apply.catch_up``).

What a user or another agent depends on: a process that dies between the two loses nothing (the
record is stored, a search finds it, the next ``serve`` renders it), a server catches both up by
itself, and a record another process changed between two decisions of the server is seen by the
second one (the server keeps the records it matches against in memory)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from commonkeep.store.core import Store
from commonkeep.web import actions
from tests.web import seed as data

AUDIT = "The audit log is rotated every Sunday night."


def _memory_md(root: Path) -> str:
    return (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")


def _index_current(root: Path) -> bool:
    from commonkeep.recall.search import index

    conn = sqlite3.connect(index.recall_db_path(root))
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()
    finally:
        conn.close()
    return row is not None and row[0] == index.fingerprint(root)


def test_a_process_that_dies_before_the_catch_up_loses_nothing(root: Path, serve: Any) -> None:
    from commonkeep.recall.search.hybrid import search
    from commonkeep.recall.search.sync import sync_root

    sync_root(root, embed=False)  # the index as it was before the decision
    cid = data.add(Store(root), AUDIT, "omp", primary_trust_class="direct_user_instruction")
    code = ("import os\n"
            "from commonkeep.patches.after_apply import derived_deferred\n"
            "from commonkeep.reviews.review import approve\n"
            "with derived_deferred():\n"
            f"    approve({str(root)!r}, [{cid!r}], role={data.WRITER!r})\n"
            "os._exit(0)  # dies right after the decision, before anything caught up\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)
    assert AUDIT in [r["statement"] for r in Store(root).records()]  # the decision is stored
    assert AUDIT not in _memory_md(root)  # the projection was left to the catch-up (which never ran)
    assert not _index_current(root)
    hits = search(root, "audit log rotated Sunday", mode="keyword").results  # the search syncs the index itself
    assert AUDIT in [h.statement for h in hits]
    running = serve(role=data.WRITER)  # a new server renders what the dead one owed
    assert running.web.queue.settle(timeout=30)
    assert AUDIT in _memory_md(root)


def test_the_server_catches_up_the_projection_and_index_after_a_decision(root: Path, serve: Any) -> None:
    from commonkeep.recall.search.sync import sync_root

    sync_root(root, embed=False)
    cid = data.add(Store(root), AUDIT, "omp", primary_trust_class="direct_user_instruction")
    running = serve(role=data.WRITER)
    queue = running.web.queue
    assert queue.settle(timeout=30)
    said = actions.decide(root, data.WRITER, "approve", [cid], queue=queue)
    assert said.startswith("approved")
    assert queue.settle(timeout=30)
    assert AUDIT in _memory_md(root)
    assert _index_current(root)  # synced by the server, not by a search
    assert queue.catch_up.errors == []


def test_a_record_another_process_wrote_between_two_decisions_is_seen(root: Path, serve: Any) -> None:
    store = Store(root)
    first = data.add(store, AUDIT, "omp", primary_trust_class="direct_user_instruction")
    again = data.add(store, AUDIT, "hermes", primary_trust_class="direct_user_instruction")
    other = data.add(store, "The staging database is refreshed on Mondays.", "omp",
                     primary_trust_class="direct_user_instruction")
    running = serve(role=data.WRITER)
    queue = running.web.queue
    actions.decide(root, data.WRITER, "approve", [other], queue=queue)  # the server's records are cached now
    # another process approves the first copy: the record file changes behind the server's back
    done = subprocess.run([sys.executable, "-m", "commonkeep.cli", "review", "--root", str(root), "--role", data.WRITER,
                           "--approve", first], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    item = queue.item(again)
    assert item is not None and item.default_choice == "reinforce"  # matched against the record just written
    said = actions.decide(root, data.WRITER, "approve", [again], queue=queue)
    assert said.startswith("approved")
    active = [r for r in Store(root).records() if r["statement"] == AUDIT]
    assert len(active) == 1  # reinforced, not a second copy
    assert any(e.get("ref") for e in active[0]["evidence"])
    assert queue.settle(timeout=30)
    assert _memory_md(root).count(AUDIT) == 1
