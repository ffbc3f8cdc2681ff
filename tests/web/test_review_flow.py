"""The review flow in a real headless Chromium, with the files on disk checked after each step.

Load the inbox, approve one candidate with an edit, reject one with a reason, batch-approve three
with the keyboard, apply a selected op of a proposed patch, forget (and purge) a record; stored
markup shows as text and never runs; another agent's candidate appears without a reload.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from commonkeep.patches.curate import curate
from commonkeep.store.core import Store
from tests.web import seed as data

WAIT = 60  # a bound on waits for a condition, never a fixed wait: a loaded box may take long (issue 40)


def _wait(browser: Any, css: str) -> Any:
    return WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def _cand(root: Path, cid: str) -> dict[str, Any]:
    return next(c for c in Store(root).candidates() if c["id"] == cid)


def _patches(root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((root / "patches").glob("*.json"))]


def _patch_for(root: Path, cid: str) -> dict[str, Any]:
    """The one patch with an op for candidate ``cid``."""
    found = [p for p in _patches(root) if any(o.get("candidate_id") == cid for o in p["ops"])]
    assert len(found) == 1, found
    return found[0]


def _statements(root: Path) -> set[str]:
    return {str(r["statement"]) for r in Store(root).records(active_only=False)}


def _ids(root: Path) -> dict[str, str]:
    """Seeded candidate ids by their text (the seed fixture made them)."""
    return {str(c["text"]): str(c["id"]) for c in Store(root).candidates()}


def test_review_flow_writes_what_the_cli_writes(browser: Any, root: Path, serve: Any, shots: Path) -> None:
    server = serve()
    ids = _ids(root)
    browser.get(server.token_url)
    _wait(browser, "tr.cand")
    # the token left the address bar: it now lives in an HttpOnly, SameSite=Strict cookie, which
    # the page's own scripts cannot read (a script that got past escaping cannot steal it)
    assert "token=" not in browser.current_url
    token = server.token_url.rsplit("token=", 1)[1]
    (cookie,) = [c for c in browser.get_cookies() if c["value"] == token]
    assert cookie["name"] == "commonkeep_token_" + server.url.rsplit(":", 1)[1]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict"
    assert token not in browser.execute_script("return document.cookie")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.cand")
    assert len(rows) == 8
    page = browser.find_element(By.ID, "live").text
    assert data.SCRIPT_CLOSE in page and 'onerror="window.__pwned=1"' in page and "{{ 7*7 }}" in page
    assert browser.execute_script("return window.__pwned === undefined")
    browser.save_screenshot(str(shots / "inbox.png"))

    # 1. approve one with an edit
    browser.get(f"{server.url}/candidates/{ids[data.EDIT_ME]}")
    edit = _wait(browser, "#edit")
    browser.save_screenshot(str(shots / "candidate.png"))
    edited = "Deploys go through the staging host first, then canary."
    assert edit.get_attribute("value") == data.EDIT_ME  # the edit box starts with the statement
    edit.clear()
    edit.send_keys(edited)
    browser.find_element(By.ID, "approve").click()
    assert "approved with an edit" in _wait(browser, "#msg").text
    assert _cand(root, ids[data.EDIT_ME])["status"] == "patched"
    assert edited in _statements(root) and data.EDIT_ME not in _statements(root)
    last = _patch_for(root, ids[data.EDIT_ME])
    assert last["generated_by"] == "manual" and last["status"] == "applied"
    assert [o["record"]["statement"] for o in last["ops"] if o["op"] == "add"] == [edited]

    # 2. reject one with a reason
    browser.get(f"{server.url}/candidates/{ids[data.SCRIPT_CLOSE]}")
    _wait(browser, "#reason").send_keys("not a durable rule")
    browser.find_element(By.ID, "reject").click()
    assert "rejected" in _wait(browser, "#msg").text
    assert _cand(root, ids[data.SCRIPT_CLOSE])["status"] == "rejected"
    rej = _patch_for(root, ids[data.SCRIPT_CLOSE])
    assert [(o["op"], o["candidate_id"], o["reason"]) for o in rej["ops"]] == \
        [("reject_candidate", ids[data.SCRIPT_CLOSE], "not a durable rule")]

    # 3. batch-approve three with the keyboard (j moves, x selects, a approves the selection)
    browser.get(f"{server.url}/inbox?tag=batch")
    _wait(browser, "tr.cand")
    body = browser.find_element(By.TAG_NAME, "body")
    for _ in data.BATCH:
        body.send_keys("j")
        browser.switch_to.active_element.send_keys("x")
    assert browser.find_element(By.ID, "nsel").text == "3"
    browser.switch_to.active_element.send_keys("a")
    assert "approved" in _wait(browser, "#msg").text
    assert all(_cand(root, ids[t])["status"] == "patched" for t in data.BATCH)
    assert set(data.BATCH) <= _statements(root)
    batch = _patch_for(root, ids[data.BATCH[0]])
    assert sorted(o["candidate_id"] for o in batch["ops"]) == sorted(ids[t] for t in data.BATCH)

    # 4. apply one selected op of a proposed patch (curation proposed it, as `commonkeep curate` does)
    store = Store(root)
    for text in data.PATCH_ME:
        data.add(store, text, "hermes", evidence_refs=["daily/2026-12-01.md", "ci.log"], confidence=0.95,
                 primary_trust_class="direct_user_instruction")
    prop = curate(root, role=data.WRITER)
    assert prop.path is not None
    pid = prop.patch["patch_id"]
    wanted = [o for o in prop.ops if o["op"] == "add" and o["record"]["statement"] == data.PATCH_ME[0]]
    assert wanted, prop.ops
    browser.get(f"{server.url}/patches/{pid}")
    _wait(browser, "#apply")
    browser.save_screenshot(str(shots / "patch.png"))
    for box in browser.find_elements(By.CSS_SELECTOR, 'input[name="op"]'):
        if box.is_selected() != (box.get_attribute("value") == wanted[0]["op_id"]):
            box.click()
    browser.find_element(By.ID, "apply-selected").click()
    assert "applied" in _wait(browser, "#msg").text
    doc = json.loads((root / "patches" / f"{pid}.json").read_text())
    assert doc["applied_ops"] == [wanted[0]["op_id"]]
    assert data.PATCH_ME[0] in _statements(root) and data.PATCH_ME[1] not in _statements(root)
    browser.get(f"{server.url}/patches")
    _wait(browser, "#patches")
    browser.save_screenshot(str(shots / "patches.png"))

    # 5. forget a record with a privacy purge, after a confirmation that says what is scrubbed
    rec = next(r for r in Store(root).records() if r["statement"] == edited)
    browser.get(f"{server.url}/memory/{rec['id']}")
    _wait(browser, "#forget-ask").find_element(By.NAME, "purge").click()
    browser.find_element(By.ID, "forget-preview").click()
    preview = _wait(browser, "#preview").text
    assert "tombstone" in preview and "patches/" in preview  # the patch that added it holds a copy
    browser.save_screenshot(str(shots / "forget.png"))
    browser.find_element(By.ID, "forget-confirm").click()
    assert "forgotten and purged" in _wait(browser, "#msg").text
    tombs = Store(root).rows(root / "memory" / "tombstones.jsonl")
    assert [t["deleted_record_id"] for t in tombs] == [rec["id"]]
    assert tombs[0]["deletion_mode"] == "privacy_purge"
    assert edited not in _statements(root)
    assert not any(edited in p.read_text() for p in (root / "patches").glob("*.json"))
    # tombstones are listed without content
    assert rec["id"] in _wait(browser, "#tombstones").text and edited not in browser.page_source
    browser.save_screenshot(str(shots / "memory.png"))
    browser.get(f"{server.url}/health")
    _wait(browser, "#findings")
    browser.save_screenshot(str(shots / "health.png"))


def test_matches_show_the_other_record_and_stored_markup_never_runs(browser: Any, root: Path, serve: Any) -> None:
    server = serve()
    ids = _ids(root)
    browser.get(server.token_url)
    _wait(browser, "tr.cand")
    dup = ids[data.DUPLICATE]
    # the seeded duplicate is matched against the record approved from the first copy of it
    row = WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: d.find_element(By.CSS_SELECTOR, f'tr.cand[data-id="{dup}"]') if "mem_" in
        d.find_element(By.CSS_SELECTOR, f'tr.cand[data-id="{dup}"]').text else None)
    assert data.DUPLICATE in row.find_element(By.CSS_SELECTOR, ".other").text
    browser.get(f"{server.url}/candidates/{ids[data.IMG_ONERROR]}")
    text = _wait(browser, "#text")
    assert text.text == data.IMG_ONERROR
    assert not browser.find_elements(By.CSS_SELECTOR, "#text img, #text b")
    browser.get(f"{server.url}/candidates/{ids[data.SCRIPT_CLOSE]}")
    assert _wait(browser, "#text").text == data.SCRIPT_CLOSE
    assert browser.execute_script("return window.__pwned === undefined")
    browser.get(f"{server.url}/inbox?q=previous+instructions")
    _wait(browser, "tr.cand")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.cand")
    assert [r.get_attribute("data-id") for r in rows] == [ids[data.INJECTION]]
    assert "high" in rows[0].text


def test_a_candidate_written_by_another_agent_appears_without_a_reload(browser: Any, root: Path, serve: Any) -> None:
    server = serve()
    browser.get(server.token_url)
    _wait(browser, "tr.cand")
    browser.execute_script("window.__same_page = 42")
    # written at once, perhaps before the page's first poll: the page knows the stamp it was
    # rendered at (issue 40: a write between the render and the first poll was never shown)
    data.add(Store(root), "The metrics exporter listens on port 9464.", "omp")
    WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: "port 9464" in d.find_element(By.ID, "live").text)
    assert browser.execute_script("return window.__same_page") == 42  # updated in place, not reloaded


def test_a_candidate_written_before_the_pages_first_poll_appears(browser: Any, root: Path, serve: Any) -> None:
    """The race behind issue 40's flaky test, made certain: the page's polls are held back while
    another agent writes, so the first answer the page gets already counts the new candidate."""
    server = serve()
    browser.execute_cdp_cmd("Network.enable", {})
    try:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/api/stamp*"]})
        browser.get(server.token_url)
        _wait(browser, "tr.cand")
        browser.execute_script("window.__same_page = 42")
        data.add(Store(root), "The tracing collector samples one request in ten.", "omp")
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(lambda d: "one request in ten" in d.find_element(By.ID, "live").text)
    assert browser.execute_script("return window.__same_page") == 42
