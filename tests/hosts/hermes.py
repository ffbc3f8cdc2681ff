"""Install the real Hermes Agent (``hermes-agent`` from PyPI) into cached venvs for the host tests.

One venv per supported version under ``<cache>/hermes/<version>/``, with commonkeep installed
editable from this checkout (so Hermes sees the ``hermes_agent.plugins`` entry point and imports
``commonkeep_hermes`` from the working tree). The cache folder is ``$COMMONKEEP_HOST_CACHE`` or
``~/.cache/commonkeep-hosts``.

Idempotent: a venv whose marker file matches the version, this checkout's path and its
``pyproject.toml`` is left alone; a moved checkout or changed entry points only re-run the
editable install (seconds), never the Hermes install (about 40 s per version).

Run through ``python -m tests.hosts.setup``; the tests call :func:`require_python`, which fails
(never skips) with the command to run when a venv is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

#: Newest first. 0.17.0 is the oldest release with ``tool_execution`` middleware and
#: ``memory.write_approval`` (contracts/hermes-host.md §1.1); older releases are not supported.
VERSIONS: tuple[str, ...] = ("0.19.0", "0.18.2", "0.17.0")
NEWEST = VERSIONS[0]
MIDDLE = VERSIONS[1]  # the last 0.18 release: the governed loop runs on it too
OLDEST = VERSIONS[-1]

REPO = Path(__file__).resolve().parents[2]
SETUP_COMMAND = "python -m tests.hosts.setup"


def cache_dir() -> Path:
    """The host cache folder (``$COMMONKEEP_HOST_CACHE`` or ``~/.cache/commonkeep-hosts``)."""
    raw = os.environ.get("COMMONKEEP_HOST_CACHE")
    return Path(raw).expanduser() if raw else Path.home() / ".cache" / "commonkeep-hosts"


def venv_dir(version: str) -> Path:
    """Where the venv for one Hermes version lives."""
    return cache_dir() / "hermes" / version


def venv_python(version: str) -> Path:
    return venv_dir(version) / "bin" / "python"


def _marker(version: str) -> Path:
    return venv_dir(version) / "commonkeep-host.json"


def _wanted_marker(version: str) -> dict[str, str]:
    pyproject = (REPO / "pyproject.toml").read_bytes()
    return {
        "hermes_agent": version,
        "commonkeep_repo": str(REPO),
        "pyproject_sha256": hashlib.sha256(pyproject).hexdigest(),
    }


def _read_marker(version: str) -> dict[str, str]:
    try:
        data = json.loads(_marker(version).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _pip(version: str, *args: str) -> None:
    cmd = [str(venv_python(version)), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        # pip's notes about unreachable local index folders are noise; the real error follows them
        noise = "is ignored: it is neither a file nor a directory"
        print("\n".join(ln for ln in done.stderr.splitlines() if noise not in ln), file=sys.stderr)
        raise subprocess.CalledProcessError(done.returncode, cmd)


def ensure(version: str) -> str:
    """Make the venv for ``version`` ready; returns what was done (for the setup log)."""
    marker = _read_marker(version)
    wanted = _wanted_marker(version)
    if marker == wanted and venv_python(version).exists():
        return "ready"
    if marker.get("hermes_agent") == version and venv_python(version).exists():
        # Hermes is there; only this checkout's editable install (path, entry points or dependencies)
        # changed. With its dependencies: a new one (a maintained detector, say) must reach Hermes'
        # venv too; pip keeps every requirement already satisfied, so Hermes' own pins stay.
        _pip(version, "-e", str(REPO))
        _marker(version).write_text(json.dumps(wanted, indent=2) + "\n")
        return "commonkeep re-linked"
    target = venv_dir(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    # One resolver run: commonkeep's ranges must accept Hermes' exact pins and never upgrade them.
    _pip(version, f"hermes-agent=={version}", "-e", str(REPO))
    _marker(version).write_text(json.dumps(wanted, indent=2) + "\n")
    return "installed"


def require_python(version: str) -> Path:
    """The venv's python for the tests; raises ``RuntimeError`` with the fix when it is missing."""
    py = venv_python(version)
    marker = _read_marker(version)
    if not py.exists() or marker.get("hermes_agent") != version:
        raise RuntimeError(
            f"hermes-agent {version} is not installed at {venv_dir(version)}; "
            f"run `{SETUP_COMMAND}` (scripts/test does) to install the real Hermes hosts"
        )
    if marker.get("commonkeep_repo") != str(REPO):
        raise RuntimeError(
            f"the Hermes venv {venv_dir(version)} runs commonkeep from {marker.get('commonkeep_repo')}, "
            f"not this checkout ({REPO}); run `{SETUP_COMMAND}` to re-link it"
        )
    return py


def main() -> int:
    """Install every supported version; returns a process exit code."""
    failed = 0
    for version in VERSIONS:
        try:
            done = ensure(version)
        except (OSError, subprocess.CalledProcessError) as exc:
            print(f"hosts: hermes-agent {version}: FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"hosts: hermes-agent {version}: {done} ({venv_dir(version)})")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
