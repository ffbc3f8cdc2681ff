"""The Hermes middleware's guarantees in the fast suite, without the real Hermes (issue 28).

The plugin's own functions are called as Hermes calls them (keyword arguments: ``tool_name``,
``args``, ``next_call`` and the turn's context), on a real Hermes home folder and a real shared
root. What stands in for Hermes is only the rest of its chain: ``next_call`` is the built-in
``memory`` tool, which appends to ``MEMORY.md`` as the real one does, and a small object with
``register_middleware`` / ``register_hook`` is the plugin context. Guarded here:

- the built-in ``memory`` tool never runs after staging (``MEMORY.md`` is not written freely);
- the ``pre_tool_call`` hook path blocks the write (and stages it), and is what ``register``
  installs where the middleware is missing or ``COMMONKEEP_HERMES_GATE=hook``;
- the harness's ``tool_call_id`` (and session, turn, task) reach the candidate's provenance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep_hermes.governance import Gate
from commonkeep_hermes.settings import HermesProfile

CTX = {"session_id": "s1", "turn_id": "t1", "task_id": "k1", "tool_call_id": "call_7f3a",
       "telemetry_schema_version": "v1", "middleware_schema_version": "v1"}
FACT = {"action": "add", "target": "memory", "content": "The deploy key rotates every 90 days."}


def _home(tmp_path: Path, root: Path) -> Path:
    home = tmp_path / "hermes"
    (home / "memories").mkdir(parents=True)
    (home / "config.yaml").write_text(f"memory:\n  commonkeep:\n    root: {root}\n", encoding="utf-8")
    return home


class BuiltinMemoryTool:
    """Hermes' own ``memory`` tool at the end of the chain: appends the entry to ``MEMORY.md``."""

    def __init__(self, home: Path) -> None:
        self.file = home / "memories" / "MEMORY.md"
        self.calls: list[Any] = []

    def __call__(self, args: Any) -> str:
        self.calls.append(args)
        with self.file.open("a", encoding="utf-8") as fh:
            fh.write(f"{args.get('content', '')}\n§\n")
        return json.dumps({"success": True, "message": "Entry added."})


def _candidates(root: Path) -> list[dict[str, Any]]:
    from commonkeep.store.core import Store

    return list(Store(root).candidates())


def test_the_builtin_memory_tool_never_runs_after_staging(tmp_path: Path, root: Path) -> None:
    home = _home(tmp_path, root)
    tool = BuiltinMemoryTool(home)
    out = json.loads(Gate(HermesProfile(home), "default").tool_execution(
        tool_name="memory", args=dict(FACT), next_call=tool, **CTX))
    assert out["success"] is True and out["staged"] is True and "Staged for review" in out["message"]
    assert tool.calls == [] and not tool.file.exists()  # MEMORY.md is not written past the librarian
    (cand,) = _candidates(root)
    assert cand["text"] == FACT["content"] and cand["id"] == out["pending_id"]


def test_a_batch_of_memory_writes_is_staged_whole_and_the_tool_never_runs(tmp_path: Path, root: Path) -> None:
    home = _home(tmp_path, root)
    tool = BuiltinMemoryTool(home)
    args = {"operations": [dict(FACT), {"action": "add", "target": "user", "content": "Prefers short answers."}]}
    out = json.loads(Gate(HermesProfile(home)).tool_execution(tool_name="memory", args=args, next_call=tool, **CTX))
    assert out["success"] is True and len(out["candidate_ids"]) == 2
    assert tool.calls == [] and not tool.file.exists()
    assert sorted(c["provenance"]["file"] for c in _candidates(root)) == ["MEMORY.md", "USER.md"]


def test_the_harness_tool_call_id_and_turn_reach_the_provenance(tmp_path: Path, root: Path) -> None:
    home = _home(tmp_path, root)
    Gate(HermesProfile(home), "work").tool_execution(tool_name="memory", args=dict(FACT),
                                                     next_call=BuiltinMemoryTool(home), **CTX)
    (cand,) = _candidates(root)
    prov = cand["provenance"]
    assert prov["tool_call_id"] == "call_7f3a"
    assert (prov["session_id"], prov["turn_id"], prov["task_id"], prov["profile"]) == ("s1", "t1", "k1", "work")
    assert prov["stamped_by"] == "commonkeep_hermes" and prov["origin"] == "foreground"
    assert cand["evidence_refs"] == ["hermes:session/s1/turn/t1/call/call_7f3a"]


def test_what_the_model_puts_in_the_args_does_not_set_the_provenance(tmp_path: Path, root: Path) -> None:
    home = _home(tmp_path, root)
    args = {**FACT, "tool_call_id": "forged", "origin": "import", "stamped_by": "someone"}
    Gate(HermesProfile(home)).tool_execution(tool_name="memory", args=args,
                                             next_call=BuiltinMemoryTool(home), **CTX)
    (cand,) = _candidates(root)
    assert cand["provenance"]["tool_call_id"] == "call_7f3a" and cand["provenance"]["origin"] == "foreground"
    assert cand["primary_trust_class"] == "agent_inference"  # not a person's instruction


def test_the_hook_path_blocks_the_memory_write_and_stages_it(tmp_path: Path, root: Path) -> None:
    home = _home(tmp_path, root)
    gate = Gate(HermesProfile(home))
    verdict = gate.pre_tool_call(tool_name="memory", args=dict(FACT), **CTX)
    assert verdict is not None and verdict["action"] == "block"
    assert "Staged for review" in verdict["message"]
    (cand,) = _candidates(root)
    assert cand["text"] == FACT["content"] and cand["provenance"]["tool_call_id"] == "call_7f3a"
    assert gate.pre_tool_call(tool_name="read_file", args={"path": "x"}, **CTX) is None  # others run


def test_the_hook_path_blocks_a_write_it_cannot_stage(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the root should be")
    verdict = Gate(HermesProfile(_home(tmp_path, blocker / "root"))).pre_tool_call(
        tool_name="memory", args=dict(FACT), **CTX)
    assert verdict is not None and verdict["action"] == "block" and "NOT saved" in verdict["message"]


class PluginContext:
    """What ``register`` is handed: records what the plugin registered (the Hermes side of the API)."""

    def __init__(self, with_middleware: bool) -> None:
        self.middleware: dict[str, Any] = {}
        self.hooks: dict[str, Any] = {}
        self.tools: list[str] = []
        self.profile_name = "default"
        if with_middleware:
            self.register_middleware = self.middleware.__setitem__

    def register_hook(self, name: str, fn: Any) -> None:
        self.hooks[name] = fn

    def register_tool(self, name: str, **kw: Any) -> None:
        self.tools.append(name)


@pytest.mark.parametrize(("with_middleware", "forced"), [(True, False), (False, False), (True, True)],
                         ids=["middleware", "no-middleware", "forced-hook"])
def test_register_installs_the_gate_that_blocks(tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch,
                                                with_middleware: bool, forced: bool) -> None:
    from commonkeep_hermes.governance import register

    home = _home(tmp_path, root)
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_AGENT"):
        monkeypatch.setenv(var, "")  # so that what register() pins is undone after the test
        monkeypatch.delenv(var)
    if forced:
        monkeypatch.setenv("COMMONKEEP_HERMES_GATE", "hook")
    else:
        monkeypatch.delenv("COMMONKEEP_HERMES_GATE", raising=False)
    ctx = PluginContext(with_middleware)
    register(ctx)
    tool = BuiltinMemoryTool(home)
    if with_middleware and not forced:
        assert ctx.hooks["pre_tool_call"](tool_name="memory", args=dict(FACT), **CTX) is None  # the tool guard only
        out = json.loads(ctx.middleware["tool_execution"](tool_name="memory", args=dict(FACT), next_call=tool, **CTX))
        assert out["staged"] is True
    else:
        assert ctx.middleware == {}
        verdict = ctx.hooks["pre_tool_call"](tool_name="memory", args=dict(FACT), **CTX)
        assert verdict["action"] == "block"
    assert tool.calls == [] and not tool.file.exists()
    assert [c["provenance"]["tool_call_id"] for c in _candidates(root)] == ["call_7f3a"]


def test_the_platform_of_the_session_and_the_profile_name_reach_the_provenance(
        tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep_hermes.governance import register

    home = _home(tmp_path, root)
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_AGENT", "COMMONKEEP_HERMES_GATE"):
        monkeypatch.setenv(var, "")
        monkeypatch.delenv(var)
    ctx = PluginContext(with_middleware=True)
    ctx.profile_name = "work"
    register(ctx)
    assert {"on_session_start", "on_session_finalize", "on_session_reset"} <= set(ctx.hooks)
    ctx.hooks["on_session_start"](session_id="s-tg", platform="telegram")
    ctx.middleware["tool_execution"](tool_name="memory", args=dict(FACT), next_call=BuiltinMemoryTool(home),
                                     **{**CTX, "session_id": "s-tg"})
    (cand,) = _candidates(root)
    assert cand["provenance"]["platform"] == "telegram" and cand["provenance"]["profile"] == "work"
    assert cand["thread_id"] == "s-tg"


def test_a_call_without_context_is_staged_with_no_made_up_ids(tmp_path: Path, root: Path) -> None:
    home = _home(tmp_path, root)
    Gate(HermesProfile(home)).tool_execution(tool_name="memory", args=dict(FACT), next_call=BuiltinMemoryTool(home))
    (cand,) = _candidates(root)
    assert not {"session_id", "turn_id", "task_id", "tool_call_id", "platform", "profile"} & set(cand["provenance"])
    assert cand["evidence_refs"] == ["hermes:session/unknown"]


def test_a_failed_staging_is_logged_and_the_model_told_it_was_not_saved(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the root should be")
    with caplog.at_level("WARNING", logger="commonkeep_hermes"):
        out = json.loads(Gate(HermesProfile(_home(tmp_path, blocker / "root"))).tool_execution(
            tool_name="memory", args=dict(FACT), next_call=BuiltinMemoryTool(tmp_path / "hermes"), **CTX))
    assert out["error"].startswith("memory is governed by commonkeep and the write could not be staged (")
    assert out["error"].endswith("); it was NOT saved. Run `commonkeep hermes status` to diagnose.")
    (record,) = [r for r in caplog.records if r.name == "commonkeep_hermes"]
    assert record.getMessage().startswith("commonkeep: staging a memory write failed: ") and "not-a-dir" in record.getMessage()


def test_another_tool_without_the_rest_of_the_chain_is_an_error_not_a_silent_skip(tmp_path: Path, root: Path) -> None:
    with pytest.raises(RuntimeError) as bad:
        Gate(HermesProfile(_home(tmp_path, root))).tool_execution(tool_name="read_file", args={}, **CTX)
    assert str(bad.value) == "tool_execution middleware called without next_call"


def test_an_unreadable_hermes_config_is_a_warning_at_load_not_an_exception(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from commonkeep_hermes.governance import register

    home = tmp_path / "hermes"
    home.mkdir()
    (home / "config.yaml").write_text("memory: [unclosed\n", encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(home))
    ctx = PluginContext(with_middleware=True)
    with caplog.at_level("WARNING", logger="commonkeep_hermes"):
        register(ctx)
    assert "tool_execution" in ctx.middleware
    messages = [r.getMessage() for r in caplog.records if r.name == "commonkeep_hermes"]
    assert messages[0].startswith(f"commonkeep: {home / 'config.yaml'}: not valid YAML"), messages


def test_the_session_hooks_render_the_approved_memory_into_memory_md(
        tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep_hermes.governance import register
    from tests.governance.conftest import write_candidate

    home = _home(tmp_path, root)
    (home / "config.yaml").write_text(f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {root}\n",
                                      encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_AGENT", "COMMONKEEP_HERMES_GATE"):
        monkeypatch.setenv(var, "")
        monkeypatch.delenv(var)
    memory_md = home / "memories" / "MEMORY.md"
    loaded = "Tags follow semver (approved before Hermes started)."
    write_candidate(root, loaded)
    apply_all(root)
    ctx = PluginContext(with_middleware=True)
    register(ctx)
    assert loaded in memory_md.read_text(encoding="utf-8")  # rendered at load, before the agent's snapshot
    assert {"commonkeep_search", "commonkeep_write", "commonkeep_handoff"} <= set(ctx.tools)
    for hook in ("on_session_reset", "on_session_finalize"):
        statement = f"Releases are cut on Thursdays ({hook})."
        write_candidate(root, statement)
        apply_all(root)
        assert statement not in (memory_md.read_text(encoding="utf-8") if memory_md.exists() else "")
        ctx.hooks[hook](session_id="s1")
        assert statement in memory_md.read_text(encoding="utf-8"), hook


def test_a_plugin_context_without_a_profile_name_stamps_none(
        tmp_path: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep_hermes.governance import register

    home = _home(tmp_path, root)
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_AGENT", "COMMONKEEP_HERMES_GATE"):
        monkeypatch.setenv(var, "")
        monkeypatch.delenv(var)
    ctx = PluginContext(with_middleware=True)
    del ctx.profile_name  # an older Hermes passes none
    register(ctx)
    ctx.middleware["tool_execution"](tool_name="memory", args=dict(FACT), next_call=BuiltinMemoryTool(home), **CTX)
    (cand,) = _candidates(root)
    assert "profile" not in cand["provenance"]


def apply_all(root: Path) -> None:
    """Curate, then apply every op as a person who selected them all would (an agent's candidate
    is never default-selected: the gate goes by provenance)."""
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    patch = curate(root, role="librarian").patch
    apply_patch(root, patch["patch_id"], role="librarian", op_ids=[o["op_id"] for o in patch["ops"]], fire_hooks=False)
