"""Running git: argv vectors, never a shell string; failures become messages, not tracebacks."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from commonkeep.errors import CommonkeepError

TIMEOUT = 120.0


class ShareError(CommonkeepError):
    """Sharing cannot proceed (no git, root not initialised, remote unreachable, git refused)."""


class GitIdentityMissing(ShareError):
    """git has no author identity (user.name, user.email) for this account, so it cannot commit."""


@dataclass
class GitResult:
    code: int
    out: str
    err: str

    @property
    def said(self) -> str:
        text = (self.err.strip() or self.out.strip()).splitlines()
        return "\n    ".join(text[-15:]) if text else f"(no output, exit {self.code})"


def git_path() -> str:
    found = shutil.which("git")
    if not found:
        raise ShareError("git is not on PATH; sharing a root goes through git",
                         hint="install git (e.g. apt-get install git) and run the command again")
    return found


def run_git(root: Path, *args: str, check: bool = True, timeout: float = TIMEOUT) -> GitResult:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password on a terminal nobody watches
    env.setdefault("GIT_MERGE_AUTOEDIT", "no")
    try:
        proc = subprocess.run([git_path(), *args], cwd=root, capture_output=True, text=True, env=env,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise ShareError(f"git {' '.join(args[:2])} did not finish within {timeout:g}s",
                         hint="check the network and the remote, then run the command again") from None
    result = GitResult(proc.returncode, proc.stdout, proc.stderr)
    if check and result.code != 0:
        raise ShareError(f"git {' '.join(args)} failed in {root}:\n    {result.said}")
    return result


def require_identity(root: Path, command: str) -> None:
    """Refuse before any change when git cannot commit here for want of an identity (a fresh account)."""
    res = run_git(root, "var", "GIT_COMMITTER_IDENT", check=False)
    if res.code == 0:
        return
    q = "\n    ".join(line for line in res.err.strip().splitlines()[-2:] if line) or f"exit {res.code}"
    raise GitIdentityMissing(
        f"{command}: git cannot commit in {root}: this account has no git identity (user.name, user.email); "
        f"nothing was changed\n    git said: {q}",
        hint='set one once: `git config --global user.name "Your Name"` and '
             '`git config --global user.email you@example.com` (or only for this root: '
             f'`git -C {shlex.quote(str(root))} config user.email ...`), then run the command again')
