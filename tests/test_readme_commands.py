"""The README is the front door: every ``commonkeep`` command it shows exists, with every flag it shows."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from commonkeep.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {opt for action in parser._actions for opt in action.option_strings}


def _readme_commands() -> list[str]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            code = line.split(" #")[0]
            found = re.search(r"(?:^|[\s;&(])(?:\S*/)?commonkeep ([^&;]*)", code)
            if found:
                lines.append(found.group(1).strip())
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


def test_every_command_and_flag_shown_in_the_readme_exists() -> None:
    parser = build_parser()
    full: dict[str, argparse.ArgumentParser] = {}
    for name in _subcommands(parser):  # build_parser() configures plugin commands only: add the built-ins
        full[name] = build_parser(only=name)
    commands = _readme_commands()
    assert len(commands) > 30
    problems = []
    for command in commands:
        first = command.split()[0]
        problems += _problems(full.get(first, parser), command)
    assert problems == []
