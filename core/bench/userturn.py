"""``commonkeep bench userturn``: what the ``user_turn`` stamp lets apply itself, per source.

Data: sessions generated at run time (``commonkeep.bench.userturn_corpus``, seeded; 240 by
default) or a JSONL file given with ``--data`` (one session per line, the same shape). Each
session goes through its host's real path on a throwaway root of its own:

- Hermes: every ``user`` message is handed to the plugin's ``pre_llm_call`` hook
  (``commonkeep_hermes.governance.record_user_message``), as Hermes does at each turn (tool
  results and the model's text never reach that hook); the model's ``memory`` add of the
  statement is staged through ``stage_memory_call``;
- OMP: the transcript is written as an OMP session file in a throwaway agent dir, the messages
  the person sent recorded in the stamp journal as commonkeep's extension records them when OMP
  receives them (``typed``; a throwaway journal, never the person's), and the statement captured
  with the session's folder, as OmpKeep's ``memory_write`` writes it.

Then the writer runs ``curate --auto`` (``auto_curate``, policy ``high-only``), which for OMP first
runs the stamping pass. Figures per source: sessions, stamped ``user_turn``, auto-applied (a
record exists). Goals (issue 22): where the person said it, ≥ 90 % auto-applied; every other
source, 0. Baseline from the same run: the same rule fed the whole transcript (tool results,
files, web pages, the model's replies) instead of the person's messages only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import print_json

WRITER = "librarian"


def load(path: str | None, count: int, seed: int) -> list[dict[str, Any]]:
    from commonkeep.bench.userturn_corpus import generate
    from commonkeep.errors import BadInput

    if path is None:
        return generate(count, seed)
    sessions = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise BadInput(f"{path}:{n}: not JSON ({exc})") from None
        if not isinstance(row, dict) or row.get("host") not in ("hermes", "omp") or not isinstance(row.get("statement"), str) \
                or not isinstance(row.get("transcript"), list) or not isinstance(row.get("source"), str):
            raise BadInput(f"{path}:{n}: a session needs host (hermes|omp), source, statement and a transcript list")
        row.setdefault("id", f"line{n}")
        sessions.append(row)
    return sessions


def whole_transcript_stamp(session: dict[str, Any]) -> bool:
    """Baseline: the same rule fed every text of the session (tool results, files, pages, the
    model's replies), as an adapter that read the whole transcript instead of user messages would."""
    from commonkeep.gate.user_turn import supported

    texts: list[str] = []
    for item in session["transcript"]:
        msg = item.get("message", item)
        content = msg.get("content")
        if isinstance(content, list):
            content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        texts.append(str(content or ""))
    return supported(session["statement"], texts).ok


@contextlib.contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _hermes(root: Path, session: dict[str, Any]) -> None:
    from commonkeep_hermes import governance
    from commonkeep_hermes.capture import Provenance, stage_memory_call

    sid = f"bench-{session['id']}"
    for msg in session["transcript"]:
        if msg.get("role") == "user":  # what Hermes hands pre_llm_call: the turn's user message
            governance.record_user_message(session_id=sid, user_message=msg.get("content"), platform="cli")
    prov = Provenance(origin="foreground", session_id=sid, said=governance.user_messages(sid))
    stage_memory_call(root, {"action": "add", "target": "memory", "content": session["statement"]}, prov)


def _omp(root: Path, agent: Path, project: Path, session: dict[str, Any]) -> None:
    from commonkeep.gate.capture import capture

    base = datetime.now(UTC) - timedelta(seconds=30)
    sid = f"bench-{session['id']}"
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": base.isoformat(), "cwd": str(project)}]
    for i, entry in enumerate(session["transcript"]):
        lines.append({**entry, "timestamp": (base + timedelta(seconds=i + 1)).isoformat()})
    folder = agent / "sessions" / "--bench--"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    _typed(sid, session["transcript"])
    # OmpKeep's memory_write: text, folder, time; trust claimed, one daily-log ref (ompkeep-store.md §6.10)
    capture(root, session["statement"], cwd=str(project), confidence=0.7, primary_trust_class="direct_user_instruction",
            durability_signal="long_term", promotion_eligibility="auto_candidate")


def _typed(sid: str, transcript: list[dict[str, Any]]) -> None:
    """What ``commonkeep.ts`` records as typed: the user messages the person sent (not synthetic, not an
    agent's) and the text after ``/commonkeep-remember`` (``commonkeep_omp.user_turn.person_said``
    reads the same entries back)."""
    from commonkeep.gate import stamps
    from commonkeep.gate.user_turn import message_text

    for entry in transcript:
        msg = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        if entry.get("type") == "message" and msg.get("role") == "user" and not (
                msg.get("synthetic") or msg.get("steering") or msg.get("attribution") == "agent"):
            stamps.record_typed("omp", sid, message_text(msg.get("content")))
        elif entry.get("customType") == "commonkeep-remember-typed" and isinstance(entry.get("data"), dict):
            stamps.record_typed("omp", sid, str(entry["data"].get("text") or ""))


def one(session: dict[str, Any], base: Path) -> dict[str, bool]:
    from commonkeep.patches.auto import auto_curate
    from commonkeep.store.core import Store
    from commonkeep.store.layout import ensure_layout

    root = ensure_layout(base / "root").root
    agent, project = base / "agent", base / "project"
    project.mkdir(parents=True, exist_ok=True)
    with _env(PI_CODING_AGENT_DIR=str(agent)):
        if session["host"] == "hermes":
            _hermes(root, session)
        else:
            _omp(root, agent, project, session)
        auto_curate(root, role=WRITER, policy="high-only", log=False)
    store = Store(root, warn=False)
    [cand] = store.candidates()
    prov = cand.get("provenance") or {}
    return {"stamped": prov.get("origin") == "user_turn", "applied": bool(store.records())}


def run(args: argparse.Namespace) -> int:
    sessions = load(args.data, args.sessions, args.seed)
    started = time.perf_counter()
    rows: dict[str, dict[str, Any]] = {}
    misses: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ck-bench-userturn-") as tmp, _env(COMMONKEEP_STAMPS_DIR=str(Path(tmp) / "stamps")):
        for i, session in enumerate(sessions):
            got = one(session, Path(tmp) / str(i))
            fig = rows.setdefault(session["source"], {"sessions": 0, "stamped": 0, "applied": 0, "baseline_stamped": 0})
            fig["sessions"] += 1
            fig["stamped"] += got["stamped"]
            fig["applied"] += got["applied"]
            fig["baseline_stamped"] += whole_transcript_stamp(session)
            person = session["source"].startswith("person")
            if got["applied"] != person:
                misses.append(f"{session['source']} ({session['host']}): {session['statement'][:90]}")
    from commonkeep.bench.userturn_corpus import PEOPLE_SOURCES

    def total(pick: bool) -> dict[str, int]:
        out = {"sessions": 0, "stamped": 0, "applied": 0, "baseline_stamped": 0}
        for src, fig in rows.items():
            if (src in PEOPLE_SOURCES) == pick:
                for k in out:
                    out[k] += fig[k]
        return out

    said, other = total(True), total(False)
    report = {"data": args.data or f"generated ({args.sessions} sessions, seed {args.seed})", "sessions": len(sessions),
              "by_source": rows, "person": said, "not_person": other,
              "person_applied_pct": round(100 * said["applied"] / said["sessions"], 1) if said["sessions"] else 0.0,
              "not_person_applied": other["applied"], "baseline_not_person_stamped": other["baseline_stamped"],
              "misses": misses, "seconds": round(time.perf_counter() - started, 2)}
    if args.json:
        print_json(report)
        return 0
    print(f"userturn bench on {report['data']}: {len(sessions)} sessions (Hermes messages, OMP transcripts)")
    print(f"{'source':<18} {'sessions':>8} {'stamped':>8} {'applied':>8} {'whole-transcript stamp':>23}")
    for src, fig in sorted(rows.items()):
        print(f"{src:<18} {fig['sessions']:>8} {fig['stamped']:>8} {fig['applied']:>8} {fig['baseline_stamped']:>23}")
    print(f"person said it: {said['applied']} of {said['sessions']} auto-applied ({report['person_applied_pct']} %; goal >= 90 %)")
    print(f"tool result, file, web page, model, paraphrase, pasted: {other['applied']} of {other['sessions']} auto-applied "
          f"(goal 0; the same rule reading the whole transcript would stamp {other['baseline_stamped']})")
    for m in misses[: args.show]:
        print(f"  miss: {m}")
    print(f"({report['seconds']} s)")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", help="a JSONL file of sessions to use instead of the generated corpus")
    from commonkeep.bench import positive_int

    parser.add_argument("--sessions", type=positive_int, default=240, help="sessions to generate (default 240)")
    parser.add_argument("--seed", type=int, default=22, help="seed of the generated corpus (default 22)")
    parser.add_argument("--show", type=int, default=10, help="list at most N misses")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
