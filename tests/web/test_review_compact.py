"""The smaller review-page items of issue 36, in a real headless Chromium: a patch of 101 ops is
one line per op (the reason and diff behind "details"), a skipped op says why even after a
partial apply, times read "3 h ago" (the ISO time in the title), the statement is the heading and
the candidate id secondary, and only medium and high risk stand out; the tab's title says how
many candidates wait, and follows a new one without a reload.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from commonkeep.patches.curate import curate
from commonkeep.patches.patch import apply_patch
from commonkeep.store.core import Store
from tests.web import seed as data

WAIT = 60  # a bound on waits for a condition, never a fixed wait


def _wait(browser: Any, css: str) -> Any:
    return WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def test_a_patch_of_101_ops_is_one_line_per_op_and_says_why_an_op_was_skipped(browser: Any, root: Path, serve: Any,
                                                                               shots: Path) -> None:
    store = Store(root)
    for n in range(101):
        data.add(store, f"The service number {n} exports ledgers nightly to bucket b{n}.", "hermes",
                 evidence_refs=["daily/2026-12-01.md", "ci.log"], confidence=0.95, primary_trust_class="direct_user_instruction")
    prop = curate(root, role=data.WRITER)
    ops = [str(o["op_id"]) for o in prop.ops]
    assert len(ops) >= 101
    apply_patch(root, prop.patch["patch_id"], role=data.WRITER, op_ids=ops[:1])  # a partial apply: the rest skipped
    server = serve()
    browser.get(server.token_url)
    _wait(browser, "main")
    browser.get(f"{server.url}/patches/{prop.patch['patch_id']}")
    _wait(browser, "#apply-selected")
    browser.save_screenshot(str(shots / "patch-101.png"))
    height = browser.execute_script("return document.documentElement.scrollHeight")
    lines = browser.find_elements(By.CSS_SELECTOR, "div.op.line")
    assert len(lines) == len(ops)
    tallest = max(browser.execute_script("return Array.from(document.querySelectorAll('div.op.line')).map(e => e.offsetHeight)"))
    assert tallest <= 40, f"an op takes {tallest} px"  # one line each, not 13
    assert height < 60 * len(ops), f"the page is {height} px for {len(ops)} ops"
    # the diff is behind "details", and opens on request
    second = lines[1]
    assert not second.find_element(By.CSS_SELECTOR, ".diff").is_displayed()
    second.find_element(By.CSS_SELECTOR, "details summary").click()
    assert second.find_element(By.CSS_SELECTOR, ".diff").is_displayed()
    # every skipped op says why; never "skipped:" and nothing
    reasons = [e.text.strip() for e in browser.find_elements(By.CSS_SELECTOR, ".skip-reason")]
    assert len(reasons) == len(ops) - 1 and all(reasons), reasons[:3]
    assert "not selected when the patch was applied" in reasons[0]
    # times are said as ages, with the ISO time in the title
    when = browser.find_element(By.CSS_SELECTOR, "main p time")
    assert re.fullmatch(r"just now|\d+ min ago", when.text), when.text
    assert when.get_attribute("title") == prop.patch["created_at"]


def test_the_statement_is_the_heading_low_risk_is_quiet_and_the_title_counts(browser: Any, root: Path, serve: Any) -> None:
    server = serve()
    server.web.queue.refresh(wait=True)
    browser.get(server.token_url)
    _wait(browser, "tr.cand")
    waiting = len(Store(root).candidates(status="new"))
    assert browser.title.startswith(f"({waiting}) Inbox")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.cand")
    low = [r for r in rows if "risk-low" in (r.get_attribute("class") or "")]
    assert low, "the seed has low-risk candidates"
    for r in low:
        assert r.find_elements(By.CSS_SELECTOR, "td.risk b") == []  # low risk is not bold
        cell = r.find_element(By.CSS_SELECTOR, "td.risk .risk-low")
        assert cell.value_of_css_property("font-weight") in ("400", "normal")
    high = browser.find_element(By.CSS_SELECTOR, "tr.risk-high td.risk b")
    assert high.text == "high"
    first = rows[0]
    when = first.find_element(By.CSS_SELECTOR, "td.date time")
    assert re.fullmatch(r"just now|\d+ (min|h|days|weeks|months) ago|\d+ years? ago", when.text), when.text
    assert when.get_attribute("title") == when.get_attribute("datetime") != ""
    # the statement is the row's link and the heading of its page; the id is secondary
    cid = first.get_attribute("data-id")
    text = next(str(c["text"]) for c in Store(root).candidates() if c["id"] == cid)
    link = first.find_element(By.CSS_SELECTOR, "a.open")
    assert link.text == text
    link.click()
    assert _wait(browser, "h1 #text").text == text and cid not in browser.find_element(By.TAG_NAME, "h1").text
    assert browser.find_element(By.ID, "cid").text == cid
    # the title follows the queue without a reload
    browser.get(f"{server.url}/inbox")
    _wait(browser, "tr.cand")
    data.add(Store(root), "The tracing collector samples one request in ten.", "omp")
    WebDriverWait(browser, WAIT).until(lambda d: d.title.startswith(f"({waiting + 1}) "))
    # the writer's server keeps the digest a notifier watches current (written before that answer)
    assert f"\nwaiting: {waiting + 1}\n" in (root / "reports" / "review-digest.txt").read_text(encoding="utf-8")
