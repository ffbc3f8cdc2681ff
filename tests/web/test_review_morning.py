"""A librarian's morning in a real headless Chromium: 100 candidates from 5 sessions (seeded by
``tests/web/morning.py``: what to reject spread over every session, repeats, conflicts,
near-duplicates about different subjects, an injection, a removed secret). In each session, tick
what to reject with the mouse, press ``r``, type why and Enter; edit and approve a design session
one candidate after the other; approve the rest with one confirmation that lists every candidate
acting on a record with its own choice — counting every key and click (typed text not counted) —
and press Enter in every text box on the way, checking after each that nothing was decided by it.
At the end: nothing approved by accident, and no record lost or rewritten beyond what was chosen.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from commonkeep.store.core import Store
from tests.web import morning, probe

WAIT = 20
BUDGET = 60  # keys and clicks for the whole morning (issue 23's goal)


class Counted:
    """The browser, with every key and click the librarian makes counted."""

    def __init__(self, browser: Any) -> None:
        self.b, self.n = browser, 0

    def key(self, key: str) -> None:
        self.n += 1
        ActionChains(self.b).send_keys(key).perform()

    def click(self, css: str) -> None:
        self.n += 1
        WebDriverWait(self.b, WAIT).until(lambda d: d.find_element(By.CSS_SELECTOR, css)).click()

    def type(self, text: str) -> None:  # typed text is not counted
        ActionChains(self.b).send_keys(text).perform()


def _statuses(root: Path) -> dict[str, str]:
    return {str(c["id"]): str(c["status"]) for c in Store(root).candidates()}


def _loaded(browser: Any, css: str, words: str = "") -> Any:
    def seen(d: Any) -> Any:
        said = d.find_elements(By.ID, "err")
        if said and said[0].text:  # a refusal: fail with its words, not a timeout
            raise AssertionError(said[0].text)
        found = d.find_elements(By.CSS_SELECTOR, css)
        return found[0] if found and words in found[0].text else None
    # the page may replace the element between finding and reading it (a poll re-rendered it): read again
    return WebDriverWait(browser, WAIT, ignored_exceptions=(StaleElementReferenceException,)).until(seen)


def _enter_decides_nothing(browser: Any, root: Path, box: Any) -> None:
    """Press Enter in a text box (not counted: a probe, not the librarian's work); nothing may change."""
    before = _statuses(root)
    probe.watch(browser)
    box.send_keys(Keys.ENTER)
    # a submission would have started inside the key's default action: no wait (a GET search may navigate)
    assert probe.posted(browser) == [], "Enter in a text box submitted a decision"
    WebDriverWait(browser, WAIT).until(lambda d: d.execute_script("return document.readyState") == "complete")
    assert _statuses(root) == before, "Enter in a text box decided something"
    browser.execute_script("if (document.activeElement) document.activeElement.blur()")  # the probe leaves no focus behind


def _session(me: Counted, browser: Any, name: str, count: int) -> None:
    me.click(f'#facets [data-facet="session"] a[data-value="{name}"]')
    _loaded(browser, "h1", f"{count} candidate(s)")


def test_a_librarians_morning_in_at_most_60_keys_and_clicks(browser: Any, tmp_path: Path, shots: Path) -> None:
    from commonkeep.web.server import start

    root = tmp_path / "root"
    m = morning.seed_morning(root)
    before = {str(r["id"]): str(r["statement"]) for r in Store(root).records()}
    by_id = {str(c["id"]): c for c in Store(root).candidates()}
    server = start(root, morning.WRITER)
    server.web.queue.refresh(wait=True)  # the morning starts on a scored queue (serve prints its URL before)
    try:
        me = Counted(browser)
        me.n += 1  # opening the URL serve printed
        browser.get(server.token_url)
        _loaded(browser, "h1", "100 candidate(s)")
        assert browser.title.startswith("(100) ")  # the tab says how many wait
        sessions = {a.get_attribute("data-value"): int(a.find_element(By.TAG_NAME, "b").text)
                    for a in browser.find_elements(By.CSS_SELECTOR, '#facets [data-facet="session"] a.fv')}
        rejects_in = Counter(str(by_id[c]["provenance"]["session_id"]) for c in m.reject)
        assert len(rejects_in) == 5 and max(rejects_in.values()) <= 4  # spread over every session, not in one

        # Enter in the search box filters (a GET), never decides
        search = browser.find_element(By.ID, "search")
        search.send_keys("parquet")
        _enter_decides_nothing(browser, root, search)
        _loaded(browser, "h1", "2 candidate(s)")
        assert "same as above" in browser.find_element(By.ID, "live").text  # the morning's own repeat, grouped
        browser.get(f"{server.url}/inbox")
        _loaded(browser, "h1", "100 candidate(s)")

        # 1. in each session: tick what to reject with the mouse, r, type why, Enter (the reason box's own action)
        for n, (name, _agent, _count, _scratch) in enumerate([*morning.SESSIONS, (morning.DESIGN[0], "", 0, [])]):
            _session(me, browser, name, sessions[name])
            mine = [c for c in m.reject if by_id[c]["provenance"]["session_id"] == name]
            if m.secret in mine:
                secret = browser.find_element(By.CSS_SELECTOR, f'tr.cand[data-id="{m.secret}"]')
                assert "secret removed" in secret.text and "ghp_" not in secret.text
            if m.injection in mine:
                row = browser.find_element(By.CSS_SELECTOR, f'tr.cand[data-id="{m.injection}"]')
                assert "reads like an instruction" in row.text
            if n == 0:
                _enter_decides_nothing(browser, root, browser.find_element(By.ID, "batch-reason"))  # empty: nothing
            for cid in mine:
                me.click(f'tr.cand[data-id="{cid}"] input.sel')
            me.key("r")
            assert browser.switch_to.active_element.get_attribute("id") == "batch-reason"
            me.type(f"not durable: a note of {name}")
            assert browser.find_element(By.ID, "nsel").text == str(len(mine))  # typing unticked nothing
            me.key(Keys.ENTER)
            _loaded(browser, "#msg", "rejected")
            status = _statuses(root)
            assert all(status[c] == "rejected" for c in mine), name
            assert [c for c in [*m.approve, *m.edit] if status[c] != "new"] == []  # nothing else decided

        # 2. the design session (its view is open), one candidate after the other: e, type, Escape, a
        _loaded(browser, "h1", "5 candidate(s)")
        me.click("tr.cand a.open")
        edited = []
        for n, cid in enumerate(m.edit):
            _loaded(browser, "#cid", cid)
            assert browser.find_element(By.CSS_SELECTOR, "#decide button[type=submit]").get_attribute("disabled")  # no default
            if n == 0:
                _enter_decides_nothing(browser, root, browser.find_element(By.ID, "reason"))
            me.key("e")
            box = browser.switch_to.active_element
            assert box.get_attribute("id") == "edit" and box.get_attribute("value") == morning.EDITS[n]
            if n == 0:
                _enter_decides_nothing(browser, root, box)  # a new line, not a decision
                box.send_keys(Keys.BACKSPACE)
            me.type(morning.ADDED[n] + ".")
            edited.append(morning.EDITS[n] + morning.ADDED[n] + ".")
            me.key(Keys.ESCAPE)
            assert browser.switch_to.active_element.tag_name == "body"
            me.key("a")
            _loaded(browser, "#msg", "approved with an edit")
        # the session is done: back in its (now empty) view of the inbox
        assert "/inbox?session=s-hermes-design" in browser.current_url

        # 3. everything else: all sessions, select all in the view, approve, confirm once
        me.click('#facets [data-facet="session"] a.clear')
        _loaded(browser, "h1", "80 candidate(s)")
        assert "repeat" in browser.find_element(By.CSS_SELECTOR, "tr.group").text
        _enter_decides_nothing(browser, root, browser.find_element(By.ID, "batch-reason"))
        me.key("*")
        me.key("a")
        listed = _loaded(browser, "#choices", "")
        assert all(_statuses(root)[c] == "new" for c in m.approve)  # asked once more: nothing approved yet
        # every candidate acting on a record is listed with its own choice and the record's text; the
        # safe choice is the ticked one (never replace)
        items = {li.get_attribute("data-id"): li for li in listed.find_elements(By.CSS_SELECTOR, "li.item")}
        assert set(m.conflicts) | {c for c in m.repeats if c in items} <= set(items)
        chosen = {}
        for cid, li in items.items():
            if not li.find_elements(By.CSS_SELECTOR, "input[type=radio]:checked"):
                # no default (a conflict, where the server wants a named choice): the librarian keeps both
                me.click(f'li.item[data-id="{cid}"] input[value="keep_both"]')
            chosen[cid] = ticked = li.find_element(By.CSS_SELECTOR, "input[type=radio]:checked").get_attribute("data-choice")
            assert ticked in ("reinforce", "keep_both", "contest", "add"), (cid, ticked)
            assert "now says" in li.text
        browser.save_screenshot(str(shots / "confirm.png"))
        me.click("#confirm-approve")
        _loaded(browser, "#msg", "approved")

        assert me.n <= BUDGET, f"the morning took {me.n} keys and clicks"
        print(f"\nmorning: 100 decisions in {me.n} keys and clicks")
        status = _statuses(root)
        assert Counter(status[c] for c in m.reject) == {"rejected": 15}
        assert Counter(status[c] for c in m.edit) == {"patched": 5}
        assert all(status[c] != "new" for c in m.approve)
        closed = [c for c in m.approve if status[c] == "rejected"]
        # only repeats (or what the server calls one) may be closed, kept as the record they repeat
        assert set(closed) <= set(m.repeats) | {c for c in items if c in m.near}
        records = Store(root).records(active_only=False)
        live = [r for r in records if r.get("status") in ("active", "contested")]
        said = Counter(str(r["statement"]) for r in live)
        assert [s for s, k in said.items() if k > 1] == []  # no duplicate record
        assert set(edited) <= set(said) and not set(morning.EDITS) & set(said)
        assert morning.INJECTION not in said and not any(s.startswith(morning.SECRET_PREFIX) for s in said)
        # no record lost or rewritten: every earlier record is still there with its own words
        now = {str(r["id"]): r for r in records}
        assert {rid: str(now[rid]["statement"]) for rid in before if rid in now} == before
        assert all(now[rid].get("status") in ("active", "contested") for rid in before)
        text = {str(c["id"]): str(c["text"]) for c in Store(root).candidates()}
        plain = [c for c in m.approve if c not in m.repeats and c not in m.conflicts and c not in items]
        assert all(text[c] in said for c in plain)  # every new statement approved is a record
        # a conflict kept both (contested) is a record too; one the server calls an update was reinforced (chosen)
        assert all(text[c] in said for c in m.conflicts if chosen.get(c) in ("keep_both", "contest", "add"))
        asked = [c for c in m.near if c in items]
        print(f"near-duplicates about another subject: {len(m.near) - len(asked)} added as new records, "
              f"{len(asked)} asked about (the server matched them to a record)")
    finally:
        server.stop()
