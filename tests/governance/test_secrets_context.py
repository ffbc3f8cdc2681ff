"""Issue 37/40: a quoted value goes whole; ordinary English keeps its words.

A quoted value after a name that says secret is removed to its closing quote whatever it holds
(words, ``#``, ``=``); before, only its first word went and the rest reached the inbox. "Users are
identified by their email" lost "their" (read as SQL's ``IDENTIFIED BY``) and "Send the AUTH
command" lost "command" (read as redis' ``AUTH``).
"""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

PASSPHRASE = "correct horse battery staple"


@pytest.mark.parametrize("text", [
    f'"password": "{PASSPHRASE}"',
    f'PASSWORD: "{PASSPHRASE}"',
    f"DB_PWD='{PASSPHRASE}'",
    f"secret = '{PASSPHRASE} #2'",
    f'{{"api_key": "{PASSPHRASE}", "user": "bob"}}',
    f"client_secret: \"{PASSPHRASE}\"",
])
def test_a_quoted_value_is_removed_to_its_closing_quote(text: str) -> None:
    out = redact(text).text
    assert "[REDACTED:" in out
    for word in PASSPHRASE.split():
        assert word not in out, out


@pytest.mark.parametrize("value", ["be4S7#=2TZiJr4tI4k", "Xk9#mQ=pL2#vB7", "a#b=c#d=e9F"])
def test_a_password_with_hash_and_equals_leaves_no_fragment(value: str) -> None:
    for text in (f"password={value}", f"db password={value} rotated", f"Server=db;Password={value};Database=app"):
        out = redact(text).text
        assert all(value[i : i + 4] not in out for i in range(len(value) - 3)), out


@pytest.mark.parametrize("text", [
    "Users are identified by their email address.",
    "Accounts are identified by a numeric id; sessions are identified by cookies.",
    "Send the AUTH command before any other command.",
    "The server answers AUTH requests with a challenge.",
    "The SMTP AUTH extension is described in RFC 4954.",
    'password = "<your password here>"',
])
def test_ordinary_english_and_templates_are_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text,value", [
    ("CREATE USER bob IDENTIFIED BY tiger7;", "tiger7"),
    ("create user app identified by Sup3rPass;", "Sup3rPass"),
    ("ALTER USER x IDENTIFIED BY 'two words';", "two words"),
    ("redis> AUTH foobared", "foobared"),
    ("then AUTH hunter22 on the replica", "hunter22"),
])
def test_the_sql_and_redis_forms_still_go(text: str, value: str) -> None:
    assert value not in redact(text).text


# --- issue 37: secrets known by their place, whatever they look like --------------------------------

from commonkeep.bench import secrets_templates  # noqa: E402
from commonkeep.secrets import redact_obj  # noqa: E402

_PLACED = secrets_templates.planted(per_kind=3, seed=2026)


def test_the_corpus_has_a_hundred_kinds_known_by_their_place() -> None:
    assert len({kind for kind, _, _ in _PLACED}) >= 100


@pytest.mark.parametrize("kind,text,parts", _PLACED, ids=[f"{k}-{i % 3}" for i, (k, _, _) in enumerate(_PLACED)])
def test_every_kind_known_by_its_place_is_removed(kind: str, text: str, parts: list[str]) -> None:
    out = redact_obj([text])[0]
    assert secrets_templates.survivors(parts, out) == [], out


@pytest.mark.parametrize("text,value", [
    ("my password is hunter22", "hunter22"),
    ("mein Passwort ist sonne42x", "sonne42x"),
    ("mon mot de passe est soleil77", "soleil77"),
    ("mi contraseña es gato2024", "gato2024"),
    ("the wifi password is blue7house", "blue7house"),
    ("X-API-Key: 0b1e4f5a-6c7d-4e8f-9a0b-1c2d3e4f5a6b", "0b1e4f5a-6c7d-4e8f-9a0b-1c2d3e4f5a6b"),
    ("Authorization: 0b1e4f5a-6c7d-4e8f-9a0b-1c2d3e4f5a6b", "0b1e4f5a-6c7d-4e8f-9a0b-1c2d3e4f5a6b"),
    ("mysql -u root -pS3cret99 app", "S3cret99"),
    ("PGPASSWORD=lowercase99 psql -U app", "lowercase99"),
    ("jdbc:postgresql://db:5432/app?user=app&password=plainpass7", "plainpass7"),
    ("useradd -m -p qwerty123 bob", "qwerty123"),
    ("htpasswd -b .htpasswd bob qwerty123", "qwerty123"),
    ("net user bob qwerty123 /add", "qwerty123"),
    ('requests.get(url, auth=("bob", "qwerty123"))', "qwerty123"),
    ("SECRET_KEY = 'django-insecure-abc123def456ghi789'", "abc123def456ghi789"),
    ("card 3545807302157361 exp 12/29 cvv 123", "3545807302157361"),
])
def test_a_plain_value_in_a_secret_place_goes(text: str, value: str) -> None:
    assert value not in redact(text).text


def test_the_card_code_goes_with_the_card() -> None:
    out = redact("Visa 3545 8073 0215 7361, expires 12/29, CVC 123").text
    assert "123" not in out and "3545" not in out and "7361" not in out


@pytest.mark.parametrize("text", [
    "The token is refreshed every hour by the sidecar.",
    "The password reset link expires after 24 hours.",
    "my password manager is 1Password",
    "Use the cache as the key store for sessions.",
    "Order 3545807302157361 shipped to the warehouse.",
    "set the password to expire after 90 days",
    "login / logout buttons are in the header",
    "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']",
    "api_key_header: X-API-Key",
    "the cache key is billing-3f2a1b2c-12",
])
def test_english_about_secrets_is_kept(text: str) -> None:
    assert redact(text).text == text
