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


# A stand-in `omp` for the handoff modes (contracts/hermes-host.md §8.3): speaks just enough ACP
# and records the environment and the prompt it was given. The real omp cannot show prompt mode
# without a model (a prompt that does not start with a /command goes to the model).
FAKE_OMP = r"""
import json, os, sys
record = os.environ["FAKE_OMP_RECORD"]
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if method == "initialize":
        result = {"protocolVersion": 1, "agentInfo": {"name": "fake-omp"}}
    elif method == "session/new":
        result = {"sessionId": "fake-1"}
    elif method == "session/prompt":
        env = {k: os.environ.get(k) for k in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "OMPKEEP_HANDOFF")}
        with open(record, "w") as fh:
            json.dump({"argv": sys.argv[1:], "env": env, "prompt": msg["params"]["prompt"]}, fh)
        result = {"stopReason": "end_turn"}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}), flush=True)
"""


@pytest.mark.parametrize("mode", ["env", "prompt", "both", "none"])
def test_dispatch_handoff_modes_reach_the_child(mode: str, tmp_path: Path) -> None:
    import json

    from commonkeep.store.layout import ensure_layout
    from commonkeep_omp.acp import dispatch

    root = ensure_layout(tmp_path / "root").root
    fake = tmp_path / "fake_omp.py"
    fake.write_text(FAKE_OMP)
    record = tmp_path / "record.json"
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "FAKE_OMP_RECORD": str(record)}

    result = dispatch("/commonkeep-doctor", cwd=tmp_path, goal="Ship the parser", handoff=mode, root=root,
                      omp=[sys.executable, str(fake)], env=env, timeout=30)

    seen = json.loads(record.read_text())
    assert result.session_id == "fake-1" and result.stop_reason == "end_turn"
    assert seen["argv"] == ["acp"]
    assert seen["env"]["OMP_MEMORY_ROOT"] == seen["env"]["OMPKEEP_ROOT"] == seen["env"]["PI_MEMORY_ROOT"] == str(root)
    texts = [block["text"] for block in seen["prompt"]]
    assert texts[-1] == "/commonkeep-doctor"
    if mode in ("env", "both"):
        assert seen["env"]["OMPKEEP_HANDOFF"] == str(result.handoff_path) and result.handoff_path.exists()
    else:
        assert seen["env"]["OMPKEEP_HANDOFF"] is None
    if mode in ("prompt", "both"):
        assert len(texts) == 2 and texts[0].startswith("<ompkeep-handoff") and "Ship the parser" in texts[0]
    else:
        assert len(texts) == 1
    assert (result.handoff_path is None) == (mode == "none")


def test_an_unknown_handoff_mode_is_refused(tmp_path: Path) -> None:
    from commonkeep_omp.acp import dispatch

    with pytest.raises(AcpError, match="unknown handoff mode 'stdin'"):
        dispatch("/x", cwd=tmp_path, handoff="stdin", root=tmp_path)
