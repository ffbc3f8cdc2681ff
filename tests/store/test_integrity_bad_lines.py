"""Bad lines in any store file are reported with file:line, quarantined, and never a traceback
(issue 14 §2): numbers past Python's 4,300-digit limit, lines too long to read, candidates over
the write path's limits."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.jsonl import MAX_LINE_BYTES, read_jsonl

WRITER = "librarian"
HUGE_INT = b'{"id":"x","n":' + b"9" * 5000 + b"}\n"
FILES = ["memory/L2.playbooks.jsonl", "memory/L1.identity.jsonl", "inbox/captured.jsonl", "memory/evidence.jsonl",
         "memory/inquiries.jsonl", "memory/tombstones.jsonl", "memory/reinforcement.jsonl", "memory/profiles.jsonl"]
COMMANDS = [
    ["inbox"], ["doctor"], ["curate", "--role", WRITER], ["handoff"], ["handoff", "--goal", "deploy"],
    ["search", "pytest"], ["render"], ["select", "how do we run the tests"], ["project", "how do we run the tests"],
    ["reindex"], ["inquiries"],
]


def _seeded(root: Path) -> str:
    from commonkeep.gate.capture import capture
    from commonkeep.patches.curate import curate
    from commonkeep.patches.patch import apply_patch

    capture(root, "Always run pytest -q before committing.", tags=["testing"],
            evidence_refs=["daily/2026-12-02.md", "pyproject.toml"], confidence=0.9,
            primary_trust_class="direct_user_instruction", durability_signal="long_term",
            provenance={"role": WRITER})  # the writer's own write: a stamp, so the plain apply takes it
    prop = curate(root, role=WRITER)
    apply_patch(root, prop.patch["patch_id"], role=WRITER)
    return str(prop.ops[0]["record"]["id"])


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out, (argv, err)
    assert code in (0, 1, 2), (argv, code, err)
    return code, out, err


def test_a_number_past_pythons_digit_limit_in_every_file_is_a_bad_line_for_every_command(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rid = _seeded(root)
    for rel in FILES:
        with open(root / rel, "ab") as fh:
            fh.write(HUGE_INT)
    said = ""
    for argv in COMMANDS:
        _, out, err = _run([*argv, "--root", str(root)], capsys)
        said += out + err
    for rel in FILES:
        assert f"{rel}:" in said, f"nobody named {rel}"
    assert "a number too long to read (over 4,300 digits)" in said
    kept = {q["file"] for q in read_jsonl(root / "quarantine" / "lines.jsonl").rows}
    assert set(FILES) <= kept
    # the good record is still found, rendered and selected
    assert main(["search", "pytest", "--root", str(root), "--json"]) == 0
    assert rid in capsys.readouterr().out
    assert rid in (root / "rendered" / "MEMORY.md").read_text()


def test_a_line_over_the_limit_is_never_parsed_kept_whole_and_read_in_one_copy(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 40 MB candidate line appended by another program."""
    rid = _seeded(root)
    inbox = root / "inbox" / "captured.jsonl"
    big = {"id": "cap_big", "created_at": "2026-12-02T10:00:00.000Z", "source": {"type": "manual", "ref": "x"},
           "text": "A" * (40 << 20), "tags": [], "evidence_refs": ["a", "b"], "status": "new", "confidence": 0.99}
    line = json.dumps(big, separators=(",", ":")).encode() + b"\n"
    with open(inbox, "ab") as fh:
        fh.write(line)
    size = inbox.stat().st_size
    tracemalloc.start()
    read = read_jsonl(inbox)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < size * 1.3, f"read took {peak} bytes for a {size}-byte file"
    assert [b.line_no for b in read.bad] == [2]
    assert f"over the {MAX_LINE_BYTES:,}-byte limit" in read.bad[0].error
    code, out, err = _run(["curate", "--role", WRITER, "--root", str(root)], capsys)
    assert "inbox/captured.jsonl:2" in err + out
    assert "cap_big" not in json.dumps([p.read_text() for p in (root / "patches").glob("*.json")])
    kept = read_jsonl(root / "quarantine" / "lines.jsonl").rows
    entry = next(q for q in kept if q["file"] == "inbox/captured.jsonl" and q["line"] == 2)
    assert (root / entry["saved_to"]).read_bytes() == line[:-1]  # the whole line, kept aside
    assert len(entry["text"]) < 1000
    # the record applied before is untouched
    assert main(["search", "pytest", "--root", str(root), "--json"]) == 0
    assert rid in capsys.readouterr().out


def test_curate_refuses_a_candidate_over_the_write_paths_limits(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another program wrote candidates our own write path would refuse: curate names why and
    proposes none of them; the lines are quarantined."""
    inbox = root / "inbox" / "captured.jsonl"
    base = {"created_at": "2026-12-02T10:00:00.000Z", "source": {"type": "manual", "ref": "x"}, "tags": ["t"],
            "evidence_refs": ["daily/2026-12-02.md", "pyproject.toml"], "status": "new", "confidence": 0.95,
            "primary_trust_class": "direct_user_instruction", "durability_signal": "long_term"}
    rows = [
        {**base, "id": "cap_long_text", "text": "Deploys run nightly. " * 300},
        {**base, "id": "cap_many_tags", "text": "Deploys run on Tuesdays.", "tags": [f"t{i}" for i in range(65)]},
        {**base, "id": "cap_many_refs", "text": "Deploys run at noon.", "evidence_refs": [f"r{i}" for i in range(65)]},
        {**base, "id": "cap_ok", "text": "Always run pytest -q before committing."},
    ]
    inbox.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = _run(["curate", "--role", WRITER, "--root", str(root)], capsys)
    said = out + err
    assert "inbox/captured.jsonl:1" in said and "characters; the limit is 4000" in said
    assert "inbox/captured.jsonl:2" in said and "65 tags; the limit is 64" in said
    assert "inbox/captured.jsonl:3" in said and "65 evidence refs; the limit is 64" in said
    proposed = json.dumps([p.read_text() for p in (root / "patches").glob("*.json")])
    assert "cap_ok" in proposed
    for bad in ("cap_long_text", "cap_many_tags", "cap_many_refs"):
        assert bad not in proposed
    kept = {(q["file"], q["line"]) for q in read_jsonl(root / "quarantine" / "lines.jsonl").rows}
    assert {("inbox/captured.jsonl", 1), ("inbox/captured.jsonl", 2), ("inbox/captured.jsonl", 3)} <= kept
