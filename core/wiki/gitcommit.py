"""One git commit per ingest or gardener pass, with a message of file names and counts only.

Pages can hold anything a source said (including things nobody should read in ``git log``), so
the message names the pass, the source path, the files touched and counts - never page text.
"""

from __future__ import annotations

from pathlib import Path

import git

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
    try:
        reader = repo.config_reader()
        return bool(reader.get_value("user", "email", default="")) and bool(reader.get_value("user", "name", default=""))
    except Exception:
        return False


def commit_pass(project: Path, title: str, counts: dict[str, int]) -> tuple[str, list[str]]:
    """Stage ``raw/``, ``wiki/`` and ``.gitignore``, commit once; returns (short sha, changed files)."""
    repo = open_repo(project)
    paths = [p for p in ("raw", "wiki", ".gitignore") if (project / p).exists()]
    repo.git.add("--all", "--", *paths)
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
        lines.append(f"  {code[:1]} {name}")
    if len(status) > MAX_LISTED:
        lines.append(f"  ... and {len(status) - MAX_LISTED} more")
    env = {} if _has_identity(repo) else _IDENTITY
    with repo.git.custom_environment(**env):
        repo.git.commit("--allow-empty", "--no-verify", "-q", "-m", "\n".join(lines))
    return repo.head.commit.hexsha[:12], changed
