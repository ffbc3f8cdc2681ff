"""A password given beside its place, not after its name and a verb (issue 37, found by the hand probes
of sessions 17 and 18: 41 of 674 forms still leaked): a comment on a line that names a password, a user
and a password for a place, "creds are U and X", a password's word then a colon later in the sentence,
``pass - X``, ``pw = X``, a list of places and their passwords, a value set with no name ("I set it to
X"), an e-mail address then a password, ``admin/X`` in a login's sentence, "as bob with X", commands
with a password of their own (``bw unlock``, ``iwconfig … key s:``, ``expdp user/X``) and a config line
that echoes one (``asides.py``). Beside each, the ordinary text that stays: notes
on code, versions, tags, settings and the words of such sentences with no password in them."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

MARKED = "qv7Rk2m#wz9L"  # generated: a letter, a digit and a mark
WORDY = "falcon57"  # a word and two digits: what people choose

GONE = [
    f"ANDROID_KEYSTORE_PASSWORD: ${{{{ secrets.KS }}}} # was {WORDY}",
    f"DB_PASSWORD=${{DB_PASSWORD}}  # old: {MARKED}",
    f"createuser -P app  # typed {WORDY}",
    f"auth-user-pass creds.txt  # bob / {MARKED}",
    f"bob / {WORDY} for the VPN",
    f"use bob / {MARKED} on the NAS",
    f"VPN creds are bob and {WORDY}",
    f"the login: bob and {MARKED}.",
    f"the vpn password is the same as the wifi one: {WORDY}",
    f"Password for the staging box (rotated monthly): {MARKED}",
    f"pass - {WORDY}",
    f"veracrypt volume pw = {MARKED}",
    f"passwords: router {WORDY}, nas {MARKED}",
    f"creds: printer {MARKED}; camera {WORDY}",
    f"passwords: router {WORDY}, nas {WORDY}, printer {MARKED}, camera {WORDY}",
    f"I set it to {MARKED} for now",
    f"changed it back to {WORDY} this morning (the router one)",
    f"I reset it to {WORDY} after the wifi outage",
    f'passwd.cmd = "echo {MARKED}"',
    f"imap-pass-cmd = 'printf {WORDY}'",
    f"PW={MARKED}",
    f"email bob@example.com pass {WORDY}",
    f"my bank login: bob@example.com, {WORDY}",
    f"bob@example.com\n{MARKED}",
    f"The router admin login is admin/{WORDY}",
    f"SSH into the box as bob with {MARKED}",
    f"bw unlock {WORDY}",
    f"iwconfig wlan0 key s:{MARKED}",
    f"expdp system/{WORDY} schemas=app",
    f"bin/elasticsearch-reset-password -u elastic -i  # set to {MARKED}",
    f"Code wifi : {WORDY}",
    f"Clave WiFi: {MARKED}",
    f'passwordeval "echo {WORDY}"',
    f"npm config set //registry.acme.io/:_password {MARKED}",
    f'sasl.jaas.config="PlainLoginModule required username=\\"bob\\" password=\\"{WORDY}\\";"',
    f"EXEC sp_addlogin 'bob', '{MARKED}';",
    f"EXEC sp_password NULL, '{WORDY}', 'bob';",
    f"el pass es {MARKED}",
    f"PW lautet {WORDY}",
    f"le mdp c'est {WORDY}",
    f"mdp: {MARKED}",
    f"my pw's {WORDY}",
    f"password's {MARKED}",
    f"- **Password**: `{WORDY}`",
    f"<user>bob</user><pass>{MARKED}</pass>",
    f"credentials = ('bob', '{WORDY}')",
    f"Пароль від wifi {MARKED}",
]

KEPT = [
    "DB_PASSWORD: ${{ secrets.DB }}  # see the vault",
    "createuser -P app  # prompts twice",
    "token = load_token()  # cached",
    "password = getpass()  # never stored",
    "use admin / admin for the router's default login, then change it",
    "read / write for the share",
    "input / output for the VPN tunnel",
    "the creds are in 1Password and the vault",
    "VPN creds are in the vault and rotated monthly",
    "the password rules are the same as before: 12 characters",
    "Password policy: see the runbook",
    "pass - see the runbook",
    "pass - skip it",
    "passwords: see the vault, never in chat",
    "passwords: see the vault, never in chat, ask bob, or the wiki",
    "I set it to 30 seconds",
    "changed it back to python311",
    "set it to utf8mb4 for the new tables",
    "reset it to v2.3.1 after the rollback",
    "I set it to en_US.UTF-8",
    "set it to gnu++17 and rebuild",
    "switched it to ubuntu2204 (the runner image)",
    "I set it to falcon57 for now",  # a word and digits with nothing about a credential: a tag's shape too
    'passwd.cmd = "pass show mail/bob"',
    "x = compute(a, b)  # pw is derived from the key",
    "File contents, sizes, line counts: use read_file, search_files, or terminal",
    "contact bob@example.com tomorrow",
    "reach me at bob@example.com re2",
    "ping bob@example.com falcon57",  # a word and digits after an address, nothing about a credential
    "the admin login is admin/settings on the router",
    "SSH into the box as bob with your own key",
    "logged in as bob using SSO",
    "email bob@example.com pass it on",
    "bw unlock --raw",
    "except ValueError: pass",
    "Pass allow_yanked=False so we don't suggest upgrading",
    "to pass expand=True in fsspec.open()",
    "did not correctly pass --gpg-sign",
    "pass read_stream/write_stream or dispatcher, not both",
    "Code wifi : voir le routeur",
    "npm config set registry https://registry.acme.io/",
    'yarn config set npmAuthToken "${NPM_TOKEN}"',
    'password=\\"${DB_PASSWORD}\\"',
    "EXEC sp_addlogin @loginame = N'app', @passwd = NULL;",
    "**Password**: see below",
    "the password's length is 12",
    "my pw's expired",
    "le mdp c'est pas bon",
    "MDP: 0.95 discount",
    "pass es un verbo",
    "<pw>redacted</pw>",
    "the __token__ attribute",
]


@pytest.mark.parametrize("text", GONE)
def test_a_password_given_beside_its_place_is_removed(text: str) -> None:
    out = redact(text).text
    assert MARKED not in out and WORDY not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_the_ordinary_text_beside_them_stays(text: str) -> None:
    assert redact(text).text == text
