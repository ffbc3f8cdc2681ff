"""Shared fixtures: a fresh memory root per test, a clean environment for root resolution, a
git identity of the tests' own (a fresh account has none, and tests never read the user's git config),
a stamp journal of the test's own (``COMMONKEEP_STAMPS_DIR``), and no agent mark
(``COMMONKEEP_AGENT_HOST``) left by an in-process Hermes plugin.

Tiers (``scripts/test`` runs the fast one; ``scripts/test --all`` adds the rest): ``hermes`` and
``omp`` run the real hosts; ``browser`` drives Chromium (every test using the ``browser`` fixture is
marked here, so tiers are chosen by marker, never by file lists)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# this one process loads the Hermes plugin many times: it must not lower its own hard limits for good
# (``commonkeep.gate.agent_shell.set_kernel_mark``); a test of the mark starts a host process without it
os.environ.setdefault("COMMONKEEP_KERNEL_MARK", "off")

ROOT_VARS = ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_ROLE", "COMMONKEEP_NOW", "COMMONKEEP_AGENT_HOST")


GIT_IDENTITY = "[user]\n\tname = commonkeep tests\n\temail = tests@commonkeep.invalid\n"


# fixtures that need a real host or a browser, and the tier marker each one implies
TIER_FIXTURES = {"browser": "browser", "hermes19": "hermes", "hermes_oldest": "hermes",
                 "omp_cmd": "omp", "omp_acp_cmd": "omp"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            if fixture in TIER_FIXTURES:
                item.add_marker(TIER_FIXTURES[fixture])


@pytest.fixture(scope="session")
def git_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A global git config holding only the tests' identity."""
    path = tmp_path_factory.mktemp("git") / "gitconfig"
    path.write_text(GIT_IDENTITY, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, git_config: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    for var in ROOT_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(git_config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # created on first use, like the real one under ~/.local/state/commonkeep
    monkeypatch.setenv("COMMONKEEP_STAMPS_DIR", str(tmp_path_factory.mktemp("stamps", numbered=True) / "state"))
    monkeypatch.setenv("COMMONKEEP_SCANNER_SERVICE", "0")  # no test leaves a scanner service running (tests/governance/test_scanner_service.py starts its own)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    from commonkeep.store.layout import ensure_layout

    return ensure_layout(tmp_path / "memroot").root
