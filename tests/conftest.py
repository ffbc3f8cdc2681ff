"""Shared fixtures: a fresh memory root per test, a clean environment for root resolution, a stamp
journal of the test's own (``COMMONKEEP_STAMPS_DIR``), and no agent mark (``COMMONKEEP_AGENT_HOST``)
left by an in-process Hermes plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT_VARS = ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_ROLE", "COMMONKEEP_NOW", "COMMONKEEP_AGENT_HOST")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for var in ROOT_VARS:
        monkeypatch.delenv(var, raising=False)
    # created on first use, like the real one under ~/.local/state/commonkeep
    monkeypatch.setenv("COMMONKEEP_STAMPS_DIR", str(tmp_path_factory.mktemp("stamps", numbered=True) / "state"))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    from commonkeep.store.layout import ensure_layout

    return ensure_layout(tmp_path / "memroot").root
