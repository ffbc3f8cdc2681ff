"""A password is known by its place, even a plain lower-case one (issue 37): dictated in prose in
several languages, a config line, a user-add command, an ``auth=`` tuple; and the services whose
tokens have a shape of their own. A word the sentence goes on with stays (``the password is
required``, ``the password database``). The values are made up here, not read from any corpus."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

LEAKS = [
    ("The wifi password is {v}", "qwmzbtrkle"),
    ("I changed the router admin password to {v}", "plorvintak"),
    ("Das Passwort für den Server lautet {v}.", "zuvkemtrab"),
    ("Le mot de passe du routeur est {v}", "brindolaqe"),
    ("La contraseña del wifi es {v}", "tarquimelo"),
    ("A senha do banco é {v}", "vindrakelo"),
    ("La password dell'account è {v}", "quobernita"),
    ("Het wachtwoord is {v}", "dremplovax"),
    ("サーバーのパスワードは{v}です", "kvaztrenop"),
    ("Пароль от почты: {v}", "mobrekvizt"),
    ("Wi-Fi şifresi {v}", "plunkerova"),
    ("[wifi-security]\nkey-mgmt=wpa-psk\npsk={v}", "gravlintoqe"),
    (': PSK "{v}"', "hobrentalvq"),
    ("requirepass {v}", "zwelthorpax"),
    ("machine api.example.net login deploy password {v}", "eiqworkmudo"),
    ("echo 'bob:{v}' | chpasswd", "rpctqszdkx"),
    ("rabbitmqctl add_user app {v}", "jgwnkzkkqp"),
    ("requests.get(url, auth=('admin', '{v}'))", "bhwyiwxdse"),
    ("account default\nhost smtp.example.net\nuser bob\npassword {v}", "vbjtxiffba"),
    ("remotepass = {v}", "omjwltrhux"),
    ('variable "db_password" {{ default = "{v}" }}', "kgledhsyoh"),
    ("Cookie: sessionid={v}", "qam3rzjbgh6z851h3eofvbq5xu"),
    ("mailchimp: {v}", "11eeab026c3a93e267144037967da6e5-us14"),
    ("token {v}", "access_token$production$k1t3478oxssb3xwt$7004405106ebb1f5708da13e987fd8a1"),
    ("the ADO PAT is {v}", "h2vjugwjt6j4x7cwmftsu2sa3w36xlpsmyhuku7lz5m2xgd6mkkh"),
    ("webhook {v}", "https://discord.com/api/webhooks/659341991025592350/oOi0QLc-44v9apvV9JWz6W8UUbQ9_5b8jNxDowwHOkUaCQbgWvn5S"),
    ("LD sdk key {v}", "sdk-dbe4a9b6-580d-4225-aca7-c11871a329a6"),
    ("asana PAT {v}", "2/7174813023898611/0670473257574856:c1ce3b40865284f78359509f6c0f68e2"),
]


@pytest.mark.parametrize(("template", "value"), LEAKS, ids=[t[:24] for t, _ in LEAKS])
def test_a_value_in_a_secrets_place_is_removed_whole(template: str, value: str) -> None:
    out = redact(template.format(v=value)).text
    assert not any(value[i:i + 8] in out for i in range(len(value) - 7)), out


BENIGN = [
    "The password is required for every login.",
    "The password is case sensitive.",
    "Your password is stored hashed with argon2.",
    "The wifi password is on the fridge.",
    "Password is optional for local development.",
    "The admin password is the same as on staging.",
    "My password is too short.",
    "The password is changed every ninety days.",
    "La contraseña es obligatoria.",
    "Das Passwort ist falsch.",
    "Le mot de passe est incorrect.",
    "The password is whatever you set during install.",
    "Set the password to something memorable.",
    "Get the username from the environment or password database.",
    "This is useful for password input.",
    "This will only work if the server is configured to allow password logins.",
    "password: none",
    "passwd alice",
    "The database password is rotated weekly.",
    "The password is then hashed and compared.",
    "Users are identified by their email address.",
    "users are identified by 'name'",
    "Send the AUTH command first.",
]


@pytest.mark.parametrize("text", BENIGN)
def test_a_word_the_sentence_goes_on_with_stays(text: str) -> None:
    assert redact(text).text == text


PUBLIC = [
    "STRIPE_PUBLISHABLE_KEY=pk_live_MUxC8dPPDHQ0MqN4FIHVFX1V",
    "Stripe pk_live_MUxC8dPPDHQ0MqN4FIHVFX1V is public.",
    "NEXT_PUBLIC_MAPBOX_TOKEN=pk.eyJ1Ijoim2Ytf2Se0FYCzTkm2qTi9J6Kqal7mO9pDRKhsxQm.0HQgauCtFMc6YOuYslODLK",
    'data-sitekey="6L_N8REizeUjSawe8uPmvUE8hbDOsKFSSWt62Zh7"',
    "Request ID: RV1DZPAY69RSQKWBOFLINE0A20",
    "CLIENT_ID=91953438201888689190-n950wxpze0ymny4maxxcdvugn73mru9x.apps.googleusercontent.com",
    'The JWT header is eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9 (base64 of {"alg":"HS256"}).',
]


@pytest.mark.parametrize("text", PUBLIC)
def test_what_is_published_by_design_stays(text: str) -> None:
    """Publishable keys, site keys, OAuth client ids, request ids and a JWT's header alone are public."""
    assert redact(text).text == text


@pytest.mark.parametrize("text", [
    "sk_live_MUxC8dPPDHQ0MqN4FIHVFX1Vab",
    "MAPBOX_TOKEN=sk.eyJ1Ijoim2Ytf2Se0FYCzTkm2qTi9J6Kqal7mO9pDRKhsxQm.0HQgauCtFMc6YOuYslODLK",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
])
def test_their_secret_twins_still_go(text: str) -> None:
    assert redact(text).text != text


@pytest.mark.parametrize("text", ["create user 'bob'@'%' identified by 'tulip'", "CREATE USER bob IDENTIFIED BY 'tulip'",
                                  "alter user bob identified by 'tulip'", "identified by 'tulip42'"])
def test_sql_identified_by_goes_in_a_statement_or_when_not_a_word(text: str) -> None:
    assert "REDACTED" in redact(text).text
