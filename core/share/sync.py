"""The git steps of sharing a root: ``init`` (make it a repository ready to merge) and ``sync``.

``init`` never touches an existing history: it runs ``git init`` only where there is no
repository, writes a managed block into ``.gitignore`` (derived and machine-local files) and
``.gitattributes`` (merge drivers), sets the repo-local ``merge.commonkeep-jsonl.driver`` and
commits those two files. ``sync`` commits local canonical changes, pulls with a merge (the driver
merges JSONL by id), turns the driver's side file into contested candidates, scrubs again the
daily-log lines of a privacy purge that git's ``union`` merge brought back, rebuilds the indexes
and renders, commits and pushes.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.share.git import ShareError, run_git
from commonkeep.share.merge import SIDE_FILE_NAME, record_id
from commonkeep.store.layout import Layout

DRIVER = "commonkeep-jsonl"
BEGIN = "# >>> commonkeep share (managed; edit outside this block)"
END = "# <<< commonkeep share"

# Derived (rebuilt from the canonical files) or machine-local: never shared.
IGNORED = [
    "search/",
    "locks/",
    "runtime/",
    "quarantine/",
    "rendered/",
    "reports/",
    "sessions/",
    ".*.lock",
    ".*.tmp-*",
]
# Canonical JSONL files (contract §2): merged by id.
JSONL_PATTERNS = [
    "memory/*.jsonl",
    "memory/projects/*.jsonl",
    "inbox/*.jsonl",
]
ATTRIBUTES = [*(f"{p} merge={DRIVER}" for p in JSONL_PATTERNS), "daily/*.md merge=union"]
# What sync commits: the canonical files and the sharing setup (everything else is left alone).
CANONICAL_PATHS = ["memory", "inbox", "daily", "patches", "schemas", "config.json", "scratchpad.md",
                   ".gitignore", ".gitattributes"]


def _block(lines: list[str]) -> str:
    return "\n".join([BEGIN, *lines, END]) + "\n"


def _with_block(existing: str, lines: list[str]) -> str:
    """``existing`` with the managed block set to ``lines`` (appended, or replaced in place)."""
    block = _block(lines)
    start, end = existing.find(BEGIN), existing.find(END)
    if start != -1 and end > start:
        stop = end + len(END)
        if existing[stop:stop + 1] == "\n":
            stop += 1
        return existing[:start] + block + existing[stop:]
    if existing and not existing.endswith("\n"):
        existing += "\n"
    return existing + block


def driver_command() -> str:
    return f"{shlex.quote(sys.executable)} -m commonkeep.share.merge %O %A %B %P"


def _require_root(root: Path) -> Layout:
    lay = Layout(root)
    if not lay.memory_dir.is_dir():
        raise BadInput(f"no memory root at {root} (no memory/ folder)",
                       hint="create it with `commonkeep init --root DIR` (or clone a shared root there) first")
    return lay


def _toplevel(root: Path) -> Path | None:
    res = run_git(root, "rev-parse", "--show-toplevel", check=False)
    return Path(res.out.strip()).resolve() if res.code == 0 and res.out.strip() else None


@dataclass
class InitReport:
    root: str
    created_repo: bool
    changed: list[str] = field(default_factory=list)
    remote: str | None = None
    committed: bool = False


def init(root: Path | str, remote_url: str | None = None) -> InitReport:
    """Make ``root`` a repository ready for sharing (idempotent)."""
    root = Path(root).resolve()
    _require_root(root)
    top = _toplevel(root)
    created = False
    if top is None:
        run_git(root, "init", "-q")
        created = True
    elif top != root:
        raise ShareError(f"{root} is inside the git repository {top}; a shared root must be a repository of its own",
                         hint="move the memory root out of that repository, or share that repository by other means")
    report = InitReport(str(root), created)
    for name, lines in ((".gitignore", IGNORED), (".gitattributes", ATTRIBUTES)):
        path = root / name
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        new = _with_block(old, lines)
        if new != old:
            path.write_text(new, encoding="utf-8")
            report.changed.append(name)
    want = {f"merge.{DRIVER}.name": "commonkeep: merge JSONL records by id", f"merge.{DRIVER}.driver": driver_command()}
    for key, value in want.items():
        have = run_git(root, "config", "--local", "--get", key, check=False).out.rstrip("\n")
        if have != value:
            run_git(root, "config", "--local", key, value)
            report.changed.append(f"git config {key}")
    if remote_url:
        remotes = run_git(root, "remote").out.split()
        if "origin" in remotes:
            url = run_git(root, "remote", "get-url", "origin").out.strip()
            if url != remote_url:
                raise ShareError(f"the remote 'origin' of {root} already points at {url}",
                                 hint=f"change it with `git -C {shlex.quote(str(root))} remote set-url origin URL` if that is meant")
        else:
            run_git(root, "remote", "add", "origin", remote_url)
            report.changed.append("remote origin")
        report.remote = remote_url
    files = [n for n in (".gitignore", ".gitattributes") if n in report.changed]
    if files:
        run_git(root, "add", "--", *files)
        if run_git(root, "diff", "--cached", "--quiet", "--", *files, check=False).code != 0:
            run_git(root, "commit", "-q", "-m", "commonkeep share init: ignore derived files, merge JSONL by id",
                    "--", *files)
            report.committed = True
    return report


# --- sync -------------------------------------------------------------------------------


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
    notes: list[str] = field(default_factory=list)
    next_step: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def require_initialised(root: Path) -> None:
    top = _toplevel(root)
    attrs = root / ".gitattributes"
    configured = run_git(root, "config", "--get", f"merge.{DRIVER}.driver", check=False).out.strip() if top else ""
    ok = top == root and attrs.exists() and f"merge={DRIVER}" in attrs.read_text(encoding="utf-8") and configured
    if not ok:
        raise ShareError(f"{root} is not set up for sharing (no git repository, .gitattributes or merge driver config)",
                         hint=f"run `commonkeep share init --root {shlex.quote(str(root))} [--remote URL]` first "
                              "(on every machine: the driver config is not cloned)")


def _records_snapshot(lay: Layout) -> dict[str, bytes]:
    """id -> line bytes of every record file (canonical files), for what-came-in counts."""
    out: dict[str, bytes] = {}
    for path in lay.canonical_files():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for line in data.split(b"\n"):
            rid = record_id(line) if line.strip() else None
            if rid is not None:
                out.setdefault(rid, line)
    return out


def _tombstones(lay: Layout) -> list[dict[str, Any]]:
    """The tombstones that parse and name a deleted record (bad lines are doctor's business)."""
    out: list[dict[str, Any]] = []
    try:
        data = lay.tombstones.read_bytes()
    except OSError:
        return out
    for line in data.split(b"\n"):
        try:
            obj = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and isinstance(obj.get("deleted_record_id"), str):
            out.append(obj)
    return out


def _tombstoned(lay: Layout) -> set[str]:
    return {str(t["deleted_record_id"]) for t in _tombstones(lay)}


DONE_FILE_NAME = SIDE_FILE_NAME.replace(".jsonl", ".done.jsonl")


def _is_record_file(path: str) -> bool:
    """A canonical record file (L1, L2, a project file): only their lines are memory statements."""
    return path in ("memory/L1.identity.jsonl", "memory/L2.playbooks.jsonl") or (
        path.startswith("memory/projects/") and path.endswith(".jsonl") and "/" not in path[len("memory/projects/"):]
    )


def _purged(lay: Layout) -> set[str]:
    """Record ids whose tombstone says ``privacy_purge``."""
    return {str(t["deleted_record_id"]) for t in _tombstones(lay) if t.get("deletion_mode") == "privacy_purge"}


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


def _side_path(root: Path) -> Path:
    return Path(run_git(root, "rev-parse", "--absolute-git-dir").out.strip()) / SIDE_FILE_NAME


def _describe(files: list[str]) -> str:
    return ", ".join(files[:8]) + (f" and {len(files) - 8} more" if len(files) > 8 else "")


def _commit_canonical(root: Path, message: str) -> list[str]:
    paths = [p for p in CANONICAL_PATHS if (root / p).exists()]
    if paths:
        run_git(root, "add", "-A", "--", *paths)
    staged = run_git(root, "diff", "--cached", "--name-only").out.split("\n")
    staged = [s for s in staged if s]
    if staged:
        run_git(root, "commit", "-q", "-m", f"{message}: {_describe(staged)}")
    return staged


def _statement(entry: dict[str, Any]) -> str:
    line = str(entry.get("line", ""))
    try:
        row: Any = json.loads(line)
    except (ValueError, RecursionError):
        row = None
    if isinstance(row, dict):
        for key in ("statement", "text", "question", "summary"):
            value = row.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return line


def _candidates_from_side(root: Path, side: Path, remote: str | None, commit: str | None,
                          role: str | None, report: SyncReport) -> None:
    from commonkeep.store.candidates import MAX_TEXT_CHARS, default_provenance
    from commonkeep.store.capture import capture

    try:
        raw = side.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    keep: list[str] = []  # entries that could not become candidates stay in the side file
    done: list[str] = []
    purged = _purged(Layout(root))
    where = f"git:{remote or 'local'}@{commit or 'unknown'}"
    for text_line in raw.splitlines():
        if not text_line.strip():
            continue
        try:
            entry: Any = json.loads(text_line)
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            kind = str(entry.get("kind", ""))
            rid, path = str(entry.get("id", "")), str(entry.get("path", ""))
            if not _is_record_file(path):
                # a candidate, tombstone, evidence or inquiry line both machines changed: ours
                # stays in the file; the other version is kept in the local audit copy, not turned
                # into a memory candidate (it is not a statement of memory)
                done.append(text_line)
                report.notes.append(f"{path}: another machine's version of {rid} lost the merge; "
                                    f"it is kept in {side.with_name(DONE_FILE_NAME)}")
                continue
            if rid in purged:
                # A privacy purge means the content must not come back: no candidate, and only the
                # fact (never the text) is kept in the local audit copy.
                done.append(json.dumps({"path": path, "id": rid, "kind": kind, "dropped": "privacy_purge"}))
                report.notes.append(f"another machine's version of {rid} was dropped: the record was purged for privacy")
                continue
            statement = _statement(entry)[:MAX_TEXT_CHARS]
            deleted = kind in ("deleted_ours", "deleted_theirs")
            why = ("deleted on one side, changed on the other; the deletion won" if deleted
                   else "changed differently on both sides; this version lost the merge")
            done_cand = capture(
                root, statement,
                source_type="share",
                source_ref=f"{where}:{path}#{rid}",
                tags=["contested", "share", *(["deleted"] if deleted else [])],
                evidence_refs=[f"{where}:{path}#{rid}", f"{path}#{rid}"],
                provenance=default_provenance(agent="commonkeep-share", role=role),
                match_kind="potential_conflict",
                matched_memory_ids=[rid],
                match_reasons=[f"{path}: {why} (git merge of {where})"],
                verification_status="review_required",
                contested={"path": path, "id": rid, "kind": kind, "remote": remote, "commit": commit},
            )
            report.contested.append(str(done_cand.candidate["id"]))
            done.append(text_line)
        except (ValueError, RecursionError, BadInput) as exc:
            keep.append(text_line)
            report.notes.append(f"a side-file entry could not become a candidate ({exc}); it stays in {side}")
    report.contested_failed = len(keep)
    if done:  # an audit copy of what was turned into candidates, local to this clone
        with open(side.with_name(DONE_FILE_NAME), "a", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in done))
    side.write_text("".join(line + "\n" for line in keep), encoding="utf-8")


def _statements(lines: list[bytes]) -> list[str]:
    """The ``statement`` of each record line that parses (what a purge must scrub)."""
    out: list[str] = []
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("statement"), str):
            out.append(rec["statement"])
    return out


def _scrub_incoming_purges(lay: Layout, statements: list[str], report: SyncReport) -> None:
    """A privacy purge made on another machine reaches this one as a tombstone and scrubbed shared
    files; this machine's own copies (runtime files, reports, session summaries, the search
    databases) are never shared, so they are scrubbed here, with the statements this machine held
    before the merge, as the purge itself did on its machine."""
    if not statements:
        return
    from commonkeep.governance.purge import scrub_local_copies

    scrub_local_copies(lay, statements)
    report.notes.append(f"{len(statements)} record(s) purged for privacy on another machine: scrubbed from this "
                        "machine's local copies too (runtime files, reports, session summaries, search databases)")


def _rescrub_purged_lines(lay: Layout, report: SyncReport) -> None:
    """Scrub again the daily-log lines a privacy purge scrubbed (their hashes are in the patches'
    ``scrubbed_lines``) that git's ``union`` merge brought back from another machine's version."""
    from commonkeep.governance.purge import rescrub_lines

    count = rescrub_lines(lay)
    if count:
        report.notes.append(f"{count} line(s) of purged memory the merge brought back were scrubbed again")


def sync(root: Path | str, *, role: str | None, remote: str | None = None, push: bool = True,
         wait: float | None = None) -> SyncReport:
    """Commit, pull (merge by id), turn contested lines into candidates, reindex, render, commit, push."""
    from commonkeep.governance.writer import require_writer, writer_lock

    root = Path(root).resolve()
    lay = _require_root(root)
    run_git(root, "--version")  # no git on PATH -> a clear error before anything else
    require_initialised(root)
    acting = require_writer("share sync", role, root)
    with writer_lock(root, acting, "share sync", wait=wait):
        return _sync_locked(root, lay, acting, remote, push)


def _sync_locked(root: Path, lay: Layout, role: str, wanted: str | None, push: bool) -> SyncReport:
    gitdir = Path(run_git(root, "rev-parse", "--absolute-git-dir").out.strip())
    if (gitdir / "MERGE_HEAD").exists():
        raise ShareError(f"a git merge is in progress in {root}",
                         hint="finish it (`git commit`) or abort it (`git merge --abort`), then sync again")
    branch = _branch(root)
    name = _choose_remote(root, branch, wanted)
    report = SyncReport(str(root), name, branch)
    report.local_commit = _commit_canonical(root, "commonkeep share: local changes to")
    junk = [ln[3:] for ln in run_git(root, "status", "--porcelain").out.splitlines() if ln.strip()]
    report.left_uncommitted = junk
    if junk:
        report.notes.append(f"{len(junk)} non-canonical path(s) left uncommitted: {_describe(junk)}")
    side = _side_path(root)
    remote_has_branch = False
    if name is not None:
        probe = run_git(root, "ls-remote", "--heads", name, branch, check=False, timeout=60)
        if probe.code != 0:
            url = run_git(root, "remote", "get-url", name, check=False).out.strip()
            raise ShareError(f"the remote {name!r} ({url}) cannot be reached; git said:\n    {probe.said}",
                             hint="check the URL (`git remote -v`), the network and your credentials; "
                                  "local changes are committed and nothing was lost")
        remote_has_branch = bool(probe.out.strip())
    incoming_purges: list[str] = []
    if name is not None and remote_has_branch:
        before = _records_snapshot(lay)
        purged_before = _purged(lay)
        side_before = side.read_bytes() if side.exists() else None
        pull = run_git(root, "pull", "--no-rebase", "--no-edit", "--allow-unrelated-histories", name, branch,
                       check=False)
        if pull.code != 0:
            merging = (gitdir / "MERGE_HEAD").exists()
            if merging:
                run_git(root, "merge", "--abort", check=False)
            if side_before is None:
                side.unlink(missing_ok=True)
            else:
                side.write_bytes(side_before)
            raise ShareError(
                f"git pull from {name} failed; git said:\n    {pull.said}\n"
                + ("  the merge was aborted: your files are as they were before the pull, " if merging
                   else "  nothing was merged: ")
                + "local changes are committed and nothing was lost",
                hint=(f"merge by hand (`git -C {shlex.quote(str(root))} pull --no-rebase {name} {branch}`, resolve, commit), "
                      "or move the files git names out of the way, then run `commonkeep share sync` again"),
            )
        report.pulled = True
        report.remote_commit = run_git(root, "rev-parse", "FETCH_HEAD").out.strip() or None
        after = _records_snapshot(lay)
        dead = _tombstoned(lay)
        report.added = sorted(i for i in after if i not in before and i not in dead)
        report.updated = sorted(i for i in after if i in before and after[i] != before[i] and i not in dead)
        report.removed = sorted(i for i in before if i not in after or i in dead)
        incoming_purges = _statements([before[i] for i in sorted(_purged(lay) - purged_before) if i in before])
    _candidates_from_side(root, side, name, report.remote_commit, role, report)
    _rescrub_purged_lines(lay, report)
    _scrub_incoming_purges(lay, incoming_purges, report)
    from commonkeep.recall.search.index import sync_root
    from commonkeep.store.render import render_all

    sync_root(root)  # incremental, as after an apply: only changed rows (and their vectors) are redone
    render_all(lay)
    if report.contested:
        _commit_canonical(root, f"commonkeep share: {len(report.contested)} contested candidate(s) from the merge of {name}")
    else:
        _commit_canonical(root, "commonkeep share: canonical changes after the merge")
    if push and name is not None:
        pushed = run_git(root, "push", "-u", name, f"HEAD:refs/heads/{branch}", check=False)
        if pushed.code != 0:
            raise ShareError(f"git push to {name} failed; git said:\n    {pushed.said}",
                             hint="everything is committed locally and nothing was lost; run `commonkeep share sync` again "
                                  "(another machine probably pushed meanwhile)")
        report.pushed = True
    elif name is None:
        report.notes.append("no git remote: committed locally only (add one with `commonkeep share init --remote URL`)")
    report.next_step = (f"commonkeep review  ({len(report.contested)} contested candidate(s) wait for the librarian)"
                        if report.contested else "nothing to review from this sync")
    return report
