"""Undo a review decision: a reversing patch, applied and audited like any other, and the candidate
back in the queue.

For each applied op of the decision (``outcome.outcome``) the reversing op is one of the contract's:

| the decision did                     | the undo patch does                                              |
|--------------------------------------|------------------------------------------------------------------|
| ``add`` of a record                  | ``deprecate`` it                                                 |
| ``update`` (reinforce, replace)      | ``update`` back to the values the op kept in ``before``          |
| ``supersede`` (replace)              | ``deprecate`` the new record; ``add`` the old one back as a copy (``restored_from``) |
| ``contest`` (keep both)              | ``uncontest``                                                    |
| ``reject_candidate``                 | nothing to reverse in the records                                |

The undo patch names what it reverses (``undoes``: the patch ids, ``undoes_candidates``) and who
(``decided_by``). A rejection changes no record, so its undo writes the patch file only (no ops:
the explanation of the requeue). The candidate itself cannot go back to ``new`` through a patch
(no op does that), so its inbox line is set back to ``new`` under its own id and creation time
(``provenance.requeued_by`` names the undo patch): what a person undid waits for a person, whatever
stamp it carried, and is never auto-applied (``scoring.auto_apply_blockers``).
A record changed again since the decision, or gone, is refused: nothing is applied. Several
decisions undone together are reversed latest first, each checked against the records as the
reversals before it leave them (an add and a later reinforce of the same record: the values put
back, then the record deprecated), so a batch that cannot be applied whole is refused before
anything is written.

Public: :func:`undo`, :class:`Undone`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.reviews.outcome import Outcome, outcome

Row = dict[str, Any]


@dataclass
class Undone:
    """What an undo did."""

    patch_id: str
    undid: list[Outcome] = field(default_factory=list)
    requeued: dict[str, str] = field(default_factory=dict)  # candidate id -> its id back in the queue (the same id)
    applied: list[str] = field(default_factory=list)

    def sentence(self) -> str:
        what = "; ".join(f"undid {o.decision} {o.candidate_id} (patch {o.patch_id})" for o in self.undid)
        back = ", ".join(old if old == new else f"{old} as {new}" for old, new in self.requeued.items())
        return f"{what}: reversed by patch {self.patch_id} ({len(self.applied)} op(s) applied); back in the queue: {back}"

    def to_json(self) -> dict[str, Any]:
        return {"patch_id": self.patch_id, "undid": [o.to_json() for o in self.undid], "requeued": self.requeued,
                "applied_ops": self.applied}


def _reversal(o: Outcome, recs: dict[str, Row], taken: set[str]) -> list[Row]:
    """The ops that reverse the decision ``o`` (refused with ``BadInput`` when they cannot)."""
    from commonkeep.patches.curate import add_target, route
    from commonkeep.util.timeutil import today

    def live(rid: str, *, want: tuple[str, ...] = ("active", "contested")) -> Row:
        rec = recs.get(rid)
        if rec is None or rec.get("status") not in want:
            state = "gone" if rec is None else str(rec.get("status"))
            raise BadInput(f"cannot undo the decision on {o.candidate_id}: record {rid} is {state} now; nothing was applied",
                           hint="change the record with its own patch (commonkeep forget, or a new candidate)")
        return rec

    out: list[Row] = []
    why = f"undo of the decision on {o.candidate_id} (patch {o.patch_id})"
    for op in o.ops:
        kind = op.get("op")
        if kind == "reject_candidate":
            continue
        if kind == "add":
            rec = live(str(op["record"]["id"]))
            out.append({"op": "deprecate", "target": route(rec), "target_id": rec["id"], "risk": "low", "reason": why})
        elif kind == "update":
            rec = live(str(op["target_id"]))
            before = op.get("before")
            if not isinstance(before, dict) or not before:
                raise BadInput(f"cannot undo the decision on {o.candidate_id}: its patch {o.patch_id} did not keep the values "
                               "it replaced; nothing was applied", hint=f"see them with `commonkeep patches --show {o.patch_id}`")
            changed = [k for k, v in (op.get("updates") or {}).items() if rec.get(k) != v]
            if changed:
                raise BadInput(f"cannot undo the decision on {o.candidate_id}: {rec['id']} was changed again since "
                               f"({', '.join(changed)}); nothing was applied")
            out.append({"op": "update", "target": route(rec), "target_id": rec["id"], "updates": before,
                        "before": {k: rec.get(k) for k in before}, "risk": "low", "reason": why})
        elif kind == "supersede":
            new = live(str(op["to_record"]["id"]))
            old = live(str(op["target_id"]), want=("superseded",))
            out.append({"op": "deprecate", "target": route(new), "target_id": new["id"], "risk": "low", "reason": why})
            n = 1
            while f"{old['id']}_r{n}" in taken:
                n += 1
            copy = {**json.loads(json.dumps(old)), "id": f"{old['id']}_r{n}", "status": "active", "superseded_by": [],
                    "updated_at": today(), "restored_from": old["id"]}
            taken.add(copy["id"])
            out.append({"op": "add", "target": add_target(copy), "record": copy, "risk": "low", "reason": why})
        elif kind == "contest":
            rec = live(str(op["target_id"]), want=("contested",))
            out.append({"op": "uncontest", "target": route(rec), "target_id": rec["id"], "risk": "low", "reason": why})
        else:
            raise BadInput(f"cannot undo the decision on {o.candidate_id}: its {kind} op has no reversal; nothing was applied")
    for rev in out:
        _note(recs, rev)
    return out


def _note(recs: dict[str, Row], op: Row) -> None:
    """What a reversing op will do to the records, noted in ``recs``: the next decision of the same
    undo is checked against the records as this patch leaves them (undoing an add and a later
    reinforce of its record together once deprecated the record, then refused the update back
    after applying half the patch, and put neither candidate back in the queue)."""
    if op["op"] == "add":
        recs[str(op["record"]["id"])] = op["record"]
        return
    status = {"deprecate": "deprecated", "uncontest": "active"}.get(str(op["op"]))
    rid = str(op["target_id"])
    recs[rid] = {**recs[rid], **(op.get("updates") or {}), **({"status": status} if status else {})}


def undo(root: Path | str, ids: list[str], *, role: str | None, reason: str = "") -> Undone:
    """Undo the decisions on candidates ``ids``: one reversing patch, applied now, and a copy of
    each candidate back in the queue. Refused (nothing written) for a candidate still pending,
    already undone, or whose records changed since."""
    from commonkeep.gate.agent_shell import refuse_inside_agent
    from commonkeep.gate.writer import require_writer
    from commonkeep.patches.lock import writer_lock
    from commonkeep.patches.patch import apply_patch, write_patch
    from commonkeep.reviews.review import _manual_patch
    from commonkeep.secrets import redact
    from commonkeep.store.core import Store
    from commonkeep.store.ids import memory_id_for, record_id_of
    from commonkeep.util.timeutil import now_iso

    refuse_inside_agent("undoing a decision")
    require_writer("review", role, root)
    store = Store(root, warn=False)
    rows = store.candidates()
    recs = {str(r["id"]): r for r in store.records(active_only=False)}
    taken = set(recs) | store.tombstoned_ids()
    found: list[Outcome] = []
    ops: list[Row] = []
    for cid in dict.fromkeys(ids):
        o = outcome(root, cid, inbox=rows)
        again = next((c for c in rows if c.get("id") == cid), {}).get("provenance") or {}
        if o.decision == "pending" and isinstance(again, dict) and again.get("requeued_by"):
            raise BadInput(f"the decision on {cid} was already undone by patch {again['requeued_by']}; "
                           "the candidate is back in the queue, waiting for a decision")
        if o.decision in ("pending", "unknown"):
            raise BadInput(f"nothing to undo for {cid}: it is {'still pending' if o.decision == 'pending' else 'not decided by any patch'}")
        if o.undone_by:
            raise BadInput(f"the decision on {cid} was already undone by patch {o.undone_by}"
                           + (f"; the candidate is back in the queue as {o.requeued_as}" if o.requeued_as else ""))
        found.append(o)
    # the latest decision first: each is reversed on the records as the later ones left them
    for o in sorted(found, key=lambda o: (o.when or "", o.patch_id or ""), reverse=True):
        ops += _reversal(o, recs, taken)
    said = redact(reason.strip()).text if reason.strip() else ""
    patch = _manual_patch(ops, "undo " + ", ".join(f"{o.decision} of {o.candidate_id}" for o in found), role,
                          undoes=sorted({str(o.patch_id) for o in found}), undoes_candidates=[o.candidate_id for o in found],
                          **({"undo_reason": said} if said else {}))
    if ops:
        res = apply_patch(root, patch, role=role)
        if res.skipped:  # checked above; a concurrent change can still refuse an op
            raise BadInput("the undo was only partly applied: " + "; ".join(f"{k}: {v}" for k, v in res.skipped.items()),
                           hint=f"patch {res.patch['patch_id']} records what was applied")
        applied = list(res.applied)
        pid = str(res.patch["patch_id"])
    else:  # a rejection changed no record: the patch file explains the requeue
        with writer_lock(root, str(role), "undo", None):
            patch.update({"status": "applied", "applied_at": now_iso()})
            write_patch(store.layout, patch)
        applied, pid = [], str(patch["patch_id"])
    done = Undone(pid, found, applied=applied)
    back = {o.candidate_id for o in found}
    from commonkeep.gate import stamps

    stamps.record_revoke(root, sorted(back))  # before the requeue: what a person undid waits for a person

    def requeue(rows: list[Row]) -> list[Row]:
        out = []
        for c in rows:
            if str(c.get("id")) in back and c.get("status") != "new":
                prov = dict(c.get("provenance") or {}) if isinstance(c.get("provenance"), dict) else {}
                # ``requeued_by``: a person undid its decision; the gate holds it for a person whatever it was stamped
                c = {**c, "status": "new", "provenance": {**prov, "requeued_by": pid, "requeued_at": now_iso()}}
                if record_id_of(c) in taken:  # its record (deprecated now) keeps that id: approving again makes a new one
                    base, n = memory_id_for(str(c["id"])), 1
                    while f"{base}_u{n}" in taken:
                        n += 1
                    c["record_id"] = f"{base}_u{n}"
                    taken.add(c["record_id"])
            out.append(c)
        return out

    store.rewrite(store.layout.inbox, requeue)
    for o in found:
        done.requeued[o.candidate_id] = o.candidate_id
    return done
