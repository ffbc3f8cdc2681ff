"""Hermes memory writes → governed capture candidates in the shared inbox.

The built-in ``memory`` tool's arguments (a single op or an ``operations`` batch,
contracts/hermes-host.md §5.5) become CaptureCandidates (contracts/ompkeep-store.md §4.2).
Provenance is stamped here from what the harness knows (session, turn, tool call, origin), never
from what the model wrote. ``USER.md`` writes (target ``user``) become profile / L1 candidates,
review-gated (``l1_review_only``). Entries found in the files that commonkeep did not render
(an existing ``§`` file at install time, or a hand edit) are captured with the same mapping,
once: the key of an entry is a hash of its target and text, so a second import adds nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ACTIONS = ("add", "replace", "remove")
TARGETS = ("memory", "user")
STAMP = "commonkeep_hermes"


@dataclass(frozen=True)
class MemoryOp:
    """One write of the ``memory`` tool."""

    action: str
    target: str
    content: str = ""
    old_text: str = ""


@dataclass
class Provenance:
    """What the harness knows about a write; stamped onto every candidate."""

    origin: str  # foreground | background_review | import | external_edit
    session_id: str = ""
    turn_id: str = ""
    task_id: str = ""
    tool_call_id: str = ""
    platform: str = ""
    profile: str = ""
    hermes_version: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: What the person typed in this session (``pre_llm_call`` ``user_message`` without what Hermes
    #: added, ``commonkeep_hermes.typed``), oldest first; never serialised. Empty: nothing can be
    #: stamped ``user_turn``.
    said: tuple[str, ...] = ()

    @property
    def background_review(self) -> bool:
        return self.origin == "background_review"

    def as_dict(self, op: MemoryOp) -> dict[str, Any]:
        out: dict[str, Any] = {
            "agent": "hermes",
            "stamped_by": STAMP,
            "origin": self.origin,
            "background_review": self.background_review,
            "target": op.target,
            "file": "USER.md" if op.target == "user" else "MEMORY.md",
            "action": op.action,
        }
        for key in ("session_id", "turn_id", "task_id", "tool_call_id", "platform", "profile", "hermes_version"):
            value = getattr(self, key)
            if value:
                out[key] = str(value)
        out.update(self.extra)
        return out


def parse_memory_args(args: Mapping[str, Any]) -> list[MemoryOp]:
    """The ops of one ``memory`` call; raises ``ValueError`` with a message for the model."""
    target = str(args.get("target") or "memory")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    raw_ops: Iterable[Any]
    if isinstance(args.get("operations"), list):
        raw_ops = args["operations"]
    else:
        raw_ops = [args]
    ops: list[MemoryOp] = []
    for i, raw in enumerate(raw_ops):
        if not isinstance(raw, Mapping):
            raise ValueError(f"operation {i} is not an object")
        action = str(raw.get("action") or "")
        if action not in ACTIONS:
            raise ValueError(f"operation {i}: action must be one of {', '.join(ACTIONS)}, not {action!r}")
        content = str(raw.get("content") or "").strip()
        old_text = str(raw.get("old_text") or "").strip()
        if action in ("add", "replace") and not content:
            raise ValueError(f"operation {i}: {action} needs a non-empty content")
        if action in ("replace", "remove") and not old_text:
            raise ValueError(f"operation {i}: {action} needs old_text (a substring of the entry)")
        ops.append(MemoryOp(action, str(raw.get("target") or target), content, old_text))
    if not ops:
        raise ValueError("no operations given")
    return ops


def entry_key(target: str, text: str) -> str:
    """Stable key of one ``§`` entry (import / hand-edit de-duplication)."""
    return hashlib.sha256(f"{target}\n{text.strip()}".encode()).hexdigest()[:24]


def _matches(op: MemoryOp, rendered: Mapping[str, str]) -> list[str]:
    """Record ids of rendered entries whose text contains ``old_text`` (Hermes' substring rule)."""
    if not op.old_text:
        return []
    return sorted({rid for text, rid in rendered.items() if rid and op.old_text in text})


#: Write origins whose ``memory`` calls may be stamped ``user_turn``: the agent's own turn and
#: Hermes' background review of it (both run in the person's session; the review prompt itself is
#: never recorded as a user message, see ``governance.record_user_message``).
USER_TURN_ORIGINS = ("foreground", "background_review")


def user_turn_support(op: MemoryOp, prov: Provenance) -> Any:
    """The ``user_turn`` verification of an ``add`` whose text the person asked, in this session, to
    be remembered (``commonkeep.gate.user_turn.supported``), else ``None``. Replacements and
    removals are never stamped: they change what is already remembered and wait for a person."""
    if op.action != "add" or prov.origin not in USER_TURN_ORIGINS or not prov.said or not prov.session_id:
        return None
    try:
        from commonkeep.gate.user_turn import supported
    except ImportError:  # the governance part is not installed: nothing is stamped
        return None
    found = supported(op.content, prov.said)
    return found if found.ok else None


def candidate_for(op: MemoryOp, prov: Provenance, rendered: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Build one CaptureCandidate dict through the core's ``new_candidate`` (ids, redaction)."""
    from commonkeep.secrets import redact
    from commonkeep.store.candidates import new_candidate

    rendered = rendered or {}
    is_user = op.target == "user"
    if op.action == "remove":
        text = f"Forget this {'user profile' if is_user else 'memory'} entry: {op.old_text}"
    else:
        text = op.content
    ref = f"hermes:session/{prov.session_id or 'unknown'}"
    if prov.turn_id:
        ref += f"/turn/{prov.turn_id}"
    if prov.tool_call_id:
        ref += f"/call/{prov.tool_call_id}"
    if prov.origin in ("import", "external_edit"):
        ref = f"hermes:{'USER.md' if is_user else 'MEMORY.md'}#{entry_key(op.target, op.content or op.old_text)}"
    # No tags: the curator takes the first tag as the topic of ``normalized_key`` (§6.8), so a
    # constant tag such as "hermes" would make every Hermes write look like an update of the
    # last one. Target, action and origin live in ``provenance``; the layer says USER vs MEMORY.
    tags: list[str] = []
    trust = "direct_user_instruction" if prov.origin in ("import", "external_edit") else "agent_inference"
    verified = user_turn_support(op, prov)
    if verified is not None:
        from commonkeep.gate.user_turn import CONFIDENCE, TRUST

        trust = TRUST
    extra: dict[str, Any] = {
        "thread_id": prov.session_id or None,
        "memory_kind": "fact",
        "primary_trust_class": trust,
        "durability_signal": "user_global" if is_user else "long_term",
        "promotion_eligibility": "l1_review_only" if is_user else (
            "review_only" if trust == "agent_inference" else "auto_candidate"),
        "verification_status": "review_required",
        "proposed_layer": "L1" if is_user else "L2",
    }
    if verified is not None:  # checked against the person's words by code, not claimed by the model
        extra.update(confidence=CONFIDENCE, verification_status="verified")
    provenance = {**prov.as_dict(op), "entry_key": entry_key(op.target, op.content or op.old_text)}
    if verified is not None:
        from commonkeep.gate.user_turn import stamp

        provenance = stamp(provenance, host="hermes", stamped_by=STAMP, session_id=prov.session_id, support=verified)
    if op.action in ("replace", "remove"):
        extra["match_kind"] = "updates_existing" if op.action == "replace" else "supersedes_existing"
        matched = _matches(op, rendered)
        if matched:
            extra["matched_memory_ids"] = matched
        provenance["old_text"] = redact(op.old_text).text
    refs = [ref]
    if verified is not None:  # the person's message is the second piece of evidence (named by its hash)
        refs.append(f"hermes:session/{prov.session_id}/user_turn/{str(verified.digest)[:16]}")
    return new_candidate(text, source_type="hermes", source_ref=ref, tags=tags, evidence_refs=refs,
                         provenance=provenance, **extra)


def stage_memory_call(root: Path, args: Mapping[str, Any], prov: Provenance,
                      rendered: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Append the candidates of one ``memory`` call; returns the tool result for the model."""
    from commonkeep.store.core import Store

    ops = parse_memory_args(args)
    cands = [candidate_for(op, prov, rendered) for op in ops]
    bind_stamps(root, cands)
    store = Store(root)
    for cand in cands:
        store.append_candidate(cand)
    ids = [str(c["id"]) for c in cands]
    return {
        "success": True,
        "staged": True,
        "done": True,
        "pending_id": ids[0],
        "candidate_ids": ids,
        "target": ops[0].target,
        "message": (
            "Staged for review: recorded as a governed memory candidate "
            f"({', '.join(ids)}). It will appear in memory after review; do not retry."
        ),
    }


def bind_stamps(root: Path, cands: Iterable[dict[str, Any]]) -> list[str]:
    """Record each stamp this adapter set on ``cands`` in the stamp journal (``commonkeep.gate.stamps``),
    bound to the candidate's id and exact text: only a bound stamp earns auto-apply. Not from inside
    an agent's tool (a script the model started that imports this module binds nothing); a journal
    that cannot be written binds nothing either (the candidates wait for review). Returns the ids bound."""
    import logging

    from commonkeep.gate.autoapply import claimed_stamp

    todo = [(c, claim) for c in cands if (claim := claimed_stamp(c)) is not None]
    if not todo:
        return []
    from commonkeep.gate import stamps
    from commonkeep.gate.agent_shell import inside_agent

    host = inside_agent()
    if host is not None:
        logging.getLogger("commonkeep_hermes").warning("commonkeep: stamps not bound: this process runs inside %s", host)
        return []
    bound = []
    for cand, (stamp, trust) in todo:
        try:
            stamps.record_stamp(root, cand, stamp, trust)
        except (OSError, stamps.KeyUnsafe) as exc:
            logging.getLogger("commonkeep_hermes").warning("commonkeep: stamp not bound (%s); %s waits for review",
                                                           exc, cand.get("id"))
            continue
        bound.append(str(cand.get("id")))
    return bound


def captured_keys(root: Path) -> set[str]:
    """Entry keys of every Hermes candidate already in the inbox (any status)."""
    from commonkeep.store.core import Store

    keys: set[str] = set()
    for cand in Store(root).candidates():
        prov = cand.get("provenance")
        if isinstance(prov, dict) and prov.get("stamped_by") == STAMP and prov.get("entry_key"):
            keys.add(str(prov["entry_key"]))
            # the secret scanner may take a bare hash for a token and redact it; the source ref
            # (``hermes:MEMORY.md#<key>``) of an imported entry carries the same key
            ref = (cand.get("source") or {}).get("ref") if isinstance(cand.get("source"), dict) else None
            if isinstance(ref, str) and ref.startswith("hermes:") and "#" in ref:
                keys.add(ref.rsplit("#", 1)[1])
    return keys


def capture_entries(root: Path, entries: Mapping[str, list[str]], origin: str,
                    known: set[str] | None = None, extra: dict[str, Any] | None = None, bind: bool = False) -> list[str]:
    """Capture ``{target: [entry, …]}`` not captured before; returns the new candidate ids.

    ``known`` are entry keys to skip besides those already in the inbox (e.g. the entries
    commonkeep itself rendered). ``bind``: record their ``import`` stamp in the stamp journal
    (``commonkeep hermes install``'s import only, a person's decision).
    """
    from commonkeep.store.core import Store

    skip = captured_keys(root) | (known or set())
    store = Store(root)
    new_ids: list[str] = []
    for target, texts in entries.items():
        for text in texts:
            key = entry_key(target, text)
            if key in skip or not text.strip():
                continue
            skip.add(key)
            prov = Provenance(origin=origin, extra=dict(extra or {}))
            cand = candidate_for(MemoryOp("add", target, text.strip()), prov)
            if bind:
                bind_stamps(root, [cand])
            store.append_candidate(cand)
            new_ids.append(str(cand["id"]))
    return new_ids


def harvest_pending(pending_dir: Path, done_dir: Path, root: Path) -> list[str]:
    """Turn writes Hermes' own gate staged (``memory.write_approval``) into candidates.

    That gate is the fallback when the governance plugin did not load: Hermes then parks each
    write as ``$HERMES_HOME/pending/memory/<id>.json`` (contracts/hermes-host.md §5.6). Each file
    becomes candidates (origin ``write_approval``) and moves to ``done_dir`` (redacted, like the
    candidates), so ``/memory approve`` cannot later write it past the librarian.
    """
    import json

    from commonkeep.store.core import Store

    if not pending_dir.is_dir():
        return []
    new_ids: list[str] = []
    store = Store(root)
    for path in sorted(pending_dir.glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            payload = dict(record.get("payload") or {})
            if payload.get("action") == "batch":
                payload = {"target": payload.get("target", "memory"), "operations": payload.get("operations") or []}
            ops = parse_memory_args(payload)
        except (OSError, ValueError, AttributeError, TypeError):
            continue  # not a memory write we understand: leave it for Hermes' own review
        origin = "background_review" if record.get("origin") == "background_review" else "write_approval"
        prov = Provenance(origin=origin, extra={"hermes_pending_id": str(record.get("id", path.stem))})
        cands = [candidate_for(op, prov) for op in ops]
        store.append_candidates(cands)
        new_ids += [str(c["id"]) for c in cands]
        done_dir.mkdir(parents=True, exist_ok=True)
        # kept as a record of what was harvested, with its secrets redacted like the candidates
        from commonkeep.secrets import redact_obj
        from commonkeep.store.jsonl import atomic_write_bytes

        atomic_write_bytes(done_dir / path.name, (json.dumps(redact_obj(record), ensure_ascii=False) + "\n").encode("utf-8"))
        path.unlink()
    return new_ids
