"""The secret gate's promises that its mutation run (``scripts/mutation secrets``) found unguarded:
each test names what a user depends on (a token of a given shape is removed whole, a benign text
or name is left exactly as written, a report points at the right line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.secrets import (
    contains_secret,
    redact,
    redact_name,
    redacted_kinds,
    summarize,
)
from commonkeep.secrets.fields import token_like
from commonkeep.secrets.scan import OVERLAP, WINDOW, scan_file
from commonkeep.store.candidates import new_candidate

GITHUB = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b"
AWS = "AKIAQ3ZT7RX2WBN5K4JD"


def test_a_file_name_loses_its_token_keeps_its_extension_and_redacts_to_itself() -> None:
    red = redact_name(f"notes-{GITHUB}.md")
    assert (red.text, red.findings) == ("notes-REDACTED-github_token.md", ["github_token"])
    glued = redact_name(f"keys_{AWS}.txt")  # a token after ``_`` is found as in any text
    assert (glued.text, glued.findings) == ("keys_REDACTED-aws_access_key.txt", ["aws_access_key"])
    swallowed = redact_name("password=hunter22.md")  # the value ran into the extension: it is put back
    assert (swallowed.text, swallowed.findings) == ("password=REDACTED-password_assignment.md", ["password_assignment"])
    again = redact_name(swallowed.text)  # the file-name marker is no secret: the name stays
    assert (again.text, again.findings) == (swallowed.text, [])


def test_a_benign_file_name_is_left_exactly_as_written() -> None:
    for name in ("2026-12-03 standup notes.md", "release_plan_v2.final.txt", "Überblick-Zugänge.md", "README"):
        assert (redact_name(name).text, redact_name(name).findings) == (name, [])


# --- single-value fields (``fields.strict``, through ``new_candidate``, which every capture uses) ---

WHOLE, SPLIT = "[REDACTED:token_in_field]", "[REDACTED:split_token]"
TEXT = "Deploys use the blue pool."
# random-looking values too short for any rule of free text: only the single-value field rule removes them
SHORT = ("Xk3mP9qLw2", "Zp4Lq8Wm2Rt6", "Hb5Nc3Vx9Kd1", "Qw7eR2tY8u", "Jm2Kd8Rt5Lq3")


def _fields(**kw: Any) -> tuple[dict[str, Any], list[str]]:
    """(the single-value fields of the candidate ``new_candidate`` builds, the kinds it found)."""
    found: list[str] = []
    cand = new_candidate(TEXT, findings=found, **kw)
    assert cand["text"] == TEXT
    return {"tags": cand["tags"], "evidence_refs": cand["evidence_refs"], "ref": cand["source"]["ref"],
            "provenance": cand.get("provenance")}, found


def test_a_token_in_any_one_single_value_field_goes_whole_and_the_other_fields_stay() -> None:
    benign = {"tags": ["ops"], "evidence_refs": ["docs/ops.md"], "source_ref": "daily/2026-12-03.md"}
    prov = {"agent": "hermes", "session_id": "s-1", "task_id": "t-42"}
    token = SHORT[0]
    cases = {  # field -> (arguments with the token there, the fields expected)
        "tag": ({**benign, "tags": ["ops", token]}, ["ops", WHOLE], ["docs/ops.md"], "daily/2026-12-03.md", prov),
        "evidence ref": ({**benign, "evidence_refs": ["docs/ops.md", token]}, ["ops"], ["docs/ops.md", WHOLE],
                         "daily/2026-12-03.md", prov),
        "source ref": ({**benign, "source_ref": token}, ["ops"], ["docs/ops.md"], WHOLE, prov),
        "session id": ({**benign, "provenance": {**prov, "session_id": token}}, ["ops"], ["docs/ops.md"],
                       "daily/2026-12-03.md", {**prov, "session_id": WHOLE}),
        "task id": ({**benign, "provenance": {**prov, "task_id": token}}, ["ops"], ["docs/ops.md"],
                    "daily/2026-12-03.md", {**prov, "task_id": WHOLE}),
    }
    for where, (kw, tags, refs, ref, want_prov) in cases.items():
        kw.setdefault("provenance", prov)
        got, found = _fields(**kw)
        assert got == {"tags": tags, "evidence_refs": refs, "ref": ref, "provenance": want_prov}, where
        assert found == ["token_in_field"], where


def test_tokens_in_every_single_value_field_at_once_all_go_and_a_candidate_without_provenance_is_fine() -> None:
    got, found = _fields(tags=[SHORT[0]], evidence_refs=[SHORT[1]], source_ref=SHORT[2],
                         provenance={"agent": "hermes", "session_id": SHORT[3], "task_id": SHORT[4]})
    assert got == {"tags": [WHOLE], "evidence_refs": [WHOLE], "ref": WHOLE,
                   "provenance": {"agent": "hermes", "session_id": WHOLE, "task_id": WHOLE}}
    assert found == ["token_in_field"] * 5
    got, found = _fields(tags=["ops", SHORT[0]], evidence_refs=["docs/ops.md"])  # no provenance at all
    assert (got["tags"], got["provenance"], found) == (["ops", WHOLE], None, ["token_in_field"])


def test_benign_single_value_fields_are_kept_exactly() -> None:
    prov = {"agent": "hermes", "session_id": "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e", "task_id": "t-42"}
    got, found = _fields(tags=["ops", "eu-west-1", "Build2026"], evidence_refs=["docs/ops.md", "pyproject.toml"],
                         source_ref="daily/2026-12-03.md", provenance=prov)
    assert got == {"tags": ["ops", "eu-west-1", "Build2026"], "evidence_refs": ["docs/ops.md", "pyproject.toml"],
                   "ref": "daily/2026-12-03.md", "provenance": prov}
    assert found == []
    got, found = _fields(tags=["ops"], evidence_refs=["docs"])  # short fields: nothing to look at
    assert (got["tags"], got["evidence_refs"], found) == (["ops"], ["docs"], [])
    got, found = _fields(tags=["ops", "Qm7Xz2"], evidence_refs=["docs/ops.md"])  # one short piece, no other half
    assert (got["tags"], found) == (["ops", "Qm7Xz2"], [])


def test_an_aws_key_cut_between_two_fields_loses_both_halves() -> None:
    # "AKIAQZTRXWBNKJ" + "12ABCD" is an access key id; neither half, nor the halves the other way
    # round, nor either half doubled, is one
    got, found = _fields(tags=["ops", "AKIAQZTRXWBNKJ"], evidence_refs=["12ABCD"])
    assert (got["tags"], got["evidence_refs"], found) == (["ops", SPLIT], [SPLIT], ["split_token", "split_token"])
    got, found = _fields(tags=["ops"], evidence_refs=["AKIAQZTRXWBNKJ"], source_ref="12ABCD")
    assert (got["tags"], got["evidence_refs"], got["ref"]) == (["ops"], [SPLIT], SPLIT)
    got, found = _fields(tags=["AKIA", "QZTRXWBNKJ12ABCD"])  # cut right after its prefix
    assert (got["tags"], found) == ([SPLIT, WHOLE], ["token_in_field", "split_token"])


def test_a_random_token_cut_into_two_short_halves_loses_both() -> None:
    got, found = _fields(tags=["deploy", "Qm7Xz2"], evidence_refs=["Lp9Wk4"])
    assert (got["tags"], got["evidence_refs"], found) == (["deploy", SPLIT], [SPLIT], ["split_token", "split_token"])


def test_when_one_half_of_a_token_went_the_rest_in_another_field_goes_too() -> None:
    got, found = _fields(tags=["ops"], evidence_refs=[f"key {GITHUB[:-6]}"],
                         provenance={"agent": "hermes", "session_id": GITHUB[-6:]})
    assert got["evidence_refs"] == ["key [REDACTED:github_token]"]
    assert got["provenance"] == {"agent": "hermes", "session_id": SPLIT} and got["tags"] == ["ops"]
    assert found == ["github_token", "split_token"]


@pytest.mark.parametrize("value,random_token", [
    ("a8Fk2LmQ", True),      # eight characters: long enough
    ("a8Fk2Lm", False),      # seven: too short to tell
    ("kx7mpq2wzr", True),    # two digits among letters, not a word and a number
    ("abCDefGH", True),      # case changing three times
    ("aBcdefgh", False),     # twice: a word with capitals
    ("Build2026", False),    # a word and a year
    ("release2026", False),
    ("8f3a9c2e1b7d", False),  # hex digits only: a digest's piece
])
def test_token_like_at_its_edges(value: str, random_token: bool) -> None:
    assert token_like(value) is random_token
    assert token_like(f"[REDACTED:github_token] {value}") is random_token  # a marker is not a piece of a token


# --- doctor's file scan (``scan.scan_file``): which line, which kinds, JSONL read as JSON ---

def _escaped(token: str) -> str:
    """``token`` with every character written as a JSON ``\\uXXXX`` escape (valid JSON, no letter of it visible)."""
    return "".join(f"\\u{ord(c):04x}" for c in token)


def test_a_jsonl_line_is_read_as_json_an_escaped_token_is_found_and_each_string_counts(tmp_path: Path) -> None:
    f = tmp_path / "captured.jsonl"
    lines = [
        '{"id": "cap_1", "text": "Use port 5000 for staging."}',
        '{"id": "cap_2", "text": "token ' + _escaped(GITHUB) + '"}',  # only JSON decoding shows it
        json.dumps({"id": "cap_3", "text": f"aws {AWS}", "tags": ["ops", "deploy-notes"], "status": "new candidate"}),
        json.dumps({"id": "cap_4", "tags": ["ops", f"key {GITHUB}"]}),  # in a list
        json.dumps({"id": "cap_5", "refs": {GITHUB: "the token as a key"}}),  # a key is a string too
        json.dumps({"id": "cap_6", "text": f"{GITHUB} and {AWS}"}),
        json.dumps({"id": "cap_7", "note": "pwd=abc1"}),  # eight characters: the shortest string the redactor reads
    ]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert list(scan_file(f)) == [(2, ["github_token"]), (3, ["aws_access_key"]), (4, ["github_token"]),
                                  (5, ["github_token"]), (6, ["github_token", "aws_access_key"]),
                                  (7, ["connection_string"])]
    upper = tmp_path / "captured.JSONL"  # not a store file name: read as text, where the escapes hide it
    upper.write_text(lines[1] + "\n", encoding="utf-8")
    assert list(scan_file(upper)) == []


def test_a_markdown_line_is_read_as_text_even_when_it_is_json(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    f.write_text('# Notes\n\n{"password": "Winter2024!x"}\n', encoding="utf-8")
    assert list(scan_file(f)) == [(3, ["password_assignment"])]


def test_short_lines_and_bytes_that_are_not_utf8_are_passed_over_and_counted(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    f.write_bytes(b"ok\n\ncaf\xe9 au lait, \xff\xfe no text here\npwd=abc1\r\nseven c\n" + f"token {GITHUB}\n".encode())
    assert list(scan_file(f)) == [(4, ["connection_string"]), (6, ["github_token"])]


def test_a_token_at_either_end_of_a_very_long_line_is_found_once(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    filler = "x " * WINDOW
    f.write_text(f"{GITHUB} {filler}\n", encoding="utf-8")  # at its very first character
    assert list(scan_file(f)) == [(1, ["github_token"])]
    # at the end of a line exactly two windows long (less their overlap): the last window holds
    # it; no window after it reads it again
    line = "y " * ((2 * WINDOW - OVERLAP - len(GITHUB) - 1) // 2)
    line = line + " " * (2 * WINDOW - OVERLAP - len(GITHUB) - len(line)) + GITHUB
    assert len(line) == 2 * WINDOW - OVERLAP
    f.write_text(line + "\n", encoding="utf-8")
    assert list(scan_file(f)) == [(1, ["github_token"])]


# --- what callers read of a redaction: the kinds, the summary, the yes/no, a name redacted again ---

def test_what_a_caller_reads_of_a_redaction() -> None:
    assert contains_secret(f"the deploy token is {GITHUB}") is True
    assert contains_secret("the deploy token is in the vault") is False
    assert summarize(["openai_key", "password_in_url", "openai_key"]) == "2 openai_key, 1 password_in_url"
    assert summarize([]) == ""
    clean = redact(f"token {GITHUB}, key {AWS}").text
    assert redacted_kinds(clean) == ["github_token", "aws_access_key"]  # what scoring reads instead of scanning again
    assert redacted_kinds("no markers here") == []


def test_a_name_redacted_once_keeps_its_marker_when_a_new_token_is_redacted_out_of_it() -> None:
    red = redact_name(f"REDACTED-github_token-and-{AWS}.md")
    assert (red.text, red.findings) == ("REDACTED-github_token-and-REDACTED-aws_access_key.md", ["aws_access_key"])


@pytest.mark.parametrize("rest,goes", [
    ("qwertyUIOPasdf", True),   # the case changes twice: the rest of a random token
    ("xk3mqzwt", True),         # letters and digits
    ("DEPLOYNOTES", False),     # one case only: a word in capitals
    ("qwertyUIOP", False),      # one change: words run together
    ("Kestrel", False),
])
def test_the_word_after_a_token_goes_only_when_it_looks_like_the_rest_of_it(rest: str, goes: bool) -> None:
    out = redact(f"the token {GITHUB} {rest} was rotated")
    kept = f"the token [REDACTED:github_token] {rest} was rotated"
    cut = "the token [REDACTED:github_token] [REDACTED:partial_token] was rotated"
    assert out.text == (cut if goes else kept)


# --- a password in prose: two kinds of character or more, six characters or more, not one word ---

@pytest.mark.parametrize("value", ["hunter22", "HUNTER22", "hun!ter#", "!Winter", "Winter!X", "hunt22", "Winter2024"])
def test_a_password_in_prose_of_two_kinds_of_character_goes(value: str) -> None:
    assert redact(f"the password is {value}").text == "the password is [REDACTED:password_in_prose]"


@pytest.mark.parametrize("text", ["the password is ******", "the password is expired.", "the password is Required."])
def test_prose_whose_value_is_a_mask_or_a_word_is_kept(text: str) -> None:
    assert redact(text).text == text


def test_one_word_that_ends_the_sentence_is_the_password_dictated() -> None:
    """``values.dictated``: a word the sentence does not go on with is the password itself (issue 37)."""
    assert redact("the password is Winter.").text == "the password is [REDACTED:password_in_prose]."


# --- a hex run next to a secret word is a key, unless a digest word stands right before it ---

HEX64 = "9f2c4e8a1b7d3f6e0a5c9b2d4f8e1a7c3b6d0f9e2a4c8b1d7f3e6a0c5b9d2f4e"


def test_a_hex_run_after_a_digest_word_is_kept_and_after_a_secret_word_goes() -> None:
    for text in (f"id {HEX64} key", f"sha {HEX64} is the key", f"the key id {HEX64}"):
        assert redact(text).text == text, text
    assert redact(f"key: {HEX64}").text == "key: [REDACTED:hex_key]"


def test_the_id_and_time_new_candidate_makes_are_kept_and_an_extra_field_of_their_name_is_read() -> None:
    """``new_candidate`` does not send the id and the time it made to the redactor (no input reaches them),
    but a caller's extra field named ``id`` or ``created_at`` is read like every other."""
    cand = new_candidate(TEXT, tags=["ops"])
    assert cand["id"].startswith("cap_") and cand["created_at"].endswith("Z")
    assert list(cand)[:2] == ["id", "created_at"]  # the contract's key order
    found: list[str] = []
    token = "ghp_" + "aB3dE5fG7hI9jK1lM2nO4pQ6rS8tU0vW2xY4"  # generated, GitHub's shape
    cand = new_candidate("a fact", findings=found, id=AWS, created_at=f"2026-12-05 {token}")
    assert AWS not in cand["id"] and token not in cand["created_at"]
    assert len(found) == 2
