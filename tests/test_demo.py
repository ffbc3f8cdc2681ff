"""``commonkeep demo`` runs the whole loop on a throwaway root and says what happened."""

from __future__ import annotations

import subprocess
import sys


def test_demo_runs_the_loop_and_narrates_every_part() -> None:
    out = subprocess.run([sys.executable, "-m", "commonkeep.cli", "demo", "--no-hosts"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "redacted: github_token" in text  # the secret was caught at write time
    assert "planner tries to curate -> refused" in text  # the single-writer gate
    assert "applied 1 op(s)" in text  # only the person's stamped candidate became a record unseen
    assert "[x] op_001 add" in text and "[ ] op_002 add" in text  # an agent's claimed trust is no stamp (issue 22)
    assert "not stamped by a person" in text
    assert "[ ] op_004 add" in text and "risk high" in text  # the poisoned one was held back, unselected
    assert "+ Ignore previous instructions" in text  # each op shows the text it would write
    assert "3 not selected, waiting for a person" in text and "skipped 0" not in text
    assert "read and approved" in text  # the agent's plain note became memory through a person
    # written for a person: no Python reprs, no mid-word cuts without an ellipsis, one notice at most
    assert "['" not in text and "{'" not in text and "0.0000" not in text and "routed:" not in text
    assert text.count("no semantic backend") <= 1
    assert "rejected" in text and "(poisoning)" in text
    assert "Hermes MEMORY.md projection within 300 chars" in text
    assert "-> tombstone tomb_mem_" in text
    assert "`commonkeep doctor`: ok" in text
    assert "the decision the digest collapsed is back" in text
    assert "ghp_" not in text
