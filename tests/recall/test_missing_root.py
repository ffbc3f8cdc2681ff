"""Read commands on a missing or typo'd root: exit 2 with one clear line, and create nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from commonkeep.cli import main

MESSAGE = "no memory root at {path} (run `commonkeep init` or check --root / $OMP_MEMORY_ROOT)"


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "how do we deploy"],
        ["search", "deploy", "--json"],
        ["select", "how do I deploy after tests", "--dry-run"],
        ["select", "how do I deploy after tests"],
        ["select", "ok"],  # even a prompt that gets no injection
        ["project"],
        ["handoff"],
        ["handoff", "--goal", "Fix the upload test"],
        ["reindex"],
        ["reindex", "--recreate"],
    ],
)
def test_read_commands_on_a_typod_root_exit_2_and_create_nothing(
    tmp_path: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "typo"
    assert main([*argv, "--root", str(typo)]) == 2
    err = capsys.readouterr().err
    assert MESSAGE.format(path=typo) in err
    assert not typo.exists()


def test_a_missing_root_from_the_environment_is_named_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "nowhere"
    monkeypatch.setenv("OMP_MEMORY_ROOT", str(typo))
    assert main(["search", "deploy"]) == 2
    assert MESSAGE.format(path=typo) in capsys.readouterr().err
    assert not typo.exists()


def test_python_api_raises_the_same_error_for_a_missing_root_and_creates_nothing(tmp_path: Path) -> None:
    from commonkeep.errors import BadInput
    from commonkeep.recall.handoff import write_handoff
    from commonkeep.recall.projection import render_projection
    from commonkeep.recall.search.hybrid import search
    from commonkeep.recall.select import select_for_prompt

    typo = tmp_path / "typo"
    for call in (
        lambda: search(typo, "deploy"),
        lambda: select_for_prompt(typo, "how do I deploy after tests"),
        lambda: render_projection(typo),
        lambda: write_handoff(typo),
    ):
        with pytest.raises(BadInput, match="no memory root at"):
            call()
    assert not typo.exists()


def test_read_commands_still_work_on_an_initialised_empty_root(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "deploy", "--root", str(root)]) == 0
    assert "No memory matched." in capsys.readouterr().out
    assert main(["project", "--root", str(root)]) == 0
    assert main(["reindex", "--root", str(root)]) == 0
