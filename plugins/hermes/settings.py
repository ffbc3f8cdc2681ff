"""Where one Hermes profile keeps its files, and what its ``config.yaml`` says about memory.

Pure Python with no Hermes import, so the installer, the ``after_apply`` listener and the tests
use the same answers as the plugin running inside Hermes (contracts/hermes-host.md §5.1, §10.2).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput


class ConfigError(BadInput, ValueError):
    """Hermes' ``config.yaml`` cannot be read or edited safely (exit 2; still a ``ValueError``)."""

#: Hermes' defaults (``hermes_cli/config.py``) when ``config.yaml`` does not set the limits.
DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375

#: Name of the provider (``memory.provider``) and of the general plugin (``plugins.enabled``).
PROVIDER_NAME = "commonkeep"
PLUGIN_KEY = "commonkeep-governance"
#: Our own block inside Hermes' ``memory:`` section (Hermes tolerates unknown sub-keys).
CONFIG_BLOCK = "commonkeep"

TARGET_FILES = {"memory": "MEMORY.md", "user": "USER.md"}

#: ``memory.commonkeep.auto_curate``: what Hermes does with the inbox when a session finalizes.
AUTO_CURATE_KEY = "auto_curate"
AUTO_CURATE_POLICIES = ("off", "propose", "high-only")
#: ``memory.commonkeep.role``: the role Hermes acts as for auto-curation (else ``$COMMONKEEP_ROLE``).
ROLE_KEY = "role"


def hermes_home(explicit: str | Path | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The Hermes home: ``explicit``, else ``$HERMES_HOME``, else ``~/.hermes``.

    Inside a running Hermes the caller passes ``hermes_constants.get_hermes_home()`` (it knows
    about named profiles).
    """
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ if env is None else env
    raw = env.get("HERMES_HOME")
    if raw:
        return Path(raw).expanduser()
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".hermes"


@dataclass(frozen=True)
class HermesProfile:
    """The files of one Hermes home (profile) that commonkeep reads or writes."""

    home: Path

    @property
    def config_path(self) -> Path:
        return self.home / "config.yaml"

    @property
    def memories_dir(self) -> Path:
        return self.home / "memories"

    def memory_file(self, target: str) -> Path:
        return self.memories_dir / TARGET_FILES[target]

    @property
    def state_dir(self) -> Path:
        """commonkeep's own files inside the Hermes home (sidecar, backups, handoffs)."""
        return self.home / "commonkeep"

    @property
    def shim_dir(self) -> Path:
        """The provider shim folder Hermes 0.17–0.19 discovers (contracts/hermes-host.md §6.4)."""
        return self.home / "plugins" / PROVIDER_NAME

    def load_config(self) -> dict[str, Any]:
        """``config.yaml`` as a dict (empty when missing); a broken file is a clear error."""
        try:
            text = self.config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        import yaml  # here, not at the top: apply's after_apply imports this module on every decision

        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{self.config_path}: not valid YAML ({_first_line(exc)})",
                              hint="fix the file, or restore a backup from commonkeep/backups/ in the Hermes home") from exc
        return data if isinstance(data, dict) else {}

    def memory_section(self) -> dict[str, Any]:
        section = self.load_config().get("memory")
        return section if isinstance(section, dict) else {}

    def char_limits(self) -> dict[str, int]:
        """``{"memory": memory_char_limit, "user": user_char_limit}`` from the config."""
        mem = self.memory_section()

        def limit(key: str, default: int) -> int:
            value = mem.get(key, default)
            return value if isinstance(value, int) and value > 0 else default

        return {
            "memory": limit("memory_char_limit", DEFAULT_MEMORY_CHAR_LIMIT),
            "user": limit("user_char_limit", DEFAULT_USER_CHAR_LIMIT),
        }

    def commonkeep_block(self) -> dict[str, Any]:
        block = self.memory_section().get(CONFIG_BLOCK)
        return block if isinstance(block, dict) else {}

    def auto_curate_policy(self) -> str:
        """``memory.commonkeep.auto_curate``: ``off`` (default), ``propose`` or ``high-only``.

        YAML reads a bare ``off`` as ``false``; both mean off. Any other value is a ``ConfigError``.
        """
        value = self.commonkeep_block().get(AUTO_CURATE_KEY)
        if value is None or value is False:
            return "off"
        if isinstance(value, str) and value.strip() in AUTO_CURATE_POLICIES:
            return value.strip()
        raise ConfigError(f"{self.config_path}: memory.{CONFIG_BLOCK}.{AUTO_CURATE_KEY} is {value!r}; "
                          f"use one of {', '.join(AUTO_CURATE_POLICIES)}",
                          hint=f"commonkeep hermes install --auto-curate {'|'.join(AUTO_CURATE_POLICIES)}")

    def configured_role(self) -> str | None:
        """``memory.commonkeep.role`` when set (a non-empty string), else ``None``."""
        value = self.commonkeep_block().get(ROLE_KEY)
        return value.strip() if isinstance(value, str) and value.strip() else None

    def shared_root(self, env: Mapping[str, str] | None = None) -> tuple[Path, str]:
        """The shared memory root this profile uses and the rule that chose it.

        ``memory.commonkeep.root`` (written by ``commonkeep hermes install``) wins; otherwise the
        core's resolution rules (``OMP_MEMORY_ROOT`` > … , contracts/ompkeep-store.md §1.3).
        """
        configured = self.commonkeep_block().get("root")
        if isinstance(configured, str) and configured.strip():
            return Path(configured).expanduser(), f"{self.config_path} memory.{CONFIG_BLOCK}.root"
        from commonkeep.store.root import resolve_root

        choice = resolve_root(env=env)
        return choice.path, choice.rule


def _first_line(exc: Exception) -> str:
    """A YAML error in one line: what and where (``line L, column C``)."""
    mark = getattr(exc, "problem_mark", None)
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{what} at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else str(what)


def current_profile() -> HermesProfile:
    """The profile of the running Hermes process (profile-aware), or of ``$HERMES_HOME``."""
    try:
        from hermes_constants import get_hermes_home

        return HermesProfile(Path(get_hermes_home()))
    except ImportError:
        return HermesProfile(hermes_home())
