"""At the first install, Hermes' existing ``MEMORY.md`` / ``USER.md`` entries become records.

Once only, for a profile and a root: the stamp journal records the import (``stamps.record_installed``),
so an install run again after Hermes' state file was removed or damaged finds the entries written
since and captures them as ``external_edit`` (no stamp: they wait for a person).

An agent must not lose what it remembered the moment commonkeep is installed, so every entry
found in the two files is captured as a candidate (origin ``import``, stamped by the Hermes
adapter) and the candidates the gate lets through are applied as records in ONE patch, audited
like any other (``patches/<id>.json``, ``generated_by: manual``): ``USER.md`` entries become L1
identity records, ``MEMORY.md`` entries L2 records, each with its original text, the tag
``imported-from-hermes`` and evidence naming the file and entry. The next Hermes session is
rendered from those records, so it sees the same memory.

The gate still wins. Capture redacts secrets (the record holds ``[REDACTED:<kind>]``, never the
secret), and an entry the poisoning score holds (risk ``medium`` or ``high``, the same rule as
``commonkeep.gate.autoapply``) is not imported: it stays a ``new`` candidate for review.
The patch is applied in the name of the writer role (installing is the person's own decision,
like ``commonkeep ratify``); the patch file says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep_hermes.settings import TARGET_FILES, HermesProfile

IMPORT_TAG = "imported-from-hermes"
HELD_RISKS = ("medium", "high")


@dataclass
class ImportResult:
    """What the import did: records applied, candidates held for review (id -> why)."""

    imported: list[str] = field(default_factory=list)  # record ids
    by_file: dict[str, int] = field(default_factory=dict)
    held: dict[str, str] = field(default_factory=dict)
    redacted: list[str] = field(default_factory=list)  # record ids whose text lost a secret
    patch_id: str | None = None
    refused: list[str] = field(default_factory=list)  # ops the apply refused, with the reason

    def lines(self) -> list[str]:
        out: list[str] = []
        if self.imported:
            files = ", ".join(f"{n} from {name}" for name, n in self.by_file.items())
            out.append(f"imported {len(self.imported)} existing Hermes entries as records ({files}), original text, "
                       f"tagged #{IMPORT_TAG}, in one audited patch {self.patch_id}: the next session sees the same memory")
        if self.redacted:
            out.append(f"{len(self.redacted)} imported entr{'y' if len(self.redacted) == 1 else 'ies'} held a secret: "
                       "stored as [REDACTED:<kind>] "
                       f"({', '.join(self.redacted)})")
        if self.held:
            why = "; ".join(f"{cid}: {reason}" for cid, reason in self.held.items())
            n = len(self.held)
            out.append(f"{n} {'entry was' if n == 1 else 'entries were'} NOT imported: the poisoning score holds "
                       f"{'it' if n == 1 else 'them'} for review as "
                       f"candidates ({why}); `commonkeep review` shows them, `commonkeep curate` proposes them")
        out.extend(f"not imported: {r}" for r in self.refused)
        return out


def _entries(profile: HermesProfile) -> dict[str, list[str]]:
    from commonkeep_hermes.hermesfiles import split_entries

    out: dict[str, list[str]] = {}
    for target in TARGET_FILES:
        path = profile.memory_file(target)
        if path.is_file():
            out[target] = split_entries(path.read_bytes().decode("utf-8", errors="replace"))
    return out


def import_existing(profile: HermesProfile, root: Path) -> ImportResult:
    """Capture the entries of both files and apply what the gate lets through (see module doc).
    Stamped ``import`` and applied at once, so the person's decision: refused inside an agent."""
    from commonkeep.gate.agent_shell import refuse_inside_agent
    from commonkeep.gate.scoring import enrich_candidate
    from commonkeep.gate.writer import configured_writer_role
    from commonkeep.patches.curate import record_from_candidate, route
    from commonkeep.patches.patch import apply_patch
    from commonkeep.store.core import Store
    from commonkeep.store.ids import patch_id
    from commonkeep.util.timeutil import now, now_iso
    from commonkeep_hermes.capture import capture_entries

    refuse_inside_agent("`commonkeep hermes install` importing Hermes' MEMORY.md / USER.md")
    from commonkeep.gate import stamps

    result = ImportResult()
    profile_id = str(profile.home.resolve())
    if stamps.installed(root, "hermes", profile_id):
        # imported once already (the stamp journal says so, whatever Hermes' state file says): an entry
        # found now was written since, by a person's hand or an agent's file tool; it waits for a person
        capture_entries(root, _entries(profile), "external_edit")
        return result
    new_ids = set(capture_entries(root, _entries(profile), "import", bind=True))
    stamps.record_installed(root, "hermes", profile_id)
    if not new_ids:
        return result
    store = Store(root)
    ops: list[dict[str, Any]] = []
    known = {str(r["id"]) for r in store.records(active_only=False)}
    for cand in store.candidates(status="new"):
        cid = str(cand["id"])
        if cid not in new_ids:
            continue
        scored = enrich_candidate(cand)
        if scored.get("poisoning_risk") in HELD_RISKS:
            reasons = ", ".join(scored.get("poisoning_risk_reasons") or []) or "no reason given"
            result.held[cid] = f"poisoning risk {scored['poisoning_risk']} ({reasons})"
            continue
        target = "user" if cand.get("proposed_layer") == "L1" else "memory"
        record = record_from_candidate(cand, layer="L1" if target == "user" else "L2")
        if record["id"] in known:
            continue
        record["tags"] = [*record["tags"], IMPORT_TAG]
        for ev in record["evidence"]:
            ev["note"] = f"Imported from Hermes {TARGET_FILES[target]} at commonkeep hermes install (original text)"
        ops.append({"op_id": f"op_{len(ops) + 1:03d}", "op": "add", "target": route(record), "record": record,
                    "candidate_id": cid, "reason": f"existing entry of Hermes {TARGET_FILES[target]}",
                    "risk": "low", "default_selected": True})
        result.by_file[TARGET_FILES[target]] = result.by_file.get(TARGET_FILES[target], 0) + 1
        if "[REDACTED:" in str(record["statement"]):
            result.redacted.append(str(record["id"]))
    if not ops:
        return result
    writer = configured_writer_role(root)
    patch = {
        "patch_id": patch_id(now()),
        "created_at": now_iso(),
        "generated_by": "manual",
        "mode": "supervised",
        "summary": f"commonkeep hermes install: import {len(ops)} existing entries of {profile.memories_dir} "
                   f"as records (applied as the writer role {writer!r} on install)",
        "ops": ops,
        "status": "proposed",
        "applied_at": None,
        "applied_ops": [],
        "skipped_ops": [],
    }
    # hooks off: install renders the Hermes files itself right after this
    applied = apply_patch(root, patch, role=writer, ratify=True, fire_hooks=False)
    result.patch_id = str(applied.patch["patch_id"])
    done = set(applied.applied)
    for op in ops:
        if op["op_id"] in done:
            result.imported.append(str(op["record"]["id"]))
        else:
            result.refused.append(f"{op['candidate_id']} ({applied.skipped.get(op['op_id'], 'not applied')})")
    result.redacted = [r for r in result.redacted if r in result.imported]
    return result
