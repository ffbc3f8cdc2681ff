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
    """The resolved root, a human-readable name of the rule that chose it, and settings files
    that were skipped because they could not be read (so a typo never silently moves the root)."""

    path: Path
    rule: str
    notes: tuple[str, ...] = ()


def home_dir(env: Mapping[str, str]) -> Path:
    """``$HOME``, falling back to the OS home (as upstream does)."""
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _settings_value(path: Path, key: str, notes: list[str]) -> str | None:
    """``<key>.localPath`` of a settings file; why a file that exists was skipped goes to ``notes``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError as exc:
        note = f"{path}: skipped, not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        if note not in notes:
            notes.append(note)
        return None
    except (OSError, ValueError, RecursionError) as exc:
        note = f"{path}: skipped, cannot be read ({exc})"
        if note not in notes:
            notes.append(note)
        return None
    section = data.get(key) if isinstance(data, dict) else None
    value = section.get("localPath") if isinstance(section, dict) else None
    if value is not None and not (isinstance(value, str) and value.strip()):
        notes.append(f"{path}: skipped {key}.localPath, not a non-empty string")
    return value if isinstance(value, str) and value.strip() else None


def _env_notes(var: str, value: str, path: Path) -> tuple[str, ...]:
    """Why a root variable's value is likely a mistake. It is used as written, as OmpKeep uses it (so
    both still agree), but a relative path moves with the folder a command runs in: each agent
    started elsewhere would use another root, silently."""
    if value != value.strip():
        return (f"${var} has spaces around its value ({value!r}): they are part of the path; remove them",)
    if not path.is_absolute():
        return (f"${var} is a relative path ({value!r}): the root depends on the folder a command runs in "
                f"(here {Path.cwd()}), so agents started elsewhere use other roots; set an absolute path",)
    return ()


def resolve_root(
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    explicit: str | None = None,
) -> RootChoice:
    """Resolve the memory root; ``explicit`` (the ``--root`` flag) beats every rule."""
    env = os.environ if env is None else env
    if explicit is not None and not explicit.strip():
        from commonkeep.errors import BadInput

        raise BadInput("--root is empty; nothing was done",
                       hint="name the memory root folder (`commonkeep root` shows the one the rules choose), or leave --root out")
    if explicit:
        return RootChoice(Path(explicit).expanduser().resolve(), "--root")
    for var in ENV_RULES:
        value = env.get(var)
        if value:
            path = Path(value).expanduser()
            return RootChoice(path.resolve(), f"${var}", _env_notes(var, value, path))
    base = Path(cwd) if cwd is not None else Path.cwd()
    notes: list[str] = []
    for rel, key, sub in SETTINGS_RULES:
        value = _settings_value(base / rel, key, notes)
        if value:
            root = Path(value).expanduser()
            if not root.is_absolute():
                root = base / root
            if sub:
                root = root / sub
            return RootChoice(root.resolve(), f"{rel} {key}.localPath", tuple(notes))
    home = home_dir(env)
    if (home / LEGACY).is_dir():
        return RootChoice(home / LEGACY, f"legacy ~/{LEGACY} (exists)", tuple(notes))
    return RootChoice(home / FALLBACK, f"default ~/{FALLBACK}", tuple(notes))


def require_root(root: Path | str) -> Path:
    """``root`` when it is a memory root (has a ``memory/`` folder); otherwise ``BadInput``
    (exit 2) saying so. Creates nothing: a typo'd ``--root`` must not become an empty root."""
    base = Path(root)
    if not (base / "memory").is_dir():
        from commonkeep.errors import BadInput

        raise BadInput(f"no memory root at {base} (run `commonkeep init` or check --root / $OMP_MEMORY_ROOT)")
    return base
