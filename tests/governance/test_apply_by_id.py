"""An apply whose ops write no statement finds its records by id (``record_lookup``) instead of
parsing every line (issue 38: 1.4 s of a 3.4 s one-op apply at 100,000 records). It must decide
and write exactly what the apply that reads every line does: the same ops applied or refused for
the same reasons, the same bytes in every file, whatever the files hold (duplicate ids, an id in
two files, escaped or non-ASCII ids, another writer's key order, tombstoned leftovers, a line that
is not a record)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches import ops as ops_module
from commonkeep.patches import patch as patch_module
from commonkeep.patches.patch import apply_patch
from commonkeep.store import clean_memo, line_edit, line_index, record_lines
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from commonkeep.store.record_lookup import RecordLookup
from tests.governance.conftest import WRITER
from tests.recall.conftest import make_record

L1 = "memory/L1.identity.jsonl"
L2 = "memory/L2.playbooks.jsonl"
KINDS = ("update", "update_stability", "flag_for_review", "deprecate", "decay", "contest", "uncontest",
         "add_exception", "reject_candidate")


def _new_process() -> None:
    """Forget what this process learnt of the files, as a new ``commonkeep apply`` process knows nothing."""
    for cache in (record_lines._MEMO, record_lines._FILES, record_lines._UNCHECKED, line_edit._clean, line_edit._plain,
                  line_index._kept, line_index._loaded):
        cache.clear()
    record_lines._VALID.clear()


def _line(rec: dict[str, Any], quirk: str) -> str:
    if quirk == "keys-reordered":  # another writer's key order: not the usual layout
        return json.dumps({k: rec[k] for k in reversed(list(rec))}, separators=(",", ":"), ensure_ascii=False)
    text = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
    if quirk == "escaped-id":  # the same id written with an escape
        return text.replace(f'"id":"{rec["id"]}"', '"id":"' + "".join(f"\\u{ord(c):04x}" for c in rec["id"]) + '"', 1)
    return text


QUIRKS = ["keys-reordered", "escaped-id", "duplicate", "both-files", "tombstoned", "not-a-record", "contested",
          "deprecated"]
PLAIN = {"duplicate", "both-files", "tombstoned", "contested", "deprecated"}  # files the lookup reads by id


def _build(root: Path, rng: random.Random) -> list[str]:
    """A store with some quirks; returns the ids an op may name (some absent)."""
    ids = [f"mem_{i:03d}" for i in range(14)] + ["mem_é", "mem_absent"]
    lines: dict[str, list[str]] = {L1: [], L2: [], "memory/projects/alpha.jsonl": []}
    quirks = rng.sample(QUIRKS, k=rng.choice([0, 1, 2, 2, 3]))
    for n, rid in enumerate(ids[:-1]):
        status = "contested" if "contested" in quirks and n % 5 == 1 else "deprecated" if "deprecated" in quirks and n % 7 == 3 else "active"
        layer, file, scope = ("L1", L1, {"type": "global"}) if n in (0, 1) else ("L2", L2, {"type": "global"})
        if n in (10, 11):
            file, scope = "memory/projects/alpha.jsonl", {"type": "project", "project": "alpha"}
        rec = make_record(rid, f"Fact {n} about the deploy.", layer=layer, scope=scope, status=status,
                          confidence=round(rng.uniform(0.3, 0.95), 2))
        quirk = "none"
        if "keys-reordered" in quirks and n == 5:
            quirk = "keys-reordered"
        if "escaped-id" in quirks and n == 6:
            quirk = "escaped-id"
        lines[file].append(_line(rec, quirk))
        if "duplicate" in quirks and n == 4:
            lines[file].append(_line({**rec, "confidence": 0.11, "tags": ["second-line"]}, "none"))
        if "both-files" in quirks and n == 7:
            lines[L1].append(_line({**rec, "layer": "L1", "statement": "The L1 copy."}, "none"))
    if "not-a-record" in quirks:
        lines[L2].append('{"id":"mem_broken","statement":"no other field"}')
    for file, rows in lines.items():
        if rows:
            (root / file).parent.mkdir(parents=True, exist_ok=True)
            (root / file).write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    if "tombstoned" in quirks:  # a deletion interrupted after its tombstone: the line is still active
        (root / "tombstones.jsonl").write_text(json.dumps({
            "id": "tomb_mem_008", "deleted_record_id": "mem_008", "deleted_at": "2026-12-01T00:00:00.000Z",
            "deletion_mode": "audit_preserving", "deletion_reason": "other", "content_removed": True}) + "\n")
    return ids


def _op(rng: random.Random, ids: list[str]) -> dict[str, Any]:
    kind = rng.choice(KINDS)
    op: dict[str, Any] = {"op": kind, "target_id": rng.choice(ids), "risk": "low", "default_selected": True}
    if kind == "update":
        op["updates"] = rng.choice([{"confidence": round(rng.uniform(0.1, 0.99), 3)}, {"tags": ["deploy", "ci"]},
                                    {"scope": {"type": "project", "project": "beta"}}, {"layer": "L1"},
                                    {"scope": {"type": "global"}}, {}, {"id": "mem_other"}])
    elif kind == "update_stability":
        op["updates"] = rng.choice([{"stability": "stable"}, {"stability": "stable", "confidence": 0.5}])
    elif kind == "add_exception":
        op["updates"] = {"known_exceptions": ["Not on Fridays."]}
    elif kind == "contest":
        op["reason"] = rng.choice(["", "A newer run says otherwise."])
    elif kind == "reject_candidate":
        op = {"op": kind, "candidate_id": "cand_nowhere", "risk": "low", "default_selected": True}
    return op


def _patch(pid: str, ops: list[dict[str, Any]]) -> dict[str, Any]:
    for i, op in enumerate(ops, 1):
        op["op_id"] = f"op_{i:03d}"
    return {"patch_id": pid, "created_at": "2026-12-05T00:00:00.000Z", "generated_by": "manual", "mode": "supervised",
            "summary": "by id", "ops": ops, "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": []}


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for sub in ("memory", "rendered", "patches", "quarantine"):
        for p in sorted((root / sub).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(root))] = p.read_bytes()
    for name in ("tombstones.jsonl",):
        if (root / name).exists():
            out[name] = (root / name).read_bytes()
    return out


@pytest.mark.parametrize("seed", range(32))
def test_an_apply_by_id_decides_and_writes_what_reading_every_line_does(tmp_path: Path, seed: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-05T01:00:00.000Z")
    rng = random.Random(seed)
    by_id, whole = ensure_layout(tmp_path / "by-id").root, ensure_layout(tmp_path / "whole").root
    ids = _build(by_id, rng)
    plain = RecordLookup.open(Store(by_id)) is not None
    for sub in ("memory", "tombstones.jsonl"):
        src = by_id / sub
        if src.is_dir():
            shutil.copytree(src, whole / sub, dirs_exist_ok=True)
        elif src.exists():
            shutil.copy(src, whole / sub)
    real = patch_module.reads_by_id
    stayed: list[bool] = []
    real_init = ops_module._State.__init__

    def spy_init(self: Any, *a: Any, **kw: Any) -> None:
        real_init(self, *a, **kw)
        stayed.append(self)

    monkeypatch.setattr(ops_module._State, "__init__", spy_init)
    for step in range(4):
        ops = [_op(rng, ids) for _ in range(rng.randint(1, 3))]
        pid = f"patch_202612050100_s{seed}x{step}"
        results = []
        for root, choose in ((by_id, real), (whole, lambda patch, selected: False)):
            monkeypatch.setattr(patch_module, "reads_by_id", choose)
            _new_process()
            try:
                res = apply_patch(root, _patch(pid, json.loads(json.dumps(ops))), role=WRITER, fire_hooks=False)
                results.append((res.applied, res.skipped))
            except Exception as exc:  # noqa: BLE001 - the same refusal either way
                results.append((type(exc).__name__, str(exc).replace(str(root), "ROOT")))
        assert results[0] == results[1], f"seed {seed} step {step}: {ops}"
        assert _files(by_id) == _files(whole), f"seed {seed} step {step}: {ops}"
    if plain:  # not hollow: on such a store some apply found its records by id alone
        assert any(not st.read_whole for st in stayed)


def test_the_records_are_found_by_id_and_the_next_process_parses_no_line(root: Path) -> None:
    """Not hollow: on a plain store the apply reads no line whole, and the file it wrote is
    remembered as valid records, so the next process's lookup checks none of its lines."""
    from tests.recall.conftest import seed

    seed(root, [make_record(f"mem_{i:03d}", f"Fact {i}.") for i in range(50)])
    Store(root).records()  # as any earlier process: the files found valid are remembered
    record_lines.records_by_file(Store(root))
    _new_process()
    pid = "patch_202612050100_one"
    seen: list[Any] = []
    real = ops_module._State._records

    def spy(self: Any) -> Any:
        seen.append("whole read")
        return real(self)

    orig = ops_module._State._records
    ops_module._State._records = spy  # type: ignore[method-assign]
    try:
        res = apply_patch(root, _patch(pid, [{"op": "update", "target_id": "mem_007", "updates": {"confidence": 0.42},
                                              "risk": "low", "default_selected": True}]), role=WRITER, fire_hooks=False)
    finally:
        ops_module._State._records = orig  # type: ignore[method-assign]
    assert res.applied == ["op_001"]
    assert seen == []  # found by id
    path = root / L2
    data = path.read_bytes()
    assert json.loads(data.splitlines()[7])["confidence"] == 0.42
    _new_process()
    from commonkeep.store.layout import Layout

    ix = line_index.trusted(Layout(root))  # the line index the apply left vouches for the whole file by its stat
    assert ix is not None and line_index.vouches(Layout(root), path, line_index.file_stat(path), len(data))
    parsed: list[int] = []
    real_parse = record_lines._parse
    record_lines._parse = lambda lines: parsed.append(len(lines)) or real_parse(lines)  # type: ignore[assignment]
    try:
        lookup = RecordLookup.open(Store(root))
    finally:
        record_lines._parse = real_parse  # type: ignore[assignment]
    assert lookup is not None and parsed == []
    found = lookup.find("mem_007")
    assert not isinstance(found, type(ops_module)) and found[1]["confidence"] == 0.42  # type: ignore[index]


def test_a_row_that_is_not_a_record_is_never_vouched_for(root: Path) -> None:
    """``Store.edit`` of a record file remembers the new bytes as valid records only when every row
    it wrote is one."""
    from commonkeep.store.line_edit import RecordChanges
    from tests.recall.conftest import seed

    seed(root, [make_record(f"mem_{i:03d}", f"Fact {i}.") for i in range(5)])
    path = root / L2
    assert RecordLookup.open(Store(root)) is not None  # vouched for in this process
    Store(root).rewrite_records(path, RecordChanges({"mem_002": {"id": "mem_002", "statement": "no other field"}}))
    data = path.read_bytes()
    entries = clean_memo.load(root / "runtime" / clean_memo.NAME)
    assert clean_memo.recalled(entries, path, data, ("records",))["records"] == 0
    assert not record_lines.vouched(path, data)
    _new_process()
    assert RecordLookup.open(Store(root)) is None  # the careful read decides


def test_a_forget_is_spliced_into_the_page_as_a_whole_render_would_write_it(root: Path) -> None:
    """An audit-preserving forget (a tombstone, the line kept as ``deleted``) takes the spliced
    render, and its page is the one ``render_all`` writes; a privacy purge renders whole."""
    from commonkeep.patches.forget import forget
    from commonkeep.store import render_splice
    from commonkeep.store.layout import Layout
    from commonkeep.store.render import render_all
    from tests.recall.conftest import seed

    seed(root, [make_record(f"mem_{i:03d}", f"Fact {i} about deploys.") for i in range(8)])
    render_all(Layout(root))  # the page and its index
    spliced: list[object] = []
    real = render_splice.render_changed

    def spy(*a: Any, **kw: Any) -> Any:
        out = real(*a, **kw)
        spliced.append(out)
        return out

    render_splice.render_changed = spy  # type: ignore[assignment]
    try:
        forget(root, "mem_003", reason="outdated", role=WRITER)
        page = (root / "rendered" / "MEMORY.md").read_bytes()
        assert spliced and spliced[-1] is not None
        forget(root, "mem_004", reason="privacy", role=WRITER, purge=True)
        assert len(spliced) == 1  # the purge rendered whole
    finally:
        render_splice.render_changed = real  # type: ignore[assignment]
    assert b"mem_003" not in page and b"mem_004" in page
    purged = (root / "rendered" / "MEMORY.md").read_bytes()
    render_all(Layout(root))
    assert (root / "rendered" / "MEMORY.md").read_bytes() == purged and b"mem_004" not in purged
