"""Memory handoff when Hermes' omp-suite dispatches ``omp acp``: ``attach_handoff`` and ``commonkeep-omp``.

``attach_handoff(cmd, env, goal=None)`` returns the command, a copy of ``env`` that points the
child at the shared root (``OMP_MEMORY_ROOT``, ``OMPKEEP_ROOT``, ``PI_MEMORY_ROOT``) and at a
fresh snapshot (``OMPKEEP_HANDOFF``, ``OMPKEEP_HANDOFF_FORMAT``), and a text block to prepend to
the first ACP prompt (contracts/hermes-host.md §8.2). The snapshot is written by the recall
engine (``commonkeep.recall.handoff.write_handoff``, the same files as ``commonkeep handoff [--goal]``,
contracts/ompkeep-store.md §8).
Dispatch never fails because of memory: if the snapshot cannot be made, the env still names the
shared root and ``Handoff.notice`` says why there is no snapshot.

omp-suite integration (``dashboard/routes/acp.py::_spawn_omp_acp``), right after the env dict::

    try:
        from commonkeep_hermes.handoff import attach_handoff
        cmd, env = attach_handoff(cmd, env, goal=task_title).spawn_args()
    except ImportError:
        pass

For setups that can only change ``OMP_CMD`` or ``PATH``, the ``commonkeep-omp`` console script does
the same and then execs the real ``omp`` (found on ``PATH`` minus itself, or ``$COMMONKEEP_REAL_OMP``);
the goal comes from ``$COMMONKEEP_HANDOFF_GOAL``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT_VARS = ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT")
PROMPT_MAX_CHARS = 4000
WRAPPER_NAME = "commonkeep-omp"


@dataclass
class Handoff:
    """What to spawn: ``cmd``, ``env``, the snapshot ``path`` and an optional first-prompt block."""

    cmd: list[str]
    env: dict[str, str]
    root: Path
    path: Path | None = None
    prompt_text: str | None = None
    notice: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def spawn_args(self) -> tuple[list[str], dict[str, str]]:
        return self.cmd, self.env

    def prompt_prefix(self) -> list[dict[str, str]]:
        """ACP content blocks to put first in the first ``session/prompt``."""
        return [{"type": "text", "text": self.prompt_text}] if self.prompt_text else []


def _shared_root(env: Mapping[str, str], root: str | Path | None) -> Path:
    if root:
        return Path(root).expanduser().resolve()
    from commonkeep_hermes.settings import HermesProfile, hermes_home

    profile = HermesProfile(hermes_home(env=env))
    try:
        if profile.commonkeep_block().get("root"):
            return profile.shared_root(env)[0].resolve()
    except ValueError:
        pass
    from commonkeep.store.root import resolve_root

    return resolve_root(env=env).path


def make_snapshot(root: Path, goal: str | None, max_chars: int = PROMPT_MAX_CHARS) -> Path:
    """Write a plain or goal snapshot with the recall engine (``reports/handoff/``); returns the JSON path."""
    from commonkeep.recall.handoff import write_handoff

    return write_handoff(root, goal, max_chars)


def _prompt_text(path: Path, goal: str | None, max_chars: int) -> str:
    md = path.with_suffix(".md")
    body = md.read_text(encoding="utf-8") if md.exists() else path.read_text(encoding="utf-8")
    if len(body) > max_chars:
        body = body[:max_chars].rstrip() + "\n…(truncated)"
    from commonkeep.store import exitgate

    # the goal is the dispatching model's text: it leaves in the child's prompt through the exit gate
    goal_attr = f' goal="{exitgate.text(goal)}"' if goal else ""
    body = exitgate.text(body)
    return (f'<ompkeep-handoff path="{path}"{goal_attr}>\n'
            "[HANDOFF REFERENCE — treat as background context. Persistent memory (L1/L2) is always authoritative.]\n"
            f"{body}\n</ompkeep-handoff>")


def attach_handoff(cmd: Sequence[str], env: Mapping[str, str] | None, goal: str | None = None, *,
                   root: str | Path | None = None, max_chars: int = PROMPT_MAX_CHARS,
                   lane_id: str | None = None, task_id: str | None = None) -> Handoff:
    """Attach the shared root and a handoff snapshot to a child agent's command and env."""
    base = dict(os.environ if env is None else env)
    shared = _shared_root(base, root)
    out = dict(base)
    for var in ROOT_VARS:
        out[var] = str(shared)
    out["OMPKEEP_STORE"] = str(shared)
    if lane_id:
        out["OMPKEEP_LANE_ID"] = str(lane_id)
    if task_id:
        out["OMPKEEP_TASK_ID"] = str(task_id)
    handoff = Handoff(cmd=list(cmd), env=out, root=shared)
    try:
        path = make_snapshot(shared, goal, max_chars)
    except Exception as exc:
        handoff.notice = f"no handoff snapshot ({exc}); the child still uses the shared root {shared}"
        return handoff
    out["OMPKEEP_HANDOFF"] = str(path)
    out["OMPKEEP_HANDOFF_FORMAT"] = "json" if path.suffix == ".json" else "md"
    handoff.path = path
    handoff.prompt_text = _prompt_text(path, goal, max_chars)
    return handoff


def find_real_omp(env: Mapping[str, str], me: str | None = None) -> str | None:
    """The real ``omp``: ``$COMMONKEEP_REAL_OMP``, else the first ``omp`` on PATH that is not this wrapper."""
    explicit = env.get("COMMONKEEP_REAL_OMP")
    if explicit:
        return explicit
    mine = {os.path.realpath(p) for p in (me, sys.argv[0] if sys.argv else None, shutil.which(WRAPPER_NAME)) if p}
    for folder in env.get("PATH", "").split(os.pathsep):
        if not folder:
            continue
        cand = os.path.join(folder, "omp")
        if not (os.path.isfile(cand) and os.access(cand, os.X_OK)):
            continue
        if os.path.realpath(cand) in mine or _is_wrapper(cand):
            continue
        return cand
    return None


def _is_wrapper(path: str) -> bool:
    """A PATH shim named ``omp`` that is (a copy of) this wrapper's console script."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(2048)
    except OSError:
        return False
    return b"commonkeep_hermes.handoff" in head or b"commonkeep-omp" in head


def main(argv: Sequence[str] | None = None) -> int:
    """``commonkeep-omp ARGS…``: attach the handoff and exec the real ``omp ARGS…``."""
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    real = find_real_omp(env)
    if real is None:
        print("commonkeep-omp: no real `omp` found on PATH (only this wrapper); "
              "install omp or set COMMONKEEP_REAL_OMP=/path/to/omp", file=sys.stderr)
        return 127
    handoff = attach_handoff([real, *args], env, goal=env.get("COMMONKEEP_HANDOFF_GOAL") or None)
    if handoff.notice:
        print(f"commonkeep-omp: {handoff.notice}", file=sys.stderr)
    os.execvpe(real, handoff.cmd, handoff.env)
    return 0  # not reached


def describe(h: Handoff) -> str:
    """One JSON line about a handoff (for logs)."""
    return json.dumps({"cmd": h.cmd, "root": str(h.root), "path": str(h.path) if h.path else None,
                       "notice": h.notice})


if __name__ == "__main__":
    raise SystemExit(main())
