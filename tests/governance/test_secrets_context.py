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
