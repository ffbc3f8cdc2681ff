"""The parser of a built-in command run after nothing but common options holds that command alone;
the full listing (``--help`` before a command, an unknown or misspelt name) still names them all."""

from __future__ import annotations

import pytest

from commonkeep import cli


def test_a_built_in_command_gets_its_own_parser_alone() -> None:
    assert cli._choices(cli.build_parser(only="review", alone=True)) == {"review"}
    assert cli._choices(cli.build_parser(only="review")) >= set(cli.COMMANDS)


def test_help_before_a_command_and_a_misspelt_one_still_list_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help", "review"])
    out = capsys.readouterr().out
    assert all(f"    {name} " in out for name in ("init", "review", "search", "serve"))
    assert cli.main(["revew"]) != 0
    assert "did you mean `commonkeep review`" in capsys.readouterr().err
    assert cli.main(["--root", "/nonexistent-ck", "review", "--frob"]) == 2
    assert "unrecognized arguments: --frob" in capsys.readouterr().err
