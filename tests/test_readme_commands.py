"""The README and docs/ are the front door: every command they show exists and runs.

Conventions for the pages (README.md and docs/**/*.md):

- Every ```` ```sh ```` block is checked: each ``commonkeep`` command it shows must exist, with every
  flag it shows (``[--json]`` and ``keyword|semantic`` show alternatives; each is checked).
- Every ```` ```sh ```` block is also **run**: a page's blocks, in order, as one bash script with
  ``set -euo pipefail``, in a scratch directory with a scratch ``HOME`` and ``TMPDIR``, no memory
  root or role in the environment, the venv's ``bin`` first on ``PATH`` (so ``commonkeep`` is the
  one under test) and a git identity. So a page must set its own scratch root before writing.
- A block that cannot run here (a real host, placeholders such as ``PATCH_ID``, a long-running
  process, the test suite itself) carries ``<!-- not run: the reason -->`` on the line right
  before its fence. It is still checked for commands and flags.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from commonkeep.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").rglob("*.md"))]
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->\s*$")
FENCE = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
# variables that would point a block at a real root, role, host or room
SCRUBBED = (
    "OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_ROLE", "COMMONKEEP_WRITER_ROLE",
    "HERMES_HOME", "ORPHUS_CODING_AGENT_DIR", "ATOMIC_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR",
    "ORPHUS_MEMORY_DIR", "ORPHUS_MEMORY_COMMAND", "ORPHUS_MEMORY_WRITER_ROLE", "OMPKEEP_HANDOFF",
    "COMMONKEEP_RERANK_LLM_URL", "COMMONKEEP_WIKI_LLM_URL", "COMMONKEEP_PLUGINS", "COMMONKEEP_BLOCK_PLUGINS",
)


def _blocks(page: Path) -> list[tuple[str, str | None]]:
    """``(code, reason it is not run or None)`` for every sh block of a page."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN.search(before)
        found.append((match.group(1), marker.group(1) if marker else None))
    return found


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {opt for action in parser._actions for opt in action.option_strings}


def _commands(page: Path) -> list[str]:
    lines = []
    for block, _ in _blocks(page):
        for line in block.replace("\\\n", " ").splitlines():
            code = line.split(" #")[0]
            for found in re.finditer(r"(?:^|[\s;&(])(?:\S*/)?commonkeep ([^&;]*)", code):
                command = found.group(1)
                # stop at the end of this command: `||`, a closing `)`, or a pipe into another program
                # (`DIR | --profile NAME` inside brackets shows alternatives and is kept)
                command = re.split(r"\|\||\)|\s\|\s(?!-)", command)[0].strip()
                if command:  # `pip install commonkeep` names the package, not a command
                    lines.append(command)
    return lines


def _problems(parser: argparse.ArgumentParser, command: str) -> list[str]:
    # "[--json]" and "keyword|semantic" show options: check each alternative
    words = shlex.split(re.sub(r"[\[\]|]", " ", command))
    current, path, known, problems = parser, [], _options(parser), []
    for word in words:
        if word.startswith("--"):
            if word.split("=")[0] not in known:
                problems.append(f"`commonkeep {' '.join(path)}` has no option {word}")
            continue
        sub = _subcommands(current).get(word)
        if sub is not None:
            current, path = sub, [*path, word]
            known |= _options(sub)
        elif not path:
            problems.append(f"no command `commonkeep {word}`")
            break
    return problems


def test_every_command_and_flag_shown_in_the_readme_and_docs_exists() -> None:
    parser = build_parser()
    full: dict[str, argparse.ArgumentParser] = {}
    for name in _subcommands(parser):  # build_parser() configures plugin commands only: add the built-ins
        full[name] = build_parser(only=name)
    assert len(_commands(README)) > 15
    problems = []
    total = 0
    for page in PAGES:
        commands = _commands(page)
        total += len(commands)
        for command in commands:
            first = command.split()[0]
            problems += [f"{page.relative_to(REPO)}: {p}" for p in _problems(full.get(first, parser), command)]
    assert total > 60
    assert problems == []


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    """`.ci/run` runs `scripts/test` "as in the README": the README's "Run the tests" block is exactly that."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    fence = FENCE.search(section)
    assert fence is not None and fence.group(1).split() == ["scripts/test", "scripts/test", "--hosts"]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "scripts/test -q\n" in ci and "scripts/test --hosts -q\n" in ci  # both tiers


def test_no_page_points_outside_the_repository() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)", text):
            if re.match(r"[a-z]+://", target):
                continue
            assert (page.parent / target).resolve().is_relative_to(REPO), f"{page.name} links {target}"
            assert (page.parent / target).exists() or target == "cli.md" or target.endswith("/cli.md"), (
                f"{page.relative_to(REPO)} links to missing {target}"
            )
        assert "../shared" not in text and "shared/contracts" not in text, page.name


def _runnable(page: Path) -> str:
    return "\n".join(code for code, reason in _blocks(page) if reason is None)


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p).strip()], ids=lambda p: str(p.relative_to(REPO)))
def test_every_command_block_runs(page: Path) -> None:
    # a short scratch dir: the roundtable broker's socket path must fit Unix's ~107 characters
    work = Path(tempfile.mkdtemp(prefix="ckdoc"))
    try:
        home, tmp = work / "home", work / "tmp"
        home.mkdir()
        tmp.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        env.update(
            HOME=str(home), TMPDIR=str(tmp), COMMONKEEP_SEMANTIC="off",
            PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            GIT_AUTHOR_NAME="docs test", GIT_AUTHOR_EMAIL="docs@example.com",
            GIT_COMMITTER_NAME="docs test", GIT_COMMITTER_EMAIL="docs@example.com",
        )
        script = "set -euo pipefail\n" + _runnable(page)
        log = work / "output.txt"
        with log.open("w", encoding="utf-8") as out:  # a file, not a pipe: a lingering broker keeps pipes open
            done = subprocess.run(["bash", "-c", script], cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=300)
        assert done.returncode == 0, f"{page.relative_to(REPO)}: a block failed\n{log.read_text(encoding='utf-8')[-4000:]}"
    finally:
        shutil.rmtree(work, ignore_errors=True)
