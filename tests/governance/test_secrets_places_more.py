"""More places that say a value is a secret (``secrets/places.py``, issue 37): commands with a
positional password, piped passwords, config formats, credential calls, the Wi-Fi key and the
dictated password in more languages, PINs and codes. Each case is written here with a made-up
value of the plainest shape that place may hold (lower-case letters, digits); the benign twin of
each place stays."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

V = "qorvantelmi"  # lower-case letters only: known by its place alone
LEAKS = [
    "cqlsh -u cassandra -p {v} db1",
    "db2 connect to sample user db2inst1 using {v}",
    "neo4j-admin dbms set-initial-password {v}",
    "jdbc:oracle:thin:scott/{v}@db:1521:orcl",
    "samba-tool user create bob {v}",
    "dsadd user cn=bob,dc=x,dc=com -pwd {v}",
    'New-LocalUser -Name bob -Password (ConvertTo-SecureString "{v}" -AsPlainText -Force)',
    "echo '{v}' | pw useradd bob -h 0",
    "netsh wlan set hostednetwork mode=allow ssid=Lab key={v}",
    "<sharedKey><keyType>passPhrase</keyType><keyMaterial>{v}</keyMaterial></sharedKey>",
    "networksetup -setairportnetwork en0 HomeNet {v}",
    "bob * {v} *",
    "pre-shared-key {v}",
    "/interface wireless security-profiles set default wpa2-pre-shared-key={v}",
    "echo {v} | openconnect --passwd-on-stdin vpn.example.net",
    "IMAPAccount work\nHost imap.example.net\nUser bob\nPass {v}",
    'credentials += Credentials("Sonatype", "oss.sonatype.org", "bob", "{v}")',
    "nuget sources add -Name acme -Source https://nuget.example.net -UserName bob -Password {v}",
    "poetry config http-basic.acme bob {v}",
    "twine upload -u __token__ -p {v} dist/*",
    "http -a bob:{v} https://api.example.net",
    'req.SetBasicAuth("bob", "{v}")',
    'new UsernamePasswordCredentials("bob", "{v}")',
    'new NetworkCredential("bob", "{v}")',
    'curl_setopt($ch, CURLOPT_USERPWD, "bob:{v}");',
    "auth: 'bob:{v}'",
    "WLAN-Schlüssel: {v}",
    "Netzwerkschlüssel lautet {v}",
    "clé WPA : {v}",
    "mật khẩu là {v}",
    "kata sandinya {v}",
    "รหัสผ่านคือ {v}",
    "كلمة المرور هي {v}",
    "הסיסמה היא {v}",
    "पासवर्ड है {v}",
    "pass is {v}",
    "pw: {v}",
    "creds for the staging box: bob / {v}",
    "echo {v} | sudo -S apt update",
    'expect "password:"\nsend "{v}\\r"',
    "aws ssm put-parameter --name /db/pw --value {v} --type SecureString",
    "gh secret set DB_PASSWORD --body {v}",
    "printf '{v}' | docker secret create db_pw -",
    '{{"username": "bob", "pass": "{v}"}}',
]


@pytest.mark.parametrize("template", LEAKS, ids=[t[:28] for t in LEAKS])
def test_a_plain_value_in_one_of_these_places_goes(template: str) -> None:
    out = redact(template.format(v=V)).text
    assert V not in out and V[:8] not in out, out


@pytest.mark.parametrize(("text", "value"), [
    ("The PIN for my debit card is 9313", "9313"),
    ("the door code is 4821", "4821"),
    ("safe combination 53-66-31", "53-66-31"),
    ("Google backup codes: 1234 5678 9012 3456", "1234 5678"),
    ("Microsoft account recovery code: AB3CD-EF4GH-IJ5KL-MN6OP-QR7ST", "AB3CD"),
    ("2FA recovery codes: 4a0yd-lqhbs qvj9w-neut8", "4a0yd"),
    ('<machineKey validationKey="B57CDB8DD750A136DF3D6B7C31CA7B5DA89FA571EA72FB9294AF5F6CE8063D50" />', "B57CDB8DD750A136"),
    ("The wifi password is 48213377", "48213377"),
])
def test_codes_and_numbers_in_their_place_go(text: str, value: str) -> None:
    assert value not in redact(text).text


KEPT = [
    "A linear merge followed by a single coalescing pass: adjacent intervals collapse.",
    "Pass :meth:`peek` a default value to return that instead of raising StopIteration.",
    ">>> pw = Piecewise((x + 1, x > 0), (x, True))",
    'Credentials("realm", "oss.sonatype.org")',
    "The PIN code for the Raspberry Pi 4 header is printed on the board.",
    "Backup codes have been regenerated; the old ones are read-only now.",
    "Run the login command, then pass the token file.",
    "pw = getpass.getpass()",
    "The wifi key is on the router.",
    "the pass is closed in winter",
]


@pytest.mark.parametrize("text", KEPT)
def test_the_same_words_in_ordinary_text_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(("text", "value"), [
    ("The password is PLUTO-GATE", "PLUTO-GATE"),  # upper case and a mark: two classes
    ("The password is sun&moon", "sun&moon"),  # lower case and a mark
    ("The password is abc123", "abc123"),  # two classes, six characters
    ("The password is abcd1X", "abcd1X"),  # a value ending in X is not cut short
])
def test_a_strong_prose_value_goes(text: str, value: str) -> None:
    assert value not in redact(text).text


@pytest.mark.parametrize("text", ["The password is ######", "The password is ab1"])
def test_a_value_of_one_class_or_five_characters_stays_in_prose(text: str) -> None:
    assert redact(text).text == text


TOKEN = "k3j2h1g0f9e8d7c6b5a4z3y2"  # lower case and digits: no provider's shape
LETTERS = "qwrtzplkjhgfdsyxcvbnmasd"  # 24 letters: random, not a word
TOKEN_FORMS = [
    "use {v} to authenticate",
    "my key for the service is {v}",
    "I set the webhook secret to {v}",
    "Paste this token into the app: {v}",
    "Your code: {v} (do not share)",
    "here's my api key {v}",
    "the access key is {v}",
]


@pytest.mark.parametrize("form", TOKEN_FORMS)
@pytest.mark.parametrize("value", [TOKEN, LETTERS])
def test_a_token_given_in_prose_goes_whatever_its_alphabet(form: str, value: str) -> None:
    assert value[:12] not in redact(form.format(v=value)).text


@pytest.mark.parametrize("text", [
    "The key insight: deploys are idempotent.",
    "Set the sort key to created_at_timestamp_utc.",
    "use internationalization to reach more users",
    "Share the dashboard with the on-call team.",
])
def test_prose_about_keys_and_tokens_without_one_stays(text: str) -> None:
    assert redact(text).text == text


def test_a_dotted_token_is_not_a_module_path() -> None:
    """``values._random_part``: a part of 20+ characters mixing letters and digits is not ``module.attr``."""
    assert TOKEN[:12] not in redact(f"--token abcd.efgh.{TOKEN}").text
    assert redact("--token settings.auth.token_name").text == "--token settings.auth.token_name"


@pytest.mark.parametrize(("value", "goes"), [
    ("settings.k3j2h1g0f9e8d7c6b5a4", True),  # a part of 20 that mixes letters and digits
    ("settings.k3j2h1g0f9e8d7c6b5a", False),  # 19: a name
    ("settings.abcdefghijklmnopqrstu", False),  # letters alone: a name
])
def test_a_dotted_value_is_a_token_from_twenty_mixed_characters(value: str, goes: bool) -> None:
    assert (redact(f"--token {value}").text != f"--token {value}") is goes


@pytest.mark.parametrize("text", [
    "Het wachtwoord is abc12.",  # five characters and a full stop: not strong
    "The password is CaseSensitive in this form",  # one word of letters the sentence goes on from
])
def test_a_short_or_letters_only_prose_value_the_sentence_goes_on_from_stays(text: str) -> None:
    assert redact(text).text == text


DICTATED_FORMS = [
    "password -> {v}",
    "password? {v}",
    "Password for wifi - {v}",
    "пароль — {v}",
    "ton mot de passe c'est {v}",
    "비밀번호는 {v}입니다",
    "şifrem {v}",
    "The new password will be {v}",
    "Passwort lautet: {v}",
    "password was reset to {v}.",
    "{v} is the password",
    "{v} is the wifi password.",
    "it's {v} (the password)",
]


@pytest.mark.parametrize("form", DICTATED_FORMS)
def test_a_plain_password_dictated_in_more_forms_goes(form: str) -> None:
    assert V not in redact(form.format(v=V)).text


@pytest.mark.parametrize("text", [
    "The password is required - see below.",
    "password? no idea",
    "password -> hashed",
    "The password will be generated",
    "This is the password.",
    "What is the password?",
    "Entropy is the password property that matters.",
    "Which is the password field",
    "That was my old password",
])
def test_the_same_forms_with_a_word_of_the_sentence_stay(text: str) -> None:
    assert redact(text).text == text
