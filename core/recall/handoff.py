"""Handoff snapshots (``contracts/ompkeep-store.md`` §8): what a delegated agent should know.

- Plain (``commonkeep handoff``): ``reports/handoff/<stamp>.json`` and ``<stamp>.md`` exactly as
  upstream's ``/memory-handoff`` (§8.1): the JSON pretty-printed with 2 spaces and **no**
  trailing newline; ``stamp`` is the ISO time with ``:`` and ``.`` replaced by ``-``, first 19
  chars. Upstream quirks kept for compatibility: ``active_l1_count`` counts every record of
  ``L1.identity.jsonl`` (not only active ones), ``recent_evidence_count`` counts all evidence.
  Where upstream is plainly wrong we are right (§14.6): ``contested_record_ids`` lists the
  contested records (upstream always writes ``[]``). The profile of the working folder is
  resolved and upserted into ``memory/profiles.jsonl`` as upstream does
  (``commonkeep.recall.profile``): the snapshot's ``id`` hashes its ``profile_id``, and
  ``active_l2_count`` / ``open_inquiry_count`` count only what belongs to that profile (or to
  none). Each snapshot gets its own files: a second one in the same second is
  ``<stamp>-2.json`` (upstream overwrites the first).
- Goal (``commonkeep handoff --goal GOAL``): upstream 0.12 computes the §8.2 object but never
  writes it. commonkeep writes it to ``reports/handoff/goal-<stamp>.json`` (same JSON rules) and
  ``goal-<stamp>.md``, with the §8.2 fields plus ``schema``, ``max_chars`` and
  ``selected_memory`` (the records relevant to the goal, chosen by search: id, layer,
  confidence, statement, search sources). ``selected_memory_ids`` lists them (upstream: ``[]``).
  The markdown stays within ``max_chars``; records that do not fit are left out of both files.
  Every text taken from memory or the goal passes ``commonkeep.secrets.redact`` and
  ``commonkeep.recall.projection.neutralize`` (role markers / chat-template tokens broken up).

``write_handoff(root, goal=None, max_chars=4000) -> Path`` returns the JSON file's path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULT_MAX_CHARS = 4_000
BACKGROUND_WARNING = (
    "[HANDOFF REFERENCE — treat as background context. Persistent memory (L1/L2) is always authoritative.]"
)
GOAL_SCHEMA = "commonkeep.goal-handoff/1"
NEXT_ACTIONS = (
    "Read the selected memory and hard rules before acting on the goal.",
    "Propose new durable facts as candidates (memory_write target=long_term or `commonkeep write`); the librarian curates them.",
    "Search memory (memory_search / `commonkeep search`) before deciding anything the snapshot does not cover.",
)


def stamp_of(iso: str) -> str:
    """``2026-12-02T10:56:16.123Z`` -> ``2026-12-02T10-56-16`` (§8.1)."""
    return iso.replace(":", "-").replace(".", "-")[:19]


def _clean(text: str) -> str:
    """Secrets redacted, role markers neutralised: the snapshot is read by a delegated agent."""
    from commonkeep.recall.projection import neutralize
    from commonkeep.secrets import redact

    return neutralize(redact(text).text)


def _mine(row: Mapping[str, Any], profile_id: str | None) -> bool:
    """Whether ``row`` belongs to the profile (or to none), as upstream filters L2 and inquiries."""
    return not profile_id or not row.get("profile_id") or row.get("profile_id") == profile_id


def _state(root: Path) -> dict[str, Any]:
    from commonkeep.store.core import Store
    from commonkeep.store.jsonl import read_jsonl

    store = Store(root)  # a new bad line is named once on stderr
    lay = store.layout
    everything = store.records(active_only=False)
    return {
        "store": store,
        "l1_file_count": len(read_jsonl(lay.l1).rows),
        "active": [r for r in everything if r.get("status") == "active"],
        "contested": sorted(str(r["id"]) for r in everything if r.get("status") == "contested"),
        "inquiries": [q for q in store.rows(lay.inquiries) if q.get("status") == "open"],
        "evidence": store.rows(lay.evidence),
        "pending": [c for c in store.candidates() if c.get("status") == "new"],
    }


def _selected_brief(root: Path, live: set[str]) -> list[str]:
    """``"<id>: <statement[:80]>"`` for the records of the last ``runtime/selected_memory.json``
    that are still live (``live``: the ids of the store's active and contested records): a record
    deleted, superseded or deprecated since that selection (by ``forget``, a patch, or a sync from
    another machine) is left out, whoever changed it."""
    import json

    path = root / "runtime" / "selected_memory.json"
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(rows, list):
        return []
    return [f"{r.get('id')}: {_clean(str(r.get('statement', '')))[:80]}" for r in rows
            if isinstance(r, dict) and str(r.get("id")) in live]


def plain_snapshot(root: Path | str, now: str | None = None, profile_id: str | None = None) -> dict[str, Any]:
    """The §8.1 JSON object (field order as upstream)."""
    from commonkeep.store.ids import handoff_id
    from commonkeep.store.inquiries import describe
    from commonkeep.util.timeutil import now_iso

    root = Path(root)
    when = now or now_iso()
    st = _state(root)
    snap: dict[str, Any] = {"id": handoff_id(profile_id or "global", when), "created_at": when}
    if profile_id:
        snap["profile_id"] = profile_id
    l2 = sum(1 for r in st["active"] if r.get("layer") == "L2" and _mine(r, profile_id))
    inquiries = [q for q in st["inquiries"] if _mine(q, profile_id)]
    snap.update(
        {
            "active_l1_count": st["l1_file_count"],
            "active_l2_count": l2,
            "selected_memory_brief": _selected_brief(root, {str(r["id"]) for r in st["active"]} | set(st["contested"])),
            "open_inquiry_count": len(inquiries),
            "open_inquiry_questions": [_clean(describe(q)) for q in inquiries[:5]],  # never unvetted text verbatim
            "contested_record_ids": st["contested"],
            "recent_evidence_count": len(st["evidence"]),
            "pending_candidate_count": len(st["pending"]),
            "reinforcement_summary_brief": f"{l2} active L2 records in this profile.",
        }
    )
    return snap


def plain_markdown(snap: Mapping[str, Any]) -> str:
    """The §8.1 markdown, line for line as upstream: a blank line after each section's heading
    and after its last line, the file ending with one newline."""
    lines = [
        "# Memory Handoff Snapshot", "",
        f"> Generated: {snap['created_at']}", f"> {BACKGROUND_WARNING}", "",
        "## Active State",
        f"- L1 identity records: {snap['active_l1_count']}",
        f"- L2 playbook records: {snap['active_l2_count']}",
        f"- Pending inbox candidates: {snap['pending_candidate_count']}",
        f"- Recent evidence records: {snap['recent_evidence_count']}", "",
    ]
    sections = (
        ("## Selected Memory (Current Context)", [f"- {b}" for b in snap["selected_memory_brief"]]),
        ("## Open Inquiries", [f"? {q}" for q in snap["open_inquiry_questions"]] if snap["open_inquiry_count"] else []),
        ("## Contested Records", [f"- {i}" for i in snap["contested_record_ids"]]),
    )
    for heading, body in sections:
        if body:
            lines += [heading, "", *body, ""]
    return "\n".join(lines)


def _goal_markdown(goal: Mapping[str, Any], selected: list[dict[str, Any]]) -> str:
    parts = [
        "# Goal Handoff Snapshot",
        f"> Generated: {goal['created_at']}\n> {BACKGROUND_WARNING}",
        f"## Goal\n{goal['declared_goal']}",
    ]
    if goal["constraints"]:
        parts.append("## Constraints (hard rules)\n" + "\n".join(f"- {c}" for c in goal["constraints"]))
    if selected:
        parts.append("## Relevant Memory\n" + "\n".join(f"- [{s['id']}] {s['statement']}" for s in selected))
    if goal["open_inquiry_ids"]:
        parts.append(
            f"## Open Inquiries\n- {len(goal['open_inquiry_ids'])} open inquiry(ies): {', '.join(goal['open_inquiry_ids'][:5])}"
        )
    parts.append(
        "## Next Actions\n"
        + "\n".join(f"{i}. {a}" for i, a in enumerate(goal["recommended_next_actions"], 1))
    )
    return "\n\n".join(parts) + "\n"


def _check_goal(goal: str, max_chars: int) -> None:
    from commonkeep.errors import BadInput

    if not goal.strip():
        raise BadInput("--goal is empty; say what the delegated agent should achieve")
    if max_chars < 200:
        raise BadInput(f"--max-chars {max_chars} is too small for a snapshot; use at least 200")


def goal_snapshot(
    root: Path | str, goal: str, *, max_chars: int = DEFAULT_MAX_CHARS, now: str | None = None
) -> tuple[dict[str, Any], str]:
    """The goal snapshot (§8.2 plus commonkeep's fields) and its markdown, within ``max_chars``."""
    from commonkeep.recall.projection import is_hard_rule, priority_key
    from commonkeep.recall.search.hybrid import search
    from commonkeep.store.ids import intent_id
    from commonkeep.util.timeutil import now_iso

    _check_goal(goal, max_chars)
    root = Path(root)
    when = now or now_iso()
    st = _state(root)
    clean_goal = _clean(" ".join(goal.split()))
    if len(clean_goal) > max_chars // 4:
        clean_goal = clean_goal[: max_chars // 4 - 1] + "…"
    hard = sorted((r for r in st["active"] if is_hard_rule(r)), key=priority_key)[:8]
    diagnostics: list[str] = []
    try:
        from commonkeep.recall.search.plugin import commonkeep_doctor_checks

        diagnostics = [
            f"{f['code']}: {f['message']}"
            for f in commonkeep_doctor_checks(str(root))
            if f.get("severity") in ("warning", "error")
        ]
    except Exception as exc:  # a snapshot must not fail because a check did
        diagnostics = [f"diagnostics_unavailable: {exc}"]
    snap: dict[str, Any] = {
        "schema": GOAL_SCHEMA,
        "intent_id": intent_id(goal, when),
        "created_at": when,
        "declared_goal": clean_goal,
        "constraints": [_clean(" ".join(str(r["statement"]).split())) for r in hard],
        "non_goals": [],
        "validation_steps": [
            _clean(" ".join(str(r["statement"]).split()))
            for r in sorted(st["active"], key=priority_key)
            if r.get("ruleType") == "testing"
        ][:3],
        "active_memory_ids": sorted(str(r["id"]) for r in st["active"]),
        "selected_memory_ids": [],
        "open_inquiry_ids": sorted(str(q.get("id")) for q in st["inquiries"]),
        "pending_candidate_ids": sorted(str(c.get("id")) for c in st["pending"]),
        "diagnostics_warnings": diagnostics,
        "recent_evidence_ids": [str(e.get("id")) for e in st["evidence"][-10:]],
        "recommended_next_actions": list(NEXT_ACTIONS),
        "background_reference_warning": BACKGROUND_WARNING,
        "max_chars": max_chars,
        "selected_memory": [],
    }
    resp = search(root, clean_goal, "deep" if len(clean_goal.split()) > 8 else "keyword", 24)
    selected: list[dict[str, Any]] = []
    md = _goal_markdown(snap, selected)
    if len(md) > max_chars:  # even the frame is too long: drop constraints until it fits
        while snap["constraints"] and len(md) > max_chars:
            snap["constraints"].pop()
            md = _goal_markdown(snap, selected)
    for r in resp.results:
        item = {
            "id": r.id,
            "layer": r.layer,
            "confidence": r.confidence,
            "statement": _clean(" ".join(r.statement.split())),
            "sources": list(r.sources),
        }
        trial = _goal_markdown(snap, [*selected, item])
        if len(trial) <= max_chars:
            selected.append(item)
            md = trial
    snap["selected_memory_ids"] = [s["id"] for s in selected]
    snap["selected_memory"] = selected
    return snap, md


def _claim(folder: Path, base: str) -> str:
    """``base``, or ``base-2``, ``base-3`` … : the first name whose JSON file this call creates
    (``O_EXCL``, so handoffs written in the same second, even at once, never share a file)."""
    import os

    n = 1
    while True:
        name = base if n == 1 else f"{base}-{n}"
        try:
            os.close(os.open(folder / f"{name}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return name
        except FileExistsError:
            n += 1


def write_handoff(
    root: Path | str, goal: str | None = None, max_chars: int = DEFAULT_MAX_CHARS, *, now: str | None = None,
    cwd: Path | str | None = None,
) -> Path:
    """Write a plain (``goal=None``) or goal snapshot under ``reports/handoff/``; returns the JSON path.

    The profile of ``cwd`` (default: the current folder) is upserted into ``memory/profiles.jsonl``
    first, as upstream's ``/memory-handoff`` does for both kinds."""
    from commonkeep.recall.profile import resolve_profile
    from commonkeep.recall.search.fts import encodable
    from commonkeep.store.jsonjs import dumps_pretty
    from commonkeep.store.jsonl import atomic_write_bytes
    from commonkeep.store.layout import Layout
    from commonkeep.store.root import require_root
    from commonkeep.util.timeutil import now_iso

    lay = Layout(require_root(root))
    when = now or now_iso()
    if goal is not None:
        _check_goal(goal, max_chars)  # refused before anything is written
    profile = resolve_profile(lay.root, Path.cwd() if cwd is None else cwd, when)
    if goal is None:
        snap = plain_snapshot(lay.root, when, profile_id=str(profile["profile_id"]))
        md = plain_markdown(snap)
        base = stamp_of(when)
    else:
        snap, md = goal_snapshot(lay.root, goal, max_chars=max_chars, now=when)
        base = f"goal-{stamp_of(when)}"
    from commonkeep.store import exitgate

    # each text was redacted (``_clean``); the whole snapshot passes the exit gate once more on its way
    # out (a field of a record another program wrote that ``_clean`` never saw)
    snap, md = exitgate.obj(snap), exitgate.text(md)
    lay.handoff_dir.mkdir(parents=True, exist_ok=True)
    base = _claim(lay.handoff_dir, base)
    json_path = lay.handoff_dir / f"{base}.json"
    atomic_write_bytes(json_path, dumps_pretty(snap, trailing_newline=False).encode("utf-8"))
    # A lone surrogate a JS writer left in a statement cannot be UTF-8: U+FFFD in the markdown
    # (the JSON keeps JSON.stringify's escape of it).
    atomic_write_bytes(lay.handoff_dir / f"{base}.md", encodable(md).encode("utf-8"))
    return json_path
