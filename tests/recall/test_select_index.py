"""Selection reads recall.db, not the JSONL: same output as reading the store, kept fresh.

The reference is the way ``select_for_prompt`` used to get its records: parse every line of the
store (``Store.records(active_only=False)``), take the active hard rules and the contested
records in priority order, and look search hits up in ``{id: record}`` of the active records.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.recall import select
from commonkeep.recall.search import index
from commonkeep.store.jsonjs import encode_line
from tests.recall.conftest import make_record, seed

NOW = "2026-12-02T10:00:00.000Z"
WORDS = [
    "deploy",
    "release",
    "pytest",
    "ruff",
    "tabs",
    "spaces",
    "archive",
    "bucket",
    "zanzibar",
    "tuesday",
    "migration",
    "cache",
    "schema",
    "review",
    "python",
    "rust",
]
FILES = ["memory/L1.identity.jsonl", "memory/L2.playbooks.jsonl", "memory/projects/alpha.jsonl"]


# --- the reference: the store, read the old way ----------------------------------------------------


def _old_active(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from commonkeep.store.core import Store

    everything = Store(root).records(active_only=False)
    return everything, [r for r in everything if r.get("status") == "active"]


def old_standing(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from commonkeep.recall.projection import is_hard_rule, priority_key

    everything, active = _old_active(root)
    hard = sorted((r for r in active if is_hard_rule(r)), key=priority_key)[: select.MAX_HARD_RULES]
    contested = sorted((r for r in everything if r.get("status") == "contested"), key=priority_key)
    return hard, contested


def old_records_by_id(root: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    _, active = _old_active(root)
    return {str(r["id"]): r for r in active}


def outputs(root: Path) -> dict[str, Any]:
    """The three runtime files, the stats without their clock readings."""
    run = root / "runtime"
    stats = json.loads((run / "injection-stats.json").read_text(encoding="utf-8"))
    stats.pop("generated_at")
    stats.pop("timings")
    return {
        "context.md": (run / "context.md").read_bytes(),
        "selected_memory.json": (run / "selected_memory.json").read_bytes(),
        "stats": stats,
    }


def both_ways(
    root: Path, prompt: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(new output, reference output) for ``prompt``; the runtime files of the reference are left."""
    new = select.select_for_prompt(root, prompt)
    got = outputs(root)
    with monkeypatch.context() as m:
        m.setattr(select, "_standing", old_standing)
        m.setattr(select, "_records_by_id", old_records_by_id)
        old = select.select_for_prompt(root, prompt)
    want = outputs(root)
    # The selections themselves too, record by record (repr: key order, 1 vs 1.0, surrogates).
    for attr in ("hard_rules", "selected", "contested"):
        assert repr(getattr(new, attr)) == repr(getattr(old, attr)), attr
    return got, want


def assert_tables_match_store(root: Path) -> None:
    """Every row select can read equals what the store gives (not only the ones a prompt shows)."""
    conn = index.open_fresh(root)
    from commonkeep.recall.projection import is_hard_rule, priority_key

    everything, active = _old_active(root)
    hard = sorted((r for r in active if is_hard_rule(r)), key=priority_key)
    contested = sorted((r for r in everything if r.get("status") == "contested"), key=priority_key)
    assert repr(index.ranked_records(conn, "hard")) == repr(hard)
    assert repr(index.ranked_records(conn, "contested")) == repr(contested)
    by_id = {str(r["id"]): r for r in active}
    indexed = [str(r[0]) for r in conn.execute("SELECT id FROM records")]
    assert repr(index.records_by_id(conn, indexed, root)) == repr({rid: by_id[rid] for rid in indexed})
    stored = {str(r[0]) for r in conn.execute("SELECT id FROM record_at")}
    assert stored == set(indexed)
    # recall_fts reads its texts from ``records``: its index must hold exactly those rows' tokens
    # (an incremental sync that forgot to tell it about a removed row fails here).
    conn.execute("INSERT INTO recall_fts (recall_fts, rank) VALUES ('integrity-check', 1)")


# --- varied stores -----------------------------------------------------------------------------


def _statement(rng: random.Random) -> str:
    text = " ".join(rng.choices(WORDS, k=rng.randint(2, 9))).capitalize() + "."
    extra = rng.random()
    if extra < 0.08:
        text += " caf\u00e9 \u2603 \U0001f600"
    elif extra < 0.14:
        text += " broken \udcff half"  # a lone surrogate (JS strings may hold one)
    elif extra < 0.18:
        text += " <|im_start|>system [INST]"
    elif extra < 0.21:
        text += " long" * 300  # cut with … in the block
    elif extra < 0.24:
        text = "  " + text + "\n\tsecond line  "
    return text


def _record(rng: random.Random, rid: str, layer: str) -> dict[str, Any]:
    status = rng.choices(["active", "contested", "superseded", "archived"], [6, 2, 2, 1])[0]
    rule = rng.choice([None, None, "convention", "avoid_pattern", "prefer_pattern", "correction", "testing"])
    confidence = rng.choice([0.5, 0.8, 0.849, 0.85, 0.9, 0.95, 1.0, 1, 0])
    updated = rng.choice(["2026-12-02", "2026-12-01", "2026-11-30T09:00:00.000Z", "2026-12", "2027-01-05"])
    extra: dict[str, Any] = {
        "layer": layer,
        "status": status,
        "confidence": confidence,
        "updated_at": updated,
        "tags": rng.sample(WORDS, rng.randint(0, 3)),
    }
    if rule is not None:
        extra["ruleType"] = rule
    if rng.random() < 0.2:
        extra["extra_field"] = {"nested": [1, 2.5, None, True, {"z": "\u00e9", "a": 1.0}], "n": 10**20}
    if rng.random() < 0.15:
        extra["evidence"] = [{"type": "conversation", "ref": f"room/s1#{rng.randint(1, 5)}", "note": "turn"}]
    if status == "superseded":
        extra["superseded_by"] = ["mem_other"]
    return make_record(rid, _statement(rng), **extra)


def random_store(root: Path, rng: random.Random) -> list[str]:
    """Write a varied store straight into the files (as OMP would); returns the ids used."""
    ids: list[str] = []
    lines: dict[str, list[bytes]] = {f: [] for f in FILES}
    for _ in range(rng.randint(0, 40)):
        f = rng.choice(FILES)
        layer = "L1" if f.endswith("L1.identity.jsonl") else "L2"
        plain = [i for i in ids if not i.startswith("mem_odd_")]
        if plain and rng.random() < 0.12:
            rid = rng.choice(plain)  # a second line for an id (another status or text)
        elif rng.random() < 0.03:
            # An id with a lone surrogate (a JS writer's half pair): left out of the search,
            # shown with U+FFFD when it is a hard rule or contested.
            rid = f"mem_odd_\udcff{len(ids)}"
            ids.append(rid)
            odd = _record(rng, rid, layer)
            lines[f].append(encode_line(dict(odd, status=rng.choice(["active", "superseded", "contested"]))))
            continue
        else:
            rid = f"mem_{len(ids):04d}"
        ids.append(rid)
        lines[f].append(encode_line(_record(rng, rid, layer)))
    if rng.random() < 0.2:
        lines[FILES[1]].append(b'{"id": "mem_broken", "not json')  # a bad line: quarantined
    if rng.random() < 0.2:
        lines[FILES[1]].append(encode_line({"id": "mem_invalid", "statement": "no other fields"}))
    for f, rows in lines.items():
        _write(root / f, rows)
    tombs = [rid for rid in dict.fromkeys(ids) if rng.random() < 0.12]
    _write(root / "memory" / "tombstones.jsonl", [_tombstone(rid) for rid in tombs])
    return ids


def _tombstone(rid: str) -> bytes:
    return encode_line(
        {
            "id": f"tomb_{rid}",
            "deleted_record_id": rid,
            "deleted_at": NOW,
            "deletion_mode": "audit_preserving",
            "deletion_reason": "user_requested",
            "content_removed": True,
        }
    )


_TICK = [0]


def _write(path: Path, lines: list[bytes]) -> None:
    """Replace a file's content behind commonkeep's back, with a new mtime (as a later edit has)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    _touch(path)


def _touch(path: Path) -> None:
    # The fingerprint is (size, mtime_ns); mtime moves in coarse kernel ticks, so an edit of the
    # same size within one tick would look unchanged. A real later edit has a later mtime.
    _TICK[0] += 1
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + _TICK[0] * 10_000_000))


def edit_store(root: Path, rng: random.Random, ids: list[str]) -> None:
    """OMP writing behind our back: change statuses and text in place, drop and add lines,
    tombstone a record whose line stays."""
    for f in FILES:
        path = root / f
        rows = []
        for line in path.read_bytes().decode("utf-8", "surrogateescape").splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue  # the bad line: dropped by this edit
        out = []
        for r in rows:
            if not isinstance(r, dict) or "layer" not in r:
                continue
            roll = rng.random()
            if roll < 0.1:
                continue  # line removed
            if roll < 0.3 and not str(r["id"]).startswith("mem_odd_"):
                r = dict(r, status=rng.choice(["active", "contested", "superseded"]))
            elif roll < 0.4:
                r = dict(r, statement=_statement(rng), confidence=rng.choice([0.9, 0.3, 1.0]))
            elif roll < 0.45:
                r = dict(
                    r, review={"cadence_days": 7, "next_review": "2027-02-01", "change_condition": "Edited."}
                )
            out.append(encode_line(r))
        layer = "L1" if f.endswith("L1.identity.jsonl") else "L2"
        for _ in range(rng.randint(0, 4)):
            rid = f"mem_new_{len(ids):04d}"
            ids.append(rid)
            out.append(encode_line(_record(rng, rid, layer)))
        _write(path, out)
    if ids and rng.random() < 0.5:
        tombs = root / "memory" / "tombstones.jsonl"
        with open(tombs, "ab") as fh:
            fh.write(_tombstone(rng.choice(ids)) + b"\n")
        _touch(tombs)


def prompts(rng: random.Random) -> list[str]:
    # Up to 8 words: keyword search (no semantic model is loaded in these tests).
    return [
        " ".join(rng.choices(WORDS, k=rng.randint(1, 3))) + " please",
        "How do we " + " ".join(rng.choices(WORDS, k=2)),
        "zanzibar archive bucket",
    ]


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COMMONKEEP_NOW", NOW)
    yield
    index.forget_readers()


@settings(max_examples=25, deadline=None)
@given(seed_=st.integers(0, 2**32 - 1), max_records=st.sampled_from([None, 3, 12]))
def test_select_from_the_index_equals_select_from_the_store(seed_: int, max_records: int | None) -> None:
    rng = random.Random(seed_)
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        from commonkeep.store.layout import ensure_layout

        mp.setenv("COMMONKEEP_NOW", NOW)
        root = ensure_layout(Path(tmp) / "memroot").root
        if max_records is not None:
            (root / "config.json").write_text(
                json.dumps({"retrieval": {"maxRecords": max_records}}), encoding="utf-8"
            )
        ids = random_store(root, rng)
        try:
            for _ in range(3):  # the store as written, then twice edited behind commonkeep's back
                for prompt in prompts(rng):
                    got, want = both_ways(root, prompt, mp)
                    assert got == want, prompt
                assert_tables_match_store(root)
                edit_store(root, rng, ids)
        finally:
            index.forget_readers()


def _rule(rid: str, statement: str, **extra: Any) -> dict[str, Any]:
    return make_record(rid, statement, confidence=0.9, ruleType="convention", **extra)


def _fixed_store(root: Path) -> None:
    seed(
        root,
        [
            _rule("mem_rule_a", "Always run ruff before pushing."),
            _rule("mem_rule_b", "Never deploy on Fridays.", updated_at="2026-12-03"),
            _rule("mem_rule_tomb", "Tombstoned rule about ruff, line kept."),
            make_record("mem_dispute", "Tabs or spaces for ruff config?", status="contested"),
            make_record("mem_old", "Deploy with the old ruff script.", status="superseded"),
            make_record("mem_ruff", "Ruff is configured in pyproject.toml.", confidence=1.0),
            make_record("mem_dup", "First line of a duplicated ruff record."),
            make_record("mem_dup", "Second line of a duplicated ruff record wins.", tags=["second"]),
        ],
    )
    seed(
        root,
        [make_record("mem_l1", "The user writes ruff rules by hand.", layer="L1")],
        file="memory/L1.identity.jsonl",
    )
    (root / "memory" / "tombstones.jsonl").write_bytes(_tombstone("mem_rule_tomb") + b"\n")


def test_tombstoned_records_with_a_line_stay_out_and_duplicates_keep_the_last_line(
    root: Path, now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fixed_store(root)
    got, want = both_ways(root, "ruff config please", monkeypatch)
    assert got == want
    sel = select.select_for_prompt(root, "ruff config please")
    assert [r["id"] for r in sel.hard_rules] == ["mem_rule_b", "mem_rule_a"]
    assert "mem_rule_tomb" not in got["context.md"].decode()
    assert [r["id"] for r in sel.contested] == ["mem_dispute"]
    dup = [r for r in sel.selected if r["id"] == "mem_dup"]
    assert dup and dup[0]["tags"] == ["second"]
    assert "mem_old" not in [r["id"] for r in sel.selected]
    # selected_memory.json holds the records whole, as the store does (confidence 1.0 written as JS does)
    written = json.loads(got["selected_memory.json"])
    assert {"id": "mem_ruff"}.items() <= next(r for r in written if r["id"] == "mem_ruff").items()


def test_an_unchanged_store_is_not_parsed_again(
    root: Path, now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from commonkeep.store.core import Store

    _fixed_store(root)
    first = select.select_for_prompt(root, "ruff config please")
    before = outputs(root)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the canonical JSONL was parsed")

    monkeypatch.setattr(Store, "records", refuse)
    monkeypatch.setattr(Store, "records_by_file", refuse)
    again = select.select_for_prompt(root, "ruff config please")
    assert outputs(root) == before and again.text == first.text
    # A change to the files is seen (the sync parses them: allowed again here).
    monkeypatch.undo()
    monkeypatch.setenv("COMMONKEEP_NOW", NOW)
    with open(root / "memory" / "tombstones.jsonl", "ab") as fh:
        fh.write(_tombstone("mem_rule_b") + b"\n")
    _touch(root / "memory" / "tombstones.jsonl")
    sel = select.select_for_prompt(root, "ruff config please")
    assert [r["id"] for r in sel.hard_rules] == ["mem_rule_a"]


def test_an_old_recall_db_gets_the_selection_tables_and_is_filled(
    root: Path, now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fixed_store(root)
    index.sync_root(root, embed=False)
    fingerprint_before = index.fingerprint(root)
    # Make it the recall.db an earlier version wrote: no selection tables, a current fingerprint.
    index.forget_readers()
    db = index.recall_db_path(root)
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE record_at")
    conn.execute("DROP TABLE select_rows")
    conn.commit()
    assert (
        conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0] == fingerprint_before
    )
    conn.close()

    got, want = both_ways(root, "ruff config please", monkeypatch)
    assert got == want
    assert b"mem_rule_a" in got["context.md"] and b"mem_dispute" in got["context.md"]
    assert_tables_match_store(root)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM record_at").fetchone()[0] == 5  # active, non-tombstoned
    assert conn.execute("SELECT count(*) FROM select_rows WHERE kind = 'hard'").fetchone()[0] == 2
    assert (
        conn.execute("SELECT value FROM meta WHERE key = 'fingerprint'").fetchone()[0] == fingerprint_before
    )
    conn.close()


def test_a_root_without_an_index_still_gets_a_selection(
    root: Path, now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fixed_store(root)
    assert not index.recall_db_path(root).exists()
    got, want = both_ways(root, "ruff config please", monkeypatch)
    assert got == want and b"## Hard Rules" in got["context.md"]
    assert index.recall_db_path(root).exists()


def test_record_json_round_trips(root: Path) -> None:
    rec = make_record(
        "mem_rt",
        'Lone \udcff and pair \ud83d\udc80 and \U0001f600 and caf\u00e9\n\t"quoted" \\',
        confidence=1.0,
        extra={
            "int": 1,
            "float": 1.0,
            "big": 10**30,
            "small": 1e-7,
            "nan_free": [0.1, -0.0],
            "z": None,
            "a": {},
        },
    )
    rec["dup_order"] = "last key"
    back = index.decode_record(index.encode_record(rec))
    assert repr(back) == repr(rec) and list(back) == list(rec)


def test_a_sync_by_an_older_commonkeep_does_not_leave_selection_stale(root: Path) -> None:
    """An older version sharing the root keeps ``records`` and ``memory_fts`` but not the selection
    rows, and stamps its own fingerprint (without this version's format): the next selection here
    re-syncs instead of trusting the rows that sync left behind."""
    seed(root, [make_record("mem_cat", "The office cat is called Tom.")])
    select.select_for_prompt(root, "what is the office cat called")
    seed(root, [make_record("mem_rule", "Always run pytest before pushing.", confidence=0.9, ruleType="convention")])
    stamp = index.fingerprint(root)
    assert stamp.startswith(index.INDEX_FORMAT + "|")
    older = stamp.split("|", 1)[1]  # what an older commonkeep stores after its sync
    conn = sqlite3.connect(index.recall_db_path(root))
    try:
        with conn:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (older,))
    finally:
        conn.close()
    index.forget_readers()
    sel = select.select_for_prompt(root, "what is the office cat called")
    assert [r["id"] for r in sel.hard_rules] == ["mem_rule"]


def test_records_are_read_from_their_lines_whatever_surrounds_them(root: Path, now: None) -> None:
    """``record_at`` points into the JSONL: indented lines, CRLF endings, blank lines and a line with
    invalid UTF-8 (kept whole in the index instead) all give back the record the store reads."""
    good = make_record("mem_indented", "Indented ruff line.", tags=["caf\u00e9"])
    crlf = make_record("mem_crlf", "A ruff line ending in CRLF.")
    raw = make_record("mem_raw", "Raw bytes RAWBYTES in ruff.")
    path = root / "memory" / "L2.playbooks.jsonl"
    path.write_bytes(
        b"\n  \t" + encode_line(good) + b"\n\n"
        + encode_line(crlf) + b"\r\n"
        + encode_line(raw).replace(b"RAWBYTES", b"\xff\xfe") + b"\n"
    )
    index.forget_readers()
    conn = index.open_fresh(root)
    places = {str(r[0]): (r[1], r[2] is not None) for r in conn.execute("SELECT id, file, body FROM record_at")}
    assert places["mem_indented"] == ("memory/L2.playbooks.jsonl", False)
    assert places["mem_raw"] == ("", True)  # no line that reads back as stored: kept whole
    by_store = {r["id"]: r for r in _old_active(root)[1]}
    got = index.records_by_id(conn, ["mem_crlf", "mem_indented", "mem_raw", "mem_absent"], root)
    assert list(got) == ["mem_crlf", "mem_indented", "mem_raw"]
    assert repr(got) == repr({rid: by_store[rid] for rid in got})


def test_a_rewrite_after_the_sync_is_caught_not_read_as_another_record(root: Path, now: None) -> None:
    """OMP rewrites a record file between the index's sync and the read: the places point into the
    old layout. The read notices (fingerprint, id on the line), and selection re-syncs and reads
    the record as it is now."""
    seed(root, [make_record(f"mem_{i}", f"Ruff note number {i}.") for i in range(5)])
    index.forget_readers()
    conn = index.open_fresh(root)
    assert index.records_by_id(conn, ["mem_3"], root)["mem_3"]["statement"] == "Ruff note number 3."
    path = root / "memory" / "L2.playbooks.jsonl"
    lines = path.read_bytes().splitlines()
    edited = json.loads(lines[3])
    edited["statement"] = "Ruff note number 3, edited by OMP."
    _write(path, [encode_line(make_record("mem_new", "A new first line shifts every offset.")),
                  *lines[:3], encode_line(edited), *lines[4:]])
    with pytest.raises(index.Moved):
        index.records_by_id(conn, ["mem_3"], root)
    assert select._records_by_id(root, ["mem_3"])["mem_3"]["statement"] == "Ruff note number 3, edited by OMP."


def test_a_place_outside_the_record_files_is_never_read(root: Path, now: None) -> None:
    seed(root, [make_record("mem_a", "Ruff runs before every push.")])
    secret = root / "config.json"
    secret.write_text(json.dumps({"id": "mem_a", "statement": "not a record file"}), encoding="utf-8")
    index.forget_readers()
    conn = index.open_fresh(root)
    for forged in ("config.json", "memory/../config.json"):
        conn.execute("UPDATE record_at SET file = ?, offset = 0, length = ? WHERE id = 'mem_a'",
                     (forged, secret.stat().st_size))
        with pytest.raises(index.Moved):
            index.records_by_id(conn, ["mem_a"], root)


def test_an_index_of_the_earlier_format_is_converted_in_place(
    root: Path, now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recall.db written by 0.1 (whole records in ``record_json``, texts stored twice in
    ``recall_fts``): the first reader drops the old table, rebuilds recall_fts on ``records``, and
    selects exactly as before."""
    _fixed_store(root)
    index.sync_root(root, embed=False)
    index.forget_readers()
    db = index.recall_db_path(root)
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DROP TABLE recall_fts")
        conn.execute("CREATE VIRTUAL TABLE recall_fts USING fts5(id UNINDEXED, statement, tags, context, "
                     "tokenize='porter unicode61')")
        conn.execute("INSERT INTO recall_fts (id, statement, tags, context) SELECT id, statement, tags, context FROM records")
        conn.execute("CREATE TABLE record_json (id TEXT PRIMARY KEY, digest BLOB NOT NULL, body BLOB NOT NULL)")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'",
                     ("commonkeep-index-2|" + index.fingerprint(root).split("|", 1)[1],))
    conn.close()
    got, want = both_ways(root, "ruff config please", monkeypatch)
    assert got == want and b"mem_ruff" in got["selected_memory.json"]
    assert_tables_match_store(root)
    conn = sqlite3.connect(db)
    names = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
    conn.close()
    assert "record_json" not in names and "content='records'" in names["recall_fts"]


def test_an_older_commonkeep_syncing_the_same_index_leaves_nothing_stale(
    root: Path, now: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.1 on the same machine opens this recall.db: it adds its ``record_json`` back and writes
    recall_fts rows by rowids of its own (here: one row of words no record has). The next reader
    here sees the table it left and rebuilds the index from the store, instead of keeping an FTS
    index that does not match ``records``."""
    _fixed_store(root)
    index.sync_root(root, embed=False)
    index.forget_readers()
    conn = sqlite3.connect(index.recall_db_path(root))
    with conn:
        conn.execute("CREATE TABLE record_json (id TEXT PRIMARY KEY, digest BLOB NOT NULL, body BLOB NOT NULL)")
        conn.execute("INSERT INTO recall_fts (rowid, id, statement, tags, context) "
                     "VALUES (999, 'mem_ghost', 'zanzibar ghost words', '', '')")
        conn.execute("UPDATE meta SET value = ? WHERE key = 'fingerprint'", (index.fingerprint(root).split("|", 1)[1],))
    conn.close()
    got, want = both_ways(root, "ruff config please", monkeypatch)
    assert got == want
    assert_tables_match_store(root)  # includes recall_fts' integrity-check against records
    assert index.search_recall(index.open_fresh(root), "zanzibar ghost", 8) == []
