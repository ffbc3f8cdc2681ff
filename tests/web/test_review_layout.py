"""The review app's keys and layout in a real headless Chromium, on a realistic morning queue:
``?`` lists the keys and Escape closes them or leaves a text box, ``a`` with nothing selected
only says so; at 390 px no page scrolls sideways; ``prefers-color-scheme: dark`` is honoured.
Screenshots (wide, 390 px, dark) go to the screenshots folder; ``web-inbox.png`` there is the
one docs/images holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from commonkeep.store.core import Store
from tests.web import morning, probe

WAIT = 20


def _open(browser: Any, url: str, css: str = "main") -> Any:
    browser.get(url)
    return WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def _press(browser: Any, key: str) -> None:
    ActionChains(browser).send_keys(key).perform()


def _statuses(root: Path) -> dict[str, str]:
    return {str(c["id"]): str(c["status"]) for c in Store(root).candidates()}


def test_keys_narrow_layout_and_dark_mode(browser: Any, tmp_path: Path, shots: Path) -> None:
    from commonkeep.web.server import start

    root = tmp_path / "root"
    m = morning.seed_morning(root)
    server = start(root, morning.WRITER)
    server.web.queue.refresh(wait=True)  # the morning starts on a scored queue (serve prints its URL before)
    try:
        browser.get(server.token_url)
        WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.CSS_SELECTOR, "tr.cand"))
        # the docs' screenshot: a realistic queue, the temporary root's path not shown
        browser.execute_script("document.querySelector('.who').textContent = '~/.commonkeep · writer (librarian)'")
        browser.save_screenshot(str(shots / "web-inbox.png"))

        # ? shows the keys, Escape hides them; / goes to search and Escape leaves it
        keys = browser.find_element(By.ID, "keys")
        assert not keys.is_displayed()
        _press(browser, "?")
        assert keys.is_displayed() and "Enter in a text box never approves" in keys.text
        _press(browser, "\ue00c")  # Escape
        assert not keys.is_displayed()
        _press(browser, "/")
        assert browser.switch_to.active_element.get_attribute("id") == "search"
        _press(browser, "\ue00c")
        assert browser.switch_to.active_element.tag_name == "body"
        # a with nothing selected (and no row under the cursor) only says what to do
        before = _statuses(root)
        probe.watch(browser)
        _press(browser, "a")
        hint = WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "hint"))
        assert "Nothing is selected" in hint.text and "/inbox" in browser.current_url
        assert probe.quiet(browser) and _statuses(root) == before  # nothing submitted: no fixed wait needed

        # on a candidate page, a reason and Enter rejects it (the safe action), never approves
        browser.get(f"{server.url}/candidates/{m.reject[0]}")
        reason = WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "reason"))
        reason.send_keys("a scratch note", "\ue007")  # Enter
        WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.ID, "msg"))
        assert _statuses(root)[m.reject[0]] == "rejected"
        # the docs' candidate: a conflict, its choices and what approving does
        browser.get(f"{server.url}/candidates/{m.conflicts[0]}")
        WebDriverWait(browser, WAIT).until(lambda d: d.find_element(By.ID, "decide"))
        browser.execute_script("document.querySelector('.who').textContent = '~/.commonkeep · writer (librarian)'")
        browser.set_window_size(1400, 1500)  # tall enough for the choices below the diff
        browser.save_screenshot(str(shots / "web-candidate.png"))
        browser.set_window_size(1400, 1000)

        # 390 px: nothing scrolls sideways, on every page
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        rec = Store(root).records()[0]["id"]
        pages = {"inbox": "/inbox", "candidate": f"/candidates/{m.conflicts[0]}", "patches": "/patches", "memory": "/memory",
                 "record": f"/memory/{rec}?confirm=1&purge=1", "health": "/health", "wiki": "/wiki"}
        for name, path in pages.items():
            _open(browser, server.url + path)
            wide = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
            assert wide[0] <= wide[1], f"{name} scrolls sideways at 390 px: {wide}"
            browser.save_screenshot(str(shots / f"narrow-{name}.png"))
        patch = browser.execute_script("return 1") and Store(root).layout.patches_dir.glob("*.json")
        _open(browser, f"{server.url}/patches/{next(iter(patch)).stem}")
        wide = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert wide[0] <= wide[1], f"a patch scrolls sideways at 390 px: {wide}"

        # dark mode
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        _open(browser, f"{server.url}/candidates/{m.conflicts[0]}")
        bg = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        rgb = [int(x) for x in bg[bg.index("(") + 1: bg.index(")")].split(",")[:3]]
        assert sum(rgb) < 150, bg
        browser.save_screenshot(str(shots / "dark-candidate.png"))
        _open(browser, f"{server.url}/inbox")
        browser.save_screenshot(str(shots / "dark-inbox.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        server.stop()
