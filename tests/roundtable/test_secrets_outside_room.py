"""The exit gate on the roundtable → wiki path: the four planted secrets of the plant test (a GitHub
token, an AWS key pair, a password assignment, a private key block over several lines), posted in
a room by clients commonkeep does not control, are removed by ``export`` before the transcript's
first byte is written, and nothing the wiki ingest of that export writes or commits holds them
(its files, ``facts.db``, every git object of the wiki)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from commonkeep_roundtable import LocalRoundtable
from tests.governance.test_secrets_outside_files import Plants, _leaks


def test_planted_room_messages_reach_no_export_wiki_file_or_git_object(
    agent_base: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in (("GIT_AUTHOR_NAME", "plant test"), ("GIT_AUTHOR_EMAIL", "plant@test.invalid"),
                       ("GIT_COMMITTER_NAME", "plant test"), ("GIT_COMMITTER_EMAIL", "plant@test.invalid")):
        monkeypatch.setenv(var, value)
    plants = Plants(random.SystemRandom().randrange(1 << 30))
    memory_dir = agent_base / "memory"
    with LocalRoundtable(agent_base, memory_dir=memory_dir) as rt:
        rt.post("planner", "ops", "Decision: the billing service keeps GCRA rate limiting for every tenant.")
        for i, sentence in enumerate(plants.sentences()):
            rt.post(("researcher", "critic", "planner")[i % 3], "ops", f"Note {i}: {sentence}")
        exported = rt.export("librarian", "ops", "raw/ops.md")
        assert {"github_token", "aws_access_key"} <= set(exported.redacted)
        transcript = (memory_dir / "raw" / "ops.md").read_text(encoding="utf-8")
        assert "[REDACTED:" in transcript and plants.found(transcript, "raw/ops.md") == []
        said = rt.memory("librarian", "ingest", source="raw/ops.md")
        said += rt.memory("reviewer", "query", question="which token does the deploy use")
    assert plants.found(said, "printed output") == []
    assert _leaks(plants, agent_base, "agent dir") == []  # raw/, wiki/, facts.db, the wiki's git objects
    assert subprocess.run(["git", "-C", str(memory_dir), "rev-list", "--all"], capture_output=True).stdout.strip()
