"""commonkeep plugin hooks of the OMP part (entry point ``omp`` in group ``commonkeep``).

Adds the ``commonkeep omp`` subcommand and ``doctor`` findings: whether OMP's extension is
installed for the root being checked, and which root OMP and Hermes really use. Those two carry
``"kind": "host_root"``: ``doctor`` prints them first, before any hint, and still on a root that
has no store yet, so nobody follows "run commonkeep init" into a second store.
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
    return [*_omp_root_check(Path(root)), _extension_check(Path(root)), *_hermes_check(Path(root))]


def _omp_root_check(root: Path) -> list[dict[str, Any]]:
    """Which root an OMP session started from here uses (extension, ``.env`` files, environment)."""
    import os

    from commonkeep_omp.install import agent_dir, read_installed
    from commonkeep_omp.roots import home_of, resolve

    agent = agent_dir()
    info = read_installed(agent / "extensions" / "commonkeep.ts")
    baked = (info.get("config") or {}).get("root") if info.get("exists") else None
    if not baked:
        return []  # OMP is not set up for commonkeep here
    seen = resolve(baked, agent=agent, home=home_of(), launch=os.environ)
    mine = str(root.expanduser().resolve())
    if seen.root == mine:
        from commonkeep.store.curators import curator_findings

        return [{"code": "omp_root", "kind": "host_root", "severity": "ok", "message": f"OMP uses this root ({seen.rule})"},
                *[f for f in curator_findings(root, omp_uses_root=True) if f["severity"] == "warning"]]
    return [{"code": "omp_root", "kind": "host_root", "severity": "warning",
             "message": f"OMP uses {seen.root} ({seen.rule}), not {mine}; check the store OMP uses with "
                        f"`commonkeep doctor --root {seen.root}`"}]


def _extension_check(root: Path) -> dict[str, Any]:
    from commonkeep_omp.install import status

    report = status(root=root)
    ext = report["extension"]
    if not ext.get("exists"):
        return {"code": "omp_extension", "severity": "info", "message": f"OMP extension not installed ({ext['path']})"}
    if report["ok"]:
        return {"code": "omp_extension", "severity": "ok", "message": f"OMP extension at {ext['path']} uses this root"}
    return {"code": "omp_extension", "severity": "warning", "message": "; ".join(report["problems"])}


def _hermes_auto_curate(profile: Any, root: Path) -> dict[str, Any]:
    """Will Hermes curate at session end (``memory.commonkeep.auto_curate``), and can it (writer role)?"""
    from commonkeep.gate.writer import configured_writer_role

    code = "hermes_auto_curate"
    try:
        policy = profile.auto_curate_policy()
    except ValueError as exc:  # ConfigError: the message names the file and the allowed values
        return {"code": code, "severity": "warning", "message": str(exc)}
    if policy == "off":
        return {"code": code, "severity": "info",
                "message": "Hermes does not curate at session end (memory.commonkeep.auto_curate: off); its candidates "
                           "wait for `commonkeep curate`"}
    role, writer = profile.configured_role(), configured_writer_role(root)
    if role is None:
        return {"code": code, "severity": "info",
                "message": f"Hermes curates ({policy}) at session end only if $COMMONKEEP_ROLE of the Hermes process is "
                           f"the writer role {writer!r} (memory.commonkeep.role is not set)"}
    if role != writer:
        return {"code": code, "severity": "warning",
                "message": f"memory.commonkeep.auto_curate is {policy} but Hermes acts as {role!r}, not the writer role "
                           f"{writer!r}: nothing will be curated (commonkeep hermes install --role {writer})"}
    return {"code": code, "severity": "ok", "message": f"Hermes curates ({policy}) at session end as the writer role {writer!r}"}


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
        return [{"code": "hermes_root", "kind": "host_root", "severity": "ok", "message": f"Hermes at {profile.home} uses the same root"},
                _hermes_auto_curate(profile, root)]
    return [{"code": "hermes_root", "kind": "host_root", "severity": "warning",
             "message": f"Hermes at {profile.home} uses {theirs}, not {root}; check the store Hermes uses with "
                        f"`commonkeep doctor --root {theirs}`"}]


@hookimpl
def commonkeep_stamp_candidates(store: Any, candidates: list[dict[str, Any]]) -> list[str]:
    """OMP's stamping pass: OmpKeep-written candidates verified against OMP's session files."""
    from commonkeep_omp.user_turn import stamp_candidates

    return stamp_candidates(store, candidates)
