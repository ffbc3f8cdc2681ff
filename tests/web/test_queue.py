"""The inbox cache behind the pages: appended candidates are read from the tail only, anything else
(a decision rewriting the file, a torn or invalid line, an edit in place) is read whole, as Store reads it."""

from __future__ import annotations

import os
from pathlib import Path

from commonkeep.reviews.review import reject
from commonkeep.store.core import Store
from commonkeep.web.filters import Filters
from commonkeep.web.queue import Queue
from tests.web import seed as data


def _texts(q: Queue, status: str = "all") -> list[str]:
    return [str(c["text"]) for c in q.page(Filters(status=status), page_size=1000).items]


def test_appends_rewrites_and_bad_lines_are_all_seen(root: Path) -> None:
    q = Queue(root)
    before = _texts(q)
    inbox = root / "inbox" / "captured.jsonl"
    ino = inbox.stat().st_ino
    cid = data.add(Store(root), "The release train leaves on Tuesdays.", "omp", tags=["release"])
    assert inbox.stat().st_ino == ino  # an append keeps the file
    assert _texts(q) == [*before, "The release train leaves on Tuesdays."]
    assert "release" in q.page(Filters()).tags and "omp" in q.page(Filters()).agents
    # a decision rewrites the inbox (a new file): read whole, the status is current
    reject(root, [cid], reason="not durable", role=data.WRITER)
    assert [c["status"] for c in q.page(Filters(status="all"), page_size=1000).items if c["id"] == cid] == ["rejected"]
    # a torn line (a writer mid-append) is not taken as a candidate; once whole, it is
    line = Store(root).candidates()[0]
    with inbox.open("ab") as fh:
        fh.write(b'{"id": "cap_torn", "created_at": "2026-12-01T00:00:00.000Z", "text": "half')
    assert "half" not in " ".join(_texts(q))
    with inbox.open("ab") as fh:
        fh.write(b' written", "status": "new", "source": {"type": "manual", "ref": "x"}, "tags": [], "evidence_refs": ["x"]}\n')
    assert "half written" in _texts(q)
    # an invalid line appended: the whole file is read through Store (which reports and quarantines it)
    with inbox.open("ab") as fh:
        fh.write(b'{"id": 7}\n')
    assert len(_texts(q)) == len(before) + 2
    assert (root / "quarantine").is_dir()
    # an edit in place that keeps the file and grows it is not mistaken for an append
    raw = inbox.read_bytes()
    first = line["text"].encode()
    inbox.write_bytes(raw.replace(first, b"Edited in place: " + first, 1))
    assert "Edited in place: " + str(line["text"]) in _texts(q)


def test_the_stamp_changes_when_a_patch_is_written_or_rewritten(root: Path) -> None:
    """The live update's stamp sees patches by their folder: a decision's new patch file and a
    patch file rewritten in place by ``write_patch`` (as apply does) each change it."""
    import json

    from commonkeep.patches.patch import write_patch
    from commonkeep.reviews.review import approve
    from commonkeep.store.layout import Layout
    from commonkeep.web.fingerprint import stamp

    cid = data.add(Store(root), "Deploys go out from the main branch only.", "omp")
    first = stamp(root)
    assert stamp(root) == first  # reading changes nothing
    res = approve(root, [cid], role=data.WRITER)
    decided = stamp(root)
    assert decided != first
    lay = Layout(root)
    patch = json.loads((lay.patches_dir / f"{res.patch['patch_id']}.json").read_text(encoding="utf-8"))
    patch["summary"] = "edited"
    write_patch(lay, patch)
    assert stamp(root) != decided


def test_a_patch_is_found_by_its_own_file_or_by_the_id_it_carries(root: Path) -> None:
    """The patch page reads ``patches/<id>.json`` directly; a file named otherwise is still found by
    its ``patch_id``, a broken one is shown with its problem, and a path is never read."""
    import json

    from commonkeep.web.views import patch_by_id

    patches = root / "patches"
    (patches / "patch_own.json").write_text(json.dumps({"patch_id": "patch_own", "status": "proposed", "ops": []}))
    (patches / "renamed.json").write_text(json.dumps({"patch_id": "patch_moved", "status": "proposed", "ops": []}))
    (patches / "patch_broken.json").write_text("{not json")
    assert (patch_by_id(root, "patch_own") or {}).get("status") == "proposed"
    assert (patch_by_id(root, "patch_moved") or {}).get("patch_id") == "patch_moved"
    assert (patch_by_id(root, "patch_broken") or {}).get("status") == "problem"
    (root / "secret.json").write_text(json.dumps({"patch_id": "../secret", "ops": []}))
    assert patch_by_id(root, "../secret") is None and patch_by_id(root, "no_such") is None


def test_the_stamp_is_the_same_in_another_process(root: Path) -> None:
    """A page stamped by one ``serve`` process is current for the next one (a restart, or a second
    server on the same root) while nothing changed: ``hash()`` of a str differs per process."""
    import subprocess
    import sys

    from commonkeep.web.fingerprint import stamp

    code = "import sys; from commonkeep.web.queue import stamp; print(stamp(sys.argv[1]))"
    others = {
        subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
        for seed in ("1", "2")
    }
    assert others == {stamp(root)}


def test_a_decision_through_the_server_updates_the_queue_in_place(root: Path) -> None:
    """Approving or rejecting through the server drops the decided candidate from the computed queue
    and leaves the queue current: no full recompute follows a decision (issue 23)."""
    from commonkeep.web import actions

    ids = data.seed(root)
    q = Queue(root)
    assert q.refresh(wait=True)
    actions.decide(root, data.WRITER, "reject", [ids["reject"]], reason="not durable")  # through Queue.live(root)
    actions.decide(root, data.WRITER, "approve", [ids["batch0"]])
    assert q.is_current() and q._computing is None  # nothing to recompute
    pending = {str(c["id"]) for c in q.page(Filters(), page_size=1000).items}
    assert ids["reject"] not in pending and ids["batch0"] not in pending and ids["batch1"] in pending
    assert {i.candidate["id"] for i in q.items()} == pending
    # the duplicate is reinforced by default: its page says what approving does
    dup = q.item(ids["duplicate"])
    assert dup is not None and dup.default_choice == "reinforce" and [o["op"] for o in dup.ops] == ["update"]
    # a decision made elsewhere (the CLI) is noticed: the queue is no longer current
    reject(root, [ids["batch1"]], reason="not durable", role=data.WRITER)
    assert not q.is_current()


def test_a_candidate_written_seconds_ago_opens_without_a_recompute(root: Path) -> None:
    ids = data.seed(root)
    q = Queue(root)
    assert q.refresh(wait=True)
    cid = data.add(Store(root), "The staging host is rebuilt every Monday.", "omp", tags=["ops"])
    item = q.item(cid)
    assert item is not None and item.choices == ["add"] and [o["op"] for o in item.ops] == ["add"]
    assert q._computing is None  # computed for that candidate alone, no queue recompute started
    assert q.item(ids["reject"]) is not None and q.item("cap_unknown") is None


def test_the_first_page_does_not_wait_for_the_first_queue(root: Path) -> None:
    data.seed(root)
    q = Queue(root)  # nothing computed yet
    page = q.page(Filters(), page_size=1000)
    assert page.refreshing and page.total == len(Store(root).candidates(status="new"))
    assert not q.wait_ready(0)
