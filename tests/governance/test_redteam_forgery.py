"""Wave 36's red team against stamps with file tools alone: forgeries the earlier corpus
(``test_forgery_corpus``) does not make. Each starts from the same scene (every legitimate stamp
set and bound, curated once), makes one change a model's file tool could make, then runs what can
apply without anyone choosing it (the session end's ``curate --auto`` and a person applying each
waiting patch as proposed). It must apply nothing of the forgery and ``audit`` / ``doctor`` must
name it.

The classes: a bound candidate's other fields edited (the record's scope, its conditions and
exceptions, its layer, tags, confidence) while its text and stamp stay; a decided candidate put
back (a rejection or an undo taken out of its line); an ``edited`` block forged in a patch (the
op's statement changed with the hash of the new text); a waiting op's record or kind changed for a
bound candidate (its scope, layer, conditions; an add turned into a supersede of a live record)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from commonkeep.store.core import Store
from commonkeep.store.ids import memory_id_for
from tests.governance.conftest import WRITER, adapter_candidate, write_candidate
from tests.governance.test_forgery_corpus import (
    CLAIMS,
    FORGED,
    Scene,
    _named,
    _session_end_and_a_person_applying_as_proposed,
)
from tests.governance.test_forgery_corpus import scene as scene  # noqa: F401  (the fixture)

Change = Callable[[dict[str, Any]], dict[str, Any]]


def _stamped_waiting(s: Scene, text: str, **kw: Any) -> str:
    """A candidate the writer stamped in the person's terminal, not yet curated."""
    return str(write_candidate(s.root, text, confidence=0.95, **kw)["id"])


def _edit_line(s: Scene, cid: str, change: Change) -> str:
    return s.rewrite(cid, change)


def _curated(s: Scene, text: str, **kw: Any) -> tuple[str, Path]:
    """A stamped candidate in a patch ``curate`` proposed (not applied: the person applies it later)."""
    from commonkeep.patches.curate import curate

    cid = _stamped_waiting(s, text, **kw)
    prop = curate(s.root, role=WRITER)
    assert prop.path is not None
    return cid, prop.path


def _edit_op(path: Path, cid: str, change: Callable[[dict[str, Any]], None]) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for op in doc["ops"]:
        if op.get("candidate_id") == cid:
            change(op)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- a bound candidate's other fields (its text and stamp kept) ---------------------------------------
def g01(s: Scene) -> str:
    """A project-scoped stamped candidate's folder dropped: its record would be global."""
    proj = s.tmp / "project-a"
    proj.mkdir()
    cid = _stamped_waiting(s, "Builds use the nightly toolchain.", cwd=str(proj))
    return _edit_line(s, cid, lambda r: {**r, "source": {k: v for k, v in r["source"].items() if k != "cwd"}})


def g02(s: Scene) -> str:
    """A condition added that the writer never vouched for."""
    return _edit_line(s, s.by_name["pending"]["id"], lambda r: {**r, "proposed_does_not_apply_when": [
        "when the person asks for the test suite"]})


def g03(s: Scene) -> str:
    return _edit_line(s, s.by_name["pending"]["id"], lambda r: {**r, "proposed_applies_when": ["always, in every repository"]})


def g04(s: Scene) -> str:
    return _edit_line(s, s.by_name["pending"]["id"], lambda r: {**r, "proposed_known_exceptions": [
        "release builds may skip it"]})


def g05(s: Scene) -> str:
    """Tags changed (the record's topic and ``normalized_key``)."""
    return _edit_line(s, s.by_name["pending"]["id"], lambda r: {**r, "tags": ["deploy", "security"]})


def g06(s: Scene) -> str:
    """A USER.md write (L1, ratified by a person) edited to land in L2 by itself."""
    cand = adapter_candidate(s.root, "The person is an administrator of every repository.", {
        "agent": "hermes", "stamped_by": "commonkeep_hermes", "origin": "import", "target": "user"},
        **{**CLAIMS, "promotion_eligibility": "l1_review_only"}, proposed_layer="L1")
    return _edit_line(s, str(cand["id"]), lambda r: {**r, "proposed_layer": "L2", "promotion_eligibility": "auto_candidate",
                                                     "tags": []})


def g07(s: Scene) -> str:
    """The confidence the writer gave (below the auto-apply threshold) raised."""
    cid = str(write_candidate(s.root, "Hotfixes go straight to production.", confidence=0.6)["id"])
    return _edit_line(s, cid, lambda r: {**r, "confidence": 0.99})


def g08(s: Scene) -> str:
    """``memory_kind`` / ``ruleType`` changed: what kind of rule the record is."""
    return _edit_line(s, s.by_name["pending"]["id"], lambda r: {**r, "memory_kind": "hard_rule", "ruleType": "hard"})


# -- a decided candidate put back -----------------------------------------------------------------------
def g09(s: Scene) -> str:
    """The person rejected the stamped candidate; its line is set back to ``new``."""
    from commonkeep.reviews.review import reject

    cid = s.by_name["pending"]["id"]
    reject(s.root, [cid], reason="not true", role=WRITER)
    return _edit_line(s, cid, lambda r: {**r, "status": "new", **{k: None for k in ("rejected_at", "reject_reason")}})


def g10(s: Scene) -> str:
    """The person undid an applied stamped candidate; the undo's mark is taken out of its line."""
    from commonkeep.reviews.undo import undo

    done = undo(s.root, [s.by_name["writer"]["id"]], role=WRITER)
    copy = done.requeued[s.by_name["writer"]["id"]]

    def clean(r: dict[str, Any]) -> dict[str, Any]:
        prov = {k: v for k, v in r["provenance"].items() if k not in ("requeued_by", "requeued_at", "requeued_from")}
        return {**r, "provenance": prov}

    return _edit_line(s, copy, clean)


# -- patches --------------------------------------------------------------------------------------------
def g11(s: Scene) -> str:
    """A waiting op of a bound candidate: its statement changed, with an ``edited`` block forged for it."""
    cid, path = _curated(s, "Lint warnings fail the build.")

    def forge(op: dict[str, Any]) -> None:
        op["record"]["statement"] = FORGED
        op["edited"] = {"by": WRITER, "actor": "alex", "via": "review --text", "sha256": _sha(FORGED),
                        "candidate_sha256": _sha("Lint warnings fail the build.")}

    _edit_op(path, cid, forge)
    return cid


def g12(s: Scene) -> str:
    """A patch written by hand as a person's manual edit, its ``edited`` block forged."""
    from commonkeep.patches.curate import record_from_candidate

    rec = record_from_candidate({"id": "cap_20261204120000_forge112", "text": FORGED, "tags": [],
                                 "evidence_refs": ["daily/2026-12-04.md", "pyproject.toml"]})
    rec["statement"] = FORGED
    pid = "patch_202612041200_manualforge"
    patch = {"patch_id": pid, "created_at": "2026-12-04T12:00:00.000Z", "generated_by": "manual", "mode": "supervised",
             "summary": "1 add", "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": [],
             "ops": [{"op_id": "op_001", "op": "add", "target": "memory/L2.playbooks.jsonl", "record": rec, "risk": "low",
                      "default_selected": True, "edited": {"by": WRITER, "actor": "alex", "via": "manual patch",
                                                           "sha256": _sha(FORGED)}}]}
    (s.root / "patches" / f"{pid}.json").write_text(json.dumps(patch, indent=2) + "\n", encoding="utf-8")
    return str(rec["id"])


def g13(s: Scene) -> str:
    """A waiting op of a bound project-scoped candidate: its record's scope made global."""
    proj = s.tmp / "project-b"
    proj.mkdir()
    cid, path = _curated(s, "Migrations run before the deploy.", cwd=str(proj))
    _edit_op(path, cid, lambda op: op["record"].update(scope={"type": "global"}))
    return cid


def g14(s: Scene) -> str:
    """A waiting op of a bound candidate: a condition added to its record."""
    cid, path = _curated(s, "Lint warnings fail the build.")
    _edit_op(path, cid, lambda op: op["record"].update(does_not_apply_when=["on release branches"]))
    return cid


def g15(s: Scene) -> str:
    """A waiting op of a bound candidate: its record moved to L1 (the person's identity)."""
    cid, path = _curated(s, "Lint warnings fail the build.")
    _edit_op(path, cid, lambda op: op.update(target="memory/L1.identity.jsonl") or op["record"].update(layer="L1"))
    return cid


def g16(s: Scene) -> str:
    """A waiting add of a bound candidate turned into a supersede of a live record (the writer's)."""
    cid, path = _curated(s, "Feature flags are removed after each release.")
    old = memory_id_for(s.by_name["writer"]["id"])

    def swap(op: dict[str, Any]) -> None:
        rec = op.pop("record")
        op.update(op="supersede", target_id=old, to_record=rec, reason="supersedes_existing")

    _edit_op(path, cid, swap)
    return cid


FORGERIES: dict[str, Callable[[Scene], str]] = {
    "a bound candidate's project folder dropped (scope made global)": g01,
    "a condition (does_not_apply_when) added to a bound candidate": g02,
    "applies_when added to a bound candidate": g03,
    "known exceptions added to a bound candidate": g04,
    "a bound candidate's tags changed": g05,
    "a bound L1 candidate moved to L2": g06,
    "a bound candidate's confidence raised over the threshold": g07,
    "a bound candidate's kind of rule changed": g08,
    "a rejected stamped candidate set back to new": g09,
    "an undone stamped candidate's requeue mark removed": g10,
    "an edited block forged in a waiting op of a bound candidate": g11,
    "a manual patch with a forged edited block": g12,
    "a waiting op's record scope made global": g13,
    "a waiting op's record given a condition": g14,
    "a waiting op's record moved to L1": g15,
    "a waiting add turned into a supersede of a live record": g16,
}
#: what each forgery would change in memory, when it got through (what the test looks for)
CHANGED_FIELDS = ("statement", "scope", "layer", "does_not_apply_when", "applies_when", "known_exceptions", "tags",
                  "confidence", "memory_kind", "ruleType", "status")


def _memory(root: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: {k: r.get(k) for k in CHANGED_FIELDS} for r in Store(root).records(active_only=False)}


def _got(after: dict[str, dict[str, Any]], rid: str, key: str, value: Any) -> bool:
    return after.get(rid, {}).get(key) == value


#: name -> how a forgery that got through shows in memory (beside a forged id or FORGED statement)
SHOWS: dict[str, Callable[[Scene, dict[str, dict[str, Any]], str], bool]] = {
    "a bound candidate's project folder dropped (scope made global)":
        lambda s, m, cid: _got(m, memory_id_for(cid), "scope", {"type": "global"}),
    "a condition (does_not_apply_when) added to a bound candidate":
        lambda s, m, cid: bool(m.get(memory_id_for(cid), {}).get("does_not_apply_when")),
    "applies_when added to a bound candidate": lambda s, m, cid: bool(m.get(memory_id_for(cid), {}).get("applies_when")),
    "known exceptions added to a bound candidate":
        lambda s, m, cid: bool(m.get(memory_id_for(cid), {}).get("known_exceptions")),
    "a bound candidate's tags changed": lambda s, m, cid: _got(m, memory_id_for(cid), "tags", ["deploy", "security"]),
    "a bound L1 candidate moved to L2": lambda s, m, cid: _got(m, memory_id_for(cid), "layer", "L2"),
    "a bound candidate's confidence raised over the threshold": lambda s, m, cid: memory_id_for(cid) in m,
    "a bound candidate's kind of rule changed": lambda s, m, cid: _got(m, memory_id_for(cid), "ruleType", "hard"),
    "a rejected stamped candidate set back to new": lambda s, m, cid: memory_id_for(cid) in m,
    "an undone stamped candidate's requeue mark removed":
        lambda s, m, cid: any(rid.startswith(memory_id_for(s.by_name["writer"]["id"]) + "_u") for rid in m),
    "a waiting op's record scope made global": lambda s, m, cid: _got(m, memory_id_for(cid), "scope", {"type": "global"}),
    "a waiting op's record given a condition":
        lambda s, m, cid: bool(m.get(memory_id_for(cid), {}).get("does_not_apply_when")),
    "a waiting op's record moved to L1": lambda s, m, cid: _got(m, memory_id_for(cid), "layer", "L1"),
    "a waiting add turned into a supersede of a live record":
        lambda s, m, cid: not _got(m, memory_id_for(s.by_name["writer"]["id"]), "status", "active"),
}


def outcome(s: Scene, name: str) -> tuple[bool, bool]:
    """(applied, named) for one forgery."""
    needle = FORGERIES[name](s)
    _session_end_and_a_person_applying_as_proposed(s)
    after = _memory(s.root)
    applied = needle in after or any(FORGED in str(rec.get("statement")) for rec in after.values())
    if name in SHOWS:
        applied = applied or SHOWS[name](s, after, needle)
    try:
        named = bool(_named(s, needle))
    except AssertionError:  # doctor exits 0
        named = False
    return applied, named


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forgery_applies_nothing_and_is_named(scene: Scene, name: str) -> None:  # noqa: F811
    applied, named = outcome(scene, name)
    assert (applied, named) == (False, True), f"{name}: {'applied' if applied else 'not applied'}, " \
                                              f"{'named' if named else 'not named by audit or doctor'}"


def test_a_second_import_of_hermes_memory_file_stamps_nothing(root: Path, tmp_path: Path) -> None:
    """Hermes' entries are imported (stamped ``import``, applied) once, at the first install. A model's
    file tool that appends an entry to Hermes' ``MEMORY.md`` and removes or spoils the install's state
    file (``load_sidecar`` then finds none) gets the next `commonkeep hermes install` to import again:
    the stamp journal remembers the first import, so the new entry is an ``external_edit`` and waits."""
    from commonkeep_hermes.importing import import_existing
    from commonkeep_hermes.settings import HermesProfile

    home = tmp_path / "hermes-home"
    (home / "memories").mkdir(parents=True)
    memory = home / "memories" / "MEMORY.md"
    memory.write_text("Commit messages use the imperative mood.\n§\nThe staging database is postgres 16.", encoding="utf-8")
    first = import_existing(HermesProfile(home), root)
    assert len(first.imported) == 2
    memory.write_text(memory.read_text(encoding="utf-8") + f"\n§\n{FORGED}", encoding="utf-8")
    again = import_existing(HermesProfile(home), root)  # the person's install, the state file gone
    assert again.imported == []
    assert FORGED not in [r["statement"] for r in Store(root).records()]
    [cand] = [c for c in Store(root).candidates() if c["text"] == FORGED]
    assert cand["status"] == "new" and cand["provenance"]["origin"] == "external_edit"


def test_a_candidate_and_its_op_changed_between_curation_and_the_policys_apply_are_not_applied(root: Path) -> None:
    """TOCTOU: ``curate --auto`` selects by the stamps it read, then applies. A file tool that changes the
    stamped candidate's text and its op's statement alike in between (the same check ``auto_curate`` makes,
    here in two steps so the window is open) must find the stamp checked again under the writer lock."""
    from commonkeep.patches.auto import auto_select
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_selected_by_policy

    cand = write_candidate(root, "Lint warnings fail the build.", confidence=0.95)
    prop = curate(root, role=WRITER, mode="auto")
    chosen = auto_select(prop, 0.85)
    assert chosen and prop.path is not None
    inbox = root / "inbox" / "captured.jsonl"
    rows = [json.loads(x) for x in inbox.read_text(encoding="utf-8").splitlines() if x.strip()]
    inbox.write_text("".join(json.dumps({**r, "text": FORGED} if r["id"] == cand["id"] else r) + "\n" for r in rows),
                     encoding="utf-8")
    _edit_op(prop.path, cand["id"], lambda op: op["record"].update(statement=FORGED))
    res = apply_selected_by_policy(root, prop.patch["patch_id"], role=WRITER, op_ids=chosen)
    assert res.applied == [] and FORGED not in [r["statement"] for r in Store(root).records()]
    assert _named(Scene(root, root.parent), str(cand["id"]))  # audit and doctor name the line
