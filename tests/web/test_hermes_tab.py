"""The Memory tab inside the real Hermes 0.19.0 dashboard, in headless Chromium.

``commonkeep hermes install`` (run by Hermes' own venv) installs the dashboard plugin; the test
starts Hermes' web server (``hermes_cli.web_server.start_server``) on that Hermes home and runs
the review flow in the tab: approve with an edit, reject, batch-approve three, apply a selected op
of a proposed patch, forget and purge a record — checking the files after each step — and sees
another agent's candidate appear. ``uninstall`` removes the plugin.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from commonkeep.patches.curate import curate
from commonkeep.store.core import Store
from tests.hosts import hermes as hermes_host
from tests.web import seed as data

pytestmark = pytest.mark.hermes
WAIT = 90  # a bound on waits for a condition: a first decision on a loaded box may take long
TOKEN = "ck-test-dashboard-token"
PLUGIN_DIR = Path("plugins") / "commonkeep-governance" / "dashboard"


@dataclass
class Dashboard:
    url: str
    hermes_home: Path
    root: Path
    python: Path
    env: dict[str, str]


def _env(base: Path, role: str | None) -> dict[str, str]:
    drop = ("HERMES_", "OMP_", "OMPKEEP_", "PI_", "COMMONKEEP_", "OPENAI", "ANTHROPIC", "OPENROUTER")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and not k.endswith(("_API_KEY", "_TOKEN", "_KEY"))}
    env.update(HOME=str(base / "home"), HERMES_HOME=str(base / "hermes"), HERMES_DASHBOARD_SESSION_TOKEN=TOKEN,
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    if role:
        env["COMMONKEEP_ROLE"] = role
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ck(d: Dashboard, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(d.python), "-m", "commonkeep.cli", "hermes", *args], env=d.env, capture_output=True,
                          text=True, timeout=120, cwd=d.hermes_home.parent)


@pytest.fixture
def dashboard(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Dashboard]:
    """Hermes' dashboard on a fresh Hermes home; its role is ``COMMONKEEP_ROLE`` (the writer unless parametrized)."""
    python = hermes_host.require_python(hermes_host.NEWEST)
    for sub in ("home", "hermes"):
        (tmp_path / sub).mkdir()
    root = tmp_path / "root"
    data.seed(root)
    port = _free_port()
    d = Dashboard(f"http://127.0.0.1:{port}", tmp_path / "hermes", root, python, _env(tmp_path, getattr(request, "param", data.WRITER)))
    done = _ck(d, "install", "--root", str(root))
    assert done.returncode == 0, done.stderr
    assert "dashboard Memory tab" in done.stdout
    assert (d.hermes_home / PLUGIN_DIR / "manifest.json").is_file()
    proc = subprocess.Popen([str(python), "-c", "import sys; from hermes_cli.web_server import start_server; "
                             "start_server(host='127.0.0.1', port=int(sys.argv[1]), open_browser=False)", str(port)],
                            env=d.env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                r = httpx.get(f"{d.url}/api/dashboard/plugins", headers={"X-Hermes-Session-Token": TOKEN}, timeout=5)
                if r.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read() if proc.stdout else ""
                pytest.fail(f"Hermes' dashboard did not start: {out[-3000:]}")
            time.sleep(0.3)
        assert "commonkeep-governance" in [p["name"] for p in r.json()]
        yield d
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def _ids(root: Path) -> dict[str, str]:
    return {str(c["text"]): str(c["id"]) for c in Store(root).candidates()}


def _status(root: Path, cid: str) -> str:
    return str(next(c["status"] for c in Store(root).candidates() if c["id"] == cid))


def _statements(root: Path) -> set[str]:
    return {str(r["statement"]) for r in Store(root).records(active_only=False)}


def _wait(browser: Any) -> WebDriverWait:
    """A wait that retries when React re-rendered what it was reading (the tab refreshes itself)."""
    return WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,))


def _row(browser: Any, cid: str) -> Any:
    return _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, f'.ck-row[data-id="{cid}"]'))


def _message(browser: Any, words: str) -> str:
    def seen(b: Any) -> str | None:
        err = b.find_elements(By.CSS_SELECTOR, ".ck-error")
        if err and err[0].text:
            raise AssertionError(err[0].text)
        msg = b.find_elements(By.CSS_SELECTOR, ".ck-msg")
        return msg[0].text if msg and words in msg[0].text else None
    return str(_wait(browser).until(seen))


def test_memory_tab_in_the_real_hermes_dashboard(browser: Any, dashboard: Dashboard, shots: Path) -> None:
    d, root = dashboard, dashboard.root
    ids = _ids(root)
    browser.get(f"{d.url}/commonkeep")
    row = _row(browser, ids[data.SCRIPT_CLOSE])
    assert data.SCRIPT_CLOSE in row.text
    assert browser.execute_script("return window.__pwned === undefined")
    assert data.IMG_ONERROR in _row(browser, ids[data.IMG_ONERROR]).text
    browser.save_screenshot(str(shots / "hermes-tab.png"))
    assert "what approving does" in _row(browser, ids[data.EDIT_ME]).text

    # an empty reject reason is explained at the row, nothing is sent
    row = _row(browser, ids[data.SCRIPT_CLOSE])
    row.find_element(By.CSS_SELECTOR, ".ck-reject").click()
    said = _wait(browser).until(lambda b: _row(b, ids[data.SCRIPT_CLOSE]).find_element(By.CSS_SELECTOR, ".ck-row-error"))
    assert "say why in the reason box" in said.text and _status(root, ids[data.SCRIPT_CLOSE]) == "new"
    # a refusal is shown at its row in plain words (no "400: {...}", no command-line hint)
    l1 = data.add(Store(root), "The user is called Ana and prefers British spelling.", "hermes", tags=["identity"])
    _row(browser, l1).find_element(By.CSS_SELECTOR, ".ck-approve").click()
    said = _wait(browser).until(lambda b: _row(b, l1).find_element(By.CSS_SELECTOR, ".ck-row-error"))
    # no raw status code ("400: {...}"); a candidate id written just after midnight holds the digits 400
    assert "L1 is never applied by review" in said.text and not re.search(r"\b400\b", said.text)
    assert "{" not in said.text and "hint" not in said.text
    assert not browser.find_elements(By.CSS_SELECTOR, ".ck-error")
    # a high-risk candidate asks once more before it is approved
    inj = _row(browser, ids[data.INJECTION])
    inj.find_element(By.CSS_SELECTOR, ".ck-approve").click()
    assert "asks once more" in _row(browser, ids[data.INJECTION]).find_element(By.CSS_SELECTOR, ".ck-ask").text
    assert _status(root, ids[data.INJECTION]) == "new"
    # what approving does, and search
    row = _row(browser, ids[data.EDIT_ME])
    row.find_element(By.CSS_SELECTOR, ".ck-what-toggle").click()
    what = _wait(browser).until(lambda b: _row(b, ids[data.EDIT_ME]).find_element(By.CSS_SELECTOR, ".ck-what"))
    assert "(no record)" in what.text and f"+ {data.EDIT_ME}" in what.text
    search = browser.find_element(By.CSS_SELECTOR, ".ck-filters .ck-search")
    search.send_keys("previous instructions", Keys.ENTER)
    _wait(browser).until(lambda b: [r.get_attribute("data-id") for r in b.find_elements(By.CSS_SELECTOR, ".ck-row")]
                                       == [ids[data.INJECTION]])
    assert "reads like an instruction" in _row(browser, ids[data.INJECTION]).text
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE, Keys.ENTER)
    _row(browser, ids[data.EDIT_ME])
    # the narrow layout: the tab reflows at 390 px, nothing inside it scrolls sideways
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        _row(browser, ids[data.EDIT_ME])
        wide = browser.execute_script("var m = document.querySelector('.ck-memory'); return [m.scrollWidth, m.clientWidth]")
        assert wide[0] <= wide[1], wide
        browser.save_screenshot(str(shots / "hermes-tab-narrow.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})

    # approve with an edit
    row = _row(browser, ids[data.EDIT_ME])
    row.find_element(By.CSS_SELECTOR, ".ck-edit-toggle").click()
    box = row.find_element(By.CSS_SELECTOR, "textarea.ck-edit")
    edited = "Deploys go through the staging host first, then canary."
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(edited)
    row.find_element(By.CSS_SELECTOR, ".ck-approve").click()
    _message(browser, "approved with an edit")
    assert _status(root, ids[data.EDIT_ME]) == "patched" and edited in _statements(root)

    # Enter in an empty reason box says why nothing happened, at the row
    row = _row(browser, ids[data.SCRIPT_CLOSE])
    row.find_element(By.CSS_SELECTOR, ".ck-reason").send_keys(Keys.ENTER)
    said = _wait(browser).until(lambda b: _row(b, ids[data.SCRIPT_CLOSE]).find_element(By.CSS_SELECTOR, ".ck-row-error"))
    assert "say why in the reason box" in said.text and _status(root, ids[data.SCRIPT_CLOSE]) == "new"
    # reject with a reason: what it did is said where the row stood, not at the top of the tab
    row = _row(browser, ids[data.SCRIPT_CLOSE])
    stood = row.location["y"]
    row.find_element(By.CSS_SELECTOR, ".ck-reason").send_keys("not a durable rule")
    row.find_element(By.CSS_SELECTOR, ".ck-reject").click()
    _message(browser, "rejected")
    assert _status(root, ids[data.SCRIPT_CLOSE]) == "rejected"
    note = browser.find_element(By.CSS_SELECTOR, ".ck-row-done")
    assert abs(note.location["y"] - stood) < 120, (note.location, stood)
    assert len(browser.find_elements(By.CSS_SELECTOR, ".ck-msg")) == 1  # said once, there
    # times as ages, the ISO time in the title; low risk is not bold
    when = _row(browser, ids[data.INJECTION]).find_element(By.CSS_SELECTOR, ".ck-id time")
    assert re.fullmatch(r"just now|\d+ (min|h) ago", when.text) and when.get_attribute("title").endswith("Z")
    assert _row(browser, ids[data.INJECTION]).find_elements(By.CSS_SELECTOR, "b.ck-risk-high")
    low = [r for r in browser.find_elements(By.CSS_SELECTOR, ".ck-row") if r.find_elements(By.CSS_SELECTOR, ".ck-risk-low")]
    assert low and all(not r.find_elements(By.CSS_SELECTOR, "b.ck-risk-low") for r in low)

    # batch-approve three
    for text in data.BATCH:
        _row(browser, ids[text]).find_element(By.CSS_SELECTOR, ".ck-sel").click()
    browser.find_element(By.CSS_SELECTOR, ".ck-batch-approve").click()
    _message(browser, "approved " + ids[data.BATCH[0]])
    assert all(_status(root, ids[t]) == "patched" for t in data.BATCH) and set(data.BATCH) <= _statements(root)

    # another agent writes a candidate: it appears in the tab by itself
    data.add(Store(root), "The metrics exporter listens on port 9464.", "omp")
    _wait(browser).until(lambda b: "port 9464" in b.find_element(By.CSS_SELECTOR, ".ck-inbox").text)

    # apply one selected op of a proposed patch
    store = Store(root)
    for text in data.PATCH_ME:
        data.add(store, text, "hermes", evidence_refs=["daily/2026-12-01.md", "ci.log"], confidence=0.95,
                 primary_trust_class="direct_user_instruction")
    prop = curate(root, role=data.WRITER)
    pid = prop.patch["patch_id"]
    want = next(o["op_id"] for o in prop.ops if o["op"] == "add" and o["record"]["statement"] == data.PATCH_ME[0])
    browser.find_element(By.CSS_SELECTOR, ".ck-view-patches").click()
    patch = _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, f'.ck-patch[data-id="{pid}"]'))
    for box in patch.find_elements(By.CSS_SELECTOR, "input.ck-op-sel"):
        if box.is_selected() != (box.get_attribute("value") == want):
            box.click()
    patch.find_element(By.CSS_SELECTOR, ".ck-apply").click()
    _message(browser, "applied")
    assert json.loads((root / "patches" / f"{pid}.json").read_text())["applied_ops"] == [want]
    assert data.PATCH_ME[0] in _statements(root) and data.PATCH_ME[1] not in _statements(root)

    # forget and purge a record, after the confirmation
    rec = next(r for r in Store(root).records() if r["statement"] == edited)
    browser.find_element(By.CSS_SELECTOR, ".ck-view-records").click()
    _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, f'.ck-record[data-id="{rec["id"]}"]')) \
        .find_element(By.CSS_SELECTOR, ".ck-purge").click()
    confirm = _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, ".ck-confirm"))
    assert "tombstone" in confirm.text and "privacy purge" in confirm.text
    confirm.find_element(By.CSS_SELECTOR, ".ck-forget-confirm").click()  # no reason chosen yet: asked for one
    assert "Choose why" in browser.find_element(By.CSS_SELECTOR, ".ck-confirm .ck-row-error").text
    Select(confirm.find_element(By.CSS_SELECTOR, ".ck-forget-reason")).select_by_value("privacy_sensitive")
    confirm.find_element(By.CSS_SELECTOR, ".ck-forget-confirm").click()
    _message(browser, "forgotten and purged")
    tombs = Store(root).rows(root / "memory" / "tombstones.jsonl")
    assert [(t["deleted_record_id"], t["deletion_mode"], t["deletion_reason"]) for t in tombs] == \
        [(rec["id"], "privacy_purge", "privacy_sensitive")]
    # a plain forget's confirmation names the tab's own way to purge (there is no purge tick box here)
    other = next(r for r in Store(root).records())
    _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, f'.ck-record[data-id="{other["id"]}"]')) \
        .find_element(By.CSS_SELECTOR, ".ck-forget").click()
    confirm = _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, ".ck-confirm"))
    assert "Forget and purge…" in confirm.text and "tick" not in confirm.text
    confirm.find_element(By.CSS_SELECTOR, ".ck-forget-cancel").click()
    assert edited not in _statements(root)

    # uninstall removes the tab
    done = _ck(d, "uninstall")
    assert done.returncode == 0, done.stderr
    assert not (d.hermes_home / PLUGIN_DIR).exists()


@pytest.mark.parametrize("dashboard", [None], indirect=True)
def test_memory_tab_is_read_only_without_the_writer_role(browser: Any, dashboard: Dashboard) -> None:
    cid = next(iter(_ids(dashboard.root).values()))
    url = f"{dashboard.url}/api/plugins/commonkeep-governance/decide"
    assert httpx.post(url, json={"action": "approve", "ids": [cid]}, timeout=30).status_code == 401  # Hermes' token
    r = httpx.post(url, json={"action": "approve", "ids": [cid]}, headers={"X-Hermes-Session-Token": TOKEN}, timeout=30)
    assert r.status_code == 403
    assert "read-only" in r.json()["detail"] and "'librarian'" in r.json()["detail"]
    assert _status(dashboard.root, cid) == "new"
    browser.get(f"{dashboard.url}/commonkeep")
    banner = _wait(browser).until(lambda b: b.find_element(By.CSS_SELECTOR, ".ck-readonly"))
    assert "only the writer role" in banner.text and "hint:" not in banner.text and "COMMONKEEP_ROLE=librarian" in banner.text
    assert not _row(browser, cid).find_element(By.CSS_SELECTOR, ".ck-approve").is_enabled()
