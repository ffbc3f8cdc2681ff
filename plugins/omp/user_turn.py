"""The ``user_turn`` stamp for what OMP sessions write: verified at curation time against what the
person typed in the OMP session, as commonkeep's extension recorded it.

Candidates from the OMP side are written by OmpKeep's tools (``memory_write``: text, ``created_at``
and ``source.cwd``, no session id) or by ``commonkeep write`` from OMP's shell, both outside
commonkeep's reach at write time. So before curating, commonkeep runs this pass: for each new,
unstamped candidate with a ``source.cwd``, it looks for the OMP session in that folder that was
running when the candidate was written (``<agent dir>/sessions/*/*.jsonl``: header ``cwd``,
entries' ``timestamp``), reads what the person typed in it *before* the candidate, and stamps the
candidate ``stamped_by: commonkeep_omp``, ``origin: user_turn`` when
``commonkeep.gate.user_turn.supported`` finds that they asked for exactly that statement to be
remembered.

"What the person typed" is only what commonkeep's extension (``commonkeep.ts``) recorded as custom
entries: ``commonkeep-typed``, the text of OMP's ``input`` event (the editor's text as the person
submitted it, before OMP expands prompt templates, slash commands and ``@file`` mentions; OMP fires
it in interactive mode only), and ``commonkeep-remember-typed``, the text after
``/commonkeep-remember`` (read as that command). ``role: user`` messages are never read: OMP also
stores an expanded prompt template, a slash command's file, and a message an extension sent that
way. So in ``omp acp``, ``omp -p`` and RPC mode, where OMP fires no ``input`` event, only
``/commonkeep-remember`` stamps. A session that received a Hermes handoff (``commonkeep-handoff``,
a dispatch from Hermes) is skipped: its prompts were written by Hermes' model. The transcript is
read, never copied: the stamp records the session id and a sha256 of the supporting text.

The session file is a file the model's own tools can write, so an entry in it counts only when
commonkeep's extension saw the person type it: the extension records each typed text (its hash,
the session id) in the stamp journal outside the root when OMP receives it
(``commonkeep.gate.stamps``, ``typed`` entries), and an entry appended to the file by the model's
file tool has no such record. A stamp this pass sets is bound in the journal in turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

STAMP = "commonkeep_omp"
#: How long after a session's last entry a candidate still counts as written in it (OmpKeep
#: writes from tool calls; the transcript entry of the result can land just after the write).
SLACK = timedelta(seconds=120)
_HANDOFF = "commonkeep-handoff"
#: What the person submitted in OMP's editor (the ``input`` event), recorded by commonkeep's extension.
_TYPED = "commonkeep-typed"
#: What the person typed after ``/commonkeep-remember``, recorded by commonkeep's extension before it
#: writes (in every mode: ``omp acp`` runs the command too, without an ``input`` event).
_REMEMBER = "commonkeep-remember-typed"
#: The command a ``_REMEMBER`` entry is read as: the rule takes its argument as the clause.
REMEMBER_COMMAND = "/commonkeep-remember"


@dataclass
class Session:
    """One OMP session transcript: where it ran, when, and what the person typed (time, text)."""

    path: Path
    session_id: str
    cwd: str
    start: datetime
    end: datetime
    said: list[tuple[datetime, str]] = field(default_factory=list)
    dispatched: bool = False


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        out = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return out if out.tzinfo else None


def person_said(entry: dict[str, Any]) -> str | None:
    """What the person typed, when a transcript entry is one commonkeep's extension recorded; else
    ``None`` (a ``role: user`` message included: a template or another extension may have written it)."""
    if entry.get("type") != "custom" or entry.get("customType") not in (_TYPED, _REMEMBER):
        return None
    data = entry.get("data")
    text = data.get("text") if isinstance(data, dict) else None
    if not isinstance(text, str) or not text.strip():
        return None
    return f"{REMEMBER_COMMAND} {text}" if entry.get("customType") == _REMEMBER else text


def read_session(path: Path) -> Session | None:
    """A transcript (``None`` when it is not one); bad lines are skipped."""
    sess: Session | None = None
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        when = _when(entry.get("timestamp"))
        if entry.get("type") == "session" and sess is None and when is not None:
            sess = Session(path, str(entry.get("id") or ""), str(entry.get("cwd") or ""), when, when)
            continue
        if sess is None or when is None:
            continue
        sess.end = max(sess.end, when)
        if entry.get("customType") == _HANDOFF:
            sess.dispatched = True
        text = person_said(entry)
        if text:
            sess.said.append((when, text))
    return sess


def agent_dir() -> Path:
    """OMP's agent dir, as OMP resolves it: ``$PI_CODING_AGENT_DIR`` or ``~/.omp/agent``."""
    override = os.environ.get("PI_CODING_AGENT_DIR")
    return Path(override).expanduser() if override else Path(os.environ.get("HOME") or Path.home()) / ".omp" / "agent"


def _header_cwd(path: Path) -> str | None:
    """The ``cwd`` of a transcript's ``session`` header (within its first lines), read cheaply."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for _ in range(4):
                line = fh.readline(1 << 16)
                if not line:
                    return None
                if '"session"' in line:
                    entry = json.loads(line)
                    if isinstance(entry, dict) and entry.get("type") == "session":
                        return str(entry.get("cwd") or "")
    except (OSError, ValueError):
        return None
    return None


def sessions_in(folder: Path, cwds: set[str], since: datetime | None = None) -> list[Session]:
    """The transcripts under ``folder/sessions`` of sessions that ran in one of ``cwds`` (real
    paths) and were still written to at ``since`` or later (file time): only those are read."""
    found: list[Session] = []
    floor = (since - SLACK).timestamp() if since is not None else None
    for path in sorted((folder / "sessions").glob("*/*.jsonl")):
        try:
            if floor is not None and path.stat().st_mtime < floor:
                continue
        except OSError:
            continue
        cwd = _header_cwd(path)
        if cwd is None or os.path.realpath(cwd) not in cwds:
            continue
        sess = read_session(path)
        if sess is not None and sess.said:  # only what the person typed (module doc), not lines written into the file
            sess.said = typed_only(sess)
        if sess is not None and os.path.realpath(sess.cwd) in cwds and not sess.dispatched and sess.said:
            found.append(sess)
    return found


def typed_only(sess: Session) -> list[tuple[datetime, str]]:
    """The messages of ``sess`` the extension recorded as typed in the stamp journal."""
    from commonkeep.gate import stamps

    typed = set(stamps.typed("omp", sess.session_id, [text for _, text in sess.said]))
    return [(when, text) for when, text in sess.said if text in typed]


def _unstamped(cand: dict[str, Any]) -> bool:
    prov = cand.get("provenance")
    return cand.get("status") == "new" and not (isinstance(prov, dict) and prov.get("stamped_by"))


def _cwd(cand: dict[str, Any]) -> str | None:
    source = cand.get("source")
    cwd = source.get("cwd") if isinstance(source, dict) else None
    return os.path.realpath(cwd) if isinstance(cwd, str) and cwd else None


def verify(cand: dict[str, Any], sessions: Iterable[Session]) -> dict[str, Any] | None:
    """The stamped copy of ``cand`` when the person of an OMP session asked to remember its statement,
    else ``None``."""
    from commonkeep.gate.user_turn import CONFIDENCE, TRUST, stamp, supported

    created = _when(cand.get("created_at"))
    cwd = _cwd(cand)
    raw = cand.get("provenance")
    prov: dict[str, Any] = raw if isinstance(raw, dict) else {}
    claimed_session = str(prov.get("session_id") or "") if prov.get("host") == "omp" else ""
    if created is None or cwd is None:
        return None
    for sess in sessions:
        if os.path.realpath(sess.cwd) != cwd or not sess.start <= created <= sess.end + SLACK:
            continue
        if claimed_session and sess.session_id != claimed_session:
            continue
        said = [text for when, text in sess.said if when <= created]
        found = supported(str(cand.get("text", "")), said)
        if not found.ok:
            continue
        out = dict(cand)
        out["provenance"] = stamp(dict(prov), host="omp", stamped_by=STAMP, session_id=sess.session_id, support=found)
        ref = f"omp:session/{sess.session_id}/user_turn/{str(found.digest)[:16]}"
        out["evidence_refs"] = [*list(cand.get("evidence_refs") or []), ref]
        out.update(primary_trust_class=TRUST, confidence=CONFIDENCE, verification_status="verified",
                   promotion_eligibility="auto_candidate" if cand.get("proposed_layer") != "L1" else "l1_review_only")
        return out
    return None


def stamp_candidates(store: Any, candidates: list[dict[str, Any]], folder: Path | None = None) -> list[str]:
    """Stamp (in ``candidates`` and in the inbox) every unstamped new candidate an OMP session's
    person asked to remember; returns their ids. Reads only the transcripts of the candidates' folders."""
    todo = [c for c in candidates if _unstamped(c) and _cwd(c)]
    if not todo:
        return []
    folder = folder or agent_dir()
    if not (folder / "sessions").is_dir():
        return []
    times = [t for t in (_when(c.get("created_at")) for c in todo) if t is not None]
    sessions = sessions_in(folder, {str(_cwd(c)) for c in todo}, min(times) if times else None)
    if not sessions:
        return []
    stamped: dict[str, dict[str, Any]] = {}
    for cand in todo:
        out = verify(cand, sessions)
        if out is not None:
            stamped[str(cand["id"])] = out
    if not stamped:
        return []

    def apply(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [stamped.get(str(r.get("id")), r) if _unstamped(r) else r for r in rows]

    store.update_candidates(apply)
    _bind(store.root, list(stamped.values()))
    for i, cand in enumerate(candidates):
        if str(cand.get("id")) in stamped:
            candidates[i] = stamped[str(cand["id"])]
    return list(stamped)


def _bind(root: Path, cands: list[dict[str, Any]]) -> None:
    """Bind each stamp set here in the stamp journal (it rests on typed messages the journal vouches for)."""
    import logging

    from commonkeep.gate import stamps
    from commonkeep.gate.user_turn import TRUST

    for cand in cands:
        try:
            stamps.record_stamp(root, cand, f"{STAMP}/user_turn", TRUST)
        except (OSError, stamps.KeyUnsafe) as exc:
            logging.getLogger("commonkeep").warning("user_turn: stamp of %s not bound (%s); it waits for review",
                                                    cand.get("id"), exc)
