"""The remaining limit (docs/security.md): a model with an unrestricted shell can do what the user
can. What closes it is the host's own setting; OMP's tool allow-list (``--tools``) runs here: with
``--tools read,grep,glob`` the model's ``bash`` call is not run at all, whatever the environment
(even with ``COMMONKEEP_ROLE=librarian`` exported and the agent mark cleared)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.core import Store
from tests.fakellm import Step
from tests.omp.conftest import OmpWorld
from tests.omp.test_agent_shell import _run_omp

pytestmark = pytest.mark.omp


def test_omps_tool_allow_list_keeps_the_shell_from_the_model(world: OmpWorld) -> None:
    assert main(["init", "--root", str(world.root)]) == 0
    assert main(["write", "--root", str(world.root), "--role", "coder", "Prefer short commit messages."]) == 0
    [pending] = [c["id"] for c in Store(world.root).candidates() if c.get("status") == "new"]
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)]) == 0
    ck = Path(sys.executable).parent / "commonkeep"
    # a deliberate model: clears the mark in its own words, detaches, and runs the decision
    command = f"printf 'x' > {world.home}/ran; env -i PATH=/usr/bin:/bin {ck} review --root {world.root} --approve {pending}"
    results = _run_omp(world, [Step.call("bash", {"command": command}), Step.say("Done.")], "Approve the queue.",
                       "--tools", "read,grep,glob", COMMONKEEP_ROLE="librarian")
    assert results and not (world.home / "ran").exists(), results
    assert Store(world.root).records() == []
