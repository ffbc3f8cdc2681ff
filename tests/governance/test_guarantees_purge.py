"""The privacy purge's scrub (``commonkeep.patches.purge``): every copy of a purged statement
outside the canonical records becomes ``[deleted]``, and nothing else changes (issue 28's
mutation testing of purge.py). Real roots, real files; the end-to-end ``forget --purge`` runs are
in ``test_secrets_purge_copies.py``, ``test_interrupted_forget.py`` and ``tests/share``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from commonkeep.patches.purge import (
    DELETED,
    line_hash,
    patch_ops,
    rescrub_lines,
    scrub_derived,
    scrub_local_copies,
    scrub_patches,
    scrubbed_line_hashes,
)
from commonkeep.store.layout import Layout

SECRET = "Alice's home address is 12 Elm Street, flat 3, near the old mill by the river bend."
OTHER = "The build runs on every push to main."


def _layout(root: Path) -> Layout:
    return Layout(root)


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_line_hash_is_the_sha256_of_the_line_without_its_newline() -> None:
    assert line_hash("abc") == hashlib.sha256(b"abc").hexdigest() == line_hash(b"abc")
    assert line_hash(b"abc\r") == line_hash("abc")  # a CRLF file's line
    assert line_hash("abc\r\r") == hashlib.sha256(b"abc\r").hexdigest()
    assert line_hash("café") == hashlib.sha256("café".encode()).hexdigest()


def test_every_derived_copy_is_scrubbed_and_the_search_databases_dropped(root: Path) -> None:
    lay = _layout(root)
    daily = _write(root, "daily/2026-12-02.md", f"- {SECRET}\n- {OTHER}\n")
    runtime = _write(root, "runtime/selection.json", json.dumps({"lines": [SECRET, OTHER]}, ensure_ascii=False))
    report = _write(root, "reports/weekly.md", f"# week\n{SECRET}\n")
    summary = _write(root, "sessions/summaries/s1.txt", f"said: {SECRET}")
    quarantine = _write(root, "quarantine/lines.jsonl", json.dumps({"line": json.dumps({"text": SECRET})}) + "\n")
    pad = _write(root, "scratchpad.md", f"{SECRET}\n")
    kept_db = _write(root, "daily/notes.db", SECRET)  # not a text suffix: left alone
    canonical = _write(root, "memory/L2.playbooks.jsonl", json.dumps({"statement": SECRET}) + "\n")
    lay.search_dir.mkdir(parents=True, exist_ok=True)
    (lay.search_dir / "recall.db").write_bytes(SECRET.encode())
    (lay.search_dir / "keep").mkdir()
    recorded: list[list[str]] = []
    scrub_derived(lay, [SECRET], recorded.append)
    for path in (daily, runtime, report, summary, quarantine, pad):
        text = path.read_text(encoding="utf-8")
        assert "Elm Street" not in text and DELETED in text, path
    assert daily.read_text(encoding="utf-8") == f"- {DELETED}\n- {OTHER}\n"
    assert OTHER in runtime.read_text(encoding="utf-8")
    assert kept_db.read_text(encoding="utf-8") == SECRET
    assert SECRET in canonical.read_text(encoding="utf-8")  # the records are the patch's business
    assert not (lay.search_dir / "recall.db").exists() and (lay.search_dir / "keep").is_dir()
    assert recorded == [[line_hash(f"- {SECRET}")]]  # daily-log lines only, by hash


def test_the_80_character_brief_and_json_escaped_copies_are_scrubbed_whole(root: Path) -> None:
    quoted = 'Bob said "the vault code is 4711-9923" and wrote it on the whiteboard in the café, twice.'
    lay = _layout(root)
    files = {
        "runtime/handoff.md": (f"brief: {quoted[:80]}…\n", f"brief: {DELETED}…\n"),
        "runtime/a.json": (json.dumps({"t": quoted}, ensure_ascii=False), json.dumps({"t": DELETED})),
        "runtime/b.json": (json.dumps({"t": quoted}), json.dumps({"t": DELETED})),
        "quarantine/lines.jsonl": (json.dumps({"raw": json.dumps({"t": quoted}, ensure_ascii=False)}, ensure_ascii=False) + "\n",
                                   json.dumps({"raw": json.dumps({"t": DELETED})}) + "\n"),
        "quarantine/ascii.jsonl": (json.dumps({"raw": json.dumps({"t": quoted})}) + "\n",
                                   json.dumps({"raw": json.dumps({"t": DELETED})}) + "\n"),
    }
    for rel, (before, _after) in files.items():
        _write(root, rel, before)
    scrub_derived(lay, [quoted])
    for rel, (_before, after) in files.items():
        assert (root / rel).read_text(encoding="utf-8") == after, rel


def test_a_statement_inside_another_is_scrubbed_after_the_longer_one(root: Path) -> None:
    lay = _layout(root)
    longer, inner = "Alice lives at 12 Elm Street, flat 3.", "lives at 12 Elm Street"
    daily = _write(root, "daily/2026-12-02.md", f"- {longer}\n- Bob {inner}.\n")
    scrub_derived(lay, [inner, longer])
    assert daily.read_text(encoding="utf-8") == f"- {DELETED}\n- Bob {DELETED}.\n"


def test_a_daily_line_of_exactly_the_minimum_length_is_recorded(root: Path) -> None:
    lay = _layout(root)
    line = "Use pnpm her"  # 12 characters, the whole line
    _write(root, "daily/2026-12-02.md", f"{line}\n")
    recorded: list[list[str]] = []
    scrub_derived(lay, [line], recorded.append)
    assert recorded == [[line_hash(line)]]


def test_a_short_statement_is_not_scrubbed_by_value(root: Path) -> None:
    lay = _layout(root)
    daily = _write(root, "daily/2026-12-02.md", "- Use pnpm\n- Use pnpm here too\n")
    recorded: list[list[str]] = []
    scrub_derived(lay, ["Use pnpm", "   short    "], recorded.append)
    assert daily.read_text(encoding="utf-8") == "- Use pnpm\n- Use pnpm here too\n"
    assert recorded == []
    scrub_derived(lay, ["Use pnpm he"])  # 11 characters: still too short
    assert "Use pnpm here" in daily.read_text(encoding="utf-8")
    scrub_derived(lay, ["Use pnpm her"])  # 12: scrubbed
    assert daily.read_text(encoding="utf-8") == f"- Use pnpm\n- {DELETED}e too\n"


def test_a_file_that_is_not_utf8_is_passed_over(root: Path) -> None:
    lay = _layout(root)
    bad = root / "runtime" / "bad.txt"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"\xff\xfe" + SECRET.encode())
    good = _write(root, "runtime/good.txt", SECRET)
    scrub_local_copies(lay, [SECRET])
    assert bad.read_bytes() == b"\xff\xfe" + SECRET.encode()
    assert good.read_text(encoding="utf-8") == DELETED


def _patch(root: Path, name: str, doc: object) -> Path:
    return _write(root, f"patches/{name}.json", json.dumps(doc))


def test_scrubbed_line_hashes_are_read_from_every_patch_and_only_well_formed(root: Path) -> None:
    lay = _layout(root)
    assert scrubbed_line_hashes(lay) == set()
    good, other = line_hash("- one line"), line_hash("- another")
    _patch(root, "p1", {"scrubbed_lines": [good, "not-a-hash", 7, good.upper()]})
    _patch(root, "p2", {"scrubbed_lines": [other]})
    _patch(root, "p3", {"scrubbed_lines": "nope"})
    _patch(root, "p4", ["a list"])
    _write(root, "patches/p0.json", "{broken")  # first in order: the others are still read
    assert scrubbed_line_hashes(lay) == {good, other}


def test_a_scrubbed_line_that_a_merge_brought_back_is_scrubbed_again(root: Path) -> None:
    lay = _layout(root)
    line = f"- {SECRET}"
    _patch(root, "p1", {"scrubbed_lines": [line_hash(line)]})
    daily = _write(root, "daily/2026-12-02.md", f"- {OTHER}\n{line}\r\n{line}\n")
    notes = _write(root, "daily/sub/notes.txt", f"{line}\n")
    as_json = _write(root, "daily/x.json", f"{line}\n")
    as_jsonl = _write(root, "daily/x.jsonl", f"{line}\n")
    untouched = _write(root, "runtime/x.md", f"{line}\n")  # not shared with union: not rescrubbed
    lay.search_dir.mkdir(parents=True, exist_ok=True)
    (lay.search_dir / "recall.db").write_bytes(b"x")
    assert rescrub_lines(lay) == 5
    assert as_json.read_text(encoding="utf-8") == as_jsonl.read_text(encoding="utf-8") == f"{DELETED}\n"
    assert daily.read_bytes() == f"- {OTHER}\n{DELETED}\r\n{DELETED}\n".encode()
    assert notes.read_text(encoding="utf-8") == f"{DELETED}\n"
    assert untouched.read_text(encoding="utf-8") == f"{line}\n"
    assert not (lay.search_dir / "recall.db").exists()
    (lay.search_dir / "recall.db").write_bytes(b"x")
    assert rescrub_lines(lay) == 0  # nothing left: the search databases stay
    assert (lay.search_dir / "recall.db").exists()


def test_rescrub_does_nothing_without_recorded_hashes_or_daily_logs(root: Path) -> None:
    lay = _layout(root)
    daily = _write(root, "daily/2026-12-02.md", f"- {SECRET}\n")
    assert rescrub_lines(lay) == 0
    assert daily.read_text(encoding="utf-8") == f"- {SECRET}\n"
    for path in (root / "daily").iterdir():
        path.unlink()
    (root / "daily").rmdir()
    _patch(root, "p1", {"scrubbed_lines": [line_hash(f"- {SECRET}")]})
    assert rescrub_lines(lay) == 0


def test_patch_ops_are_the_object_ops_of_a_patch_of_that_shape() -> None:
    assert patch_ops({"ops": [{"op": "add"}, "junk", 3, {"op": "delete"}]}) == [{"op": "add"}, {"op": "delete"}]
    assert patch_ops({"ops": "nope"}) == [] and patch_ops({"no": "ops"}) == [] and patch_ops(["ops"]) == []


def test_older_patches_lose_the_purged_statements_and_keep_the_rest(root: Path) -> None:
    lay = _layout(root)
    rid, keep_rid = "mem_1", "mem_2"
    old = _patch(root, "p_old", {"ops": [
        {"op": "add", "record": {"id": rid, "statement": SECRET, "tags": ["home"]}},
        {"op": "supersede", "target_id": "mem_0", "to_record": {"id": rid, "statement": SECRET, "tags": ["x"]}},
        {"op": "update", "target_id": rid, "updates": {"statement": SECRET, "stability": "stable"}},
        {"op": "update", "target_id": rid, "updates": {"stability": "stable"}},
        {"op": "add", "record": {"id": keep_rid, "statement": OTHER, "tags": ["ci"]}},
        {"op": "update", "target_id": keep_rid, "updates": {"statement": OTHER}},
        "junk",
    ]})
    current = _patch(root, "p_now", {"ops": [{"op": "add", "record": {"id": rid, "statement": SECRET, "tags": []}}]})
    untouched = _patch(root, "p_other", {"ops": [{"op": "add", "record": {"id": keep_rid, "statement": OTHER}}]})
    before_untouched = untouched.read_bytes()
    _write(root, "patches/broken.json", "{broken")
    scrub_patches(lay, {rid}, keep="p_now")
    ops = json.loads(old.read_text(encoding="utf-8"))["ops"]
    assert ops[0]["record"] == {"id": rid, "statement": DELETED, "tags": []}
    assert ops[1]["to_record"] == {"id": rid, "statement": DELETED, "tags": []}
    assert ops[2]["updates"] == {"statement": DELETED, "stability": "stable"}
    assert ops[3]["updates"] == {"stability": "stable"}
    assert ops[4]["record"] == {"id": keep_rid, "statement": OTHER, "tags": ["ci"]}
    assert ops[5]["updates"] == {"statement": OTHER}
    assert SECRET in current.read_text(encoding="utf-8")  # the purging patch itself is kept as it is
    assert untouched.read_bytes() == before_untouched  # a patch with nothing to scrub is not rewritten
