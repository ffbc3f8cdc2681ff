"""Issue 39: a seeded wire fuzz against a real broker process (a few thousand frames here;
``python -m commonkeep_roundtable.wirefuzz --frames 100000`` for the long run, docs/roundtable.md).

Every request type, field and Unicode edge, malformed and dribbled frames, and slow members that
never read; between bursts another client must read every room whole, and the broker must
still answer and never print a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from commonkeep_roundtable.client import BrokerClient
from commonkeep_roundtable.wirefuzz import run
from tests.roundtable.conftest import broker_output


@pytest.mark.parametrize("seed", [39])
def test_no_frame_makes_a_room_or_the_broker_unusable_for_another_client(
        agent_base: Path, broker: subprocess.Popen[bytes], seed: int) -> None:
    report = run(agent_base, 3000, seed=seed, check_every=600)
    assert report.failures == []
    assert report.frames == 3000 and report.bad_frames > 0 and report.checks == 5
    assert report.rooms_read > 0 and report.messages_read > 0
    with BrokerClient.connect("after", base=agent_base, start=False) as after:
        after.join("design")
        assert after.post("design", "still serving")["text"] == "still serving"
    broker.terminate()
    broker.wait(timeout=30)
    assert b"Traceback" not in broker_output(agent_base)
