"""Fixtures for the web app tests: a seeded memory root, a running server, and a real headless
Chromium (Debian's ``/usr/bin/chromium`` driven through ``/usr/bin/chromedriver`` by Selenium;
nothing is downloaded). ``scripts/test`` installs both with apt-get when they are missing; a
missing browser fails the test with that command, never skips.

Screenshots of the main pages go to ``$COMMONKEEP_SCREENSHOTS`` (default: the pytest temp
folder's ``screenshots/``); ``docs/images/`` holds a copy for the README.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.seed import seed

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1400,1000")


def _missing() -> str | None:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not path.exists():
            return (f"{path} is missing: the browser tests drive Debian's chromium; install it with "
                    "`apt-get update && apt-get install -y chromium chromium-driver` (scripts/test does)")
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the whole session (a fresh profile folder)."""
    problem = _missing()
    if problem:
        pytest.fail(problem)
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager must never try to download a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="ck-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=str(CHROMEDRIVER)))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    raw = os.environ.get("COMMONKEEP_SCREENSHOTS")
    folder = Path(raw) if raw else tmp_path_factory.getbasetemp() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    seed(path)
    return path


@pytest.fixture
def serve(root: Path) -> Iterator[Any]:
    """``serve(role=..., **kw)`` starts a server on ``root`` (port 0); all are stopped after the test."""
    from commonkeep.web.server import start

    running: list[Any] = []

    def _start(role: str | None = "librarian", **kwargs: Any) -> Any:
        server = start(root, role, **kwargs)
        running.append(server)
        return server

    yield _start
    for server in running:
        server.stop()
