"""commonkeep plugin hooks of the OMP part (entry point ``omp`` in group ``commonkeep``).

Adds the ``commonkeep omp`` subcommand and a ``doctor`` finding on whether OMP's extension is
installed for the root being checked.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep.hookspecs import hookimpl


@hookimpl
def commonkeep_cli_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    from commonkeep_omp.cli import configure

    return {"omp": (configure, "the OMP extension and ACP dispatch (install | uninstall | status | dispatch)")}


@hookimpl
def commonkeep_doctor_checks(root: str) -> list[dict[str, Any]]:
    return [_extension_check(Path(root)), *_hermes_check(Path(root))]


def _extension_check(root: Path) -> dict[str, Any]:
    from commonkeep_omp.install import status

    report = status(root=root)
    ext = report["extension"]
    if not ext.get("exists"):
        return {"code": "omp_extension", "severity": "info", "message": f"OMP extension not installed ({ext['path']})"}
    if report["ok"]:
        return {"code": "omp_extension", "severity": "ok", "message": f"OMP extension at {ext['path']} uses this root"}
    return {"code": "omp_extension", "severity": "warning", "message": "; ".join(report["problems"])}


def _hermes_check(root: Path) -> list[dict[str, Any]]:
    """Is the Hermes home of this environment configured for the same root? (read-only)"""
    try:
        from commonkeep_hermes.settings import HermesProfile, hermes_home
    except ImportError:
        return []
    profile = HermesProfile(hermes_home())
    try:
        configured = profile.commonkeep_block().get("root")
    except ValueError as exc:  # broken config.yaml: the message names the file
        return [{"code": "hermes_root", "severity": "warning", "message": str(exc)}]
    if not isinstance(configured, str) or not configured.strip():
        return [{"code": "hermes_root", "severity": "info",
                 "message": f"Hermes at {profile.home} is not configured for commonkeep (no memory.commonkeep.root in {profile.config_path})"}]
    theirs = Path(configured).expanduser().resolve()
    if theirs == root.expanduser().resolve():
        return [{"code": "hermes_root", "severity": "ok", "message": f"Hermes at {profile.home} uses the same root"}]
    return [{"code": "hermes_root", "severity": "warning",
             "message": f"Hermes at {profile.home} uses {theirs}, not {root}: the two agents do not share memory"}]
