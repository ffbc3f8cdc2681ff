"""Purged text in a shared root's git history: find it, and rewrite the history without it.

A privacy purge scrubs the working tree and the next sync commits that, but every earlier commit
still holds the text, here and in the remote. ``scan`` finds, for each record purged for privacy
(by its id, never by its text), the statements earlier commits still hold: record lines, source
and contested candidates, patch ops. ``rewrite`` (``commonkeep share purge-history``) replaces
each of them, in every blob of every commit, by ``[deleted]`` with ``git filter-repo`` (a
maintained tool, from PyPI), puts the remote back (filter-repo removes it), and pushes the
rewritten branch with ``--force-with-lease`` (refused if someone pushed meanwhile). Every other
clone still holds the old history and would bring it back with its next merge: ``share sync``
refuses to merge a rewritten remote, and ``commonkeep share adopt-history`` moves a clone onto it.
The texts live only in memory and, while filter-repo runs, in a 0600 file inside ``.git`` that
is removed afterwards.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from commonkeep.patches import purge
from commonkeep.patches.purge import _needles, texts_in
from commonkeep.share.git import ShareError, run_git
from commonkeep.share.settle import tombs_here
from commonkeep.store.layout import Layout


@dataclass
class HistoryScan:
    purged: int = 0  # records purged for privacy
    held: dict[str, list[str]] = field(default_factory=dict)  # record id -> commits (short) whose files hold its text
    texts: dict[str, set[str]] = field(default_factory=dict)  # record id -> statements (in memory only)


def scan(root: Path) -> HistoryScan:
    """Which purged records' statements some commit reachable from any ref still holds."""
    lay = Layout(root)
    ids = tombs_here(lay).purged
    rep = HistoryScan(purged=len(ids))
    if not ids or not (root / ".git").exists():
        return rep
    pattern = "|".join(re.escape(i) for i in sorted(ids))
    log = run_git(root, "log", "--all", "--format=@%h", "--name-only", "-G", pattern, "--",
                  "memory", "inbox", "patches", check=False)
    commit = ""
    seen: set[tuple[str, str]] = set()
    for line in log.out.splitlines():
        if line.startswith("@"):
            commit = line[1:]
            continue
        name = line.strip()
        if not name or (commit, name) in seen:
            continue
        seen.add((commit, name))
        shown = run_git(root, "show", f"{commit}:{name}", check=False)
        if shown.code != 0:
            continue
        for rid, texts in texts_in(name, shown.out.encode("utf-8", "surrogateescape"), ids).items():
            rep.texts.setdefault(rid, set()).update(texts)
            if commit not in rep.held.setdefault(rid, []):
                rep.held[rid].append(commit)
    return rep


@dataclass
class Rewrite:
    root: str
    records: int = 0  # purged records whose text was in the history
    texts: int = 0
    pushed: bool = False
    remote: str | None = None
    branch: str = ""
    others: list[str] = field(default_factory=list)  # what every other clone must do


def _expressions(texts: set[str]) -> str:
    """filter-repo's --replace-text file: one escaped regex per form of each text."""
    lines = []
    for n in _needles(texts):
        rx = re.escape(n).replace("\n", "\\n").replace("\r", "\\r")
        lines.append(f"regex:{rx}==>{purge.DELETED}")
    return "".join(line + "\n" for line in lines)


def rewrite(root: Path, *, role: str | None, remote: str | None = None, push: bool = True) -> Rewrite:
    """``commonkeep share purge-history`` (see the module docstring)."""
    from commonkeep.gate.writer import require_writer
    from commonkeep.patches.lock import writer_lock
    from commonkeep.share.setup import require_initialised
    from commonkeep.share.sync import _branch, _choose_remote, _commit_canonical

    root = Path(root).resolve()
    require_initialised(root)
    acting = require_writer("share purge-history", role, root)
    with writer_lock(root, acting, "share purge-history"):
        gitdir = Path(run_git(root, "rev-parse", "--absolute-git-dir").out.strip())
        if (gitdir / "MERGE_HEAD").exists() or (gitdir / "commonkeep-sync.json").exists():
            raise ShareError("a share sync is unfinished in this root", hint="run `commonkeep share sync` first")
        branch = _branch(root)
        name = _choose_remote(root, branch, remote)
        rep = Rewrite(str(root), remote=name, branch=branch)
        _commit_canonical(root, "commonkeep share: local changes before purge-history")
        found = scan(root)
        texts = {t for ts in found.texts.values() for t in ts}
        rep.records, rep.texts = len(found.texts), len(texts)
        if not texts:
            return rep
        url = run_git(root, "remote", "get-url", name, check=False).out.strip() if name else ""
        # the lease is what this clone last saw of the remote: a push it has not merged is never overwritten
        lease = run_git(root, "rev-parse", "-q", "--verify", f"refs/remotes/{name}/{branch}", check=False).out.strip()
        if name and push:
            probe = run_git(root, "ls-remote", "--heads", name, branch, check=False, timeout=60)
            if probe.code != 0:
                raise ShareError(f"the remote {name!r} cannot be reached; git said:\n    {probe.said}",
                                 hint="nothing was rewritten; check the network, then run the command again")
            there = probe.out.split()[0] if probe.out.strip() else ""
            if there and there != lease:
                raise ShareError(f"{name}/{branch} has commits this clone has not merged; nothing was rewritten or pushed",
                                 hint="run `commonkeep share sync` first (it merges them), then purge-history again")
        expr = gitdir / "commonkeep-replace-text"
        fd = os.open(expr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, _expressions(texts).encode("utf-8"))
        finally:
            os.close(fd)
        try:
            proc = subprocess.run([sys.executable, "-m", "git_filter_repo", "--replace-text", str(expr), "--force",
                                   "--quiet"], cwd=root, capture_output=True, text=True, check=False, timeout=3600)
        finally:
            expr.unlink(missing_ok=True)
        if proc.returncode != 0:
            said = (proc.stderr.strip() or proc.stdout.strip())[-2000:]
            raise ShareError(f"git filter-repo failed (exit {proc.returncode}):\n    {said}",
                             hint="the history may be partly rewritten; `git -C ROOT log` shows it; run the command again")
        for local in gitdir.glob("commonkeep-contested*.jsonl"):  # this clone's audit copies
            data = local.read_bytes()
            new = data
            for n in _needles(texts):
                new = new.replace(n.encode("utf-8"), purge.DELETED.encode("utf-8"))
            if new != data:
                local.write_bytes(new)
        if name and url and name not in run_git(root, "remote").out.split():
            run_git(root, "remote", "add", name, url)  # filter-repo removes the remote so nothing pushes by accident
        if name and push:
            with_lease = f"--force-with-lease=refs/heads/{branch}:{lease}" if lease else "--force-with-lease"
            pushed = run_git(root, "push", with_lease, name, f"HEAD:refs/heads/{branch}", check=False)
            if pushed.code != 0:
                raise ShareError(f"the rewritten history was not pushed to {name}; git said:\n    {pushed.said}",
                                 hint="someone pushed meanwhile: on this clone nothing is lost; run "
                                      "`commonkeep share adopt-history` after their sync is in, then purge-history again")
            run_git(root, "fetch", "-q", name, branch, check=False)
            run_git(root, "branch", "-q", "--set-upstream-to", f"{name}/{branch}", check=False)
            rep.pushed = True
        q = shlex.quote
        rep.others = [
            "on every other clone of this root, before anything else:",
            f"  commonkeep share adopt-history --root CLONE   (moves it onto the rewritten {name or 'remote'}/{branch}; "
            "refused if that clone has changes the remote never saw)",
            f"  or delete that clone and clone again: git clone {q(url) if url else 'URL'} CLONE && "
            "commonkeep share init --root CLONE",
            "a clone that merges its old history would bring the text back: `commonkeep share sync` refuses to",
        ]
        return rep


def adopt(root: Path, *, role: str | None, remote: str | None = None) -> list[str]:
    """``commonkeep share adopt-history``: move this clone onto the remote's rewritten history."""
    from commonkeep.gate.writer import require_writer
    from commonkeep.patches.lock import writer_lock
    from commonkeep.share.setup import require_initialised
    from commonkeep.share.sync import CANONICAL_PATHS, _branch, _choose_remote

    root = Path(root).resolve()
    require_initialised(root)
    acting = require_writer("share adopt-history", role, root)
    with writer_lock(root, acting, "share adopt-history"):
        branch = _branch(root)
        name = _choose_remote(root, branch, remote)
        if name is None:
            raise ShareError("this root has no git remote to adopt a history from")
        tracking = f"refs/remotes/{name}/{branch}"
        old = run_git(root, "rev-parse", "-q", "--verify", tracking, check=False).out.strip()
        dirty = run_git(root, "status", "--porcelain", "--", *[p for p in CANONICAL_PATHS if (root / p).exists()]).out
        ahead = run_git(root, "rev-list", f"{old}..HEAD", check=False).out.split() if old else ["?"]
        if dirty.strip() or ahead:
            raise ShareError("this clone has changes the remote never saw; adopting the rewritten history would lose them",
                             hint="copy what you need out of the root, then delete it and clone again "
                                  "(`git clone URL ROOT && commonkeep share init --root ROOT`)")
        run_git(root, "fetch", "-q", name, branch)
        new = run_git(root, "rev-parse", "FETCH_HEAD").out.strip()
        run_git(root, "update-ref", tracking, new)
        run_git(root, "reset", "-q", "--hard", new)
        run_git(root, "reflog", "expire", "--expire=now", "--all")
        run_git(root, "gc", "-q", "--prune=now")
        return [f"this clone now follows the rewritten {name}/{branch} ({new[:12]}); the old history was pruned"]


def rewritten(root: Path, last_seen: str | None, fetched: str) -> bool:
    """Has the remote's branch stopped descending from what this clone last saw of it (its
    remote-tracking ref, which plain fetches by ``share sync`` leave alone)?"""
    if not last_seen or last_seen == fetched:
        return False
    known = run_git(root, "cat-file", "-e", f"{last_seen}^{{commit}}", check=False).code == 0
    return known and run_git(root, "merge-base", "--is-ancestor", last_seen, fetched, check=False).code == 1
