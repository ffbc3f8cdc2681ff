"""commonkeep plugin (entry point group ``commonkeep``, name ``hermes``): CLI and after-apply.

- ``commonkeep_cli_commands`` adds ``commonkeep hermes install | uninstall | status | sync``;
- ``commonkeep_after_apply`` re-renders MEMORY.md / USER.md of every Hermes home that uses the
  root a patch was just applied to, so the next Hermes session starts with the new projection.

Imports nothing from Hermes: it runs in whatever environment runs ``commonkeep``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy

from commonkeep.errors import BadInput
from commonkeep.util.jsonout import print_json

hookimpl = pluggy.HookimplMarker("commonkeep")


def _profile(args: argparse.Namespace) -> Any:
    from commonkeep_hermes.settings import HermesProfile, hermes_home

    home = hermes_home(args.hermes_home)
    if args.profile:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", args.profile) or ".." in args.profile:
            raise BadInput(f"--profile {args.profile!r} is not a profile name (letters, digits, '.', '-', '_')",
                           hint="name a profile under ~/.hermes/profiles/, or use --hermes-home DIR for any other folder")
        home = home / "profiles" / args.profile
    return HermesProfile(home)


def _print(report: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        print_json(report, ensure_ascii=True)
    else:
        print("\n".join(lines))


def run_install(args: argparse.Namespace) -> int:
    from commonkeep_hermes.install import hermes_missing, install

    profile = _profile(args)
    missing = None if args.force else hermes_missing(profile)
    if missing:
        raise BadInput(f"{missing}; nothing was changed",
                       hint="install Hermes Agent and run it once (it creates its home), name the home with "
                            "--hermes-home DIR, or add --force to prepare this home anyway")
    if getattr(args, "root", None):
        root = Path(args.root).expanduser().resolve()
    else:
        root, _ = profile.shared_root()
    # one flag, one meaning: --role before or after `install` is memory.commonkeep.role
    report = install(profile, root, auto_curate=args.auto_curate, role=getattr(args, "role", None))
    lines = [f"commonkeep hermes install: {profile.home} -> root {root}"]
    lines += [f"  - {c}" for c in report["changed"]] or ["  already installed; nothing changed"]
    lines += [f"warning: {w}" for w in report.get("warnings", [])]
    _print(report, args.json, lines)
    return 0


def _no_root(args: argparse.Namespace, action: str) -> None:
    """``status`` and ``uninstall`` read the root from Hermes' config: a ``--root`` is refused, not ignored."""
    if getattr(args, "root", None) is not None:
        raise BadInput(f"--root does not apply to `hermes {action}`: it uses the root in Hermes' config "
                       "(memory.commonkeep.root); nothing was done",
                       hint="leave --root out; `commonkeep hermes install --root DIR` changes Hermes' root, "
                            "`commonkeep doctor --root DIR` checks another root")


def run_uninstall(args: argparse.Namespace) -> int:
    from commonkeep_hermes.install import uninstall

    _no_root(args, "uninstall")
    profile = _profile(args)
    report = uninstall(profile)
    lines = [f"commonkeep hermes uninstall: {profile.home}"]
    lines += [f"  - {c}" for c in report["changed"]] or ["  not installed; nothing changed"]
    _print(report, args.json, lines)
    return 0


def run_status(args: argparse.Namespace) -> int:
    from commonkeep_hermes.install import status

    _no_root(args, "status")
    st = status(_profile(args))
    yes = {True: "yes", False: "no"}
    lines = [
        f"Hermes home:        {st['hermes_home']}",
        f"installed:          {yes[st['installed']]} (provider {yes[st['provider']]}, "
        f"governance plugin {yes[st['plugin_enabled']]}, shim {yes[st['shim']]}, "
        f"write_approval fallback {yes[st['write_approval']]})",
        f"Hermes root:        {st['hermes_root']}  ({st['hermes_root_rule']})",
        f"OMP root:           {st['omp_root']}  ({st['omp_root_rule']})",
        f"same root:          {yes[st['same_root']]}"
        + ("" if st["same_root"] else "  — set OMP_MEMORY_ROOT to the Hermes root (commonkeep omp install)"),
        f"pending candidates: {st['pending_candidates']} ({st['pending_from_hermes']} from Hermes)",
        f"auto-curation:      {st['auto_curate']} at session finalize"
        + (f" (as role {st['role']})" if st["role"] else " (role: $COMMONKEEP_ROLE)" if st["auto_curate"] != "off" else ""),
    ]
    if st["hermes"] is None:
        lines.append("hermes:             not on PATH (install commonkeep into Hermes' own venv)")
    else:
        lines.append(f"hermes:             {st['hermes']} — "
                     + ("imports commonkeep" if st["hermes_imports_commonkeep"] else
                        "CANNOT import commonkeep: pip install it into Hermes' venv"))
    for target, info in st["projection"].items():
        label = f"{'USER.md' if target == 'user' else 'MEMORY.md'}:"
        chars = info["chars"] if info["chars"] is not None else "-"
        lines.append(f"{label:<20}{chars}/{st['limits'][target]} chars")
    _print(st, args.json, lines)
    return 0 if st["installed"] else 1


def run_sync(args: argparse.Namespace) -> int:
    from commonkeep_hermes.hermesfiles import refresh

    profile = _profile(args)
    if not profile.home.is_dir():  # rendering would create it, and `hermes install` would then stop refusing
        raise BadInput(f"no Hermes home at {profile.home}; nothing was written",
                       hint="install Hermes Agent and run it once (it creates its home), or name the home with "
                            "--hermes-home DIR / --profile NAME")
    root = Path(args.root).expanduser() if getattr(args, "root", None) else profile.shared_root()[0]
    if not (root / "memory").is_dir():  # rendering an empty or mistyped root would empty Hermes' files
        raise BadInput(f"no memory root at {root} (no memory/ folder); MEMORY.md and USER.md were left as they are",
                       hint="check --root or memory.commonkeep.root in config.yaml; `commonkeep init --root DIR` creates a root")
    report = refresh(profile, root, reason="sync")
    lines = [f"commonkeep hermes sync: {profile.home}"]
    lines += [f"  {t}: {i['entries']} entries, {i['chars']}/{i['limit']} chars"
              f"{' (rewritten)' if i['changed'] else ''}" for t, i in report["targets"].items()]
    if report["captured"]:
        lines.append(f"  captured {len(report['captured'])} hand-edited entries as candidates; "
                     f"backups: {', '.join(report['backups'])}")
    if report.get("harvested"):
        lines.append(f"  harvested {len(report['harvested'])} writes parked by Hermes' write_approval as candidates")
    _print(report, args.json, lines)
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    """``commonkeep hermes ...``"""
    sub = parser.add_subparsers(dest="hermes_command", metavar="ACTION", required=True)
    actions: dict[str, tuple[Callable[[argparse.Namespace], int], str]] = {
        "install": (run_install, "enable the commonkeep provider and governance plugin in Hermes"),
        "uninstall": (run_uninstall, "restore Hermes' config and remove the provider shim"),
        "status": (run_status, "what is enabled, which root Hermes and OMP use, what is pending"),
        "sync": (run_sync, "re-render MEMORY.md / USER.md from the store now"),
    }
    for name, (fn, help_text) in actions.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--hermes-home", metavar="DIR", help="Hermes home (default: $HERMES_HOME or ~/.hermes)")
        p.add_argument("--profile", metavar="NAME", help="a named Hermes profile (~/.hermes/profiles/NAME)")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        # install and sync use it; status and uninstall read the root from Hermes' config
        root_help = ("the shared memory root (default: the one in Hermes' config, else `commonkeep root`)"
                     if name in ("install", "sync") else argparse.SUPPRESS)
        p.add_argument("--root", metavar="DIR", default=argparse.SUPPRESS, help=root_help)
        if name == "install":
            p.add_argument("--auto-curate", choices=("off", "propose", "high-only"), default=None,
                           help="memory.commonkeep.auto_curate: curate the inbox when a Hermes session "
                                "finalizes (default: keep the current setting; unset means off)")
            p.add_argument("--force", action="store_true",
                           help="install even when Hermes looks not installed (no Hermes home, no `hermes` on PATH)")
            # SUPPRESS: `commonkeep hermes --role X install` and `... install --role X` are the same thing
            p.add_argument("--role", default=argparse.SUPPRESS,
                           help="memory.commonkeep.role: the role Hermes acts as for auto-curation "
                                "(only the writer role may curate; default: keep the current setting, "
                                "else $COMMONKEEP_ROLE of the Hermes process)")
        p.set_defaults(run=fn)


@hookimpl
def commonkeep_cli_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    return {"hermes": (configure, "Hermes Agent: install | uninstall | status | sync")}


@hookimpl
def commonkeep_after_apply(root: str, patch: dict[str, Any], applied_ops: list[str]) -> None:
    """Re-render the files of every Hermes home on this root."""
    from commonkeep_hermes.settings import HermesProfile, hermes_home

    target = Path(root).resolve()
    if not (target / "runtime" / "hermes-homes.json").exists() and not HermesProfile(hermes_home()).config_path.exists():
        return  # no Hermes home registered on this root and none in the default place: nothing to refresh
    from commonkeep_hermes.hermesfiles import refresh
    from commonkeep_hermes.install import registered_homes

    homes = {h.resolve() for h in registered_homes(target)}
    homes.add(hermes_home().resolve())
    for home in sorted(homes):
        profile = HermesProfile(home)
        try:
            if not profile.config_path.exists() or profile.memory_section().get("provider") != "commonkeep":
                continue
            if profile.shared_root()[0].resolve() != target:
                continue
            refresh(profile, target, reason=f"after_apply {patch.get('patch_id', '')}".strip())
        except Exception as exc:  # report, never break apply
            print(f"commonkeep: hermes: could not refresh {home}: {exc}", file=sys.stderr)
