"""The OMP step of ``commonkeep demo``: a real ``omp acp`` joins the shared memory, no model needed.

:func:`omp_step` installs the extension into a throwaway OMP home, dispatches one session with
the handoff attached (``/commonkeep-remember`` writes a candidate from OMP's side), runs
``/commonkeep-doctor`` in a second session, and reads the evidence back from disk: the session
file holding the snapshot, the candidate in the shared inbox, the doctor report under the root.
Nothing reaches the network; without an installed ``omp`` the step says how to get one and
returns ``{"skipped": reason}``.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from commonkeep_omp.acp import AcpError, dispatch, find_omp, run_session, with_bun_on_path
from commonkeep_omp.install import install

DEMO_FACT = "Integration tests need the staging database to be reset with scripts/reset-db first."
DEMO_GOAL = "Fix the flaky upload retry test"


def _session_entries(home: Path, session_id: str) -> list[dict[str, Any]]:
    hits = glob.glob(str(home / ".omp" / "agent" / "sessions" / "*" / f"*_{session_id}.jsonl"))
    if not hits:
        return []
    return [json.loads(line) for line in Path(hits[0]).read_text(encoding="utf-8").splitlines() if line.strip()]


def omp_step(
    root: Path,
    workdir: Path,
    say: Callable[[str], None] = print,
    *,
    omp: str | None = None,
    goal: str = DEMO_GOAL,
    fact: str = DEMO_FACT,
    hermes_home: Path | None = None,
) -> dict[str, Any]:
    """Run the OMP part of the loop against ``root``; ``workdir`` holds the throwaway OMP home.

    ``hermes_home``: the demo's Hermes home, so ``/commonkeep-doctor`` can say whether Hermes is
    configured for the same root (default: none, reported as "not configured").
    """
    exe = omp or find_omp()
    if not exe:
        checkout = (Path(__file__).resolve().parents[2] / "tests" / "hosts" / "setup.py").exists()
        reason = ("omp is not installed (" + ("in this checkout, python -m tests.hosts.setup installs it; or " if checkout else "")
                  + "npm i -g bun @oh-my-pi/pi-coding-agent@18.2.3)")
        say(f"OMP: skipped — {reason}")
        return {"skipped": reason}
    home = workdir / "omp-home"
    project = workdir / "omp-project"
    for d in (home, project):
        d.mkdir(parents=True, exist_ok=True)
    out = install(root, agent=home / ".omp" / "agent")
    say(f"OMP: extension installed at {out.extension} with the shared root baked in")
    base = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    if os.environ.get("COMMONKEEP_STAMPS_DIR"):  # the demo's own stamp journal: what OMP records, the demo's curate reads
        base["COMMONKEEP_STAMPS_DIR"] = os.environ["COMMONKEEP_STAMPS_DIR"]
    if hermes_home is not None:
        base["HERMES_HOME"] = str(hermes_home)
    env = with_bun_on_path(exe, base)
    try:
        sent = dispatch(f"/commonkeep-remember {fact}", cwd=project, goal=goal, root=root, omp=[exe], env=env)
        doc = run_session("/commonkeep-doctor", cwd=project, cmd=[exe, "acp"], env=env)
    except AcpError as exc:
        say(f"OMP: failed — {exc}")
        return {"error": str(exc)}
    entries = _session_entries(home, sent.session_id)
    handoff = [e for e in entries if e.get("customType") == "commonkeep-handoff"]
    remembered = [e for e in entries if e.get("customType") == "commonkeep-remember"]
    candidate = None
    if remembered:
        try:
            candidate = json.loads(remembered[0]["data"]["stdout"]).get("candidate")
        except (KeyError, ValueError):
            candidate = None
    say(f"OMP: dispatched session {sent.session_id} (stop reason {sent.stop_reason}) with goal {goal!r}")
    if handoff:
        say(f"OMP: the session started with the handoff snapshot {handoff[0]['details'].get('path')} as background context")
    elif sent.handoff_notice:
        say(f"OMP: no snapshot — {sent.handoff_notice}")
    say(f"OMP: /commonkeep-remember wrote candidate {candidate} into {root / 'inbox'} — the inbox Hermes writes to")
    report_file = root / "reports" / "omp-doctor.json"
    report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.exists() else {}
    say(f"OMP: /commonkeep-doctor says the root in use is {report.get('root')} ({report.get('rule')}), report in {report_file}")
    for finding in report.get("hermes") or []:
        if isinstance(finding, dict):
            say(f"OMP: /commonkeep-doctor on Hermes: {finding.get('message')}")
    return {
        "session_id": sent.session_id,
        "stop_reason": sent.stop_reason,
        "handoff": str(sent.handoff_path) if sent.handoff_path else None,
        "handoff_in_session": bool(handoff),
        "candidate": candidate,
        "doctor_session_id": doc.session_id,
        "doctor": report,
    }
