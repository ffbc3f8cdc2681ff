"""``commonkeep bench startup`` checks every exit code: a command that fails is reported FAILED and
the bench exits 1; it is never timed as if it had worked (issue 38: a usage error was timed)."""

from __future__ import annotations

import pytest

from commonkeep.bench import startup


def test_a_failing_command_is_reported_failed_not_timed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(startup, "READ_COMMANDS", (("--version",), ("select", "--prompt", "run the tests")))
    report = startup.measure(runs=1, records=1)
    rows = {r["command"]: r for r in report["commands"]}
    assert report["ok"] is False
    assert "median_ms" in rows["--version"]
    assert "exit 2" in rows["select --prompt run the tests"]["failed"]
    assert "FAILED (exit 2" in startup.format_report(report)


def test_the_timed_commands_are_valid_ones() -> None:
    from commonkeep.cli import build_parser

    for cmd in startup.READ_COMMANDS:
        if cmd[0].startswith("-"):
            continue
        build_parser(only=cmd[0]).parse_args(list(cmd))  # a usage error raises
