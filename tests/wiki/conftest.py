"""Fixtures: a fresh wiki project folder per test, and a helper that writes raw sources."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

WriteRaw = Callable[..., str]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty memory folder with ``raw/`` (the project is not a git repository yet)."""
    p = tmp_path / "memory"
    (p / "raw").mkdir(parents=True)
    return p


@pytest.fixture
def write_raw(project: Path) -> WriteRaw:
    """``write_raw("name.md", text, date="2025-01-02")`` -> ``"raw/name.md"``."""

    def write(name: str, text: str, date: str | None = None) -> str:
        rel = f"raw/{name}"
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        header = f"---\ndate: {date}\n---\n" if date else ""
        path.write_text(header + text + "\n", encoding="utf-8")
        return rel

    return write
