"""Seeing that a key decided nothing, without waiting a fixed time.

``watch(browser)`` installs a listener on the page that notes every form submission (its form,
the button that sent it and the method) in ``sessionStorage``, which outlives a navigation to
the same server. A submission happens synchronously inside the key's (or click's) default
action, which WebDriver has dispatched by the time ``send_keys`` returns, so ``posted(browser)``
read right after the key says whether the key sent a decision: no sleep, no race with a slow
server.
"""

from __future__ import annotations

from typing import Any

WATCH = """
sessionStorage.setItem("probe", "[]");
document.addEventListener("submit", function (e) {
  var b = e.submitter, seen = JSON.parse(sessionStorage.getItem("probe") || "[]");
  seen.push([e.target.id || "form", b ? (b.value || b.id) : "", (e.target.method || "get").toLowerCase()]);
  sessionStorage.setItem("probe", JSON.stringify(seen));
}, true);
"""


def watch(browser: Any) -> None:
    browser.execute_script(WATCH)


def submitted(browser: Any) -> list[list[str]]:
    """Every submission since ``watch``: ``[form id, button value, method]``."""
    import json

    return list(json.loads(browser.execute_script("return sessionStorage.getItem('probe') || '[]'")))


def posted(browser: Any) -> list[list[str]]:
    """The submissions that could decide something (POST)."""
    return [s for s in submitted(browser) if s[2] == "post"]


def quiet(browser: Any) -> bool:
    """Nothing at all was submitted since ``watch``."""
    return submitted(browser) == []
