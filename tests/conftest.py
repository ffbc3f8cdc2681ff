"""Shared fixtures: a fresh memory root per test, and a clean environment for root resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT_VARS = ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_ROLE", "COMMONKEEP_NOW")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ROOT_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    from commonkeep.store.layout import ensure_layout

    return ensure_layout(tmp_path / "memroot").root
