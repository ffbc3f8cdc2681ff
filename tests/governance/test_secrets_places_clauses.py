"""Passwords a person gives with more words around them (issue 37, found by a hand probe of session 17:
48 of 112 forms leaked): a place of several words between the word and its verb ("the password for
the router admin page is X", "das Passwort für den Router im Büro ist X", "il pin della carta è N"), a
clause ("the password I set for the guest network is X"), ``pw for the nas: X``; and commands that take
one by position or from a here-string: PowerShell's ``Set-Variable``, Windows' ``net use``, ``pass
insert``, any command naming what it is fed before ``<<<``, ``log in as bob:X``. A flag after a
password's word (``-Value``) is not the password. Beside each, the ordinary text that stays."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

SECRET = "qv7Rk2mXwz9L"  # generated
WORDY = "falcon57"  # a word and two digits: what people choose
PIN = "4821"

GONE = [
    f"the password for the router admin page is {SECRET}",
    f"the password for the router admin page is {WORDY}",
    f"the password I set for the new guest network on the router is {WORDY}",
    f"the password we use for the shared finance mailbox is {SECRET}",
    f"the password of my old work laptop was {WORDY}",
    f"das Passwort für den Router im Büro ist {WORDY}",
    f"Passwort vom Router im Keller: {SECRET}",
    f"il pin della carta è {PIN}",
    f"le code PIN de la carte est {PIN}",
    f"die PIN der Karte ist {PIN}",
    f"the PIN on the office alarm panel is {PIN}",
    f"pw for the nas: {WORDY}",
    f"pw for the nas is {SECRET}",
    f"Set-Variable -Name DbPassword -Value '{SECRET}'",
    f"Set-Variable -Name password -Value {WORDY}",
    f'New-Variable -Name apiToken -Value "{SECRET}"',
    f"net use Z: \\\\server\\share {WORDY} /user:bob",
    f"net use \\\\server\\share /user:CORP\\bob {SECRET}",
    f"pass insert -e email/bob <<< {WORDY}",
    f"vercel env add DB_PASSWORD production <<< {SECRET}",
    f"gh secret set API_TOKEN <<< '{WORDY}'",
    f"Login with bob:{WORDY} on the staging box",
    f"log in as bob:{SECRET}",
    f"sign in with bob@acme.com:{WORDY}",
    # a relative clause between the word and its value, in other languages (a comma closes it where no verb is said)
    f"La contraseña que puse para el wifi de invitados es {WORDY}",
    f"A senha que eu uso para o email é {SECRET}",
    f"Das Passwort, das ich für den Router gesetzt habe, ist {WORDY}",
    f"La password che ho messo per il router è {SECRET}",
    f"Le mot de passe que j'ai mis pour le routeur est {WORDY}",
    f"Пароль, который я поставил на роутер, {SECRET}",
    f"Hasło do routera w biurze to {WORDY}",
    f"the new password, {WORDY}, works now",
    f"creds -> bob:{SECRET}",
    f"nmcli con modify MyNet wifi-sec.psk {WORDY}",
    f"isql -v MyDSN bob {SECRET}",
    f"(echo {WORDY}; echo {WORDY}) | smbpasswd -a -s bob",
    # plain words between the word and a verb no English sentence uses (languages with no preposition there)
    f"Kata sandi wifi kantor adalah {WORDY}",
    f"Mật khẩu wifi là {SECRET}",
    f"Heslo k wifi je {WORDY}",
    f"Το password του router είναι {SECRET}",
    f"Lösenordet till wifi:t är {WORDY}",
    f"كلمة السر للراوتر هي {SECRET}",
    f"A jelszó a routerhez: {WORDY}",
    f"ssh root@10.0.0.5 (pass {SECRET})",
    f"email: bob@acme.io / {WORDY}",
    f"pulumi config set --secret dbPassword {SECRET}",
    "webhook: https://hooks.acme.io/services/8e92e1b8-9485-4972-b2f1-1f13ca0b296a",
    # a network device's shared secrets, and a token as a URL's user
    f"radius-server host 10.0.0.2 key {WORDY}",
    f"ntp authentication-key 1 md5 {SECRET}",
    f"tunnel-group 10.0.0.1 ipsec-attributes\n ikev1 pre-shared-key {WORDY}",
    f'set security ike policy p1 pre-shared-key ascii-text "{SECRET}"',
    f"set system login user admin authentication plain-text-password-value {WORDY}",
    f"snmp-server user admin grp v3 auth sha {SECRET} priv aes 128 {WORDY}",
    f'[url "https://{SECRET.lower()}{WORDY}x1y2z3@github.com/"]\n\tinsteadOf = https://github.com/',
    # what to type, more verbs, a change from one to another, a secret or what a key or code opens, a user and its password
    f"type {WORDY} when it asks for the password",
    f"when prompted for a password enter {SECRET}",
    f"use {WORDY} to log in",
    f"try {SECRET} as the password",
    f"Password is: {WORDY}",
    f"password should be {SECRET}",
    f"the admin pw is still {WORDY}",
    f"reset bob's password to {SECRET}",
    f"the wifi password? it's {WORDY}",
    f"the password was changed from {SECRET} to {WORDY}",
    f"the secret is {WORDY}",
    f"the key to the admin panel is {SECRET}",
    f"the code to get in is {WORDY}",
    f"creds: bob {SECRET}",
    f"u/p: bob/{WORDY}",
    f"user=bob pw={SECRET}",
]


@pytest.mark.parametrize("text", GONE)
def test_the_password_among_more_words_goes(text: str) -> None:
    out = redact(text).text
    for value in (SECRET, WORDY, PIN, "8e92e1b8-9485-4972-b2f1-1f13ca0b296a", SECRET.lower()):
        assert value not in out, out


KEPT = [
    "the password for the router is required",
    "the password field for the login form is hidden",
    "the password I entered for the account is wrong",
    "the password we use for staging is stored in vault",
    "the password you choose for the new account is checked against a list",
    "the password for the router admin page is printed on the sticker",
    "das Passwort für den Router im Büro ist falsch",
    "the PIN on the card is required",
    "the pin for the project is pinned in requirements",
    "My password for this site is the same as for that one.",
    "the password of length 12 is enough",
    "Set-Variable -Name Path -Value C:\\tools",
    "Set-Variable -Name password -Value $env:PW",
    "Set-Variable -Name apiToken -Value (Get-Secret -Name api)",
    "New-Variable -Name tokenCount -Value 1234",
    "net use Z: \\\\server\\share /persistent:yes",
    "net use Z: \\\\server\\share * /user:bob",
    'grep token <<< "$out"',
    'jq -r .token <<< "$json"',
    'read -r user password <<< "$line"',
    "log in with email:password",
    "connect with db.internal:5432",
    "connect as localhost:8080/app",
    "pw for the nas is stored in the vault",
    "La contraseña que puse para el wifi de invitados es incorrecta",
    "Das Passwort, das ich gesetzt habe, ist zu kurz",
    "the password, however, is wrong",
    "nmcli con modify MyNet wifi-sec.key-mgmt wpa-psk",
    "isql -v MyDSN",
    "(echo; echo) | passwd --stdin bob",
    "Kata sandi wifi kantor adalah rahasia",
    "Das Passwort Feld ist leer",
    "Lösenordet till wifi:t är fel",
    "ssh root@10.0.0.5 (pass the key with -i)",
    "pulumi config set aws:region eu-west-1",
    "https://github.com/acme/app/settings/hooks/12345678",
    "see https://docs.acme.io/webhooks/overview/getting-started",
    "radius-server host 10.0.0.2 auth-port 1812 acct-port 1813",
    "snmp-server group grp v3 priv",
    "https://firstname.lastname@dev.azure.com/org/project",
    "ssh://git@github.com/acme/app.git",
    "use the vault to log in",
    "Password is: required",
    "password should be rotated",
    "the secret is to keep it short",
    "the key to success is practice",
    "the cache key is billing-3f2a1b2c-12",
    "the password was changed from the default to a random one",
    "user=bob pw=$PW",
]


@pytest.mark.parametrize("text", KEPT)
def test_the_ordinary_text_beside_it_stays(text: str) -> None:
    assert redact(text).text == text


def test_the_first_verb_gives_the_value_not_a_later_one() -> None:
    # a place of several words must not run past the first verb: both passwords go
    out = redact(f"the password for the router is {SECRET} and the wifi is {WORDY}").text
    assert SECRET not in out and "the password for the router is [REDACTED" in out

