"""``render_splice``: the pages spliced after an apply are byte for byte what ``render_all`` writes,
and when the index cannot vouch for the pages nothing is written and ``None`` says so."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from commonkeep.patches.curate import route
from commonkeep.store import page_writer, projection_cache, render_splice
from commonkeep.store.core import Store
from commonkeep.store.jsonjs import dumps_line
from commonkeep.store.jsonl import append_jsonl
from commonkeep.store.layout import Layout, ensure_layout
from commonkeep.store.line_edit import RecordChanges
from commonkeep.store.render import render_all
from commonkeep.store.render_splice import render_changed

Row = dict[str, Any]
SECRET = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"  # a GitHub token shape: redacted on the page
PROJECTS = ["Alpha", "Foo Bar", "foo-bar", "beta", "Project", ""]  # "Foo Bar" and "foo-bar" share a slug, "" has no page
STATEMENTS = [
    "Run the tests before committing.",
    "A statement that looks like a block:\n\n### mem_other\n**Status**: active",
    "A lone surrogate \ud800 in it.",
    f"The deploy token is {SECRET} here.",
    "Café, naïve, ✓ and 日本語.",
    "Ends with two newlines\n\n",
]


def record(rid: str, statement: str = "Run the tests.", **extra: Any) -> Row:
    rec: Row = {
        "id": rid, "layer": "L2", "scope": {"type": "global"}, "tags": ["test"], "statement": statement,
        "evidence": [{"type": "artifact", "ref": "daily/2026-12-02.md", "note": "Captured evidence reference"}],
        "confidence": 0.8, "stability": "semi-stable", "created_at": "2026-12-02", "updated_at": "2026-12-02",
        "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "When it changes."},
        "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None,
    }
    rec.update(extra)
    return rec


def hand_append(path: Path, *rows: Row) -> None:
    """Lines appended as another program (OMP) appends them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", errors="surrogatepass") as fh:
        for r in rows:
            fh.write(dumps_line(r) + "\n")


def lines(path: Path) -> list[Row]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8", errors="surrogateescape").splitlines() if x.strip()]


def tombstoned(lay: Layout) -> set[str]:
    return {str(t.get("deleted_record_id")) for t in lines(lay.tombstones)}


class Apply:
    """One apply's changes, as ``patches.ops._State`` makes them: a record put where its scope routes
    it (its line in another file dropped), a record dropped from the file it is first found in."""

    def __init__(self, lay: Layout) -> None:
        self.lay = lay
        self.changed: dict[Path, dict[str, Row | None]] = {}
        self.tombs: list[str] = []
        dead = tombstoned(lay)
        self.where: dict[str, Path] = {}
        self.recs: dict[str, Row] = {}
        for path in lay.canonical_files():
            for r in lines(path):
                if r["id"] not in dead:
                    self.where.setdefault(r["id"], path)
                    self.recs.setdefault(r["id"], r)

    def put(self, rec: Row) -> None:
        rid = rec["id"]
        path = self.lay.root / route(rec)
        old = self.where.get(rid)
        if old is not None and old != path:
            self.changed.setdefault(old, {})[rid] = None
        self.where[rid] = path
        self.recs[rid] = rec
        self.changed.setdefault(path, {})[rid] = rec

    def drop(self, rid: str) -> None:
        path = self.where.pop(rid, None)
        self.recs.pop(rid, None)
        if path is not None:
            self.changed.setdefault(path, {})[rid] = None

    def write(self) -> dict[Path, tuple[int, int, int] | None]:
        """Write the changes as the apply journal does; the stamps the apply read them with."""
        before = render_splice.stamps(self.lay)
        if self.tombs:
            append_jsonl(self.lay.tombstones, [{"id": f"tomb_{t}", "deleted_record_id": t, "deleted_at": "2026-12-05",
                                                "deletion_reason": "other", "deletion_mode": "audit_preserving"}
                                               for t in self.tombs])
        store = Store(self.lay.root)
        for path, change in self.changed.items():
            store.rewrite_records(path, RecordChanges(change))
        return before


def pages(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root / "rendered"):
        for n in names:
            p = Path(dirpath) / n
            out[str(p.relative_to(root))] = p.read_bytes()
    return out


def logical(ix: render_splice.Index | None) -> Any:
    """The index without its stamps (a copy of the root has other inodes)."""
    if ix is None:
        return None
    names = [None, *ix.names]
    return ([(r, c) for r, _, c in ix.files], [r for r, _ in ix.pages],
            list(zip(ix.ids, ix.kind, [names[x] for x in ix.proj], ix.blen, ix.llen, strict=True)))


def render_step(lay: Layout, before: dict[Path, tuple[int, int, int] | None], changed: dict[Path, dict[str, Row | None]],
                twin: Path) -> bool:
    """``render_changed`` (``render_all`` when it answers ``None``, as the caller does) leaves the
    pages, the list of pages written and the index ``render_all`` leaves on a copy of the root;
    whether it spliced."""
    shutil.copytree(lay.root, twin, symlinks=True)
    want = render_all(Layout(twin))
    got = render_changed(lay, before, changed)
    spliced = got is not None
    if got is None:
        got = render_all(lay)
    assert [str(p.relative_to(lay.root)) for p in got] == [str(p.relative_to(twin)) for p in want]
    assert pages(lay.root) == pages(twin)
    if spliced:
        assert render_splice.load(lay) is not None
    mine, theirs = render_splice.load(lay), render_splice.load(Layout(twin))
    if theirs is not None:
        assert logical(mine) == logical(theirs)
    shutil.rmtree(twin)
    return spliced


def _new_record(rng: random.Random, rid: str) -> Row:
    layer = rng.choice(["L1", "L2", "L2", "L2", "L3"])
    kind = rng.random()
    if kind < 0.45:
        scope: Row = {"type": "project", "project": rng.choice(PROJECTS)}
    elif kind < 0.5:
        scope = {"type": "global", "project": "Alpha"}  # a project name outside project scope: no page
    else:
        scope = {"type": "global"}
    statement = rng.choice(STATEMENTS) if rng.random() < 0.3 else f"Statement of {rid}."
    return record(rid, statement, layer=layer, scope=scope, confidence=rng.choice([0.5, 0.75, 0.9, 1]),
                  tags=rng.sample(["a", "b", "c", "d"], rng.randint(0, 2)))


def _changed_record(rng: random.Random, old: Row) -> Row:
    rec = json.loads(json.dumps(old))
    what = rng.randrange(9)
    if what == 0:
        rec["confidence"] = rng.choice([0.33, 0.5, 0.775, 0.9])
    elif what == 1:
        rec["statement"] = rng.choice(STATEMENTS)
    elif what == 2:
        rec["tags"] = rng.sample(["x", "y", "z"], rng.randint(0, 3))
    elif what == 3:
        rec["status"] = rng.choice(["deprecated", "deleted", "active", "contested"])
    elif what == 4:
        rec["scope"] = {"type": "project", "project": rng.choice(PROJECTS)}
    elif what == 5:
        rec["scope"] = {"type": "global"}
    elif what == 6:
        rec["layer"] = {"L1": "L2", "L2": "L1", "L3": "L2"}[rec["layer"]]
    elif what == 7:
        rec["updated_at"] = "2026-12-06"  # not shown: the page keeps its bytes
    else:
        rec["superseded_by"] = ["mem_x"]
    return rec


def _step(rng: random.Random, lay: Layout, counter: list[int]) -> Apply | None:
    """A random apply (or, now and then, a hand edit: ``None``)."""
    ap = Apply(lay)
    ids = list(ap.recs)
    if rng.random() < 0.1:  # another program appends: a duplicate of a record's line, or a new record
        if ids and rng.random() < 0.6:
            rid = rng.choice(ids)
            target = rng.choice(lay.canonical_files())
            hand_append(target, ap.recs[rid])
        else:
            counter[0] += 1
            rec = _new_record(rng, f"mem_{counter[0]:04d}")
            hand_append(lay.root / route(rec), rec)
        return None
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        ids = list(ap.recs)
        r = rng.random()
        if r < 0.25 or not ids:
            counter[0] += 1
            ap.put(_new_record(rng, f"mem_{counter[0]:04d}"))
        elif r < 0.7:
            rid = rng.choice(ids)
            ap.put(_changed_record(rng, ap.recs[rid]))
        elif r < 0.8:
            ap.drop(rng.choice(ids))
        elif r < 0.9:  # a deletion: the line kept as "deleted", its id tombstoned
            rid = rng.choice(ids)
            ap.put({**ap.recs[rid], "status": "deleted"})
            ap.tombs.append(rid)
        else:  # a tombstone only (a deletion cut short before its file was rewritten)
            ap.tombs.append(rng.choice(ids))
    return ap


def _seed_root(rng: random.Random, lay: Layout, counter: list[int]) -> None:
    """A root with some records, a duplicate id in a file and a raw secret, written by hand."""
    for _ in range(12):
        counter[0] += 1
        rec = _new_record(rng, f"mem_{counter[0]:04d}")
        if "\ud800" in rec["statement"]:
            rec["statement"] = "No surrogate at the start."  # so the first render can leave an index
        hand_append(lay.root / route(rec), rec)
    hand_append(lay.l2, record("mem_dup", "First line of a duplicate."), record("mem_dup", "Second line, dropped by a change."))
    hand_append(lay.l2, record("mem_secret", f"Holds {SECRET} in the file."))


@pytest.mark.parametrize("seed", range(12))
def test_spliced_pages_are_the_pages_render_all_writes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lay = ensure_layout(tmp_path / "root")
    counter = [0]
    _seed_root(rng, lay, counter)
    render_all(lay)
    assert render_splice.load(lay) is not None
    spliced = 0
    steps = 30
    for n in range(steps):
        ap = _step(rng, lay, counter)
        if ap is None:  # a hand edit: the next apply finds the files changed since the render
            continue
        before = ap.write()
        spliced += render_step(lay, before, ap.changed, tmp_path / f"twin{n}")
    assert spliced >= steps // 3, spliced


def test_a_one_record_change_rewrites_only_its_block(tmp_path: Path) -> None:
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(50)))
    hand_append(lay.projects_dir / "alpha.jsonl", record("mem_p", "In Alpha.", scope={"type": "project", "project": "Alpha"}))
    render_all(lay)
    project_page = (lay.rendered_projects_dir / "alpha.md").stat()
    ap = Apply(lay)
    ap.put({**ap.recs["mem_7"], "confidence": 0.25})
    before = ap.write()
    old = lay.rendered_memory.read_bytes()
    assert render_changed(lay, before, ap.changed) == [lay.rendered_memory]
    new = lay.rendered_memory.read_bytes()
    assert new == old.replace(b"### mem_7\n**Status**: active\n**Confidence**: 0.80",
                              b"### mem_7\n**Status**: active\n**Confidence**: 0.25")
    assert (lay.rendered_projects_dir / "alpha.md").stat().st_mtime_ns == project_page.st_mtime_ns
    ap = Apply(lay)  # a change the page does not show: nothing written, the index follows the file
    ap.put({**ap.recs["mem_8"], "updated_at": "2026-12-07"})
    before = ap.write()
    assert render_changed(lay, before, ap.changed) == []
    assert lay.rendered_memory.read_bytes() == new
    ap = Apply(lay)
    ap.put({**ap.recs["mem_9"], "confidence": 0.5})
    before = ap.write()
    assert render_changed(lay, before, ap.changed) == [lay.rendered_memory]


def test_a_project_whose_last_record_goes_keeps_its_page(tmp_path: Path) -> None:
    """As ``render_all``: a page is never deleted, and a slug's page follows the name that wins it."""
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, record("mem_g", "Global."))
    hand_append(lay.projects_dir / "foo-bar.jsonl", record("mem_a", "Foo Bar's.", scope={"type": "project", "project": "Foo Bar"}),
                record("mem_b", "foo-bar's.", scope={"type": "project", "project": "foo-bar"}))
    render_all(lay)
    page = lay.rendered_projects_dir / "foo-bar.md"
    assert b"foo-bar's." in page.read_bytes() and b"Foo Bar's." not in page.read_bytes()
    for rid in ("mem_b", "mem_a"):
        ap = Apply(lay)
        ap.drop(rid)
        before = ap.write()
        assert render_step(lay, before, ap.changed, tmp_path / f"twin-{rid}")
    assert page.exists() and b"Foo Bar's." in page.read_bytes()  # mem_a's page, left as it was


@pytest.mark.parametrize("case", ["duplicate", "secret", "surrogate", "block-like", "new project", "L1 to L2", "to a project",
                                  "deleted", "tombstone only", "appended twice"])
def test_each_kind_of_change_is_spliced(tmp_path: Path, case: str) -> None:
    """Each change the random test makes, alone: spliced (not left to ``render_all``), and right."""
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l1, record("mem_i", "Identity.", layer="L1"))
    hand_append(lay.l2, record("mem_dup", "First line."), record("mem_a", "A."), record("mem_dup", "Second line."),
                record("mem_b", "B."))
    hand_append(lay.projects_dir / "alpha.jsonl", record("mem_p", "In Alpha.", scope={"type": "project", "project": "Alpha"}))
    render_all(lay)
    ap = Apply(lay)
    if case == "duplicate":  # the first line takes the change, the later one is dropped
        ap.put({**ap.recs["mem_dup"], "statement": "Changed."})
    elif case == "secret":
        ap.put({**ap.recs["mem_a"], "statement": f"Now holds {SECRET}."})
    elif case == "surrogate":
        ap.put({**ap.recs["mem_a"], "statement": "A lone \udc80 surrogate."})
    elif case == "block-like":
        ap.put({**ap.recs["mem_a"], "statement": "x\n\n### mem_b\n**Status**: active"})
    elif case == "new project":
        ap.put(record("mem_n", "New project.", scope={"type": "project", "project": "Zeta Zeta"}))
    elif case == "L1 to L2":
        ap.put({**ap.recs["mem_i"], "layer": "L2"})
    elif case == "to a project":
        ap.put({**ap.recs["mem_a"], "scope": {"type": "project", "project": "alpha"}})  # Alpha's slug: alpha wins the page
    elif case == "deleted":
        ap.put({**ap.recs["mem_p"], "status": "deleted"})
        ap.tombs.append("mem_p")
    elif case == "tombstone only":
        ap.tombs.append("mem_dup")
    else:
        ap.put(record("mem_n1", "First new."))
        ap.put(record("mem_n2", "Second new.", layer="L1"))
    before = ap.write()
    assert render_step(lay, before, ap.changed, tmp_path / "twin")
    page = lay.rendered_memory.read_bytes()
    assert SECRET.encode() not in page and b"\xed" not in page
    if case == "duplicate":
        assert page.count(b"### mem_dup\n") == 1 and b"Changed." in page and b"Second line." not in page


def test_ids_are_looked_up_whole_in_the_index(tmp_path: Path) -> None:
    """The splice finds a changed record's line by its id in the index's bytes: never the end of a
    longer id, any UTF-8, each file's lines where that file's ids are; the index left is the one
    ``render_all`` leaves."""
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l1, record("mem_b", "Identity.", layer="L1"))
    hand_append(lay.l2, record("x_mem_c", "Longer id."), record("mem_é", "Accented."), record("mem_b2", "Prefix."),
                record("mem_c", "C."))
    hand_append(lay.projects_dir / "alpha.jsonl", record("alpha_mem_c", "In Alpha.", scope={"type": "project", "project": "Alpha"}))
    render_all(lay)
    assert render_splice.load(lay) is not None
    for k, change in enumerate((("mem_b", "Changed identity."), ("mem_c", "Changed C."), ("mem_é", "Changed é."))):
        ap = Apply(lay)
        ap.put({**ap.recs[change[0]], "statement": change[1]})
        ap.put(record(f"mem_new_{k}", "Added."))
        before = ap.write()
        assert render_step(lay, before, ap.changed, tmp_path / f"twin-{k}")
        ix = render_splice.load(lay)
        assert ix is not None and ix.idblob == "".join(f"{x}\n" for x in ix.ids).encode()
    page = lay.rendered_memory.read_bytes()
    assert b"Longer id." in page and b"Prefix." in page and b"Changed \xc3\xa9." in page


def test_an_apply_that_renders_everything_leaves_an_index_for_the_next(tmp_path: Path) -> None:
    """``render_all`` with the records an apply computed (``records_after``) checks them against
    the files, so the next apply can splice."""
    from commonkeep.patches.patch import apply_patch, write_patch

    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(5)))
    render_all(lay)
    (lay.runtime_dir / render_splice.NAME).unlink()
    write_patch(lay, {"patch_id": "patch_202612050000_conf", "created_at": "2026-12-05T00:00:00.000Z", "generated_by": "manual",
                      "mode": "supervised", "summary": "one op",
                      "ops": [{"op_id": "op_1", "op": "update", "target_id": "mem_2", "updates": {"confidence": 0.42},
                               "risk": "low", "default_selected": True}],
                      "status": "proposed", "applied_at": None, "applied_ops": [], "skipped_ops": []})
    result = apply_patch(lay.root, "patch_202612050000_conf", role="librarian", fire_hooks=False)
    assert result.rendered == [lay.rendered_memory]
    assert b"**Confidence**: 0.42" in lay.rendered_memory.read_bytes()
    before, changed = _one_change(lay, "mem_3")
    assert render_changed(lay, before, changed) == [lay.rendered_memory]


# ---------------------------------------------------------------------------------------------
# when the index cannot vouch for the pages: None, and nothing written


@pytest.fixture
def rendered(tmp_path: Path) -> Layout:
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l2, *(record(f"mem_{i}", f"Statement {i}.") for i in range(20)))
    hand_append(lay.projects_dir / "alpha.jsonl", record("mem_p", "In Alpha.", scope={"type": "project", "project": "Alpha"}))
    render_all(lay)
    assert render_splice.load(lay) is not None
    return lay


def _one_change(lay: Layout, rid: str = "mem_3") -> tuple[dict[Path, tuple[int, int, int] | None], dict[Path, dict[str, Row | None]]]:
    ap = Apply(lay)
    ap.put({**ap.recs[rid], "confidence": 0.11})
    return ap.write(), ap.changed


def _refused(lay: Layout, before: dict[Path, tuple[int, int, int] | None], changed: dict[Path, dict[str, Row | None]]) -> None:
    """``render_changed`` answers ``None`` and writes no page; ``render_all`` then renders right."""
    was = {p: (p.read_bytes(), os.lstat(p).st_mtime_ns) for p in (lay.rendered_memory, lay.rendered_projects_dir / "alpha.md")}
    assert render_changed(lay, before, changed) is None
    assert {p: (p.read_bytes(), os.lstat(p).st_mtime_ns) for p in was} == was
    render_all(lay)
    assert b"**Confidence**: 0.11" in lay.rendered_memory.read_bytes()


def test_no_index(rendered: Layout) -> None:
    (rendered.runtime_dir / render_splice.NAME).unlink()
    _refused(rendered, *_one_change(rendered))


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "garbage", "other magic"])
def test_a_damaged_index(rendered: Layout, damage: str) -> None:
    path = rendered.runtime_dir / render_splice.NAME
    data = path.read_bytes()
    path.write_bytes({"truncated": data[:-7], "flipped": data[:200] + bytes([data[200] ^ 1]) + data[201:], "empty": b"",
                      "garbage": os.urandom(len(data)), "other magic": b"commonkeep rendered-index 9" + data[27:]}[damage])
    _refused(rendered, *_one_change(rendered))


def test_an_index_from_other_code(rendered: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(projection_cache, "fingerprint", lambda: "other code")
    render_all(rendered)  # an index of the other code's
    assert render_splice.load(rendered) is not None
    monkeypatch.undo()
    assert render_splice.load(rendered) is None
    _refused(rendered, *_one_change(rendered))


def test_a_record_file_edited_by_hand_since_the_render(rendered: Layout) -> None:
    hand_append(rendered.l2, record("mem_late", "Appended by another program."))
    _refused(rendered, *_one_change(rendered))


def test_a_record_file_written_by_another_program_during_the_apply(rendered: Layout) -> None:
    before, changed = _one_change(rendered)
    hand_append(rendered.l2, record("mem_late", "Appended after the apply wrote."))
    _refused(rendered, before, changed)


def test_a_file_the_apply_did_not_write_changed_since_it_read_it(rendered: Layout) -> None:
    before, changed = _one_change(rendered)
    hand_append(rendered.l1, record("mem_l1", "Appended to L1 meanwhile.", layer="L1"))
    _refused(rendered, before, changed)


def test_a_new_record_file_the_apply_does_not_account_for(rendered: Layout) -> None:
    before, changed = _one_change(rendered)
    hand_append(rendered.projects_dir / "zeta.jsonl", record("mem_z", "Zeta.", scope={"type": "project", "project": "Zeta"}))
    _refused(rendered, before, changed)


@pytest.mark.parametrize("page", ["MEMORY.md", "projects/alpha.md"])
def test_a_page_edited_by_hand(rendered: Layout, page: str) -> None:
    path = rendered.rendered_dir / page
    data = path.read_bytes()
    path.write_bytes(data.replace(b"Statement", b"Statemenx").replace(b"In Alpha", b"In Alphx"))  # same size
    before, changed = _one_change(rendered)
    assert render_changed(rendered, before, changed) is None
    assert b"Statemenx" in rendered.rendered_memory.read_bytes() or page != "MEMORY.md"
    render_all(rendered)
    assert b"Statemenx" not in rendered.rendered_memory.read_bytes()
    assert b"In Alphx" not in (rendered.rendered_projects_dir / "alpha.md").read_bytes()


def test_a_page_made_a_link(rendered: Layout, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.md"
    shutil.copyfile(rendered.rendered_memory, elsewhere)
    rendered.rendered_memory.unlink()
    rendered.rendered_memory.symlink_to(elsewhere)
    before, changed = _one_change(rendered)
    assert render_changed(rendered, before, changed) is None
    assert rendered.rendered_memory.is_symlink() and elsewhere.read_bytes() == (tmp_path / "elsewhere.md").read_bytes()
    assert b"0.11" not in elsewhere.read_bytes()


def test_memory_md_changed_while_copied(rendered: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    real = page_writer._copy

    def copy_after_a_hand_edit(src: int, dst: int, a: int, b: int) -> None:
        with open(rendered.rendered_memory, "r+b") as fh:  # in place: same inode, new mtime
            fh.seek(0)
            fh.write(b"#")
        real(src, dst, a, b)

    monkeypatch.setattr(page_writer, "_copy", copy_after_a_hand_edit)
    was = rendered.rendered_memory.read_bytes()
    before, changed = _one_change(rendered)
    assert render_changed(rendered, before, changed) is None
    assert rendered.rendered_memory.read_bytes() == was
    assert sorted(p.name for p in rendered.rendered_dir.iterdir()) == ["MEMORY.md", "projects"]  # no temp file left


def test_a_tombstone_taken_back(rendered: Layout) -> None:
    ap = Apply(rendered)
    ap.tombs.append("mem_5")
    render_step(rendered, ap.write(), ap.changed, rendered.root.parent / "twin")
    assert b"### mem_5\n" not in rendered.rendered_memory.read_bytes()
    rendered.tombstones.write_bytes(b"")  # by hand
    before, changed = _one_change(rendered)
    _refused(rendered, before, changed)
    assert b"### mem_5\n" in rendered.rendered_memory.read_bytes()


def test_before_not_as_the_index_saw_the_files(rendered: Layout) -> None:
    before, changed = _one_change(rendered)
    assert render_changed(rendered, {**before, rendered.l2: (1, 2, 3)}, changed) is None
    assert render_changed(rendered, {p: s for p, s in before.items() if p != rendered.l1}, changed) is None


def test_a_written_record_that_is_not_valid(rendered: Layout) -> None:
    ap = Apply(rendered)
    bad = {**ap.recs["mem_3"], "confidence": 7}
    ap.changed[rendered.l2] = {"mem_3": bad}
    _refused_bad = ap.write()
    assert render_changed(rendered, _refused_bad, ap.changed) is None


def test_render_all_leaves_no_index_for_files_not_plainly_clean(rendered: Layout) -> None:
    """A line that is not a valid record is left in its file by every reader: the index could not
    say where a change to its id lands."""
    with open(rendered.l2, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "mem_bad", "statement": "not a record"}) + "\n")
    render_all(rendered)
    assert render_splice.load(rendered) is None
    before, changed = _one_change(rendered)
    assert render_changed(rendered, before, changed) is None


def test_render_all_with_an_applys_records_leaves_the_index_a_read_leaves(tmp_path: Path) -> None:
    lay = ensure_layout(tmp_path / "root")
    hand_append(lay.l1, record("mem_i", "Identity.", layer="L1"))
    hand_append(lay.l2, record("mem_a", "A."), record("mem_t", "Tombstoned."), record("mem_a", "A again."),
                record("mem_b", "B.", status="deleted"))
    hand_append(lay.projects_dir / "alpha.jsonl", record("mem_p", "In Alpha.", scope={"type": "project", "project": "Alpha"}),
                record("mem_t", "Tombstoned too.", scope={"type": "project", "project": "Alpha"}))
    append_jsonl(lay.tombstones, [{"id": "tomb_t", "deleted_record_id": "mem_t"}])
    render_all(lay)
    read = logical(render_splice.load(lay))
    assert read is not None and [k for _, k, *_ in read[2]].count(render_splice.DEAD) == 2
    render_all(lay, Store(lay.root).records_by_file())
    assert logical(render_splice.load(lay)) == read
    ap = Apply(lay)
    ap.put({**ap.recs["mem_p"], "statement": "Changed."})
    assert render_step(lay, ap.write(), ap.changed, tmp_path / "twin")


@pytest.mark.parametrize("how", ["one short", "two swapped", "a line of another layout", "a line not a record"])
def test_render_all_with_records_that_are_not_the_files_leaves_no_index(rendered: Layout, how: str) -> None:
    records = Store(rendered.root).records_by_file()
    if how == "one short":
        records[rendered.l2] = records[rendered.l2][:-1]
    elif how == "two swapped":
        rows = records[rendered.l2]
        rows[3], rows[4] = rows[4], rows[3]
    elif how == "a line of another layout":  # its first key holds the id the records expect; its id is another
        with open(rendered.l2, "a", encoding="utf-8") as fh:
            fh.write(dumps_line({"xx": "mem_z", **record("mem_q", "Another layout.")}) + "\n")
        records[rendered.l2].append(record("mem_z", "Another layout."))
    else:
        with open(rendered.l2, "a", encoding="utf-8") as fh:
            fh.write('{"a":1}\n')
    render_all(rendered, records)
    assert render_splice.load(rendered) is None
    render_all(rendered)  # read whole: a line of another layout is a record like any other
    assert (render_splice.load(rendered) is None) == (how == "a line not a record")
