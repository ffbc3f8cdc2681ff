"""Which memory root this process uses, and why (contracts/ompkeep-store.md §1.3).

Resolution is table-driven so the settings ranks can be reordered without code changes:
``OMP_MEMORY_ROOT`` > ``OMPKEEP_ROOT`` > ``PI_MEMORY_ROOT`` > local settings cascade >
legacy ``~/.pi/agent/pi-memory/`` (only if it exists) > ``~/.omp/agent/omp-memory/``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV_RULES: tuple[str, ...] = ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT")

# (settings file relative to cwd, top-level key, subfolder appended to localPath or "")
SETTINGS_RULES: tuple[tuple[str, str, str], ...] = (
    (".omp/settings.json", "ompkeep", ""),
    (".omp/settings.json", "omp", "omp-memory"),
    (".pi/settings.json", "pi-persistent-intelligence", ""),
    (".pi/settings.json", "pi-pi", "pi-memory"),
)

LEGACY = ".pi/agent/pi-memory"
FALLBACK = ".omp/agent/omp-memory"


@dataclass(frozen=True)
class RootChoice:
    """The resolved root and a human-readable name of the rule that chose it."""

    path: Path
    rule: str


def home_dir(env: Mapping[str, str]) -> Path:
    """``$HOME``, falling back to the OS home (as upstream does)."""
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _settings_value(path: Path, key: str) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    section = data.get(key) if isinstance(data, dict) else None
    value = section.get("localPath") if isinstance(section, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def resolve_root(
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    explicit: str | None = None,
) -> RootChoice:
    """Resolve the memory root; ``explicit`` (the ``--root`` flag) beats every rule."""
    env = os.environ if env is None else env
    if explicit:
        return RootChoice(Path(explicit).expanduser().resolve(), "--root")
    for var in ENV_RULES:
        value = env.get(var)
        if value:
            return RootChoice(Path(value).expanduser().resolve(), f"${var}")
    base = Path(cwd) if cwd is not None else Path.cwd()
    for rel, key, sub in SETTINGS_RULES:
        value = _settings_value(base / rel, key)
        if value:
            root = Path(value).expanduser()
            if not root.is_absolute():
                root = base / root
            if sub:
                root = root / sub
            return RootChoice(root.resolve(), f"{rel} {key}.localPath")
    home = home_dir(env)
    if (home / LEGACY).is_dir():
        return RootChoice(home / LEGACY, f"legacy ~/{LEGACY} (exists)")
    return RootChoice(home / FALLBACK, f"default ~/{FALLBACK}")
