"""``share init``: make a root a git repository ready to merge by id.

``init`` never touches an existing history: it runs ``git init`` only where there is no
repository, writes a managed block into ``.gitignore`` (derived and machine-local files) and
``.gitattributes`` (merge drivers), sets the repo-local ``merge.commonkeep-jsonl.driver`` and
commits those two files.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from commonkeep.errors import BadInput
from commonkeep.share.git import ShareError, require_identity, run_git
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
    "audit/",
    ".*.lock",
    ".*.tmp-*",
    ".merge_file_*",
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
    redacted: list[str] = field(default_factory=list)  # "file: kinds" the exit gate removed in place


def init(root: Path | str, remote_url: str | None = None) -> InitReport:
    """Make ``root`` a repository ready for sharing (idempotent)."""
    root = Path(root).resolve()
    _require_root(root)
    require_identity(root, "share init")  # every later sync commits: say so now, before anything changes
    top = _toplevel(root)
    created = False
    if top is None:
        run_git(root, "init", "-q")
        created = True
    elif top != root:
        raise ShareError(f"{root} is inside the git repository {top}; a shared root must be a repository of its own",
                         hint="move the memory root out of that repository, or share that repository by other means")
    report = InitReport(str(root), created)
    from commonkeep.store.exitgate import sweep

    # the first commit a person makes by hand after this must not carry what other programs wrote either
    report.redacted = [f"{s.file}: {s.as_dict()['kinds']}" for s in sweep(root, reason="share init")]
    for name, lines in ((".gitignore", IGNORED), (".gitattributes", ATTRIBUTES)):
        path = root / name
        try:
            old = path.read_text(encoding="utf-8") if path.exists() else ""
        except UnicodeDecodeError as exc:
            raise ShareError(f"{path} is not UTF-8 (byte {exc.start}); nothing was changed",
                             hint=f"save {name} as UTF-8, then run `commonkeep share init` again") from None
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



def require_initialised(root: Path) -> None:
    top = _toplevel(root)
    attrs = root / ".gitattributes"
    configured = run_git(root, "config", "--get", f"merge.{DRIVER}.driver", check=False).out.strip() if top else ""
    ok = top == root and attrs.exists() and f"merge={DRIVER}" in attrs.read_text(encoding="utf-8") and configured
    if not ok:
        raise ShareError(f"{root} is not set up for sharing (no git repository, .gitattributes or merge driver config)",
                         hint=f"run `commonkeep share init --root {shlex.quote(str(root))} [--remote URL]` first "
                              "(on every machine: the driver config is not cloned)")
