"""``share sync``: commit, merge by id, let every tombstone win, reindex, render, push.

Steps, under the writer lock, with the work owed recorded first in the sync journal
(:mod:`commonkeep.share.journal`, ids and commit ids only):

1. recover what an interrupted sync left: its stale ``.git/index.lock``, git's ``.merge_file_*``
   temp files, a merge cut off part-way (undone, then run again) or a merge it left uncommitted
   (finished);
2. commit the canonical files; fetch the remote branch; record both commits and the union of
   their tombstones in the journal; ``git merge --no-commit`` (the ``commonkeep-jsonl`` driver
   merges JSONL by id and field, dropping purged ids). A ``commonkeep write`` landing between
   the commit and the merge makes git refuse: the new change is committed and the merge tried
   again (a few times);
3. settle (:mod:`commonkeep.share.settle`): every tombstone wins over every other version of its
   record, in records, inbox, patches, evidence, daily logs and this machine's own copies (an
   audit-preserving deletion keeps its line with ``status: "deleted"``); a
   rejection for poisoning wins over a promotion (:mod:`commonkeep.share.rejections`); the
   driver's side file becomes contested candidates (:mod:`commonkeep.share.contested`);
4. commit the merge (so no merge commit this sync makes holds purged text), rebuild the index
   and renders, push, remove the journal.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.patches.lock import pid_alive
from commonkeep.share import journal
from commonkeep.share.deleted_lines import id_lines
from commonkeep.share.git import ShareError, require_identity, run_git
from commonkeep.share.history import rewritten
from commonkeep.share.merge import SIDE_FILE_NAME
from commonkeep.share.settle import Tombs, settle, statements_at, tombs_at, tombs_here
from commonkeep.share.setup import (
    CANONICAL_PATHS,
    DRIVER,
    IGNORED,
    _require_root,
    driver_command,
    init,
    require_initialised,
)
from commonkeep.store.layout import Layout

__all__ = ["CANONICAL_PATHS", "DRIVER", "IGNORED", "SyncReport", "driver_command", "init", "sync"]

MERGE_ATTEMPTS = 5  # commit-again-and-retry rounds when a write lands between the commit and the merge
_REFUSED_LOCAL = ("Your local changes to the following files would be overwritten",
                  "Please commit your changes or stash them")


def checkpoint(step: str) -> None:
    """Called between the steps of a sync (``recovering``, ``committed``, ``fetched``, ``merged``,
    ``settled``, ``merge_committed``, ``pushed``); does nothing. Tests replace it to kill a sync there."""


@dataclass
class SyncReport:
    root: str
    remote: str | None
    branch: str
    local_commit: list[str] = field(default_factory=list)  # canonical files committed before the pull
    pulled: bool = False
    remote_commit: str | None = None
    added: list[str] = field(default_factory=list)  # record ids that came from the remote
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    contested: list[str] = field(default_factory=list)  # candidate ids created
    contested_failed: int = 0  # side-file entries that could not become candidates (kept in the side file)
    left_uncommitted: list[str] = field(default_factory=list)
    pushed: bool = False
    recovered: list[str] = field(default_factory=list)  # what an interrupted sync left, and was recovered
    dropped: list[str] = field(default_factory=list)  # "path#id" of tombstoned record lines the merge brought back
    restored: list[str] = field(default_factory=list)  # "path#id" of deletion lines (audit-preserving) put back
    rejected_poisoned: list[str] = field(default_factory=list)  # records deleted: their candidate was rejected as poisoned
    redacted: list[str] = field(default_factory=list)  # "file: kinds" the exit gate removed before staging
    notes: list[str] = field(default_factory=list)
    next_step: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _records_snapshot(lay: Layout) -> dict[str, bytes]:
    """id -> line bytes of every record file (canonical files), for what-came-in counts."""
    out: dict[str, bytes] = {}
    for _, rid, line in id_lines(lay):
        out.setdefault(rid, line)
    return out


def _branch(root: Path) -> str:
    res = run_git(root, "symbolic-ref", "--short", "HEAD", check=False)
    if res.code != 0:
        raise ShareError(f"{root} is not on a branch (detached HEAD)", hint="check out a branch, then sync again")
    return res.out.strip()


def _choose_remote(root: Path, branch: str, wanted: str | None) -> str | None:
    remotes = run_git(root, "remote").out.split()
    if wanted:
        if wanted not in remotes:
            raise ShareError(f"no git remote named {wanted!r} in {root} (remotes: {', '.join(remotes) or 'none'})",
                             hint="add one with `commonkeep share init --remote URL` or `git remote add NAME URL`")
        return wanted
    configured = run_git(root, "config", "--get", f"branch.{branch}.remote", check=False).out.strip()
    if configured in remotes:
        return configured
    return "origin" if "origin" in remotes else None


def _describe(files: list[str]) -> str:
    return ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")


def _stage_canonical(root: Path, redacted: list[str] | None = None) -> list[str]:
    """Stage the canonical files; those other programs write pass the exit gate first (redacted in
    place and staged from their redacted bytes: ``exitcheck``). ``redacted`` gets "file: kinds"."""
    from commonkeep.share.exitcheck import stage

    paths = [p for p in CANONICAL_PATHS if (root / p).exists()]
    swept = stage(root, paths)
    if redacted is not None:
        redacted += [f"{s.file}: {s.as_dict()['kinds']}" for s in swept]
    return [s for s in run_git(root, "diff", "--cached", "--name-only").out.split("\n") if s]


def _commit_canonical(root: Path, message: str, redacted: list[str] | None = None) -> list[str]:
    staged = _stage_canonical(root, redacted)
    if staged:
        run_git(root, "commit", "-q", "--no-verify", "-m", f"{message}: {_describe(staged)}")
    return staged


def _rev(root: Path, ref: str) -> str | None:
    res = run_git(root, "rev-parse", "-q", "--verify", f"{ref}^{{commit}}", check=False)
    return res.out.strip() or None if res.code == 0 else None


def sync(root: Path | str, *, role: str | None, remote: str | None = None, push: bool = True,
         wait: float | None = None) -> SyncReport:
    """Commit, merge by id, settle tombstones, turn contested lines into candidates, reindex, render, push."""
    from commonkeep.gate.writer import require_writer
    from commonkeep.patches.lock import writer_lock

    root = Path(root).resolve()
    lay = _require_root(root)
    run_git(root, "--version")  # no git on PATH -> a clear error before anything else
    require_initialised(root)
    acting = require_writer("share sync", role, root)
    require_identity(root, "share sync")
    with writer_lock(root, acting, "share sync", wait=wait):
        return _sync_locked(root, lay, acting, remote, push)


def _recover(root: Path, gitdir: Path, prev: journal.Journal | None, report: SyncReport) -> None:
    """Clear what an interrupted sync left behind (see the module docstring, step 1)."""
    lock = gitdir / "index.lock"
    if lock.exists():
        if prev is None or (prev.pid != os.getpid() and pid_alive(prev.pid)):
            raise ShareError(f"git's index is locked ({lock}): another git command is running in {root}, or one crashed",
                             hint=f"if no git command is running there, delete {shlex.quote(str(lock))}, then sync again")
        if not journal.wait_for_lock_release(lock):
            lock.unlink(missing_ok=True)
            report.recovered.append(f"removed the stale .git/index.lock of an interrupted sync (pid {prev.pid}, "
                                    f"started {prev.started_at or '?'})")
    temps = sorted(root.glob(".merge_file_*"))
    for tmp in temps:
        tmp.unlink(missing_ok=True)
    if temps:
        report.recovered.append(f"removed {len(temps)} temp file(s) git's merge left (.merge_file_*)")
    merging = (gitdir / "MERGE_HEAD").exists()
    if prev is not None and prev.stage == "merge" and not merging:
        # cut off inside `git merge`, before it recorded the merge: undo what it wrote to the
        # index; what it wrote to files stays as local changes (a merge by id keeps all of ours)
        run_git(root, "reset", "-q", "--merge", check=False)
        report.recovered.append("a merge cut off part-way was undone; it runs again now")


def _merge(root: Path, gitdir: Path, name: str, theirs: str, report: SyncReport) -> None:
    """``git merge --no-commit theirs``; when a write landed since the local commit and git refuses,
    commit it and try again (bounded)."""
    for attempt in range(MERGE_ATTEMPTS):
        res = run_git(root, "merge", "--no-commit", "--no-edit", "--allow-unrelated-histories", theirs, check=False)
        if res.code == 0:
            return
        merging = (gitdir / "MERGE_HEAD").exists()
        if not merging and any(m in res.said for m in _REFUSED_LOCAL) and attempt + 1 < MERGE_ATTEMPTS:
            again = _commit_canonical(root, "commonkeep share: local changes made during the sync to")
            if again:
                report.local_commit += [p for p in again if p not in report.local_commit]
                report.notes.append(f"a write landed during the sync ({_describe(again)}); committed it and merged again")
                continue
        if merging:
            run_git(root, "merge", "--abort", check=False)
        raise ShareError(
            f"git pull from {name} failed (merging what was fetched); git said:\n    {res.said}\n"
            + ("  the merge was aborted: your files are as they were before the pull, " if merging
               else "  nothing was merged: ")
            + "local changes are committed and nothing was lost",
            hint=(f"merge by hand (`git -C {shlex.quote(str(root))} pull --no-rebase {name}`, resolve, commit), "
                  "or move the files git names out of the way, then run `commonkeep share sync` again"),
        )
    raise ShareError(f"the root kept changing during the sync: git refused the merge {MERGE_ATTEMPTS} times",
                     hint="local changes are committed and nothing was lost; run `commonkeep share sync` again")


def _finish_merge(root: Path, lay: Layout, gitdir: Path, prev: journal.Journal, revs: list[str], role: str,
                  name: str | None, report: SyncReport) -> None:
    """Settle and commit the merge an interrupted sync left uncommitted (``MERGE_HEAD`` is the
    commit its journal names)."""
    from commonkeep.share.contested import candidates_from_side
    from commonkeep.share.rejections import rejections_win

    tombs = tombs_here(lay) | Tombs(set(prev.tombstoned), set(prev.purged))
    settle(lay, tombs, [t for rev in revs for t in statements_at(root, rev, tombs.purged)], held_here=True, revs=revs)
    report.rejected_poisoned += rejections_win(root, role)
    from_side = candidates_from_side(root, gitdir / SIDE_FILE_NAME, name, prev.theirs, role, tombs.purged)
    report.contested += from_side.created
    report.notes += from_side.notes
    _stage_canonical(root)
    run_git(root, "commit", "-q", "--no-verify", "-m",
            f"commonkeep share: merge of {(prev.theirs or '?')[:12]}, finished after an interrupted sync")
    report.recovered.append("finished and committed the merge an interrupted sync left uncommitted")


def _sync_locked(root: Path, lay: Layout, role: str, wanted: str | None, push: bool) -> SyncReport:
    from commonkeep.share.contested import candidates_from_side
    from commonkeep.share.rejections import rejections_win

    gitdir = Path(run_git(root, "rev-parse", "--absolute-git-dir").out.strip())
    branch = _branch(root)
    name = _choose_remote(root, branch, wanted)
    report = SyncReport(str(root), name, branch)
    prev = journal.load(gitdir)
    _recover(root, gitdir, prev, report)
    merge_head = _rev(root, "MERGE_HEAD")
    resuming = merge_head is not None and prev is not None and merge_head in (prev.theirs,)
    if merge_head is not None and not resuming:
        raise ShareError(f"a git merge is in progress in {root}",
                         hint="finish it (`git commit`) or abort it (`git merge --abort`), then sync again")
    # the work owed: texts are found again in these commits (a sync that died owes its commits too)
    owed = journal.Journal(stage="commit", pid=os.getpid())
    if prev is not None:  # what the dead sync owed stays on disk until it is done
        owed.stage = prev.stage if prev.stage in ("merge", "settle") else "commit"
        owed.ours, owed.theirs = prev.ours, prev.theirs
        owed.tombstoned, owed.purged = list(prev.tombstoned), list(prev.purged)
    revs = [r for r in ((prev.ours, prev.theirs) if prev else ()) if r]
    journal.save(gitdir, owed)
    checkpoint("recovering")
    if prev is not None and prev.stage in ("merge", "settle") and prev.purged:
        # the scrub an interrupted sync owes is finished first, offline (the remote may be unreachable now)
        settle(lay, tombs_here(lay) | Tombs(set(prev.tombstoned), set(prev.purged)),
               [t for rev in revs for t in statements_at(root, rev, set(prev.purged))], held_here=True, revs=revs)
        from commonkeep.store.render import render_all

        render_all(lay)  # rendered/ is a copy too
        report.recovered.append(f"finished the scrub an interrupted sync owed ({len(prev.purged)} purged record(s))")
    if resuming and prev is not None:
        _finish_merge(root, lay, gitdir, prev, revs, role, name, report)
        resuming, merge_head = False, None  # then a sync as usual: the remote may have moved on meanwhile
    report.local_commit = _commit_canonical(root, "commonkeep share: local changes to", report.redacted)
    checkpoint("committed")
    side = gitdir / SIDE_FILE_NAME
    before = _records_snapshot(lay)
    dead_before = tombs_here(lay)
    if name is not None:
        probe = run_git(root, "ls-remote", "--heads", name, branch, check=False, timeout=60)
        if probe.code != 0:
            url = run_git(root, "remote", "get-url", name, check=False).out.strip()
            raise ShareError(f"the remote {name!r} ({url}) cannot be reached; git said:\n    {probe.said}",
                             hint="check the URL (`git remote -v`), the network and your credentials; "
                                  "local changes are committed and nothing was lost")
        if probe.out.strip():
            last_seen = _rev(root, f"refs/remotes/{name}/{branch}")
            run_git(root, "fetch", "-q", "--refmap=", name, branch)  # FETCH_HEAD only: the tracking ref moves on push
            theirs = _rev(root, "FETCH_HEAD")
            ours = _rev(root, "HEAD")
            if theirs is not None and rewritten(root, last_seen, theirs):
                journal.clear(gitdir)
                raise ShareError(
                    f"the history of {name}/{branch} was rewritten (`commonkeep share purge-history` on another clone?); "
                    "merging this clone's old history would bring purged text back, so nothing was merged",
                    hint=f"run `commonkeep share adopt-history --root {shlex.quote(str(root))}` (or clone the root again)")
            checkpoint("fetched")
            if theirs is not None:
                tombs = tombs_here(lay) | tombs_at(root, theirs)
                owed.stage, owed.ours, owed.theirs = "merge", ours, theirs
                owed.tombstoned = sorted(set(owed.tombstoned) | tombs.tombstoned)
                owed.purged = sorted(set(owed.purged) | tombs.purged)
                journal.save(gitdir, owed)  # before the merge: the driver drops these ids, and a later sync finishes
                _merge(root, gitdir, name, theirs, report)
                report.pulled, report.remote_commit = True, theirs
                revs += [r for r in (ours, theirs) if r]
        else:
            report.notes.append(f"nothing to pull: {name} has no branch {branch} yet")
    checkpoint("merged")
    owed.stage = "settle"
    journal.save(gitdir, owed)
    from commonkeep.patches.purge import rescrub_lines

    again = rescrub_lines(lay)  # daily-log lines a purge scrubbed (by hash) that a union merge brought back
    if again:
        report.notes.append(f"{again} line(s) of purged memory the merge brought back were scrubbed again")
    tombs = tombs_here(lay) | Tombs(set(owed.tombstoned), set(owed.purged))
    extra = [t for rev in dict.fromkeys(revs) for t in statements_at(root, rev, tombs.purged)]
    incoming = tombs.purged - dead_before.purged
    settled = settle(lay, tombs, extra, held_here=bool(incoming & set(before)), revs=revs)
    report.dropped, report.restored = settled.dropped, settled.restored
    if settled.texts and incoming & set(before):
        report.notes.append(f"{len(incoming & set(before))} record(s) purged for privacy on another machine: scrubbed "
                            "from this machine's local copies too (runtime files, reports, session summaries, "
                            "search databases)")
    if settled.dropped:
        report.notes.append(f"{len(settled.dropped)} line(s) of deleted records the merge brought back were dropped "
                            "(a tombstone wins over every other version; an audit-preserving deletion keeps its "
                            "line with status deleted)")
    if settled.restored:
        report.notes.append(f"{len(settled.restored)} line(s) kept by audit-preserving deletions were missing after "
                            "the merge and were put back from the commits being merged")
    if settled.scrubbed and not incoming & set(before):
        report.notes.append("copies of purged memory the merge brought back were scrubbed again "
                            f"({_describe(settled.scrubbed)})")
    # a promotion and a rejection of one candidate meet only when a merge brings patch files
    brought = [r for r in (owed.ours, owed.theirs) if r] if report.pulled else []
    if (len(brought) == 2 and run_git(root, "diff", "--quiet", brought[0], brought[1], "--", "patches",
                                                   check=False).code != 0):
        report.rejected_poisoned += rejections_win(root, role)
    if report.rejected_poisoned:
        report.notes.append(f"{', '.join(report.rejected_poisoned)}: promoted on one machine, rejected as poisoned on "
                            "another; the rejection wins (deleted through a patch, reason poisoned)")
    from_side = candidates_from_side(root, side, name, report.remote_commit, role, tombs.purged)
    report.contested += from_side.created
    report.contested_failed = from_side.failed
    report.notes += from_side.notes
    checkpoint("settled")
    if _rev(root, "MERGE_HEAD") is not None:
        _stage_canonical(root, report.redacted)
        run_git(root, "commit", "-q", "--no-verify", "-m",
                f"commonkeep share: merge {name}/{branch}" + (f" ({len(report.contested)} contested candidate(s))"
                                                               if report.contested else ""))
    else:
        _commit_canonical(root, "commonkeep share: canonical changes after the merge", report.redacted)
    checkpoint("merge_committed")
    owed.stage = "publish"
    journal.save(gitdir, owed)
    after = _records_snapshot(lay)
    dead = tombs_here(lay).tombstoned
    report.added = sorted(i for i in after if i not in before and i not in dead)
    report.updated = sorted(i for i in after if i in before and after[i] != before[i] and i not in dead)
    report.removed = sorted(i for i in before if i not in after or i in dead)
    from commonkeep.recall.search.index import sync_root
    from commonkeep.recall.search.sync import drop_after_sweep
    from commonkeep.store.exitgate import Swept
    from commonkeep.store.render import render_all

    drop_after_sweep(root, [Swept(item.split(":")[0]) for item in report.redacted])  # the indexes may hold raw rows
    sync_root(root)  # incremental, as after an apply: only changed rows (and their vectors) are redone
    render_all(lay)
    _commit_canonical(root, "commonkeep share: canonical changes after the merge", report.redacted)
    if report.redacted:
        report.notes.append("secrets other programs wrote were redacted before anything was committed "
                            f"({_describe(report.redacted)}; audit/log.jsonl has a line for each file)")
    junk = [ln[3:] for ln in run_git(root, "status", "--porcelain").out.splitlines() if ln.strip()]
    report.left_uncommitted = junk
    if junk:
        report.notes.append(f"{len(junk)} non-canonical path(s) left uncommitted: {_describe(junk)}")
    if push and name is not None:
        pushed = run_git(root, "push", "-u", name, f"HEAD:refs/heads/{branch}", check=False)
        if pushed.code != 0:
            journal.clear(gitdir)  # nothing is owed: everything is merged, settled and committed
            raise ShareError(f"git push to {name} failed; git said:\n    {pushed.said}",
                             hint="everything is committed locally and nothing was lost; run `commonkeep share sync` again "
                                  "(another machine probably pushed meanwhile)")
        report.pushed = True
        checkpoint("pushed")
    elif name is None:
        report.notes.append("no git remote: committed locally only (add one with `commonkeep share init --remote URL`)")
    journal.clear(gitdir)
    for note in report.recovered:
        report.notes.append(f"recovered from an interrupted sync: {note}")
    report.next_step = (f"commonkeep review  ({len(report.contested)} contested candidate(s) wait for the librarian)"
                        if report.contested else "nothing to review from this sync")
    return report
