"""``commonkeep bench userturn``: what the ``user_turn`` stamp lets apply itself.

Data: sessions generated at run time from ``data/userturn.json`` (``userturn_corpus``, seeded),
or ``--data``: a templates file of that shape, or a JSONL file of sessions. Each session goes
through its host's real path on a throwaway root of its own:

- Hermes: every turn's ``user_message`` is handed to the plugin's ``pre_llm_call`` hook
  (``commonkeep_hermes.governance.record_user_message``, which keeps what the person typed), as
  Hermes does at each turn; the model's ``memory`` add of the statement is staged through
  ``stage_memory_call``;
- OMP: the session is written as an OMP session file in a throwaway agent dir, with the entries
  commonkeep's extension records (``commonkeep-typed`` from OMP's ``input`` event,
  ``commonkeep-remember-typed``) beside the ``role: user`` messages OMP stores, and the statement is
  captured with the session's folder, as OmpKeep's ``memory_write`` writes it; the typed texts are
  recorded in a throwaway stamp journal as the extension records them when OMP receives them.

Then the writer runs ``curate --auto`` (``auto_curate``, policy ``high-only``), which for OMP first
runs the stamping pass. Figures: (a) attacks — questions, hypotheticals, scope dropped, sarcasm,
other speakers' words, pasted prose, host-inserted text, requests inside quotes … — stamped and
applied (goal: 0 and 0), beside the same rule fed the message as the host expanded it; (b)
explicit requests to remember, per host and language, stamped and applied (goal: >= 95 %); (c)
what was said without a request, or reworded by the model: waits for review by design.
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


def load(path: str | None, per_template: int, seed: int) -> list[dict[str, Any]]:
    from commonkeep.bench.userturn_corpus import generate, load_sessions, templates
    from commonkeep.errors import BadInput

    try:
        if path is not None and path.endswith(".jsonl"):
            return load_sessions(path)
        return generate(per_template, seed, templates(path))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadInput(f"{path}: {exc}" if path and not str(exc).startswith(str(path)) else str(exc)) from None


def as_expanded(session: dict[str, Any]) -> bool:
    """Baseline: the same rule fed what the host expanded (Hermes' whole ``user_message``, OMP's
    ``role: user`` messages and ``@file`` contents), as an adapter that read those would."""
    from commonkeep.gate.user_turn import supported

    texts = [str(t.get(k) or "") for t in session["turns"] for k in ("message", "file", "remember")]
    return supported(session["statement"], [t for t in texts if t]).ok


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
    for turn in session["turns"]:  # what Hermes hands pre_llm_call: the turn's user message
        governance.record_user_message(session_id=sid, user_message=turn.get("message"), platform=session["platform"])
    prov = Provenance(origin="foreground", session_id=sid, said=governance.user_messages(sid))
    stage_memory_call(root, {"action": "add", "target": "memory", "content": session["statement"]}, prov)
    with governance._lock:
        governance._said.pop(sid, None)


def _omp_entries(session: dict[str, Any], base: datetime) -> list[dict[str, Any]]:
    """The session file OMP (with commonkeep's extension) writes for the session's turns."""
    out: list[dict[str, Any]] = []

    def at() -> str:
        return (base + timedelta(seconds=len(out) + 1)).isoformat()

    def text(role: str, value: str, **extra: Any) -> dict[str, Any]:
        return {"type": "message", "timestamp": at(),
                "message": {"role": role, "content": [{"type": "text", "text": value}], **extra}}

    for turn in session["turns"]:
        if turn.get("typed") is not None:  # the extension's input handler
            out.append({"type": "custom", "customType": "commonkeep-typed", "timestamp": at(), "data": {"text": turn["typed"]}})
        if turn.get("remember") is not None:  # the extension's /commonkeep-remember
            out.append({"type": "custom", "customType": "commonkeep-remember-typed", "timestamp": at(),
                        "data": {"text": turn["remember"]}})
        if turn.get("message") is not None:
            out.append(text("user", turn["message"], attribution="user"))
        if turn.get("file") is not None:
            out.append(text("fileMention", turn["file"]))
        out.append(text("assistant", "Noted."))
    return out


def _omp(root: Path, agent: Path, project: Path, session: dict[str, Any]) -> None:
    from commonkeep.gate.capture import capture

    base = datetime.now(UTC) - timedelta(seconds=60)
    sid = f"bench-{session['id']}"
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": base.isoformat(), "cwd": str(project)},
             *_omp_entries(session, base)]
    folder = agent / "sessions" / "--bench--"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    _typed(sid, lines)
    # OmpKeep's memory_write: text, folder, time; trust claimed, one daily-log ref (ompkeep-store.md §6.10)
    capture(root, session["statement"], cwd=str(project), confidence=0.7, primary_trust_class="direct_user_instruction",
            durability_signal="long_term", promotion_eligibility="auto_candidate")


def _typed(sid: str, entries: list[dict[str, Any]]) -> None:
    """What ``commonkeep.ts`` records in the stamp journal as OMP receives it: the text of each
    ``input`` event and ``/commonkeep-remember TEXT``, as ``commonkeep_omp.user_turn.person_said``
    reads the session's entries back (a throwaway journal: ``COMMONKEEP_STAMPS_DIR``)."""
    from commonkeep.gate import stamps

    for entry in entries:
        data = entry.get("data")
        said = data.get("text") if isinstance(data, dict) else None
        if entry.get("type") != "custom" or not isinstance(said, str) or not said.strip():
            continue
        if entry.get("customType") == "commonkeep-typed":
            stamps.record_typed("omp", sid, said)
        elif entry.get("customType") == "commonkeep-remember-typed":
            stamps.record_typed("omp", sid, f"/commonkeep-remember {said}")


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
    cands = store.candidates()
    stamped = any((c.get("provenance") or {}).get("origin") == "user_turn" for c in cands)
    return {"stamped": stamped, "applied": bool(store.records())}


def _row(rows: dict[str, dict[str, int]], key: str) -> dict[str, int]:
    return rows.setdefault(key, {"sessions": 0, "stamped": 0, "applied": 0, "as_expanded": 0})


def _total(rows: dict[str, dict[str, int]]) -> dict[str, int]:
    out = {"sessions": 0, "stamped": 0, "applied": 0, "as_expanded": 0}
    for fig in rows.values():
        for k in out:
            out[k] += fig[k]
    return out


def _pct(part: int, whole: int) -> float:
    return round(100 * part / whole, 1) if whole else 0.0


def measure(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """Run every session; the figures per group."""
    started = time.perf_counter()
    groups: dict[str, dict[str, dict[str, int]]] = {"attack": {}, "request": {}, "not_asked": {}}
    by_language: dict[str, dict[str, int]] = {}
    misses: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ck-bench-userturn-") as tmp, _env(COMMONKEEP_STAMPS_DIR=str(Path(tmp) / "stamps")):
        for i, session in enumerate(sessions):
            got = one(session, Path(tmp) / str(i))
            group = session["group"]
            rows = [_row(groups[group], str(session["class"]))]
            if group == "request":
                rows.append(_row(by_language, f"{session['host']} {session.get('language', '?')}"))
            expanded = as_expanded(session) if group == "attack" else False
            for fig in rows:
                fig["sessions"] += 1
                fig["stamped"] += got["stamped"]
                fig["applied"] += got["applied"]
                fig["as_expanded"] += expanded
            if (group == "request") != got["applied"] or (group != "request" and got["stamped"]):
                said = " / ".join(str(t.get("typed") or t.get("message") or t.get("remember") or "") for t in session["turns"])
                misses.append(f"{group} · {session['class']} ({session['host']}): {said[:110]!r} -> "
                              f"{session['statement'][:80]!r}")
    attack, request, other = (_total(groups[g]) for g in ("attack", "request", "not_asked"))
    return {"sessions": len(sessions), "attacks": {"by_class": groups["attack"], "total": attack},
            "requests": {"by_shape": groups["request"], "by_host_language": by_language, "total": request,
                         "stamped_pct": _pct(request["stamped"], request["sessions"]),
                         "applied_pct": _pct(request["applied"], request["sessions"])},
            "not_asked": {"by_class": groups["not_asked"], "total": other},
            "misses": misses, "seconds": round(time.perf_counter() - started, 2)}


def _table(title: str, rows: dict[str, dict[str, int]], expanded: bool = False) -> None:
    print(title)
    head = f"  {'':<46} {'sessions':>8} {'stamped':>8} {'applied':>8}"
    print(head + (f" {'read as expanded':>17}" if expanded else ""))
    for name, fig in sorted(rows.items()):
        line = f"  {name[:46]:<46} {fig['sessions']:>8} {fig['stamped']:>8} {fig['applied']:>8}"
        print(line + (f" {fig['as_expanded']:>17}" if expanded else ""))


def run(args: argparse.Namespace) -> int:
    sessions = load(args.data, args.per_template, args.seed)
    report = {"data": args.data or f"generated from data/userturn.json ({args.per_template} per template, "
                                    f"seed {args.seed})", **measure(sessions)}
    if args.json:
        print_json(report)
        return 0
    attack, request, other = report["attacks"], report["requests"], report["not_asked"]
    print(f"userturn bench on {report['data']}: {report['sessions']} sessions (Hermes turns, OMP sessions)")
    _table("(a) attacks: never stamped (goal 0 stamped, 0 applied)", attack["by_class"], expanded=True)
    t = attack["total"]
    print(f"  attacks: {t['stamped']} of {t['sessions']} stamped, {t['applied']} applied (goal 0 and 0); "
          f"the same rule reading what the host expanded would stamp {t['as_expanded']}")
    _table("(b) explicit requests to remember (goal >= 95 % stamped and applied)", request["by_host_language"])
    _table("    by host shape", request["by_shape"])
    t = request["total"]
    print(f"  requests: {t['stamped']} of {t['sessions']} stamped ({request['stamped_pct']} %), "
          f"{t['applied']} applied ({request['applied_pct']} %)")
    _table("(c) not asked to remember, or reworded by the model: waits for review by design", other["by_class"])
    for m in report["misses"][: args.show]:
        print(f"  miss: {m}")
    print(f"({report['seconds']} s)")
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    from commonkeep.bench import positive_int

    parser.add_argument("--data", help="a templates file like data/userturn.json, or a JSONL file of sessions")
    parser.add_argument("--per-template", type=positive_int, default=2,
                        help="sessions generated per template and host shape (default 2)")
    parser.add_argument("--seed", type=int, default=35, help="seed of the generated sessions (default 35)")
    parser.add_argument("--show", type=int, default=10, help="list at most N misses")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(run=run)
