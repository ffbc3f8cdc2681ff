"""End to end: Hermes' side dispatches a real ``omp acp`` with its memory attached.

``attach_handoff`` (through :func:`commonkeep_omp.acp.dispatch`) and the ``commonkeep-omp``
wrapper both start the real omp; the session file shows the snapshot was consumed at session
start (before any model call), and a candidate written from OMP's side lands in the same inbox
file the Hermes governance gate writes to.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from commonkeep.cli import main
from commonkeep.store.jsonl import read_jsonl
from commonkeep.store.layout import Layout
from commonkeep_omp.acp import dispatch, run_session
from commonkeep_omp.install import ROOT_VARS
from tests.hosts import omp as omp_host
from tests.omp.conftest import OmpWorld

pytestmark = pytest.mark.omp

HEADER = "[HANDOFF REFERENCE — treat as background context. Persistent memory (L1/L2) is always authoritative.]"


def setup_both_hosts(world: OmpWorld) -> None:
    """What a user runs once: Hermes and OMP both pointed at one shared root."""
    hermes = world.home / ".hermes"
    hermes.mkdir(parents=True, exist_ok=True)  # Hermes creates its home on first run
    assert main(["hermes", "--root", str(world.root), "install", "--hermes-home", str(hermes)]) == 0
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)]) == 0


def hermes_writes_a_candidate(world: OmpWorld) -> str:
    from commonkeep_hermes.capture import Provenance, stage_memory_call

    prov = Provenance(origin="foreground", session_id="hermes-session-1")
    args = {"action": "add", "target": "memory", "content": "The release checklist lives in docs/RELEASING.md."}
    return str(stage_memory_call(world.root, args, prov)["candidate_ids"][0])


def handoff_messages(world: OmpWorld, session_id: str) -> list[dict[str, Any]]:
    entries = world.session_entries(session_id)
    found = [e for e in entries if e.get("type") == "custom_message" and e.get("customType") == "commonkeep-handoff"]
    # Consumed at session start: before any prompt of the session was recorded.
    first_user = next((i for i, e in enumerate(entries) if e.get("type") == "message"), len(entries))
    assert all(entries.index(m) < first_user for m in found)
    return found


def test_dispatch_attaches_the_handoff_and_omps_candidate_lands_in_the_shared_inbox(
    world: OmpWorld, omp_cmd: list[str]
) -> None:
    setup_both_hosts(world)
    hermes_id = hermes_writes_a_candidate(world)
    goal = "Make the upload retry test deterministic"
    fact = "Staging deploys need the --force flag because the lockfile is regenerated there."
    env = world.env()
    assert not set(ROOT_VARS) & set(env)

    result = dispatch(
        f"/commonkeep-remember {fact}", cwd=world.project, goal=goal, omp=omp_cmd, env=env, timeout=60
    )

    assert result.stop_reason == "end_turn" and result.exit_code == 0, result.stderr
    assert result.root == world.root.resolve()
    assert result.handoff_notice is None and result.handoff_path is not None and result.handoff_path.exists()
    [message] = handoff_messages(world, result.session_id)
    assert HEADER in message["content"]
    assert goal in message["content"]
    assert message["details"]["path"] == str(result.handoff_path)
    assert message["details"]["root"] == str(world.root.resolve())
    # OMP's side wrote through `commonkeep write`; Hermes' gate wrote earlier: one inbox file.
    rows = read_jsonl(Layout(world.root).inbox).rows
    by_id = {r["id"]: r for r in rows}
    assert hermes_id in by_id
    omp_rows = [r for r in rows if fact in r.get("text", "")]
    assert len(omp_rows) == 1, rows
    assert omp_rows[0]["status"] == "new"
    assert json.dumps(omp_rows[0]).count(result.session_id) >= 1  # provenance names the OMP session


def test_the_commonkeep_omp_wrapper_starts_real_omp_with_the_snapshot(world: OmpWorld, omp_cmd: list[str]) -> None:
    setup_both_hosts(world)
    wrapper = Path(sys.executable).parent / "commonkeep-omp"
    assert wrapper.exists(), f"{wrapper} missing: run `pip install -e .`"
    goal = "Port the CSV exporter to the new schema"
    env = world.env(COMMONKEEP_HANDOFF_GOAL=goal, COMMONKEEP_REAL_OMP=str(omp_host.require_omp()))

    no_net = omp_cmd[:-1]  # unshare -n, where allowed
    result = run_session("/commonkeep-doctor", cwd=world.project, cmd=[*no_net, str(wrapper), "acp"], env=env)

    assert result.stop_reason == "end_turn", result.stderr
    [message] = handoff_messages(world, result.session_id)
    assert HEADER in message["content"] and goal in message["content"]
    report = json.loads((world.root / "reports" / "omp-doctor.json").read_text())
    root = str(world.root.resolve())
    # The wrapper set all three variables; the extension found them agreeing with its own root.
    assert report["env_before"] == dict.fromkeys(ROOT_VARS, root)
    assert report["problems"] == [] and report["handoff"] == message["details"]["path"]


def test_cli_dispatch_uses_the_installed_root_and_prints_the_session(
    world: OmpWorld, omp_cmd: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    setup_both_hosts(world)
    for var in list(os.environ):
        if var.endswith(("_API_KEY", "_TOKEN")):
            monkeypatch.delenv(var)  # the child inherits this process's environment
    capsys.readouterr()
    code = main(["omp", "dispatch", "--json", "--goal", "Tidy the changelog", "--cwd", str(world.project),
                 "--omp", omp_cmd[-1], "--agent-dir", str(world.agent_dir), "/commonkeep-doctor"])

    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stop_reason"] == "end_turn" and out["root"] == str(world.root.resolve())
    [message] = handoff_messages(world, out["session_id"])
    assert "Tidy the changelog" in message["content"]


def test_the_demo_step_narrates_the_omp_part_of_the_loop(world: OmpWorld, omp_cmd: list[str]) -> None:
    from commonkeep.store.layout import ensure_layout
    from commonkeep_omp.demo import omp_step

    root = ensure_layout(world.root).root
    hermes = world.home / ".hermes"
    hermes.mkdir(parents=True, exist_ok=True)  # Hermes creates its home on first run
    assert main(["hermes", "--root", str(root), "install", "--hermes-home", str(hermes)]) == 0
    lines: list[str] = []

    out = omp_step(root, world.home / "demo", lines.append, omp=omp_cmd[-1], hermes_home=hermes)

    assert out["stop_reason"] == "end_turn" and out["handoff_in_session"], lines
    ids = {r["id"] for r in read_jsonl(Layout(root).inbox).rows}
    assert out["candidate"] in ids
    assert out["doctor"]["root"] == str(root) and out["doctor"]["hermes"][0]["severity"] == "ok"
    assert any("background context" in line for line in lines)
    assert any("Hermes at" in line and "same root" in line for line in lines), lines
