"""`select` when a writer changes the files between its index sync and its read (OMP appending
mid-read, issue 27): the records come from the lines that name them, with no second or third
whole-store sync. The race is forced by making the index read report it (`Moved`); the store,
the index and the files are real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.bench.search import synthetic_records
from commonkeep.recall import select
from commonkeep.recall.search import index, sync
from commonkeep.store.jsonl import append_jsonl
from commonkeep.store.layout import ensure_layout


def _root(tmp_path: Path, n: int = 50) -> tuple[Path, list[dict[str, object]]]:
    root = ensure_layout(tmp_path / "r").root
    records, _ = synthetic_records(n)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", records, fsync=False)
    return root, records


def test_select_after_a_mid_read_change_syncs_once_and_reads_only_the_lines_it_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, records = _root(tmp_path)
    syncs: list[bool] = []
    real_sync = sync.sync_root
    monkeypatch.setattr(sync, "sync_root", lambda *a, **k: (syncs.append(True), real_sync(*a, **k))[1])

    extra, _ = synthetic_records(60)

    def moved(*_: object) -> dict[str, dict[str, object]]:
        # OMP appends a record while select reads: the files are no longer the ones indexed
        append_jsonl(root / "memory" / "L2.playbooks.jsonl", [{**extra[50 + len(syncs)], "id": f"mem_omp_{len(syncs)}"}],
                     fsync=False)
        raise index.Moved("the canonical files changed while they were read")

    monkeypatch.setattr(index, "records_by_id", moved)
    word = str(records[7]["statement"]).split()[2].strip(".").lower()
    chosen = select.select_for_prompt(root, word, write=False)
    assert len(syncs) == 1  # the first read's sync; never a second or third whole-store scan
    assert records[7]["id"] in {r["id"] for r in chosen.selected}
    assert next(r for r in chosen.selected if r["id"] == records[7]["id"]) == records[7]


def test_read_records_takes_the_last_active_line_and_skips_tombstoned_and_mentions(tmp_path: Path) -> None:
    root, records = _root(tmp_path, 5)
    a, b, c = (str(records[i]["id"]) for i in range(3))
    newer = {**records[0], "statement": "The newer statement wins."}
    superseded = {**records[1], "status": "superseded"}
    mention = {**records[3], "statement": f"Mentions {a} in its text.", "supersedes": [a]}
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", [newer, superseded, mention], fsync=False)
    append_jsonl(root / "memory" / "tombstones.jsonl",
                 [{"deleted_record_id": c, "deleted_at": "2026-12-03T00:00:00.000Z", "reason": "test"}], fsync=False)
    got = select._read_records(root, [a, b, c])
    assert got[a]["statement"] == "The newer statement wins."
    assert got[b] == records[1]  # the superseded line after it is not active: the active one stays
    assert c not in got
    assert json.dumps(got, sort_keys=True) == json.dumps({k: got[k] for k in (a, b)}, sort_keys=True)
