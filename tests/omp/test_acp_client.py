"""The ACP driver's failure paths: each one is a clear :class:`AcpError`, never a hang.

These run small real child processes (no omp needed); the happy path is covered against the real
omp in ``test_omp_host.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from commonkeep_omp.acp import AcpClient, AcpError

# A minimal NDJSON peer: answers initialize, fails everything else, and asks one permission.
PEER = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "session/request_permission", "params": {}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s", "update": {"sessionUpdate": "plan"}}}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": 1}}), flush=True)
    elif "id" in msg and "method" in msg:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": "Internal error", "data": {"details": "No model selected."}}}), flush=True)
    else:
        sys.stderr.write("client said: " + line)
"""


def test_a_missing_executable_is_named_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(AcpError) as err:
        AcpClient([str(tmp_path / "no-such-omp"), "acp"], cwd=tmp_path).start()
    assert "no-such-omp" in str(err.value)
    assert err.value.hint and "npm" in err.value.hint


def test_an_agent_that_exits_early_is_reported_with_its_stderr(tmp_path: Path) -> None:
    cmd = [sys.executable, "-c", "import sys; sys.stderr.write('bun: cannot link module\\n'); sys.exit(3)"]
    with AcpClient(cmd, cwd=tmp_path, timeout=30) as client, pytest.raises(AcpError) as err:
        client.initialize()
    assert "exited" in str(err.value) and "initialize" in str(err.value)
    assert "cannot link module" in str(err.value)


def test_an_agent_that_never_answers_times_out(tmp_path: Path) -> None:
    cmd = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    with AcpClient(cmd, cwd=tmp_path) as client, pytest.raises(AcpError) as err:
        client.request("initialize", {}, timeout=0.2)
    assert "did not answer initialize" in str(err.value)


def test_agent_errors_carry_the_details_and_agent_requests_are_answered(tmp_path: Path) -> None:
    with AcpClient([sys.executable, "-c", PEER], cwd=tmp_path, timeout=30) as client:
        assert client.initialize() == {"protocolVersion": 1}
        with pytest.raises(AcpError) as err:
            client.prompt("s", "hello")
        client.notify("session/cancel", {"sessionId": "s"})
        assert client.close() == 0
    assert err.value.code == -32603
    assert "No model selected." in str(err.value)
    assert [r["method"] for r in client.agent_requests] == ["session/request_permission"]
    assert client.session_updates("s") == [{"sessionUpdate": "plan"}]
    assert "session/cancel" in client.stderr_tail()
    assert '"outcome": "cancelled"' in client.stderr_tail()
