"""The exit gate at git's door: what ``share`` commits and pushes has passed the redactor.

The files other programs write (:data:`commonkeep.store.exitgate.OUTSIDE`: daily logs, the
scratchpad, the inbox, records and patches OmpKeep's curator writes) are never handed to ``git
add``. :func:`stage` first redacts them in place (:func:`commonkeep.store.exitgate.sweep`, an audit
line per file changed), then stages each one that differs from the index from its *redacted*
bytes (``git hash-object -w --stdin`` and ``update-index``): a line OmpKeep appends between the
sweep and the staging is redacted on its way into git too, and git's object store never sees the
raw bytes, so no commit, no push and no loose object holds a secret another program wrote.
Everything else of the canonical paths is staged with ``git add -A``.
"""

from __future__ import annotations

import fnmatch
import hashlib
import subprocess
from pathlib import Path

from commonkeep.share.git import ShareError, git_path, run_git
from commonkeep.store import exitgate

REASON = "share"


def _git_bytes(root: Path, *args: str, data: bytes = b"") -> bytes:
    proc = subprocess.run([git_path(), *args], cwd=root, input=data, capture_output=True, check=False, timeout=120)
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip()
        raise ShareError(f"git {' '.join(args[:2])} failed in {root}:\n    {said or f'exit {proc.returncode}'}")
    return proc.stdout


def outside(rel: str) -> bool:
    """Whether the path ``rel`` (relative to the root) is a file other programs write."""
    return any(fnmatch.fnmatchcase(rel, pattern) for pattern, _ in exitgate.OUTSIDE)


def _object_id(root: Path, data: bytes) -> str:
    algo = run_git(root, "rev-parse", "--show-object-format", check=False).out.strip() or "sha1"
    return hashlib.new(algo if algo in ("sha1", "sha256") else "sha1", b"blob %d\0" % len(data) + data).hexdigest()


def stage(root: Path, paths: list[str], reason: str = REASON) -> list[exitgate.Swept]:
    """Stage ``paths`` (``git add -A``), the outside-written files among them from their redacted
    bytes; returns the files the gate changed (each also has its audit line)."""
    swept = exitgate.sweep(root, reason=reason)
    if not paths:
        return swept
    excludes = [f":(exclude,glob){pattern}" for pattern, _ in exitgate.OUTSIDE]
    run_git(root, "add", "-A", "--", *paths, *excludes)
    index: dict[str, tuple[str, str]] = {}  # path -> (mode, object id) of staged outside files
    for item in run_git(root, "ls-files", "-s", "-z", "--", *(f":(glob){p}" for p, _ in exitgate.OUTSIDE)).out.split("\0"):
        meta, _, rel = item.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[2] == "0":
            index[rel] = (parts[0], parts[1])
    present = {p.relative_to(root).as_posix(): p for p in exitgate.outside_files(root)}
    gone = [rel for rel in index if rel not in present and not (root / rel).exists()]
    if gone:
        run_git(root, "rm", "-q", "--cached", "--", *gone)
    for rel, path in present.items():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        mode, have = index.get(rel, ("100644", ""))
        if have and have == _object_id(root, data):
            continue  # staged as it is on disk: it passed the gate when it was staged
        clean, kinds = exitgate.clean_form(root, path, data)
        if kinds:  # landed after the sweep: redacted on its way into git, and on disk by the next sweep
            one = exitgate.Swept(rel, kinds)
            exitgate.note(root, one, reason=f"{reason} (staging)")
            swept.append(one)
        new = _git_bytes(root, "hash-object", "-w", "--stdin", data=clean).decode().strip()
        run_git(root, "update-index", "--add", "--cacheinfo", f"{mode},{new},{rel}")
    return swept
