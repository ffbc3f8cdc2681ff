"""The secret gate's rules at their edges, found unguarded by its mutation run (``scripts/mutation
secrets``; the fields, the file scan and what callers read are in ``test_secret_mutants.py``):
long random runs, paths, the provider rules, credentials by place, text outside ASCII, encodings,
seed phrases, and a redaction that finds nothing in its own output."""

from __future__ import annotations

import base64

import pytest

from commonkeep.secrets import Redacted, provider, redact, redact_obj
from commonkeep.secrets.provider import kind_of
from tests.governance.test_secret_mutants import AWS, GITHUB, HEX64, SPLIT, _fields

# --- long random runs (``randomness.looks_random``), each side of each documented edge ---

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
    from commonkeep.secrets import structure

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
    from commonkeep.secrets import structure

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
    from commonkeep.secrets import structure

    words = " ".join(sorted(structure.word_lists()[0])[:400:33][:12])
    assert redact(f"backup: abandon aerobic. {words}").text == "backup: abandon aerobic. [REDACTED:seed_phrase]"


@pytest.mark.parametrize("token", [GITHUB, AWS])
def test_a_token_pasted_twice_with_nothing_between_leaves_no_character(token: str) -> None:
    out = redact(f"x {token}{token} y").text
    assert out.startswith("x [REDACTED:") and out.endswith("] y") and not any(
        part in out for part in (token[-4:], token[-1] + " y")), out
