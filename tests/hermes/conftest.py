"""Fixtures for the Hermes tests: the real ``hermes-agent`` in its cache venv, isolated and keyless.

Every Hermes run is a subprocess of the cache venv's python (``tests/hermes/driver.py``), with
``HOME`` and ``HERMES_HOME`` in a temp folder, no API key, no root variable and a cwd outside the
repository; the model is the scripted fake server on 127.0.0.1 (``tests/fakellm.py``). A missing
venv fails the test with the command to run (``python -m tests.hosts.setup``), never skips.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.hosts import hermes as hermes_host

DRIVER = Path(__file__).with_name("driver.py")
BASE_CONFIG = """\
# my Hermes settings (this comment must survive install and uninstall)
agent:
  environment_probe: false   # keep test turns fast
memory:
  memory_enabled: true
  user_profile_enabled: true
  memory_char_limit: 300  # small on purpose: the projection must fit
  user_char_limit: 200
  nudge_interval: {nudge}
"""


def _clean_env() -> dict[str, str]:
    """This process's env minus anything that could leak a key, a root or a Hermes setting."""
    drop_prefixes = ("HERMES_", "OMP_", "OMPKEEP_", "PI_", "COMMONKEEP_", "OPENAI", "ANTHROPIC", "OPENROUTER")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(drop_prefixes) and not k.endswith(("_API_KEY", "_TOKEN", "_KEY"))}
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env.pop(proxy, None)
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


@dataclass
class HermesWorld:
    """One scratch machine with one Hermes version: home, Hermes home, shared root, cwd."""

    version: str
    base: Path
    python: Path
    runs: list[str] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def hermes_home(self) -> Path:
        return self.base / "hermes"

    @property
    def root(self) -> Path:
        return self.base / "root"

    @property
    def config(self) -> Path:
        return self.hermes_home / "config.yaml"

    @property
    def bin(self) -> Path:
        return self.python.parent

    def memory_file(self, name: str) -> Path:
        return self.hermes_home / "memories" / name

    def env(self, **extra: str) -> dict[str, str]:
        env = _clean_env()
        env.update(HOME=str(self.home), HERMES_HOME=str(self.hermes_home), COMMONKEEP_TEST_ROOT=str(self.root))
        if os.environ.get("COMMONKEEP_STAMPS_DIR"):  # the test's own stamp journal: Hermes and the test share it
            env["COMMONKEEP_STAMPS_DIR"] = os.environ["COMMONKEEP_STAMPS_DIR"]
        env.update(extra)
        return env

    def write_config(self, nudge: int = 50) -> str:
        text = BASE_CONFIG.format(nudge=nudge)
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(text)
        return text

    def run(self, *argv: str, check: bool = True, timeout: float = 120, **env: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, cwd=self.base,
                              env=self.env(**env), stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
        return done

    def commonkeep(self, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
        """The ``commonkeep`` CLI installed in Hermes' venv (as a user of Hermes runs it)."""
        return self.run(str(self.bin / "commonkeep"), *args, check=check, **env)

    def install(self) -> subprocess.CompletedProcess[str]:
        return self.commonkeep("hermes", "install", "--root", str(self.root))

    def drive(self, scenario: str, **env: str) -> dict[str, Any]:
        """Run one driver scenario on the real Hermes; returns its RESULT object."""
        done = self.run(str(self.python), str(DRIVER), scenario, **env)
        for line in done.stdout.splitlines():
            if line.startswith("RESULT "):
                result: dict[str, Any] = json.loads(line[len("RESULT "):])
                return result
        raise AssertionError(f"driver {scenario} printed no result\nstdout:\n{done.stdout[-3000:]}\n"
                             f"stderr:\n{done.stderr[-3000:]}")

    def inbox(self) -> list[dict[str, Any]]:
        path = self.root / "inbox" / "captured.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def approve_all(self) -> dict[str, Any]:
        """The librarian ratifies the L1 (USER.md) candidates, then curates and applies the rest."""
        lib = ("--root", str(self.root), "--role", "librarian")
        for cand in self.inbox():
            if cand.get("status") == "new" and cand.get("proposed_layer") == "L1":
                self.commonkeep("ratify", cand["id"], *lib)
        done = self.commonkeep("curate", "--min-confidence", "0", "--min-evidence", "1", "--json", *lib)
        proposal: dict[str, Any] = json.loads(done.stdout)
        if proposal["ops"]:
            self.commonkeep("apply", proposal["patch_id"], "--ops", ",".join(o["op_id"] for o in proposal["ops"]), *lib)
        return proposal


def make_world(version: str, tmp_path: Path) -> HermesWorld:
    try:
        python = hermes_host.require_python(version)
    except RuntimeError as exc:
        pytest.fail(str(exc))
    world = HermesWorld(version=version, base=tmp_path, python=python)
    world.home.mkdir(parents=True, exist_ok=True)
    world.hermes_home.mkdir(parents=True, exist_ok=True)  # Hermes creates its home on first run
    return world


@pytest.fixture
def hermes19(tmp_path: Path) -> HermesWorld:
    return make_world(hermes_host.NEWEST, tmp_path)


@pytest.fixture
def hermes_oldest(tmp_path: Path) -> HermesWorld:
    return make_world(hermes_host.OLDEST, tmp_path)
