"""The governance gate's own rules, called the way Hermes' middleware chain calls it (no Hermes needed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from commonkeep_hermes.governance import Gate
from commonkeep_hermes.settings import HermesProfile


def _gate(tmp_path: Path, root: Path) -> Gate:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text(f"memory:\n  commonkeep:\n    root: {root}\n")
    return Gate(HermesProfile(home), "default")


class Downstream:
    """The rest of the chain (the real tool): records whether it ran."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    def __call__(self, args: Any) -> str:
        self.calls.append(args)
        return json.dumps({"success": True, "ran": True})


CTX = {"session_id": "s1", "turn_id": "t1", "task_id": "k1", "tool_call_id": "call_1",
       "telemetry_schema_version": "v1", "middleware_schema_version": "v1"}


def test_other_tools_pass_through_untouched(tmp_path: Path, root: Path) -> None:
    nxt = Downstream()
    out = _gate(tmp_path, root).tool_execution(tool_name="read_file", args={"path": "x"}, next_call=nxt, **CTX)
    assert json.loads(out) == {"success": True, "ran": True} and nxt.calls == [{"path": "x"}]


def test_bad_memory_call_is_refused_with_a_reason_and_nothing_is_written(tmp_path: Path, root: Path) -> None:
    from commonkeep.store.core import Store

    nxt = Downstream()
    out = json.loads(_gate(tmp_path, root).tool_execution(
        tool_name="memory", args={"action": "replace", "target": "memory", "content": "x"}, next_call=nxt, **CTX))
    assert out["success"] is False and "old_text" in out["error"]
    assert nxt.calls == [] and Store(root).candidates() == []




def test_unwritable_store_fails_closed_never_passes_the_write_through(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the root should be")
    nxt = Downstream()
    out = json.loads(_gate(tmp_path, blocker / "root").tool_execution(
        tool_name="memory", args={"action": "add", "target": "memory", "content": "A fact."}, next_call=nxt, **CTX))
    assert out["success"] is False and "NOT saved" in out["error"]
    assert nxt.calls == []


def test_secrets_in_a_memory_write_are_redacted_before_the_inbox(tmp_path: Path, root: Path) -> None:
    from commonkeep.store.core import Store

    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
    nxt = Downstream()
    out = json.loads(_gate(tmp_path, root).tool_execution(
        tool_name="memory", args={"action": "add", "target": "memory", "content": f"The API key is {secret}"},
        next_call=nxt, **CTX))
    assert out["staged"] is True
    assert nxt.calls == []  # the built-in tool never saw the secret (nor wrote MEMORY.md)
    (cand,) = Store(root).candidates()
    assert secret not in json.dumps(cand)
    assert (root / "inbox" / "captured.jsonl").read_text().find(secret) == -1
