"""The secret gate's promises that its mutation run (``scripts/mutation secrets``) found unguarded:
each test names what a user depends on (a token of a given shape is removed whole, a benign text
or name is left exactly as written, a report points at the right line)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from commonkeep.governance.secrets import (
    Redacted,
    contains_secret,
    provider,
    redact,
    redact_name,
    redact_obj,
    redacted_kinds,
    summarize,
)
from commonkeep.governance.secrets.fields import token_like
from commonkeep.governance.secrets.provider import kind_of
from commonkeep.governance.secrets.scan import OVERLAP, WINDOW, scan_file
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


@pytest.mark.parametrize("text", ["the password is ******", "the password is expired.", "the password is Winter."])
def test_prose_whose_value_is_a_mask_or_a_word_is_kept(text: str) -> None:
    assert redact(text).text == text


# --- a hex run next to a secret word is a key, unless a digest word stands right before it ---

HEX64 = "9f2c4e8a1b7d3f6e0a5c9b2d4f8e1a7c3b6d0f9e2a4c8b1d7f3e6a0c5b9d2f4e"


def test_a_hex_run_after_a_digest_word_is_kept_and_after_a_secret_word_goes() -> None:
    for text in (f"id {HEX64} key", f"sha {HEX64} is the key", f"the key id {HEX64}"):
        assert redact(text).text == text, text
    assert redact(f"key: {HEX64}").text == "key: [REDACTED:hex_key]"


# --- long random runs (``rules.looks_random``), each side of each documented edge ---

@pytest.mark.parametrize("token,goes", [
    ("XxTKTkIjtuJKdpoJIKFn", True),    # 20 characters, both cases changing often: random
    ("oLjlL3Fzjz207QC18r==", False),   # 18 without its padding: too short to tell from an id
    ("iAXQL0gYEH69U6N69O4X", True),    # 20, two lower-case letters are enough with digits
    ("DqbpzzJRnCzinaBzWrmt", True),    # lower-case runs just under half of it
    ("C8CT9vxz4b4xIRAJy431QL23", True),  # many digits: two case changes are enough
    ("KZPU8XCNKUT3GAL8XMKRKHMY", True),  # 24 upper-case letters and digits, many beyond hex
    ("NAK2D0G9C7K3EA9AJOA8C6P1G5", True),  # six letters beyond hex: enough
    ("0CBAA946J306FEAA6EHBJ62EC83ABHBGE==", False),  # upper-case hex with three letters beyond it
    ("NOQJsthYGeruynAeTQxysSNzIsoYqCyx", False),  # 32 letters without a digit
    ("RqjmuAYyvgzIhxjNbDeXkjMgafWaWAiinynV", False),  # 36 letters without a digit
    ("redactedkyIVbNRrG1Y7jW641rifxiPEuCFI", True),  # begins with the word, not with a marker
    ("REDACTEDG1Y8S9Q4UGNUCBASU2ZUZEEU3", False),  # what follows a marker is not read as a token
    ("0hlrWB88gpj7k2tsjs0sW5uq4", True),  # digits: two case changes are enough
    ("KqMPrtv0mbocsspli2DDPB", True),
    ("JKEZS2IxezulUStyCTNSF", True),     # one digit: four case changes
    ("AWSIAMRoleARNForEKSNodes", False),  # an identifier of acronyms without a digit: five changes are not six
    ("PostgresHAClusterNode3", False),
    ("RedisClusterForAPIGW2", False),
    ("AWSLambdaEUWEST1PRODXYZ", False),  # one digit: two case changes are not four
])
def test_a_long_run_goes_when_it_looks_random_at_each_edge_of_the_rule(token: str, goes: bool) -> None:
    want = "the value [REDACTED:high_entropy] is set" if goes else f"the value {token} is set"
    assert redact(f"the value {token} is set").text == want


@pytest.mark.parametrize("text,want", [
    ("open /srv/db/Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx.md now", "open /srv/db/[REDACTED:high_entropy].md now"),
    ("file ~/Documents/Reports/Q4.Xk3mP9qLw2Zp4Lq8Wm2Rt.pdf", "file ~/Documents/Reports/Q4.[REDACTED:high_entropy].pdf"),
    ("see ab/Cd/Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx", "see ab/Cd/[REDACTED:high_entropy]"),
    ("see /tmp/tmp.X7fa9Qz2Lk.json for the log", "see /tmp/tmp.X7fa9Qz2Lk.json for the log"),
    ("see docs/notes/Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx", "see docs/notes/[REDACTED:high_entropy]"),
    ("see www.Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx.com", "see www.[REDACTED:high_entropy].com"),
    ("see docs/notes/Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx/QzK8mP2xLw9RtY4vN7bJ6hG3",
     "see docs/notes/[REDACTED:high_entropy]/[REDACTED:high_entropy]"),
    # one word of two, or two of four: not a path written by a person, the whole run goes
    ("see docs/Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx", "see [REDACTED:high_entropy]"),
    ("see srv/data/AB12/CD34/Xk3mP9qLw2Zp4Lq8Wm2Rt6Hb5Nc3Vx", "see [REDACTED:high_entropy]"),
])
def test_a_path_keeps_its_words_and_loses_only_its_random_segment(text: str, want: str) -> None:
    assert redact(text).text == want


# --- the maintained provider rules' kinds ---

@pytest.mark.parametrize("rule_id,kind", [
    ("betterleaks.github-pat", "github_pat"), ("veles.secrets/postmanapikey", "postmanapikey"),
    ("kingfisher.azure.storage.1", "azure_storage_1"), ("custom.acme-key", "acme_key"),
    ("veles.secrets/gcpsak", "gcpsak"), ("betterleaks.-slack-bot-", "slack_bot"), ("custom.--", "provider_token"),
])
def test_a_provider_finding_is_named_after_its_rule_without_the_engine(rule_id: str, kind: str) -> None:
    assert kind_of(rule_id) == kind


def test_a_provider_only_token_in_a_long_text_goes() -> None:
    a, b = "3f9a0c2b7e4d1f8a6c5b9e0d", "7a2c4e6f8b0d1a3c5e7f9b2d4a6c8e0f1b"
    text = "notes " * 800 + f"postman PMAK-{a}-{b} for the collection runner"
    assert len(text) > 4096
    out = redact(text)
    assert a not in out.text and b not in out.text and out.findings == ["postmanapikey"]


# --- redact at its edges: short text, the cache's length limit ---

def test_redact_leaves_short_text_and_reads_eight_characters() -> None:
    for text in ("", "abc", "pwd=ab1"):
        assert redact(text) == Redacted(text, [])
    assert redact("pwd=abc1") == Redacted("pwd=[REDACTED:connection_string]", ["connection_string"])


# --- a token split across two strings of one object (``redact_obj``) ---

def test_the_rest_of_a_split_token_goes_in_the_object_that_holds_its_first_half_only() -> None:
    half = GITHUB[:30]
    record = {
        "id": "cap_20261203101010_ab12cd", "created_at": "2026-12-03T10:10:10Z",
        "text": f"the deploy token is {half}", "note": "Xq9LmZ2pWk7R and more",
        "ops": [{"text": f"op token {half}", "reason": "Zk8QpL3mWx9T was the rest"},
                {"text": "Deploy notes", "tags": ["ops", "3f2b8c1e4d5a"]}],
        "notes": ["3f2b8c1e4d5a fixed the build", "see the log"],
    }
    found: list[str] = []
    out = redact_obj(record, found)
    assert out == {
        "id": "cap_20261203101010_ab12cd", "created_at": "2026-12-03T10:10:10Z",  # ids and dates are never a half
        "text": "the deploy token is [REDACTED:partial_token]", "note": "[REDACTED:partial_token] and more",
        "ops": [{"text": "op token [REDACTED:partial_token]", "reason": "[REDACTED:partial_token] was the rest"},
                {"text": "Deploy notes", "tags": ["ops", "3f2b8c1e4d5a"]}],  # an op of its own: nothing split there
        "notes": ["[REDACTED:partial_token] fixed the build", "see the log"],
    }
    assert found == ["partial_token"] * 5
    assert record["note"] == "Xq9LmZ2pWk7R and more"  # the caller's value is not changed
    benign = {"notes": ["3f2b8c1e4d5a fixed the build", "see the log"]}
    assert redact_obj(benign) == benign


# --- the maintained provider rules: loaded once, and found inside base64 too ---

PMAK = "PMAK-3f9a0c2b7e4d1f8a6c5b9e0d-7a2c4e6f8b0d1a3c5e7f9b2d4a6c8e0f1b"  # a Postman key: only the provider rules know it


def test_the_maintained_rules_load_once_and_find_a_token_only_they_know_also_in_base64(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provider, "_STATE", {})  # a fresh process: nothing loaded yet
    monkeypatch.setattr(provider, "_scan", provider._scan.__wrapped__)  # no answer from an earlier test
    scanner = provider._scanner()
    assert scanner is not None and provider._scanner() is scanner and provider.available()
    assert provider.provider_values(f"postman {PMAK} for the runner") == ((PMAK, "postmanapikey"),)
    encoded = base64.b64encode(f"key {PMAK}".encode()).decode()
    assert provider.provider_values(f"the blob {encoded} is set") == ((PMAK, "postmanapikey"),)


def test_provider_tokens_and_long_strings_deep_in_an_object_go() -> None:
    long_note = "notes " * 800 + f"and the token {GITHUB}"
    record = {"a": {"b": f"postman {PMAK} for the runner", "c": ["ops", "docs/ops.md"]}, "long": long_note,
              "prose": "notes " * 800 + "and the password is hunter22",  # one the provider rules miss
              "short": "pwd=abc1", "id": "cap_20261203101010_ab12cd"}
    found: list[str] = []
    out = redact_obj(record, found)
    assert out == {"a": {"b": "postman [REDACTED:postmanapikey] for the runner", "c": ["ops", "docs/ops.md"]},
                   "long": "notes " * 800 + "and the token [REDACTED:github_token]",
                   "prose": "notes " * 800 + "and the password is [REDACTED:password_in_prose]",
                   "short": "pwd=[REDACTED:connection_string]", "id": "cap_20261203101010_ab12cd"}
    assert sorted(found) == ["connection_string", "github_token", "password_in_prose", "postmanapikey"]
    benign_long = {"long": "notes " * 800}
    assert redact_obj(benign_long) == benign_long


def test_a_token_written_in_upper_case_hex_is_decoded_and_goes() -> None:
    encoded = GITHUB.encode().hex().upper()
    assert redact(f"the blob {encoded} is in the config").text == "the blob [REDACTED:encoded_github_token] is in the config"


# --- credentials found by their place: a short flag's value, an elided value, quotes kept ---

@pytest.mark.parametrize("text,want", [
    ("mytool -p Winter2024 --host db", "mytool -p [REDACTED:password_short_flag] --host db"),  # three kinds
    ("mytool -p Winter!x --host db", "mytool -p [REDACTED:password_short_flag] --host db"),
    ("mytool -p WINTER2024 --host db", "mytool -p WINTER2024 --host db"),  # two kinds: any command's flag
    ("token=Xq3Lm9P…", "token=Xq3Lm9P…"),  # the writer elided it: seven characters shown
    ("Server=db;Pwd=Xq3Lm9P…;", "Server=db;Pwd=Xq3Lm9P…;"),
    ("sshpass -p 'Xq3L…' ssh host", "sshpass -p 'Xq3L…' ssh host"),
    ("token=Xq3Lm9Pz…", "token=[REDACTED:connection_string]"),  # eight shown: a value after all
    ('password="Winter2024!"', 'password="[REDACTED:sql_password]"'),  # the quotes stay
])
def test_a_credential_found_by_its_place_at_the_edges(text: str, want: str) -> None:
    assert redact(text).text == want


# --- text outside ASCII: scanned folded and as written, the spans merged ---

def test_disguised_tokens_next_to_each_other_or_to_a_password_all_go() -> None:
    cyrillic = GITHUB.replace("a", "\u0430").replace("e", "\u0435")  # Cyrillic look-alikes
    assert redact(f"Zugang: {GITHUB}{cyrillic}").text == "Zugang: [REDACTED:github_token]"
    assert redact(f"токен {cyrillic} и пароль: Winter2024!").text == \
        "токен [REDACTED:github_token] и пароль: [REDACTED:password_in_prose]!"
    postman = PMAK.replace("a", "\u0430")  # only the provider rules know it, and only folded
    assert redact(f"postman {postman} für den Läufer").text == "postman [REDACTED:postmanapikey] für den Läufer"


# --- redaction is idempotent; more places a token hides ---

@pytest.mark.parametrize("text", [
    "mytool -p Winter2024 --host db", f"the token is {GITHUB} and the key {AWS}", "password=12345678",
    f"postman {PMAK} for the runner", "the password is hunter22", 'password="Winter2024!"',
])
def test_redacting_a_redacted_text_finds_nothing_and_changes_nothing(text: str) -> None:
    once = redact(text)
    assert once.findings and once.text != text
    again = redact(once.text)
    assert (again.text, again.findings) == (once.text, [])


def test_a_password_of_digits_only_in_an_assignment_goes() -> None:
    assert redact("password=12345678").text == "password=[REDACTED:password_assignment]"


def test_a_provider_only_token_written_three_times_goes_each_time() -> None:
    out = redact(f"{PMAK} then {PMAK} and {PMAK}")
    assert out.text == "[REDACTED:postmanapikey] then [REDACTED:postmanapikey] and [REDACTED:postmanapikey]"


def test_three_pieces_of_tokens_in_tags_all_go() -> None:
    got, found = _fields(tags=["AKIAQZTRXWBNKJ", "12ABCD", "Lp9Wk4"])
    assert (got["tags"], found) == ([SPLIT, SPLIT, SPLIT], ["split_token"] * 3)


def test_after_a_whole_token_at_the_end_of_a_string_the_random_start_of_another_goes() -> None:
    out = redact_obj({"text": f"the deploy token is {GITHUB}", "note": "Xq9LmZ2pWk7R and more"})
    assert out == {"text": "the deploy token is [REDACTED:github_token]", "note": "[REDACTED:partial_token] and more"}


def test_a_provider_only_token_in_a_long_string_of_an_object_goes() -> None:
    out = redact_obj({"long": "notes " * 800 + f"postman {PMAK}"})
    assert out == {"long": "notes " * 800 + "postman [REDACTED:postmanapikey]"}


def test_a_seed_phrase_goes_whole_and_the_words_around_it_stay() -> None:
    from commonkeep.governance.secrets import structure

    words = " ".join(sorted(structure.word_lists()[0])[:400:33][:12])  # twelve BIP-39 words
    assert redact(f"my wallet seed: {words} and then the rest of the note").text == \
        "my wallet [REDACTED:seed_phrase] and then the rest of the note"
    assert redact(f"seed phrase {words}. Keep it safe.").text == "[REDACTED:seed_phrase]. Keep it safe."


@pytest.mark.parametrize("text,want", [
    ("clone https://user:password@example.com/repo.git", "clone https://user:password@example.com/repo.git"),
    ("mytool -p WINTER2024 then mytool -p Winter2024", "mytool -p WINTER2024 then mytool -p [REDACTED:password_short_flag]"),
    ("the password is expired. The new password is Winter2024!",
     "the password is expired. The new password is [REDACTED:password_in_prose]!"),
])
def test_a_placeholder_or_a_weak_first_match_does_not_hide_the_next_one(text: str, want: str) -> None:
    assert redact(text).text == want


def test_a_token_encoded_twice_is_decoded_twice_and_goes() -> None:
    twice = base64.b64encode(base64.b64encode(f"token {GITHUB}".encode())).decode()
    assert redact(f"the blob {twice} is set").text == "the blob [REDACTED:encoded_encoded_github_token] is set"


@pytest.mark.parametrize("plain", ["admin:Winter2024", "admin:Wi:nter2024", "admin:winter:2024"])
def test_a_base64_user_and_password_goes_as_basic_auth(plain: str) -> None:
    blob = base64.b64encode(plain.encode()).decode()
    assert redact(f"the blob {blob} is in the config").text == "the blob [REDACTED:basic_auth] is in the config"


def test_a_seed_phrase_of_twelve_words_alone_and_with_repeated_words_goes() -> None:
    from commonkeep.governance.secrets import structure

    words = sorted(structure.word_lists()[0])[:400:33][:12]
    assert redact(" ".join(words)).text == "[REDACTED:seed_phrase]"  # exactly twelve
    assert redact(" ".join(words[:8] + words[:4])).text == "[REDACTED:seed_phrase]"  # eight distinct


def test_a_first_match_passed_over_does_not_hide_a_later_key_or_token() -> None:
    key = "3b6d0f9e2a4c8b1d7f3e6a0c5b9d2f4e9f2c4e8a1b7d3f6e0a5c9b2d4f8e1a7c"
    assert key not in redact(f"the api key's sha256 is {HEX64}, the signing key {key}").text
    bare = HEX64[:48]  # a hex run of no digest's length, after padding that is no key
    # a digest word more than 24 characters before a bare hex run does not excuse it
    assert redact(f"commit and the next bits {bare}").text == "commit and the next bits [REDACTED:hex_key]"
    assert redact(f"fill {'0' * 48} and {bare} end").text == f"fill {'0' * 48} and [REDACTED:hex_key] end"
    assert redact("pip install hf_transfer then use hf_Xk3mP9qLw2Zp4L").text == \
        "pip install hf_transfer then use [REDACTED:partial_token]"


def test_a_base64_run_that_decodes_to_bytes_does_not_hide_an_encoded_token_after_it() -> None:
    binary = base64.b64encode(bytes(range(200, 240))).decode()
    token = base64.b64encode(f"token {GITHUB}".encode()).decode()
    assert redact(f"first {binary} then {token}").text == \
        "first [REDACTED:high_entropy] then [REDACTED:encoded_github_token]"


def test_a_token_with_one_look_alike_inside_is_named_by_its_whole_kind() -> None:
    disguised = GITHUB[:20] + "\u0430" + GITHUB[21:]  # one Cyrillic letter: the rest alone looks like a cut token
    assert redact(f"token {disguised} end").text == "token [REDACTED:github_token] end"


def test_a_token_in_url_safe_base64_is_decoded_and_goes() -> None:
    blob = base64.urlsafe_b64encode(f"token {GITHUB}??>>".encode()).decode()
    assert "-" in blob or "_" in blob
    assert redact(f"blob {blob} end").text == "blob [REDACTED:encoded_github_token] end"


def test_a_provider_style_hex_token_goes_with_its_prefix() -> None:
    assert redact(f"use live_{HEX64[:40]} now").text == "use [REDACTED:prefixed_hex_token] now"


def test_a_seed_phrase_right_after_other_list_words_and_a_full_stop_goes() -> None:
    from commonkeep.governance.secrets import structure

    words = " ".join(sorted(structure.word_lists()[0])[:400:33][:12])
    assert redact(f"backup: abandon aerobic. {words}").text == "backup: abandon aerobic. [REDACTED:seed_phrase]"
