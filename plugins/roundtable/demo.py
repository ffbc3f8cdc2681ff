"""The roundtable step of ``commonkeep demo``: a room's deliberation reaches the wiki.

:func:`roundtable_step` starts a private broker process under ``workdir``, lets four roles post
seven messages, shows a late reviewer's bounded digest collapsing the oldest (the decision),
shows the planner's export refused by the role gate, has the librarian export the whole room
to ``raw/`` and ingest it with our Dossier-compatible wiki CLI, and asks the wiki a fresh
question whose answer carries the decision the digest had collapsed. Offline; the broker is
stopped when the step ends.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput, CommonkeepError, RoleRefused
from commonkeep_roundtable.api import LocalRoundtable
from commonkeep_roundtable.paths import socket_path

ROOM = "ratelimit"
DECISION = "Decision: GCRA locally for per-tenant rate limiting, with the burst allowance set to twenty requests."
DISCUSSION: tuple[tuple[str, str], ...] = (
    ("planner", DECISION),
    ("researcher", "Benchmarks of the sliding window log showed memory growing with every tenant, which rules it out at forty thousand tenants."),
    ("critic", "The leaky bucket variant smooths bursts too aggressively for the batch import clients, who already complain about throttling."),
    ("researcher", "Redis-backed counters add a network hop per request; a two millisecond latency budget leaves no room for that on the hot path."),
    ("critic", "Clock skew between nodes matters less for GCRA than for fixed windows: only the theoretical arrival time is stored per key."),
    ("planner", "Rollout plan: shadow mode for one week, compare rejections with the current limiter, then flip the gateway flag per tenant."),
    ("librarian", "Noted. I will export this room after the task ends and ingest it, so the rationale outlives the room."),
)
QUESTION = "which rate limiting algorithm did we decide on"


@contextlib.contextmanager
def _agent_dir(workdir: Path) -> Iterator[Path]:
    """``workdir/agent``, or a short temporary dir when that is too long for a Unix socket."""
    agent = workdir / "agent"
    try:
        socket_path(agent)
    except BadInput:
        short = Path(tempfile.mkdtemp(prefix="ckrt", dir="/tmp"))
        try:
            yield short
        finally:
            shutil.rmtree(short, ignore_errors=True)
        return
    yield agent


def _brief(text: str, limit: int) -> str:
    from commonkeep.util.oneline import brief

    return brief(text, limit)


def roundtable_step(workdir: Path, say: Callable[[str], None] = print, *, budget: int = 700) -> dict[str, Any]:
    """Run the loop under ``workdir`` (agent dir ``workdir/agent``, wiki ``workdir/wiki``).

    When ``workdir`` is too deep for a Unix socket path, the broker lives in a short temporary
    dir under ``/tmp`` instead (removed afterwards).

    Returns ``{"digest", "denied", "export", "ingest", "answer"}``; on a failure of the wiki
    backend, ``{"failed": message}`` with whatever ran before.
    """
    wiki = workdir / "wiki"
    out: dict[str, Any] = {}
    with _agent_dir(workdir) as agent, LocalRoundtable(agent, memory_dir=wiki) as rt:
        say(f"roundtable: a local broker listens on {rt.agent_dir / 'roundtable' / 'broker.sock'}")
        for role, text in DISCUSSION:
            message = rt.post(role, ROOM, text, topic="rate limiting")
            say(f"  {role}#{message['seq']}: {_brief(text, 72)}")
        digest = rt.digest("reviewer", ROOM, budget=budget)
        out["digest"] = digest.details
        say(f"a late reviewer's digest, bounded to {budget} characters of messages (a line saying what was left out"
            " comes on top), so the oldest collapse:")
        for line in digest.text.splitlines()[:2]:
            say(f"  {_brief(line, 110)}")
        try:
            rt.export("planner", ROOM, f"raw/{ROOM}.md")
        except RoleRefused as exc:
            out["denied"] = str(exc)
            say(f"planner tries to export: {exc}")
        cursor = rt.session("reviewer").cursor(ROOM)
        exported = rt.export("librarian", ROOM, f"raw/{ROOM}.md")
        out["export"] = exported.details
        say(f"librarian: {exported.text}")
        after = rt.session("reviewer").cursor(ROOM)
        say(f"  (metadata only; the reviewer's cursor {'stayed' if after == cursor else 'MOVED'} at {after}; the file holds every message, the decision too)")
        try:
            out["ingest"] = rt.memory("librarian", "ingest", source=f"raw/{ROOM}.md")
            say(f"librarian: `memory ingest raw/{ROOM}.md` compiled the transcript into the wiki (one git commit)")
            out["answer"] = rt.memory("reviewer", "query", question=QUESTION)
        except CommonkeepError as exc:
            out["failed"] = str(exc)
            say(f"the wiki backend failed: {exc}")
            return out
    say(f"reviewer: memory query {QUESTION!r}")
    for line in out["answer"].splitlines()[:8]:
        say(f"  {_brief(line, 140)}")
    found = DECISION in out["answer"]
    say("the decision the digest collapsed is back, fetched explicitly from the wiki." if found else "(the answer did not quote the decision)")
    return out
