"""Which memory root a real OMP session resolves, computed the way OMP and our extension do.

OMP (``pi-utils`` ``env.ts``, contracts/omp-host.md §4.1) starts from the process environment and
fills each key that is unset or empty from, in order, ``<launch cwd>/.env``, ``<agent dir>/.env``,
``~/.omp/.env`` and ``~/.env``. Within each file every ``OMP_X`` key is then copied to ``PI_X``,
overriding a ``PI_X`` line of the same file: so a user line ``PI_MEMORY_ROOT=/x`` next to our
block's ``OMP_MEMORY_ROOT=/shared`` resolves to ``/shared`` in a real session (no split), while the
same line alone wins over the root baked into the extension (a real split).

Our extension then uses the first of ``OMP_MEMORY_ROOT``, ``OMPKEEP_ROOT``, ``PI_MEMORY_ROOT``
that is set, else its baked root, and fills the unset ones with it. OmpKeep reads
``OMP_MEMORY_ROOT`` first; upstream pi-persistent-intelligence reads only ``PI_MEMORY_ROOT``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT_VARS: tuple[str, ...] = ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT")


def parse_env_text(text: str) -> dict[str, str]:
    """``KEY=value`` lines of a ``.env`` text (``export`` prefix, quotes, comments), then the
    ``OMP_X`` → ``PI_X`` copy OMP applies within one file."""
    keys: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or "=" not in stripped:
            continue
        key, _, value = stripped.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        keys[key.strip()] = value
    for key in list(keys):
        if key.startswith("OMP_"):
            keys["PI_" + key[4:]] = keys[key]
    return keys


def _file_keys(path: Path) -> dict[str, str]:
    try:
        return parse_env_text(path.read_bytes().decode("utf-8", errors="replace"))
    except OSError:
        return {}


def env_files(agent: Path, home: Path, cwd: Path | None = None) -> list[Path]:
    """The ``.env`` files OMP reads, first wins: launch folder, agent dir, ``~/.omp``, ``~``."""
    files = [agent / ".env", home / ".omp" / ".env", home / ".env"]
    return ([cwd / ".env"] if cwd is not None else []) + files


@dataclass
class Resolved:
    """What an OMP session started with ``launch`` env (from ``cwd``) sees."""

    root: str | None  # the root our extension uses ("" / None when nothing chose one)
    rule: str
    values: dict[str, str | None] = field(default_factory=dict)  # each root variable as OMP's env has it
    sources: dict[str, str] = field(default_factory=dict)  # where each set variable came from

    def split(self) -> list[str]:
        """Variables set to a root other than :attr:`root` (OmpKeep and upstream pi-PI would differ)."""
        if not self.root:
            return []
        return [f"{var}={value} (from {self.sources[var]})" for var, value in self.values.items()
                if value and _norm(value) != _norm(self.root)]


def _norm(p: str) -> str:
    return str(Path(p).expanduser().resolve())


def resolve(
    baked: str | None,
    *,
    agent: Path,
    home: Path,
    launch: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Resolved:
    """The root variables and the root an OMP session gets (``launch``: its process env)."""
    launch = {} if launch is None else launch
    values: dict[str, str | None] = {}
    sources: dict[str, str] = {}
    files = [(path, _file_keys(path)) for path in env_files(agent, home, cwd)]
    for var in ROOT_VARS:
        if launch.get(var):
            values[var], sources[var] = launch[var], "the launch environment"
            continue
        values[var] = None
        for path, keys in files:
            if keys.get(var):
                values[var], sources[var] = keys[var], str(path)
                break
    for var in ROOT_VARS:
        value = values[var]
        if value:
            return Resolved(_norm(value), f"${var} from {sources[var]}", values, sources)
    if baked:
        return Resolved(_norm(baked), "the root baked into the extension by `commonkeep omp install`", values, sources)
    return Resolved(None, "nothing sets a root", values, sources)


def home_of(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())
