"""The review pages over HTTP (issue 23): what each page shows and how each decision answers —
the view kept and the next candidate opened, a second question before a risky approval, outcomes
of decided candidates, diffs that read as diffs, applied patches with their old statement, stale
ops not offered, tombstone reasons, plain errors, the favicon, and refusals that are 404/400, not 500."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx

from commonkeep.patches.forget import forget
from commonkeep.patches.patch import apply_patch
from commonkeep.reviews.review import reject
from commonkeep.store.core import Store
from tests.web import seed as data


def _client(server: Any) -> tuple[httpx.Client, str]:
    c = httpx.Client(follow_redirects=True, timeout=30)
    page = c.get(server.token_url)
    assert page.status_code == 200
    found = re.search(r'name="csrf" content="([^"]+)"', page.text)
    assert found
    return c, found.group(1)


def _ids(root: Path) -> dict[str, str]:
    return {str(c["text"]): str(c["id"]) for c in Store(root).candidates()}


def _status(root: Path, cid: str) -> str:
    return str(next(c["status"] for c in Store(root).candidates() if c["id"] == cid))


def test_after_a_decision_the_next_candidate_of_the_same_view_opens(root: Path, serve: Any) -> None:
    server = serve()
    c, csrf = _client(server)
    ids = _ids(root)
    view = "?agent=omp&sort=newest"
    listed = re.findall(r'data-id="(cap_\w+)"', c.get(f"{server.url}/inbox{view}").text)
    assert listed and all(i in ids.values() for i in listed)
    omp = [cid for text, cid in ids.items() if cid in listed]
    assert len(omp) == 4 and listed == sorted(listed, key=lambda i: next(
        x["created_at"] for x in Store(root).candidates() if x["id"] == i), reverse=True)
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "reject", "reason": "not durable", "id": listed[0],
                                             "from": "candidate", "view": view})
    where = urlparse(str(r.url))
    assert where.path == f"/candidates/{listed[1]}"  # the next one in that view, not the inbox's first
    assert parse_qs(where.query)["agent"] == ["omp"] and parse_qs(where.query)["sort"] == ["newest"]
    assert f"rejected {listed[0]}" in r.text and 'id="undo"' in r.text
    # the inbox answer keeps the view too
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "reject", "reason": "x", "id": listed[1], "view": view})
    assert urlparse(str(r.url)).path == "/inbox" and parse_qs(urlparse(str(r.url)).query)["sort"] == ["newest"]


def test_a_high_risk_approval_asks_once_more_and_nothing_is_written_first(root: Path, serve: Any) -> None:
    server = serve()
    c, csrf = _client(server)
    cid = _ids(root)[data.INJECTION]
    page = c.get(f"{server.url}/candidates/{cid}").text
    assert "Approving asks once more" in page and "reads like an instruction" in page  # plain words, not a code
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "approve", "id": cid, "from": "candidate"})
    assert 'id="confirm-approve"' in r.text and _status(root, cid) == "new"
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "approve", "id": cid, "from": "candidate", "confirmed": "1"})
    assert _status(root, cid) == "patched", r.text


def test_the_decision_forms_have_no_default_button_and_the_edit_box_is_filled(root: Path, serve: Any) -> None:
    server = serve()
    c, _csrf = _client(server)
    cid = _ids(root)[data.EDIT_ME]
    page = c.get(f"{server.url}/candidates/{cid}").text
    form = page.split('id="decide"', 1)[1].split("</form>", 1)[0]
    # implicit submission (Enter in a field) uses the first submit button; a disabled one submits nothing
    first = re.search(r"<button[^>]*>", form)
    assert first and "disabled" in first.group(0) and "approve" not in first.group(0)
    assert f">{data.EDIT_ME}</textarea>" in form
    inbox = c.get(f"{server.url}/inbox").text.split('id="batch"', 1)[1]
    first = re.search(r"<button[^>]*>", inbox)
    assert first and "disabled" in first.group(0) and "approve" not in first.group(0)


def test_nothing_selected_or_no_reason_is_said_plainly_and_nothing_is_written(root: Path, serve: Any) -> None:
    server = serve()
    c, csrf = _client(server)
    before = {x["id"]: x["status"] for x in Store(root).candidates()}
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "approve", "view": "?tag=batch"})
    assert r.status_code == 200 and "Nothing is selected" in r.text and urlparse(str(r.url)).query.startswith("tag=batch")
    cid = _ids(root)[data.BATCH[0]]
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "reject", "id": cid, "from": "candidate"})
    assert "say why in the reason box" in r.text and "--reason" not in r.text and "hint:" not in r.text
    assert {x["id"]: x["status"] for x in Store(root).candidates()} == before


def test_a_decided_candidate_links_its_record_patch_and_reason(root: Path, serve: Any) -> None:
    server = serve()
    c, csrf = _client(server)
    ids = _ids(root)
    c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "approve", "id": ids[data.EDIT_ME], "edit": "Deploys go via staging."})
    c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "reject", "id": ids[data.BATCH[0]], "reason": "too vague"})
    done = c.get(f"{server.url}/candidates/{ids[data.EDIT_ME]}").text
    rec = next(r for r in Store(root).records() if r["statement"] == "Deploys go via staging.")
    assert f'href="/memory/{rec["id"]}"' in done and re.search(r'href="/patches/patch_\w+" class="patch"', done)
    assert "Undo this decision" in done
    gone = c.get(f"{server.url}/candidates/{ids[data.BATCH[0]]}").text
    assert re.search(r'rejected, reason: <q class="reason">too vague</q>', gone)


def test_duplicates_and_conflicts_offer_their_own_choices(root: Path, serve: Any) -> None:
    server = serve()
    c, csrf = _client(server)
    dup = _ids(root)[data.DUPLICATE]
    page = c.get(f"{server.url}/candidates/{dup}").text
    assert re.search(r'value="approve:reinforce" id="approve"[^>]*>Keep mem_\w+, reinforce it \(a\)', page)
    assert re.search(r'value="approve:replace"[^>]*>Replace mem_\w+ with this', page) and 'value="approve"' not in page
    inbox = c.get(f"{server.url}/inbox").text
    assert re.search(r'class="group" data-record="mem_\w+"', inbox) and "Keep the record, reinforce it" in inbox
    r = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "approve:reinforce", "id": dup})
    assert 'id="msg"' in r.text and _status(root, dup) != "new", r.text
    said = [str(x["statement"]) for x in Store(root).records()]
    assert said.count(data.DUPLICATE) == 1  # reinforcing adds no second record
    conflict = data.add(Store(root), "The CI pipeline no longer runs the full suite on Fridays.", "omp", tags=["ci"])
    server.web.queue.refresh(wait=True)  # a recompute started before it was written may still be running
    server.web.queue.refresh(wait=True)
    page = c.get(f"{server.url}/candidates/{conflict}").text
    assert re.search(r'id="approve"[^>]*>Keep both, contested \(a\)', page) and "contradicts" in page
    assert re.search(r'value="approve:replace"[^>]*>Replace mem_\w+ with this', page)


def test_diffs_read_as_diffs_and_applied_patches_show_old_and_new(root: Path, serve: Any) -> None:
    server = serve()
    c, _csrf = _client(server)
    add = c.get(f"{server.url}/candidates/{_ids(root)[data.EDIT_ME]}").text
    diff = add.split('<div class="diff">', 1)[1].split("</div></div>", 1)[0]
    assert '<div class="note">(no record)</div>' in diff and 'class="del"' not in diff  # an add deletes nothing
    assert "\n" not in diff  # one line per line: no blank line after each
    rec = Store(root).records()[0]
    patch = {"patch_id": "patch_209901010000_update01", "created_at": "2099-01-01T00:00:00.000Z", "generated_by": "manual",
             "mode": "supervised", "summary": "reword", "status": "proposed", "applied_at": None, "applied_ops": [],
             "skipped_ops": [], "ops": [{"op_id": "op_001", "op": "update", "target_id": rec["id"], "risk": "low",
                                         "default_selected": True, "updates": {"statement": "The CI pipeline runs nightly."}}]}
    apply_patch(root, patch, role=data.WRITER)
    shown = c.get(f"{server.url}/patches/patch_209901010000_update01").text
    assert f"- {rec['id']}: {data.DUPLICATE}" in shown and f"+ {rec['id']}: The CI pipeline runs nightly." in shown
    assert "(applied)" not in shown and "{" not in shown.split('<div class="diff">', 1)[1].split("</div></div>", 1)[0]
    listed = re.findall(r'href="/patches/(patch_\w+)"', c.get(f"{server.url}/patches").text)
    assert listed[0] == "patch_209901010000_update01"  # newest first, by the time it was made
    made = [json.loads((root / "patches" / f"{p}.json").read_text())["created_at"] for p in listed]
    assert made == sorted(made, reverse=True)


def test_a_waiting_op_whose_candidate_was_decided_is_not_offered(root: Path, serve: Any) -> None:
    from commonkeep.patches.curate import curate

    store = Store(root)
    for text in data.PATCH_ME:
        data.add(store, text, "hermes", evidence_refs=["daily/2026-12-01.md", "ci.log"], confidence=0.95,
                 primary_trust_class="direct_user_instruction")
    prop = curate(root, role=data.WRITER)
    op = next(o for o in prop.ops if o["op"] == "add" and o["record"]["statement"] == data.PATCH_ME[0])
    reject(root, [op["candidate_id"]], reason="decided in the inbox first", role=data.WRITER)
    server = serve()
    c, _csrf = _client(server)
    page = c.get(f"{server.url}/patches/{prop.patch['patch_id']}").text
    block = page.split(f'data-op="{op["op_id"]}"', 1)[1].split('<div class="op', 1)[0]
    assert "was already decided (rejected)" in block and 'name="op"' not in block


def test_tombstones_show_their_reason(root: Path, serve: Any) -> None:
    rec = Store(root).records()[0]
    forget(root, rec["id"], reason="privacy_sensitive", role=data.WRITER)
    server = serve()
    c, _csrf = _client(server)
    table = c.get(f"{server.url}/memory").text.split('id="tombstones"', 1)[1]
    assert "<td>privacy_sensitive</td>" in table and "None" not in table


def test_favicon_long_ids_and_a_host_with_userinfo(root: Path, serve: Any) -> None:
    server = serve()
    c, _csrf = _client(server)
    icon = c.get(f"{server.url}/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml") and b"<svg" in icon.content
    for path in ("/patches/" + "p" * 300, "/candidates/" + "c" * 300, "/memory/" + "m" * 300):
        r = c.get(server.url + path)
        assert r.status_code == 404, (path[:20], r.status_code)
    for host in ("127.0.0.1:80@evil.example", "localhost@evil.example", "127.0.0.1 evil.example", "127.0.0.1/x"):
        assert c.get(f"{server.url}/inbox", headers={"Host": host}).status_code == 400, host
    assert c.get(f"{server.url}/inbox", headers={"Host": f"localhost:{urlparse(server.url).port}"}).status_code == 200


def test_sort_facets_and_a_session_view(root: Path, serve: Any) -> None:
    server = serve()
    c, _csrf = _client(server)
    page = c.get(f"{server.url}/inbox").text
    facets = page.split('id="facets"', 1)[1].split('id="live"', 1)[0]
    assert re.search(r'data-value="omp">omp <b>4</b>', facets) and re.search(r'data-value="s-roundtable">s-roundtable <b>3</b>', facets)
    assert '<th>Date</th>' in page and re.search(r'<time datetime="20\d\d-', page)
    session = c.get(f"{server.url}/inbox", params={"session": "s-roundtable"}).text
    assert len(re.findall(r'<tr class="cand', session)) == 3 and "all 3 in this view" in session
    risky = re.findall(r'data-id="(cap_\w+)"', c.get(f"{server.url}/inbox", params={"sort": "risk"}).text)
    assert risky[0] == _ids(root)[data.INJECTION]


def test_the_undo_button_reverses_a_decision(root: Path, serve: Any) -> None:
    """The banner after a decision carries Undo; it posts to ``actions.undo`` (the reversing patch of
    the server side). Where that is not built in, it says so and changes nothing."""
    from commonkeep.web import actions

    server = serve()
    c, csrf = _client(server)
    cid = _ids(root)[data.EDIT_ME]
    done = c.post(f"{server.url}/decide", data={"csrf": csrf, "action": "approve", "id": cid, "view": "?tag=deploy"})
    undo = re.search(r'id="undo-form".*?name="ids" value="([^"]+)".*?name="view" value="([^"]*)"', done.text, re.S)
    assert undo and undo.group(1) == cid and "tag=deploy" in undo.group(2)
    added = {r["id"] for r in Store(root).records() if r["statement"] == data.EDIT_ME}
    assert added
    r = c.post(f"{server.url}/undo", data={"csrf": csrf, "ids": undo.group(1), "view": undo.group(2)})
    assert r.status_code == 200 and urlparse(str(r.url)).query.startswith("tag=deploy")
    live = {x["id"] for x in Store(root).records()}
    if getattr(actions, "undo", None) is None:
        assert "undo is not available" in r.text and added <= live
        return
    assert 'id="msg"' in r.text and not added & live  # the record it added is no longer active
    again = [x for x in Store(root).candidates(status="new") if x["text"] == data.EDIT_ME]
    assert again  # the candidate is pending again


def test_an_unscored_candidate_still_asks_before_a_high_risk_approval() -> None:
    """While the queue warms up, rows are shown unscored; approving one must still ask once more."""
    from commonkeep.web.flow import asks_twice

    assert "reads like an instruction" in asks_twice({"text": data.INJECTION, "primary_trust_class": "repository_text"})
    assert asks_twice({"text": data.EDIT_ME}) == ""
