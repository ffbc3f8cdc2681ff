"""One git commit per ingest or gardener pass, with a message of file names and counts only.

Pages can hold anything a source said (including things nobody should read in ``git log``), so
the message names the pass, the source path, the files touched and counts - never page text.

Secrets never enter a git object: before anything is staged, every changed file under ``raw/``
and ``wiki/`` is scanned (``commonkeep.secrets``), and a file that still holds a secret (a raw
source dropped in but not ingested yet, a hand-edited page) is left out of the commit, which
names it with the kinds found, never the values. A file whose *path* holds a secret is left out
the same way (a tree object would keep the name), and every path in the message is redacted.
Ingest redacts its own source (content and path) first, so a file is left out only until it is
ingested (or cleaned by hand).
"""

from __future__ import annotations

from pathlib import Path

import git

from commonkeep.secrets import redact, summarize
from commonkeep.wiki.paths import redacted_rel

MAX_LISTED = 40
_IDENTITY = {
    "GIT_AUTHOR_NAME": "commonkeep wiki",
    "GIT_AUTHOR_EMAIL": "wiki@commonkeep.invalid",
    "GIT_COMMITTER_NAME": "commonkeep wiki",
    "GIT_COMMITTER_EMAIL": "wiki@commonkeep.invalid",
}


def open_repo(project: Path) -> git.Repo:
    """The project's own repository, created on first use (never a parent folder's repository)."""
    if (project / ".git").exists():
        return git.Repo(project)
    return git.Repo.init(project)


def _has_identity(repo: git.Repo) -> bool:
    """Whether git itself finds an identity to commit with (asked of git, not read from the config
    files: git also honours ``GIT_CONFIG_GLOBAL``, ``$XDG_CONFIG_HOME``, includes and the environment)."""
    try:
        repo.git.var("GIT_AUTHOR_IDENT")
        repo.git.var("GIT_COMMITTER_IDENT")
    except (git.GitCommandError, OSError):
        return False
    return True


def holding_secrets(repo: git.Repo, project: Path, paths: list[str]) -> dict[str, list[str]]:
    """Changed or untracked files under ``paths`` that hold a secret: {relative path: kinds}."""
    if not paths:
        return {}
    out = repo.git.status("--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", *paths)
    found: dict[str, list[str]] = {}
    for entry in out.split("\0"):
        name = entry[3:]
        if len(entry) < 4 or entry[:2] in ("D ", " D", "DD"):
            continue
        f = project / name
        if f.is_symlink() or not f.is_file():
            continue
        try:
            kinds = redacted_rel(name)[1] + redact(f.read_bytes().decode("utf-8", errors="replace")).findings
        except OSError:
            continue
        if kinds:
            found[name] = kinds
    return found


def commit_pass(project: Path, title: str, counts: dict[str, int]) -> tuple[str, list[str]]:
    """Stage ``raw/``, ``wiki/`` and ``.gitignore``, commit once; returns (short sha, changed files).

    A file that holds a secret is never staged (so no git object ever holds it); the message
    names it and the kinds found.
    """
    repo = open_repo(project)
    paths = [p for p in ("raw", "wiki", ".gitignore") if (project / p).exists()]
    withheld = holding_secrets(repo, project, paths)
    if paths:
        repo.git.add("--all", "--", *paths, *(f":(exclude,literal){name}" for name in withheld))
    status = repo.git.diff("--cached", "--name-status", "--no-renames").splitlines()
    changed = [line.split("\t", 1)[1] for line in status if "\t" in line]
    kinds = {"A": 0, "M": 0, "D": 0}
    for line in status:
        kinds[line[:1]] = kinds.get(line[:1], 0) + 1
    lines = [title, ""]
    lines.append("counts: " + ", ".join(f"{k}={v}" for k, v in counts.items()))
    lines.append(f"files: {len(changed)} (added {kinds['A']}, modified {kinds['M']}, deleted {kinds['D']})")
    for entry in status[:MAX_LISTED]:
        code, _, name = entry.partition("\t")
        lines.append(f"  {code[:1]} {redacted_rel(name)[0]}")  # a deleted path may hold one
    if len(status) > MAX_LISTED:
        lines.append(f"  ... and {len(status) - MAX_LISTED} more")
    if withheld:
        lines.append(f"left out, holding secrets (redact or ingest them): {len(withheld)} file(s)")
        lines.extend(f"  {redacted_rel(name)[0]} ({summarize(kinds)})" for name, kinds in sorted(withheld.items())[:MAX_LISTED])
    env = {} if _has_identity(repo) else _IDENTITY
    with repo.git.custom_environment(**env):
        repo.git.commit("--allow-empty", "--no-verify", "-q", "-m", redact("\n".join(lines)).text)
    return repo.head.commit.hexsha[:12], changed
