"""Fixtures for the OMP tests: an isolated HOME, a shared root and a clean environment for ``omp``.

The environment given to ``omp acp`` is built from scratch (HOME, PATH, locale), so no API key,
no root variable and no Hermes setting of the developer's machine leaks into the host under test
(contracts/omp-host.md §10.3). OMP itself comes from ``tests/hosts/omp.py``; when it is missing
the fixture raises, so the tests fail (never skip) with the command to run.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.hosts import omp as omp_host

# Resolved before any test changes HOME, so the host cache stays the real one.
HOST_CACHE = omp_host.cache_dir()


@dataclass
class OmpWorld:
    """One scratch machine: a HOME with OMP's agent dir, a shared root and a project folder."""

    home: Path
    root: Path
    project: Path

    @property
    def agent_dir(self) -> Path:
        return self.home / ".omp" / "agent"

    @property
    def extension(self) -> Path:
        return self.agent_dir / "extensions" / "commonkeep.ts"

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment for ``omp``: no root variable, no API key, only what is given."""
        env = {
            "HOME": str(self.home),
            "PATH": f"{omp_host.bin_dir()}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "LANG": "C.UTF-8",
        }
        if os.environ.get("COMMONKEEP_STAMPS_DIR"):  # the test's own stamp journal: the extension and the test share it
            env["COMMONKEEP_STAMPS_DIR"] = os.environ["COMMONKEEP_STAMPS_DIR"]
        env.update(extra)
        return env

    def session_file(self, session_id: str) -> Path:
        hits = glob.glob(str(self.agent_dir / "sessions" / "*" / f"*_{session_id}.jsonl"))
        assert hits, f"no session file for {session_id} under {self.agent_dir / 'sessions'}"
        return Path(hits[0])

    def session_entries(self, session_id: str) -> list[dict[str, Any]]:
        lines = self.session_file(session_id).read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def world() -> Iterator[OmpWorld]:
    # A short base path, not pytest's deep tmp_path: `commonkeep doctor` (run by the extension)
    # also checks the roundtable broker socket under HOME, and Unix socket paths must stay short.
    base = Path(tempfile.mkdtemp(prefix="ck-omp-"))
    w = OmpWorld(home=base / "home", root=base / "shared-root", project=base / "project")
    for d in (w.home, w.project):
        d.mkdir(parents=True)
    yield w
    shutil.rmtree(base, ignore_errors=True)


def _no_network_prefix() -> list[str]:
    """``unshare -n`` where this user may create a network namespace (root, as in CI), else nothing.

    OMP probes local model servers at start (ollama, llama.cpp, LM Studio on 127.0.0.1); in an
    empty network namespace nothing at all is reachable, so a model server on the developer's
    machine cannot change what the tests see, and the run proves OMP's part needs no network.
    """
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


@pytest.fixture(scope="session")
def omp_cmd() -> list[str]:
    """How to run ``omp`` (before its subcommand); fails the test when OMP is not installed."""
    return [*_no_network_prefix(), str(omp_host.require_omp())]


@pytest.fixture(scope="session")
def omp_acp_cmd(omp_cmd: list[str]) -> list[str]:
    return [*omp_cmd, "acp"]


@pytest.fixture(autouse=True)
def _no_host_settings_from_the_developer(monkeypatch: pytest.MonkeyPatch, world: OmpWorld) -> None:
    """The test process must not see the developer's roots, OMP agent dir or Hermes home."""
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "PI_CODING_AGENT_DIR", "HERMES_HOME", "OMPKEEP_HANDOFF"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COMMONKEEP_HOST_CACHE", str(HOST_CACHE))
    monkeypatch.setenv("HOME", str(world.home))
