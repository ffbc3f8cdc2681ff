"""``docs/cli.md`` is generated from the parsers (cogapp); it must never drift from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_cli_reference_matches_the_parsers() -> None:
    done = subprocess.run([sys.executable, "-m", "cogapp", "--check", "docs/cli.md"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (
        "docs/cli.md is out of date with the argparse help: regenerate it with "
        f"`python -m cogapp -r docs/cli.md`\n{done.stdout}{done.stderr}")


def test_the_reference_lists_every_command_and_nested_subcommand() -> None:
    from commonkeep.cli import COMMANDS

    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    for name in [*COMMANDS, "roundtable", "memory", "omp", "hermes"]:
        assert f"### `commonkeep {name}`" in page, name
    assert "#### `commonkeep share sync`" in page and "#### `commonkeep bench locomo`" in page
