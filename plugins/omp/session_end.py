"""``commonkeep omp session-end``: commonkeep's auto-curation at the end of an OMP session.

The extension (``commonkeep.ts``) runs it on OMP's ``session_shutdown`` (not on a reload), in
place of OmpKeep's own session-end curation, which ``init`` and ``omp install`` switch off
(``config.json`` ``curator.autoCurate: "off"``): OmpKeep judges a candidate by what it claims,
commonkeep by who stamped it (``commonkeep.gate.autoapply``). The policy is
``config.json`` ``commonkeep.autoCurate`` (``high-only`` unless set); the extension is host code
the model does not control, so it curates as the configured writer role. Only stamped
candidates can be applied; everything else waits for ``commonkeep review``.

Never fails the OMP session: a busy writer lock or a broken root is reported in the output
(``ok: false``) and the exit code stays 0, so OMP's exit is not slowed or turned into an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: seconds to wait for another writer before skipping this session's curation
LOCK_WAIT = 2.0


def session_end(root: Path | str, *, lock_wait: float = LOCK_WAIT) -> dict[str, Any]:
    """Auto-curate ``root`` per ``commonkeep.autoCurate`` as the writer role; what was done, as a
    dict, with ``review_waiting``: how many candidates still wait for a person (the digest
    ``reports/review-digest.txt`` is brought up to date)."""
    done = _curate(root, lock_wait=lock_wait)
    if (Path(root) / "memory").is_dir():
        from commonkeep.store.backlog import backlog, write_digest

        queue = backlog(root)
        write_digest(root, queue)
        done["review_waiting"] = queue.count
    return done


def _curate(root: Path | str, *, lock_wait: float) -> dict[str, Any]:
    from commonkeep.errors import CommonkeepError
    from commonkeep.gate.writer import configured_writer_role
    from commonkeep.patches.auto import auto_curate
    from commonkeep.patches.lock import writer_lock
    from commonkeep.store.curators import curator_config

    root = Path(root)
    policy = str(curator_config(root)["autoCurate"])
    out: dict[str, Any] = {"root": str(root), "policy": policy, "ok": True, "applied_ops": [], "held": {}}
    if not (root / "memory").is_dir():
        return {**out, "ok": False, "summary": f"no memory root at {root}; run `commonkeep init`"}
    if policy == "off":
        return {**out, "summary": "auto-curation off (config.json commonkeep.autoCurate)"}
    role = configured_writer_role(root)
    try:
        with writer_lock(root, role, "auto-curate", wait=lock_wait):
            done = auto_curate(root, role=role, policy=policy)
    except CommonkeepError as exc:
        return {**out, "ok": False, "summary": f"skipped: {exc}"}
    patch = done.proposal.patch if done.proposal else None
    return {**out, "patch_id": patch["patch_id"] if patch and patch["ops"] else None, "applied_ops": done.applied,
            "held": done.held, "summary": done.describe()}
