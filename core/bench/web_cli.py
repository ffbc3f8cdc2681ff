"""``bench web``'s command-line path: ``commonkeep review --approve`` as a new process, beside older code."""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def _cli_approves(root: Path, role: str, take: Callable[[], str], repeat: int, pycache: Path,
                  against: list[str] | tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    """``commonkeep review --approve`` as a new process: with compiled bytecode (``this``), as run
    here (``this_as_run``, see ``_decisions``), and the code of each revision in ``against`` (its
    package extracted with ``git archive``, compiled), alternating; medians over ``repeat`` each."""
    import resource

    from commonkeep.bench.capture import _checkout

    def cpu() -> float:  # the CPU time of finished child processes (user + system), which a loaded box does not inflate
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": str(pycache)}
    envs: dict[str, tuple[Path, dict[str, str] | None]] = {"this": (root, compiled), "this_as_run": (root, None)}
    for n, rev in enumerate(against):
        path = _checkout(rev, pycache.parent / f"against-{n}")
        # its own copy of the root: what one version leaves in runtime/ (the projection cache, the clean
        # memo) another version would find stale and rebuild, and the alternation would time that
        copy = pycache.parent / f"root-against-{n}"
        shutil.copytree(root, copy, symlinks=True)
        # and its own plugin cache: an older version keeps one fingerprint in it, so sharing the
        # file would make every process of both versions look its plugins up again
        envs[rev] = (copy, compiled | {"PYTHONPATH": os.pathsep.join([str(path), *filter(None, [compiled.get("PYTHONPATH")])]),
                                       "COMMONKEEP_PLUGIN_CACHE": str(pycache.parent / f"against-{n}" / "entry-points.json")})
    for where, env in envs.values():
        while not _cli(where, role, "--approve", take(), env=env):  # untimed: compiles the bytecode, warms the root's caches
            pass
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in envs}
    for _ in range(repeat):
        for name, (where, env) in envs.items():
            while True:  # a refused candidate (see ``_cli``) is not timed: the next one is
                t0, c0 = time.perf_counter(), cpu()
                if _cli(where, role, "--approve", take(), env=env):
                    runs[name].append(((time.perf_counter() - t0) * 1000, (cpu() - c0) * 1000))
                    break
    out = {}
    for name, r in runs.items():
        wall = sorted(w for w, _ in r)
        out[name] = {"p50_ms": round(statistics.median(wall), 2), "p95_ms": round(wall[max(0, int(len(wall) * 0.95) - 1)], 2),
                     "cpu_p50_ms": round(statistics.median(c for _, c in r), 2)}
    return out


def _cli(root: Path, role: str, *args: str, env: dict[str, str] | None = None) -> bool:
    """Run ``commonkeep review ARGS`` as a new process: ``True`` when done, ``False`` when the
    candidate was refused as it stands (each version approves on its own copy of the root, so a
    candidate planned as a plain add may meet, on one copy, a record added since that it
    contradicts); any other failure raises."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "commonkeep.cli", "review", "--root", str(root), "--role", role, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, env=env)
    if done.returncode == 2 and "cannot be approved" in done.stderr:
        return False
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-500:])
    return True


def _approve_call(root: Path, role: str, cid: str) -> None:
    from commonkeep.reviews.review import approve

    approve(root, [cid], role=role)


def _old_approve(root: Path, role: str, cid: str) -> None:
    """The approve of before issue 23: the whole review queue computed to take one item's ops."""
    import json

    from commonkeep.patches.patch import apply_patch
    from commonkeep.reviews.review import _manual_patch, pending

    item = next(i for i in pending(root, role=role) if i.candidate["id"] == cid)
    ops = [json.loads(json.dumps(o)) for o in item.ops if o["op"] in ("add", "update", "supersede", "contest")]
    apply_patch(root, _manual_patch(ops, f"approve {cid}"), role=role)
