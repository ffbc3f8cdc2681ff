"""A damaged, unwritable or full search index never takes search down, and says what is wrong.

- a ``search/recall.db`` or ``search/memory-fts.db`` of random bytes or cut short: ``doctor`` names
  the file, ``search`` and ``select`` answer from an in-memory index with a notice, ``reindex``
  moves the file aside (kept) and builds a new one;
- a failed write inside a transaction raises its own error ("database or disk is full"), never
  SQLite's "cannot rollback - no transaction is active";
- a read-only root (a real read-only mount): ``search`` and ``select`` work, reading a fresh
  index in place; a full disk (a real 1 MB tmpfs): ``search`` works and says the disk is full;
- ``doctor`` compares the contract table's schema, not its spelling (OMP writes ``fts5(\\n  id …``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from commonkeep.bench.search import synthetic_records
from commonkeep.recall.search import fts, index, notes, sync
from commonkeep.store.jsonl import append_jsonl

WORD_RECORD = 5


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COMMONKEEP_ROLE", "OMP_MEMORY_ROOT")}
    return subprocess.run([sys.executable, "-m", "commonkeep.cli", *args], capture_output=True, text=True, env=env, timeout=300)


def _fill(root: Path, n: int = 400) -> list[dict[str, Any]]:
    records, _ = synthetic_records(n)
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", records)
    return records


@pytest.fixture
def indexed(root: Path) -> tuple[Path, str, str]:
    """A root with 400 records and a fresh index; a query word and the id it must find."""
    records = _fill(root)
    sync.sync_root(root, full=True, embed=False)
    index.forget_readers()
    words = records[WORD_RECORD]["statement"].rstrip(".").split()
    query = " ".join(words[:4])
    return root, query, records[WORD_RECORD]["id"]


def _damage(path: Path, how: str) -> None:
    index.forget_readers()
    for side in ("-wal", "-shm"):
        Path(str(path) + side).unlink(missing_ok=True)
    if how == "random":
        path.write_bytes(os.urandom(64 * 1024))
    else:  # cut short: the header survives, most pages do not
        data = path.read_bytes()
        path.write_bytes(data[: max(4096, len(data) // 3)])


DAMAGE = [(name, how) for name in ("recall.db", "memory-fts.db") for how in ("random", "truncated")]


@pytest.mark.parametrize(("name", "how"), DAMAGE)
def test_a_damaged_database_is_named_by_doctor_searched_around_and_rebuilt_by_reindex(
    indexed: tuple[Path, str, str], name: str, how: str
) -> None:
    root, query, want = indexed
    path = root / "search" / name
    _damage(path, how)

    doc = _cli("doctor", "--root", str(root), "--json")
    assert doc.returncode == 1 and "Traceback" not in doc.stderr, doc.stderr
    found = [f for f in json.loads(doc.stdout)["findings"] if f["code"] == "index_damaged"]
    assert [f["file"] for f in found] == [f"search/{name}"] and "commonkeep reindex" in found[0]["message"]

    hit = _cli("search", "--root", str(root), "--json", query)
    assert hit.returncode == 0 and "Traceback" not in hit.stderr, hit.stderr
    assert want in [r["id"] for r in json.loads(hit.stdout)["results"]]
    if name == "recall.db":  # commonkeep's own search reads recall.db; memory-fts.db is OMP's table
        assert f"search/{name} is damaged" in hit.stderr and "in-memory index" in hit.stderr

    sel = _cli("select", "--root", str(root), "--dry-run", f"how do we handle {query}")
    assert sel.returncode == 0 and "Traceback" not in sel.stderr, sel.stderr

    fix = _cli("reindex", "--root", str(root), "--no-embed")
    assert fix.returncode == 0, fix.stderr
    assert f"moved the damaged search/{name}" in fix.stdout
    kept = list((root / "search").glob(f"{name}.damaged-*"))
    assert len([k for k in kept if not k.name.endswith(("-wal", "-shm"))]) == 1  # nothing deleted
    doc = _cli("doctor", "--root", str(root), "--json")
    assert not [f for f in json.loads(doc.stdout)["findings"] if f["code"].startswith("index_") and f["severity"] != "ok"
                and f["code"] != "index_missing"]
    again = _cli("search", "--root", str(root), "--json", query)
    assert again.returncode == 0 and "damaged" not in again.stderr and "in-memory" not in again.stderr
    assert want in [r["id"] for r in json.loads(again.stdout)["results"]]


def _full(conn: sqlite3.Connection) -> None:
    """Let the database grow by one page at most: the next big write fails with SQLITE_FULL."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages + 1}")


def test_a_full_database_reports_itself_not_the_rollback(tmp_path: Path, root: Path) -> None:
    records = _fill(root, 600)
    rows = index.index_rows(records)
    contract = {rid: r.row for rid, r in rows.items()}

    conn = fts.connect(tmp_path / "memory-fts.db")
    _full(conn)
    for run in (lambda: fts.rebuild(conn, contract), lambda: fts.sync(conn, contract)):
        with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
            run()
        assert not conn.in_transaction

    rconn = index.connect_recall(tmp_path / "recall.db")
    _full(rconn)
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        sync._sync_recall(rconn, rows, full=True)
    (root / "daily" / "2026-12-02.md").write_text("\n\n".join(r["statement"] for r in records) + "\n")
    with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
        notes.sync_notes(root, rconn, full=True)
    assert not rconn.in_transaction


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"needs mount (root with CAP_SYS_ADMIN): {done.stderr.strip()}")


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[Path]:
    point = tmp_path / "mnt"
    point.mkdir()
    yield point
    subprocess.run(["umount", "-l", str(point)], capture_output=True)


def test_a_read_only_root_is_searched_and_selected_from_its_fresh_index(
    indexed: tuple[Path, str, str], mounted: Path
) -> None:
    root, query, want = indexed
    _mount("--bind", str(root), str(mounted))
    _mount("-o", "remount,ro,bind", str(mounted))
    assert not os.access(mounted / "search", os.W_OK)
    hit = _cli("search", "--root", str(mounted), "--json", query)
    assert hit.returncode == 0 and "Traceback" not in hit.stderr, hit.stderr
    assert want in [r["id"] for r in json.loads(hit.stdout)["results"]]
    assert "in-memory" not in hit.stderr  # the fresh index on disk was read, read-only
    sel = _cli("select", "--root", str(mounted), "--dry-run", "--json", f"how do we handle {query}")
    assert sel.returncode == 0 and "Traceback" not in sel.stderr, sel.stderr
    assert want in json.loads(sel.stdout)["context"]


def test_a_read_only_root_with_a_stale_index_is_searched_in_memory(
    indexed: tuple[Path, str, str], mounted: Path
) -> None:
    root, query, want = indexed
    extra = dict(synthetic_records(1, seed=99)[0][0], id="mem_bench_late", statement="Zanzibar quokkas migrate at dusk.")
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", [extra])  # after the last sync: stale
    _mount("--bind", str(root), str(mounted))
    _mount("-o", "remount,ro,bind", str(mounted))
    hit = _cli("search", "--root", str(mounted), "--json", "zanzibar quokkas")
    assert hit.returncode == 0 and "Traceback" not in hit.stderr, hit.stderr
    assert [r["id"] for r in json.loads(hit.stdout)["results"]][:1] == ["mem_bench_late"]
    assert "cannot be written" in hit.stderr


def test_a_full_disk_names_the_cause_and_search_still_answers(root: Path, mounted: Path) -> None:
    _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mounted))
    small = mounted / "root"
    (small / "search").mkdir(parents=True)
    for folder in ("memory", "memory/projects", "inbox", "patches", "daily"):
        (small / folder).mkdir(parents=True, exist_ok=True)
    records, _ = synthetic_records(300)
    with open(small / "memory" / "L2.playbooks.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    filler = mounted / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:  # the rest of the disk
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    query = " ".join(records[7]["statement"].rstrip(".").split()[:4])
    hit = _cli("search", "--root", str(small), "--json", query)
    assert hit.returncode == 0 and "Traceback" not in hit.stderr, hit.stderr
    assert "cannot rollback" not in hit.stderr and "disk is full" in hit.stderr
    assert records[7]["id"] in [r["id"] for r in json.loads(hit.stdout)["results"]]


OMP_SQL = """CREATE VIRTUAL TABLE memory_fts USING fts5(
  id UNINDEXED,
  layer UNINDEXED,
  rule_type UNINDEXED,
  confidence UNINDEXED,
  statement,
  tags,
  tokenize = 'porter unicode61'
)"""


@pytest.mark.parametrize(("sql", "error"), [
    (OMP_SQL, False),
    (fts.SCHEMA.replace("memory_fts USING fts5(", "memory_fts USING fts5( "), False),
    (fts.SCHEMA.replace("statement, tags", "statement"), True),
    (fts.SCHEMA.replace("tokenize='porter unicode61'", "tokenize='unicode61'"), True),
    (fts.SCHEMA.replace("layer UNINDEXED", "layer"), True),
])
def test_doctor_compares_the_contract_tables_schema_not_its_spelling(root: Path, sql: str, error: bool) -> None:
    _fill(root, 20)
    db = root / "search" / "memory-fts.db"
    conn = sqlite3.connect(db)
    conn.execute(sql)
    conn.commit()
    conn.close()
    doc = _cli("doctor", "--root", str(root), "--json")
    found = [f for f in json.loads(doc.stdout)["findings"] if f["code"] == "index_schema"]
    assert bool(found) == error, found
