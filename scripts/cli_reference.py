"""Write the CLI reference (``docs/cli.md``) from the argparse help, through cogapp.

``docs/cli.md`` calls ``reference()`` inside a cog block; regenerate with
``python -m cogapp -r docs/cli.md`` and check it with ``python -m cogapp --check docs/cli.md``
(``tests/test_cli_reference.py`` does, so the page never drifts from the parsers).
"""

from __future__ import annotations

import argparse
import os


def _subactions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _section(parser: argparse.ArgumentParser, level: int, out: list[str]) -> None:
    out += [f"{'#' * level} `{parser.prog}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for child in _subactions(parser).values():
        _section(child, level + 1, out)


def reference() -> str:
    """Every command's ``--help``, nested subcommands included, as markdown."""
    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal: a fixed width, or the page drifts
    from commonkeep.cli import COMMANDS, _plugin_commands, build_parser

    names = list(COMMANDS) + [n for n in _plugin_commands() if n not in COMMANDS]
    top = build_parser()
    out = ["## `commonkeep`", "", "```text", top.format_help().rstrip(), "```", ""]
    for name in names:
        parser = _subactions(build_parser(only=name))[name]
        _section(parser, 3, out)
    return "\n".join(out)
