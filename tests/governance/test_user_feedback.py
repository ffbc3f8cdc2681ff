"""What a user sees when a governance command cannot do what was asked (user-acceptance findings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.governance.conftest import INJECTION, run_cli, write_candidate, writer_args

_run = run_cli
_r = writer_args


def _good_and_injection_patch(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    write_candidate(root, "Use black for formatting Python code.")
    write_candidate(root, INJECTION)
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    assert code == 0
    prop = json.loads(out)
    assert [(o["op_id"], o["default_selected"]) for o in prop["ops"]] == [("op_001", True), ("op_002", False)]
    return str(prop["patch_id"])


def test_applying_a_patch_twice_says_what_was_applied_and_what_was_not_selected(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = _good_and_injection_patch(root, capsys)
    code, out, _ = _run(capsys, "apply", pid, *_r(root))
    assert code == 0 and "applied 1 op(s)" in out
    assert f"not selected: op_002 (apply with `commonkeep apply {pid} --ops op_002`)" in out
    code, out, err = _run(capsys, "apply", pid, *_r(root))
    assert code == 2 and out == ""
    assert f"nothing to apply in patch {pid}: op_001 already applied by an earlier run; op_002 not selected by default" in err
    assert f"hint: select ops: commonkeep apply {pid} --ops op_002" in err
    code, _, err = _run(capsys, "apply", pid, *_r(root), "--ops", "op_001")
    assert code == 2 and "op_001 already applied by an earlier run; op_002 not selected" in err


def test_apply_with_empty_ops_is_refused_with_exit_2(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = _good_and_injection_patch(root, capsys)
    for empty in ("", " , "):
        code, out, err = _run(capsys, "apply", pid, *_r(root), "--ops", empty)
        assert code == 2 and out == "" and "--ops is empty" in err
    assert json.loads((root / "patches" / f"{pid}.json").read_text())["status"] == "proposed"


def test_apply_where_every_selected_op_is_refused_exits_1(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = _good_and_injection_patch(root, capsys)
    code, out, _ = _run(capsys, "apply", pid, *_r(root))
    assert code == 0
    rec_id = json.loads((root / "patches" / f"{pid}.json").read_text())["ops"][0]["record"]["id"]
    code, _, _ = _run(capsys, "forget", rec_id, *_r(root), "--reason", "other")
    assert code == 0
    doc = json.loads((root / "patches" / f"{pid}.json").read_text())
    doc["ops"][1]["record"]["id"] = rec_id  # an add of a tombstoned id: refused by the checks
    (root / "patches" / f"{pid}.json").write_text(json.dumps(doc))
    code, out, _ = _run(capsys, "apply", pid, *_r(root), "--ops", "op_002")
    # the record is not what its candidate makes (the file was edited): refused before its id is looked at
    assert code == 1 and "applied 0 op(s)" in out and "skipped op_002: its record's id differs" in out


def test_a_forgotten_record_can_still_be_purged_later_with_one_tombstone(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.store.core import Store
    from commonkeep.store.jsonl import append_jsonl, read_jsonl

    secret = "Alice's home address is 12 Elm Street."
    cand = write_candidate(root, secret, tags=["personal"])
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    pid = json.loads(out)["patch_id"]
    assert _run(capsys, "apply", pid, *_r(root))[0] == 0
    mid = "mem_" + cand["id"][4:]
    append_jsonl(root / "memory" / "evidence.jsonl", [{
        "id": "e" * 32, "created_at": "2026-12-02", "source_kind": "conversation", "source_summary": "address mentioned",
        "source_excerpt": secret, "excerpt_hash": "f" * 32, "redaction_status": "none", "trust_class": "direct_user_instruction",
        "polarity": "supports", "related_memory_ids": [mid]}])
    Store(root).append_daily(f"user said: {secret}")
    code, out, _ = _run(capsys, "forget", mid, *_r(root), "--reason", "user_requested")
    assert code == 0 and "Elm Street" in (root / "patches" / f"{pid}.json").read_text()
    code, _, err = _run(capsys, "forget", mid, *_r(root), "--reason", "other")
    assert code == 2 and "already forgotten" in err and f"commonkeep forget {mid} --reason privacy_sensitive --purge" in err
    code, out, err = _run(capsys, "forget", mid, *_r(root), "--reason", "privacy_sensitive", "--purge")
    assert code == 0, err
    assert f"purged {mid}: it was already forgotten; its one tombstone now records privacy_purge" in out
    tombs = read_jsonl(root / "memory" / "tombstones.jsonl").rows
    assert [(t["deleted_record_id"], t["deletion_mode"], t["deletion_reason"]) for t in tombs] == [(mid, "privacy_purge", "privacy_sensitive")]
    ev = read_jsonl(root / "memory" / "evidence.jsonl").rows[0]
    assert ev["redaction_status"] == "deleted" and "source_excerpt" not in ev
    for path in root.rglob("*"):
        if path.is_file():
            assert "Elm Street" not in path.read_text(errors="replace"), path
    code, _, err = _run(capsys, "forget", mid, *_r(root), "--reason", "other")
    assert code == 2 and "already forgotten and purged" in err and "--purge" in err  # how to scrub again
    code, out, err = _run(capsys, "forget", mid, *_r(root), "--reason", "privacy_sensitive", "--purge")
    assert code == 0, err
    assert f"purged {mid} again: the scrub ran once more" in out
    assert len(read_jsonl(root / "memory" / "tombstones.jsonl").rows) == 1


def test_forget_of_an_unknown_id_points_at_commands_that_list_records(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "forget", "mem_nope", *_r(root), "--reason", "other")
    assert code == 2 and "no record mem_nope" in err
    hint = err.split("hint:", 1)[1]
    assert "commonkeep search WORDS" in hint and "commonkeep render" in hint and "rendered/MEMORY.md" in hint
    assert "(unpromoted candidates: `commonkeep review --list`)" in hint


def test_patches_lists_bad_patch_files_as_problems_with_file_and_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pid = _good_and_injection_patch(root, capsys)
    (root / "patches" / "patch_202612020000_ckaaaaaa.json").write_text("[]\n")
    (root / "patches" / "patch_202612020001_ckbbbbbb.json").write_text('{\n "patch_id": "x",\n oops\n}\n')
    code, out, err = _run(capsys, "patches", *_r(root))
    assert code == 1 and err == ""
    assert f"{pid}  proposed  2 add" in out
    assert f"problem: {root / 'patches' / 'patch_202612020000_ckaaaaaa.json'}: not a patch: the file holds an array" in out
    assert f"problem: {root / 'patches' / 'patch_202612020001_ckbbbbbb.json'}: line 3: not valid JSON" in out
    code, out, _ = _run(capsys, "patches", *_r(root), "--json")
    rows = {r["patch_id"]: r for r in json.loads(out)}
    assert code == 1 and rows[pid]["status"] == "proposed" and "line 3" in rows["patch_202612020001_ckbbbbbb"]["problem"]
    code, _, err = _run(capsys, "patches", *_r(root), "--show", "patch_202612020001_ckbbbbbb")
    assert code == 2 and "line 3: not valid JSON" in err and "nothing was applied" not in err


def test_patches_show_reads_only_patch_files(root: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pid = _good_and_injection_patch(root, capsys)
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"secret": "do not print"}')
    for ref in ("/etc/passwd", str(outside), "../../etc/passwd", f"{root / 'patches'}/../../elsewhere.json"):
        code, out, err = _run(capsys, "patches", *_r(root), "--show", ref)
        assert code == 2 and out == "" and "--show prints only patches" in err, ref
        assert "nothing was applied" not in err
    code, _, err = _run(capsys, "patches", *_r(root), "--show", "patch_nope")
    assert code == 2 and "no patch 'patch_nope'" in err and "nothing was applied" not in err
    for ref in (pid, f"{pid}.json", str(root / "patches" / f"{pid}.json")):
        code, out, _ = _run(capsys, "patches", *_r(root), "--show", ref, "--json")
        assert code == 0 and json.loads(out)["patch_id"] == pid


def test_curate_refuses_a_gate_out_of_range_with_exit_2(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    for flag, value, words in (("--min-confidence", "5", "give a number from 0 to 1"), ("--min-confidence", "-0.1", "from 0 to 1"),
                               ("--min-confidence", "nan", "from 0 to 1"), ("--min-evidence", "-1", "a whole number 0 or more")):
        code, out, err = _run(capsys, "curate", *_r(root), flag, value)
        assert code == 2 and out == "" and f"{flag} {value}" in err and words in err, (flag, value, err)
    assert list((root / "patches").glob("*.json")) == []
    code, out, _ = _run(capsys, "curate", *_r(root), "--min-confidence", "1", "--min-evidence", "0")
    assert code == 0


def test_curate_does_not_repropose_an_update_stability_waiting_in_a_proposed_patch(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_candidate(root, "Use black for formatting Python code.")
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    first = json.loads(out)
    assert _run(capsys, "apply", first["patch_id"], *_r(root))[0] == 0
    mid = json.loads((root / "patches" / f"{first['patch_id']}.json").read_text())["ops"][0]["record"]["id"]
    assert _run(capsys, "reinforce", mid, *_r(root))[0] == 0
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    waiting = json.loads(out)
    assert [(o["op"], o["target_id"]) for o in waiting["ops"]] == [("update_stability", mid)]
    for _ in range(2):
        code, out, _ = _run(capsys, "curate", *_r(root))
        assert code == 0 and "nothing to propose" in out
        assert (f"already proposed: update_stability {mid} -> stable in patch {waiting['patch_id']} "
                f"(apply it: commonkeep apply {waiting['patch_id']})") in out
    assert len(list((root / "patches").glob("*.json"))) == 2
    assert _run(capsys, "apply", waiting["patch_id"], *_r(root))[0] == 0
    assert _run(capsys, "reinforce", mid, *_r(root), "--outcome", "explicit_correction")[0] == 0
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    assert [(o["op"], o["target_id"]) for o in json.loads(out)["ops"]] == [("update_stability", mid)]


def _promoted(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    write_candidate(root, "Use black for formatting Python code.")
    code, out, _ = _run(capsys, "curate", *_r(root), "--json")
    pid = json.loads(out)["patch_id"]
    assert _run(capsys, "apply", pid, *_r(root))[0] == 0
    return str(json.loads((root / "patches" / f"{pid}.json").read_text())["ops"][0]["record"]["id"])


def test_reinforce_refuses_a_note_over_300_characters_instead_of_cutting_it(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.store.jsonl import read_jsonl

    mid = _promoted(root, capsys)
    code, out, err = _run(capsys, "reinforce", mid, *_r(root), "--notes", "n" * 301)
    assert code == 2 and out == "" and "--notes is 301 characters; a reinforcement note holds at most 300" in err
    assert read_jsonl(root / "memory" / "reinforcement.jsonl").rows == []
    code, _, _ = _run(capsys, "reinforce", mid, *_r(root), "--notes", "n" * 300)
    assert code == 0 and read_jsonl(root / "memory" / "reinforcement.jsonl").rows[0]["notes"] == "n" * 300


def test_inquiries_memory_without_answer_is_refused_with_a_hint(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ([], ["--withdraw", "inq_x"]):
        code, out, err = _run(capsys, "inquiries", *_r(root), "--memory", "mem_x", *extra)
        assert code == 2 and out == "" and "--memory only goes with --answer" in err
        assert "hint: commonkeep inquiries --answer INQ --memory MEM" in err


def test_review_patches_and_inquiries_show_control_characters_instead_of_obeying_them(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.store.inquiries import upsert_inquiries

    nasty = "Use black for formatting x\x1b[2K\rApproved\u202e"
    code, _, _ = _run(capsys, "write", *_r(root), nasty, "--evidence", "a", "--evidence", "b")
    assert code == 0
    code, out, _ = _run(capsys, "review", "--list", *_r(root))
    assert code == 0 and "\x1b" not in out and "\r" not in out and "\u202e" not in out
    assert "Use black for formatting x\\x1b[2K\\x0dApproved\\u202e" in out
    assert not any(line.startswith("Approved") for line in out.split("\n"))
    code, out, _ = _run(capsys, "curate", *_r(root), "--min-confidence", "0", "--min-evidence", "0", "--json")
    pid = json.loads(out)["patch_id"]
    for args in (["patches"], ["patches", "--show", pid]):
        code, out, _ = _run(capsys, *args, *_r(root))
        assert code == 0 and "\x1b" not in out and "\r" not in out and "\u202e" not in out, args
    upsert_inquiries(root, [{"question": "Which holds?\x1b]0;pwned\x07", "context": "test"}])
    code, out, _ = _run(capsys, "inquiries", *_r(root))
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "Which holds?\\x1b]0;pwned\\x07" in out


def test_terminal_safe_shows_every_hidden_or_reordering_character() -> None:
    from commonkeep.store.render import terminal_safe

    hidden = "\u061c\u2028\u2029\u2060\u2061\u2064\u2066\u200b\ufeff\x9b"
    out = terminal_safe("a" + hidden + "b")
    assert out.startswith("a") and out.endswith("b")
    assert not any(ch in out for ch in hidden)
    assert "\\u061c" in out and "\\u2028" in out and "\\u2060" in out and "\\x9b" in out


@pytest.mark.parametrize("odd", [{"ops": 5}, {"applied_ops": [{"op_id": "op_001"}]}, {"skipped_ops": 7}])
def test_patches_show_prints_a_hand_edited_patch_of_another_shape(root: Path, capsys: pytest.CaptureFixture[str],
                                                                  odd: dict[str, object]) -> None:
    doc = {"patch_id": "patch_hand", "status": "partially_applied", "summary": "edited by hand", "applied_ops": ["op_001"],
           "skipped_ops": [], "ops": [{"op_id": "op_001", "op": "delete", "target_id": "mem_x"}], **odd}
    (root / "patches").mkdir(exist_ok=True)
    (root / "patches" / "patch_hand.json").write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = _run(capsys, "patches", *_r(root), "--show", "patch_hand")
    assert code == 0, err
    assert out.startswith("patch patch_hand  partially_applied  edited by hand")
