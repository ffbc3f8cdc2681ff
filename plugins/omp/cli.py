"""``commonkeep omp install | uninstall | status | dispatch``: the OMP extension, and a dispatch.

Exit codes: 0 done / everything consistent, 1 ``status`` found a problem (not installed, edited,
or a root that differs from the shared one), 2 bad usage or an ACP failure (``dispatch``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import print_json
from commonkeep_omp import install as inst


def _root_choice(args: argparse.Namespace) -> tuple[Path, str]:
    """``--root``, else the root Hermes is configured for (one root for both), else the rules."""
    from commonkeep.store.root import resolve_root

    explicit = getattr(args, "root", None)
    if not explicit:
        try:
            from commonkeep_hermes.settings import HermesProfile, hermes_home

            profile = HermesProfile(hermes_home())
            configured = profile.commonkeep_block().get("root")
            if isinstance(configured, str) and configured.strip():
                return Path(configured).expanduser().resolve(), f"Hermes' {profile.config_path}"
        except (ImportError, ValueError):
            pass
    choice = resolve_root(explicit=explicit)
    return choice.path, choice.rule


def _root(args: argparse.Namespace) -> Path:
    return _root_choice(args)[0]


def _agent(args: argparse.Namespace) -> Path | None:
    value = getattr(args, "agent_dir", None)
    return Path(value).expanduser() if value else None


def _print_outcome(out: inst.Outcome, as_json: bool) -> None:
    if as_json:
        print_json(out.as_dict(), ensure_ascii=True)
        return
    for line in out.actions:
        print(line)
    for path in out.backups:
        print(f"backup: {path}")
    for line in out.warnings:
        print(f"warning: {line}")


def run_install(args: argparse.Namespace) -> int:
    from commonkeep.store.layout import ensure_layout

    root, rule = _root_choice(args)
    ensure_layout(root)  # so OMP, Hermes and `doctor` find a valid root from the first session
    out = inst.install(root, agent=_agent(args), write_env=args.env)
    _print_outcome(out, args.json)
    if not args.json:
        print(f"OMP sessions started from now on use the memory root {root} (chosen by {rule}).")
    return 0


def run_session_end(args: argparse.Namespace) -> int:
    from commonkeep_omp.session_end import session_end

    root = _root(args)
    done = session_end(root)
    if args.report and (root / "memory").is_dir():
        from commonkeep.store.jsonl import atomic_write_bytes
        from commonkeep.util.jsonout import dumps

        (root / "reports").mkdir(exist_ok=True)
        atomic_write_bytes(root / "reports" / "omp-session-end.json", (dumps(done) + "\n").encode("utf-8"))
    if args.json:
        print_json(done)
    else:
        print(done["summary"])
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    _print_outcome(inst.uninstall(agent=_agent(args), remove_backups=args.remove_backups), args.json)
    return 0


def run_status(args: argparse.Namespace) -> int:
    root = _root(args) if getattr(args, "root", None) else None
    report: dict[str, Any] = inst.status(agent=_agent(args), root=root)
    from commonkeep_omp.acp import find_omp

    report["omp"] = find_omp()
    if args.json:
        print_json(report, ensure_ascii=True)
    else:
        ext = report["extension"]
        state = "not installed"
        if ext.get("exists"):
            state = "installed" if ext.get("ours") else "present, not written by commonkeep"
            if ext.get("ours") and not ext.get("untouched"):
                state += " (edited)"
        print(f"omp:        {report['omp'] or 'not found (PATH, $COMMONKEEP_OMP, test-host cache)'}")
        print(f"agent dir:  {report['agent_dir']}")
        print(f"extension:  {ext['path']} — {state}")
        print(f"root:       {report['root'] or '-'}")
        managed = report["env_file"]["managed"]
        print(f".env:       {report['env_file']['path']} — " + (", ".join(f"{k}={v}" for k, v in managed.items()) or "no commonkeep block"))
        for problem in report["problems"]:
            print(f"problem: {problem}")
    return 0 if report["ok"] else 1


def run_dispatch(args: argparse.Namespace) -> int:
    from commonkeep_omp.acp import AcpError, dispatch, find_omp

    omp = args.omp or find_omp()
    if not omp:
        raise AcpError("no omp found", hint="install @oh-my-pi/pi-coding-agent with bun (npm), or pass --omp / set $COMMONKEEP_OMP")
    # --root, else the root baked into the installed extension, else attach_handoff's choice
    # (Hermes' configured root, then the resolution rules).
    root = getattr(args, "root", None) or inst.status(agent=_agent(args))["root"]
    result = dispatch(
        " ".join(args.task),
        cwd=Path(args.cwd).resolve(),
        goal=args.goal,
        handoff=args.handoff,
        root=root,
        omp=[omp],
        timeout=args.timeout,
    )
    data = {
        "session_id": result.session_id,
        "stop_reason": result.stop_reason,
        "exit_code": result.exit_code,
        "root": str(result.root),
        "handoff": str(result.handoff_path) if result.handoff_path else None,
        "notice": result.handoff_notice,
    }
    if args.json:
        print_json(data, ensure_ascii=True)
    else:
        for key, value in data.items():
            if value is not None:
                print(f"{key + ':':12}{value}")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``install``/``uninstall``/``status`` subcommands to ``commonkeep omp``."""
    sub = parser.add_subparsers(dest="omp_command", metavar="ACTION", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        # SUPPRESS keeps a --root given before the action (commonkeep omp --root X install).
        p.add_argument("--root", metavar="DIR", default=argparse.SUPPRESS, help="the shared memory root")
        p.add_argument("--agent-dir", metavar="DIR", help="OMP agent dir (default: $PI_CODING_AGENT_DIR or ~/.omp/agent)")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    p = sub.add_parser("install", help="install the extension into OMP's agent dir (root baked in)")
    common(p)
    p.add_argument("--env", action="store_true", help="also write OMP_MEMORY_ROOT/OMPKEEP_ROOT/PI_MEMORY_ROOT into <agent dir>/.env")
    p.set_defaults(run=run_install)
    p = sub.add_parser("uninstall", help="remove the extension and the commonkeep block of <agent dir>/.env (the memory root is kept)")
    common(p)
    p.add_argument("--remove-backups", action="store_true",
                   help="also delete the *.commonkeep-backup-* copies earlier installs left in the agent dir")
    p.set_defaults(run=run_uninstall)
    p = sub.add_parser("dispatch", help="start omp acp with this memory attached and send it one task")
    common(p)
    p.add_argument("task", nargs="+", help="the first prompt (e.g. a /command; plain text needs a model)")
    p.add_argument("--goal", help="goal for the handoff snapshot")
    p.add_argument("--handoff", choices=["env", "prompt", "both", "none"], default="env",
                   help="how the snapshot reaches the session (default: env, via OMPKEEP_HANDOFF)")
    p.add_argument("--cwd", default=".", help="project folder for the session (default: .)")
    p.add_argument("--omp", help="the omp executable (default: $COMMONKEEP_OMP, PATH, the test-host cache)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per ACP request (default: 120)")
    p.set_defaults(run=run_dispatch)
    p = sub.add_parser("session-end", help="commonkeep's auto-curation at OMP session end (the extension runs it; "
                       "policy: config.json commonkeep.autoCurate)")
    common(p)
    p.add_argument("--report", action="store_true", help="also write the outcome to <root>/reports/omp-session-end.json")
    p.set_defaults(run=run_session_end)
    p = sub.add_parser("status", help="what is installed where, and whether it matches the shared root")
    common(p)
    p.set_defaults(run=run_status)
