"""``commonkeep doctor`` under a HOME so deep that the broker socket path cannot be a Unix socket.

Rooms are the only thing that needs the socket, so the long path is an error only once rooms are
in use there (the broker dir exists); where only the memory tool is set up it is an ``info`` line
that says what would fail and which variable fixes it; people who use neither see no roundtable
line at all (issue 16).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from commonkeep_roundtable.paths import MAX_SOCKET_PATH_BYTES
from tests.roundtable.conftest import ROUNDTABLE_VARS


def _doctor(home: Path, root: Path) -> tuple[int, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k not in ROUNDTABLE_VARS}
    env["HOME"] = str(home)
    run = [sys.executable, "-m", "commonkeep.cli"]
    subprocess.run([*run, "init", "--root", str(root)], capture_output=True, check=True, env=env, timeout=60)
    out = subprocess.run([*run, "doctor", "--json", "--root", str(root)], capture_output=True, text=True, env=env, timeout=60)
    return out.returncode, json.loads(out.stdout)


def _deep_home(tmp_path: Path) -> Path:
    home = tmp_path / ("h" * 60) / ("o" * 60)
    home.mkdir(parents=True)
    assert len(os.fsencode(str(home / ".orphus/agent/roundtable/broker.sock"))) > MAX_SOCKET_PATH_BYTES
    return home


def test_without_rooms_doctor_says_nothing_about_rooms_and_creates_nothing(tmp_path: Path) -> None:
    home = _deep_home(tmp_path)
    code, report = _doctor(home, tmp_path / "root")
    assert [f for f in report["findings"] if f["code"].startswith("roundtable_")] == []
    assert not (home / ".orphus").exists()  # doctor created nothing
    assert code == 0 and report["ok"] is True


def test_rooms_configured_but_not_started_yet_get_an_info_line_that_names_the_fix(tmp_path: Path) -> None:
    home = _deep_home(tmp_path)
    (home / ".orphus" / "agent" / "memory").mkdir(parents=True)  # the memory tool was used here
    code, report = _doctor(home, tmp_path / "root")
    broker = next(f for f in report["findings"] if f["code"] == "roundtable_broker")
    assert broker["severity"] == "info", broker
    assert "not in use here" in broker["message"] and "would fail" in broker["message"]
    assert f"Unix sockets allow at most {MAX_SOCKET_PATH_BYTES}" in broker["message"]
    assert "ORPHUS_CODING_AGENT_DIR" in broker["message"]
    assert code == 0 and report["ok"] is True


def test_a_deep_home_where_rooms_are_in_use_is_an_error(tmp_path: Path) -> None:
    home = _deep_home(tmp_path)
    (home / ".orphus" / "agent" / "roundtable").mkdir(parents=True)
    code, report = _doctor(home, tmp_path / "root")
    broker = next(f for f in report["findings"] if f["code"] == "roundtable_broker")
    assert broker["severity"] == "error", broker
    assert "rooms cannot work here" in broker["message"] and "ORPHUS_CODING_AGENT_DIR" in broker["message"]
    assert code == 1 and report["ok"] is False
