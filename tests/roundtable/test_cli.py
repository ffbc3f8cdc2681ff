"""The operator CLI (``commonkeep roundtable ...``, ``commonkeep memory ...``) as real processes,
and the plugin registration that puts those commands and the agent tools in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from commonkeep.plugins import build_plugin_manager


def ck(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "commonkeep.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def test_plugin_contributes_the_commands_and_tools_through_the_entry_point() -> None:
    plugins = build_plugin_manager()
    assert {"roundtable", "memory"} <= set(plugins.cli_commands())
    tools = {tool.name: tool for tool in plugins.agent_tools()}
    assert {"roundtable_export", "roundtable_memory"} <= set(tools)
    for tool in tools.values():
        assert tool.description and tool.input_schema["type"] == "object" and callable(tool.call)


def test_export_through_the_cli_with_role_from_flag_or_environment(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    # the room is held open by a member for the whole test, as in a live deliberation
    from commonkeep_roundtable.client import BrokerClient

    with BrokerClient.connect("observer", base=agent_base, start=False) as observer:
        observer.join("ops")
        posted = ck("roundtable", "post", "ops", "Decision: rotate keys monthly", "--role", "planner")
        assert posted.returncode == 0, posted.stderr
        assert posted.stdout.strip() == "Posted to #ops as planner#1."

        denied = ck("roundtable", "export", "ops", "raw/ops.md", env={"COMMONKEEP_ROLE": "planner"})
        assert denied.returncode == 3
        assert denied.stderr.strip() == (
            'commonkeep roundtable: error: Only the "librarian" role may export rooms for memory; '
            'this session is "planner". Ask the librarian to write.'
        )
        bad = ck("roundtable", "export", "ops", "/etc/ops.md", "--role", "librarian")
        assert bad.returncode == 2 and "absolute paths are not allowed" in bad.stderr and "Traceback" not in bad.stderr

        # two different roles, before and after the action: refused, none of them silently dropped
        clash = ck("roundtable", "--role", "planner", "export", "ops", "raw/ops.md", "--json", "--role", "librarian")
        assert clash.returncode == 2 and json.loads(clash.stdout)["ok"] is False
        assert "argument --role: given twice with different values, 'planner' and 'librarian'" in clash.stderr
        done = ck("roundtable", "export", "ops", "raw/ops.md", "--json", "--role", "librarian")
        assert done.returncode == 0, done.stderr
        details = json.loads(done.stdout)
        assert details["messages"] == 1 and details["droppedBefore"] == 0 and details["truncated"] is False
        assert set(details) == {"room", "path", "messages", "chars", "firstSeq", "lastSeq", "droppedBefore", "truncated"}

        before = ck("roundtable", "--role", "librarian", "export", "ops", "raw/ops-again.md")
        assert before.returncode == 0 and before.stdout.startswith("Exported 1 retained message(s) from #ops to ")

        digest = ck("roundtable", "digest", "ops", "--role", "reviewer", "--json")
        assert digest.returncode == 0 and json.loads(digest.stdout)["consumedSeq"] == 1
        assert observer.cursor("ops") == 0  # nobody else's cursor moved


def test_memory_cli_gate_and_missing_backend_notice(agent_base: Path) -> None:
    refused = ck("memory", "ingest", "raw/x.md", "--role", "critic")
    assert refused.returncode == 3
    assert 'Only the "librarian" role may ingest into memory; this session is "critic".' in refused.stderr
    unnamed = ck("memory", "gardener")
    assert unnamed.returncode == 3 and "this session has no role name (launch it with --name librarian)." in unnamed.stderr
    missing = ck("memory", "query", "what", "was", "decided", env={"ORPHUS_MEMORY_COMMAND": str(agent_base / "nope")})
    assert missing.returncode == 1
    assert "Memory backend not reachable (" in missing.stderr and "Traceback" not in missing.stderr


def test_doctor_reports_the_broker_and_a_backend_that_cannot_start(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    from commonkeep_roundtable.doctor import roundtable_checks

    env = {"ORPHUS_CODING_AGENT_DIR": str(agent_base), "ORPHUS_MEMORY_COMMAND": "no-such-dossier-binary --x"}
    found = {f["code"]: f for f in roundtable_checks(env)}
    assert found["roundtable_broker"]["severity"] == "ok"
    assert found["roundtable_memory_backend"]["severity"] == "warning"
    assert "'no-such-dossier-binary'" in found["roundtable_memory_backend"]["message"]
    broker.terminate()
    broker.communicate(timeout=30)
    env["ORPHUS_MEMORY_COMMAND"] = sys.executable
    found = {f["code"]: f for f in roundtable_checks(env)}
    assert found["roundtable_broker"]["severity"] == "info"
    assert found["roundtable_memory_backend"]["severity"] == "ok"


def test_posting_an_empty_message_is_refused_before_any_broker_starts(agent_base: Path) -> None:
    for text in ("", "   \n"):
        out = ck("roundtable", "post", "design", text, "--role", "planner")
        assert out.returncode == 2, out.stderr
        assert "nothing to post to #design: the message is empty" in out.stderr and "Traceback" not in out.stderr
    from commonkeep_roundtable.paths import broker_dir

    assert not (broker_dir(agent_base) / "broker.pid").exists()


def test_memory_ingest_of_a_path_outside_raw_is_bad_input_exit_2(agent_base: Path) -> None:
    out = ck("memory", "ingest", "../escape.md", "--role", "librarian")
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stderr.startswith("commonkeep memory: error: memory ingest failed: ")
    assert "'..'" in out.stderr and "Traceback" not in out.stderr


def _on_a_terminal(*args: str) -> str:
    """Run ``commonkeep ARGS`` with stdout on a real pseudo-terminal; return what it printed."""
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "commonkeep.cli", *args],
            stdout=follower,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, proc.stderr
    return b"".join(chunks).decode("utf-8")


def test_room_text_is_shown_not_obeyed_on_a_terminal_and_exact_in_a_pipe(
    agent_base: Path, broker: subprocess.Popen[bytes]
) -> None:
    from commonkeep_roundtable.client import BrokerClient

    nasty = "Decision: ship\x1b[2K\rApproved by everyone\u202e"
    with BrokerClient.connect("observer", base=agent_base, start=False) as observer:
        observer.join("ops")
        observer.post("ops", nasty)
        piped = ck("roundtable", "fetch", "ops", "--after-seq", "0", "--role", "reviewer")
        assert piped.returncode == 0, piped.stderr
        # an agent reading a pipe gets the exact words (text mode reads the CR as a line end)
        assert "ship\x1b[2K" in piped.stdout and "by everyone\u202e" in piped.stdout
        shown = _on_a_terminal("roundtable", "fetch", "ops", "--after-seq", "0", "--role", "reviewer")
        assert "\x1b" not in shown and "\u202e" not in shown and "\r\n" in shown  # the tty's own line ends
        assert "Decision: ship\\x1b[2K\\x0dApproved by everyone\\u202e" in shown
        digest = _on_a_terminal("roundtable", "digest", "ops", "--peek", "--role", "reviewer")
        assert "\x1b" not in digest and "\\x1b[2K" in digest
