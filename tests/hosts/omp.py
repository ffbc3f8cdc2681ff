"""Install the real OMP (oh-my-pi) host and the Bun runtime it needs, from npm, for the OMP tests.

Both packages go into one npm project under ``<cache>/omp/`` (``$COMMONKEEP_HOST_CACHE`` or
``~/.cache/commonkeep-hosts``), pinned exactly (``contracts/omp-host.md`` §0, §9): npm ``latest``
fails with ``ETARGET`` and OMP needs Bun, not Node. About 750 MB and a minute on a cold cache.

Idempotent: when the installed ``package.json`` files already carry the pinned versions nothing
runs. The tests call :func:`require_omp`, which fails (never skips) with the command to run when
OMP is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

OMP_PACKAGE = "@oh-my-pi/pi-coding-agent"
OMP_VERSION = "18.2.3"
BUN_PACKAGE = "bun"
BUN_VERSION = "1.4.5"
SETUP_COMMAND = "python -m tests.hosts.setup"


def cache_dir() -> Path:
    """The host cache folder (``$COMMONKEEP_HOST_CACHE`` or ``~/.cache/commonkeep-hosts``)."""
    raw = os.environ.get("COMMONKEEP_HOST_CACHE")
    return Path(raw).expanduser() if raw else Path.home() / ".cache" / "commonkeep-hosts"


def omp_dir() -> Path:
    """The npm project that holds OMP and Bun."""
    return cache_dir() / "omp"


def bin_dir() -> Path:
    """``node_modules/.bin`` of that project: put it first on PATH to run ``omp`` (and ``bun``)."""
    return omp_dir() / "node_modules" / ".bin"


def _installed_version(package: str) -> str | None:
    manifest = omp_dir() / "node_modules" / package / "package.json"
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, str) else None


def missing() -> list[str]:
    """What is not installed at the pinned version (empty when OMP is ready)."""
    gaps = []
    for package, version in ((OMP_PACKAGE, OMP_VERSION), (BUN_PACKAGE, BUN_VERSION)):
        found = _installed_version(package)
        if found != version:
            gaps.append(f"{package}@{version} (found {found or 'nothing'})")
    for name in ("omp", "bun"):
        if not (bin_dir() / name).exists():
            gaps.append(f"{bin_dir() / name}")
    return gaps


def ensure() -> str:
    """Install OMP and Bun at the pinned versions unless already there; returns what was done."""
    if not missing():
        return f"omp {OMP_VERSION} + bun {BUN_VERSION}: already installed in {omp_dir()}"
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH; install Node.js (20+) with npm to set up the OMP host")
    target = omp_dir()
    target.mkdir(parents=True, exist_ok=True)
    manifest = target / "package.json"
    if not manifest.exists():
        manifest.write_text(json.dumps({"name": "commonkeep-omp-host", "private": True}, indent=2) + "\n")
    cmd = [
        npm,
        "install",
        "--no-audit",
        "--no-fund",
        "--save-exact",
        f"{BUN_PACKAGE}@{BUN_VERSION}",
        f"{OMP_PACKAGE}@{OMP_VERSION}",
    ]
    subprocess.run(cmd, cwd=target, check=True)
    gaps = missing()
    if gaps:
        raise RuntimeError(f"npm install finished but these are missing: {', '.join(gaps)}")
    return f"omp {OMP_VERSION} + bun {BUN_VERSION}: installed into {target}"


def require_omp() -> Path:
    """The ``omp`` executable for the tests; raises (so the test fails) when it is not installed."""
    gaps = missing()
    if gaps:
        raise RuntimeError(
            f"OMP host not installed in {omp_dir()} (missing: {', '.join(gaps)}); run `{SETUP_COMMAND}`"
        )
    return bin_dir() / "omp"
