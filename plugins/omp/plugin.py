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

    return {"omp": (configure, "install, remove or inspect the OMP extension (install | uninstall | status)")}


@hookimpl
def commonkeep_doctor_checks(root: str) -> list[dict[str, Any]]:
    from commonkeep_omp.install import status

    report = status(root=Path(root))
    ext = report["extension"]
    if not ext.get("exists"):
        return [{"code": "omp-extension", "severity": "info", "message": f"OMP extension not installed ({ext['path']})"}]
    if report["ok"]:
        return [{"code": "omp-extension", "severity": "ok", "message": f"OMP extension at {ext['path']} uses this root"}]
    return [{"code": "omp-extension", "severity": "warning", "message": "; ".join(report["problems"])}]
