"""Keys after a mouse tick, in a real headless Chromium (issue 36): tick rows with the mouse and
the focus stays on a checkbox; the keys must still act on the ticked rows. ``j`` and ``x`` go on
from the ticked row, ``r`` goes to the reason box and typing a reason (spaces and all) never
unticks a row, Enter there rejects both, ``a`` approves both ticked rows (never one silently),
``*`` selects the whole view, and Enter on a checkbox decides nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from commonkeep.store.core import Store
from tests.web import probe
from tests.web import seed as data

WAIT = 30  # a bound, not a wait: every wait below ends as soon as its condition holds
PLAIN = ("The payments service retries webhooks three times.", "The docs site deploys from the gh-pages branch.")


def _statuses(root: Path) -> dict[str, str]:
    return {str(c["id"]): str(c["status"]) for c in Store(root).candidates()}


def _press(browser: Any, key: str) -> None:
    ActionChains(browser).send_keys(key).perform()


def _tick(browser: Any, cid: str) -> None:
    """A mouse click on the row's checkbox (the focus stays on it)."""
    box = browser.find_element(By.CSS_SELECTOR, f'tr.cand[data-id="{cid}"] input.sel')
    ActionChains(browser).move_to_element(box).click().perform()


def _ticked(browser: Any) -> list[str]:
    return [str(b.get_attribute("value")) for b in browser.find_elements(By.CSS_SELECTOR, "input.sel:checked")]


def _row_ids(browser: Any) -> list[str]:
    return [str(r.get_attribute("data-id")) for r in browser.find_elements(By.CSS_SELECTOR, "tr.cand")]


def _inbox(browser: Any, url: str) -> None:
    browser.get(url)
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.CSS_SELECTOR, "tr.cand input.sel"))
    probe.watch(browser)


def test_keys_act_on_rows_ticked_with_the_mouse(browser: Any, root: Path, serve: Any) -> None:
    store = Store(root)
    mine = [data.add(store, text, "hermes", tags=["keys"]) for text in PLAIN]
    server = serve()
    server.web.queue.refresh(wait=True)
    browser.get(server.token_url)
    _inbox(browser, f"{server.url}/inbox")
    rows = _row_ids(browser)
    first, second = rows[0], rows[1]
    before = _statuses(root)

    # two rows ticked with the mouse: the focus is on the second checkbox
    _tick(browser, first)
    _tick(browser, second)
    assert browser.switch_to.active_element.get_attribute("class") == "sel"
    assert _ticked(browser) == [first, second]
    # Enter on a ticked checkbox decides nothing (Chromium submits a form on Enter in a checkbox)
    _press(browser, Keys.ENTER)
    assert probe.quiet(browser) and _statuses(root) == before

    # j goes on from the ticked row; x ticks the row under the cursor, and x again unticks it
    _press(browser, "j")
    cursor = browser.find_element(By.CSS_SELECTOR, "tr.cursor").get_attribute("data-id")
    assert cursor == rows[2]
    _press(browser, "x")
    assert _ticked(browser) == [first, second, rows[2]] and browser.find_element(By.ID, "nsel").text == "3"
    _press(browser, "x")
    assert _ticked(browser) == [first, second] and browser.find_element(By.ID, "nsel").text == "2"

    # r goes to the reason box; typing a reason with spaces never unticks a row; Enter rejects both
    _tick(browser, second)
    _tick(browser, second)  # the focus is back on a checkbox, still two ticked
    assert browser.switch_to.active_element.get_attribute("class") == "sel" and _ticked(browser) == [first, second]
    _press(browser, "r")
    assert browser.switch_to.active_element.get_attribute("id") == "batch-reason"
    _press(browser, "not durable: a note of one session")
    assert _ticked(browser) == [first, second]
    assert probe.quiet(browser) and _statuses(root) == before  # typing decided nothing
    _press(browser, Keys.ENTER)
    WebDriverWait(browser, WAIT).until(lambda d: "rejected" in (d.find_elements(By.ID, "msg") or [None])[0].text
                                       if d.find_elements(By.ID, "msg") else False)
    after = _statuses(root)
    assert {c: s for c, s in after.items() if s != before[c]} == {first: "rejected", second: "rejected"}

    # a with two rows ticked by the mouse approves both, never one of them silently
    _inbox(browser, f"{server.url}/inbox?q=keys")
    assert sorted(_row_ids(browser)) == sorted(mine)
    for cid in mine:
        _tick(browser, cid)
    assert browser.switch_to.active_element.get_attribute("class") == "sel"
    _press(browser, "a")
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.ID, "msg"))
    done = _statuses(root)
    assert {c: s for c, s in done.items() if s != after[c]} == {mine[0]: "patched", mine[1]: "patched"}
    statements = {str(r["statement"]) for r in Store(root).records()}
    assert set(PLAIN) <= statements

    # * after a mouse tick selects the whole view, and * again clears it; nothing is decided
    _inbox(browser, f"{server.url}/inbox")
    rows = _row_ids(browser)
    _tick(browser, rows[0])
    _press(browser, "*")
    assert _ticked(browser) == rows and browser.find_element(By.ID, "select-all").is_selected()
    _press(browser, "*")
    assert _ticked(browser) == []
    assert probe.quiet(browser) and _statuses(root) == done
