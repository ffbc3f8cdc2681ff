"""Credentials known by their place (flags, SQL, config lines, connection strings, key armour,
seed phrases), the maintained provider layer, and the strict single-value fields of a candidate;
and the benign look-alikes each rule must leave alone. Every secret is built at run time."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from commonkeep.bench import secrets_corpus as corpus
from commonkeep.bench.secrets_corpus_base import HEX, password, rand
from commonkeep.secrets import provider, redact, structure
from commonkeep.secrets.fields import token_like
from tests.governance.conftest import write_candidate

R = random.Random(41)


def _placed() -> list[tuple[str, str]]:
    """(text, the secret in it) for shapes the corpus does not write the same way."""
    pw, tok, key64 = password(R), rand(R, 24), rand(R, 64, HEX)
    b64 = rand(R, 64, corpus.ALNUM + "+/")
    words = sorted(structure.word_lists()[0])
    phrase = " ".join(R.choice(words) for _ in range(18))
    return [
        (f"sshpass -p {pw} scp a b", pw),
        (f"mariadb --user=app --password={pw} app", pw),
        (f"tool --secret-access-key {tok}", tok),
        (f"keytool -importkeystore -storepass {pw} -srckeystore a.jks", pw),
        (f"GRANT ALL ON app.* TO 'u'@'%' IDENTIFIED WITH mysql_native_password BY '{pw}';", pw),
        (f"CREATE ROLE r LOGIN ENCRYPTED PASSWORD '{pw}'", pw),
        (f"masterauth {pw}", pw),
        (f"default login bot password {pw}", pw),
        (f"[fe80::1]:5432:*:report:{pw}", pw),
        (f"Server=tcp:db;Database=app;User Id=sa;Password={pw};TrustServerCertificate=true", pw),
        (f"jdbc:postgresql://db/app?user=app&password=@{tok}&ssl=true", tok),
        (f"https://blob.core.windows.net/c/f?sv=2022-11-02&sig={tok}%3D", tok),
        (f"-----BEGIN ENCRYPTED PRIVATE KEY-----\n{b64}\n-----END ENCRYPTED PRIVATE KEY-----", b64),
        (f"-----BEGIN TSS2 PRIVATE KEY-----\n{b64}", b64),  # cut off before its END line
        (f"b3BlbnNzaC1rZXktdjE{b64}", b64),  # an OpenSSH key body without its armour
        (f"alice:$2y$10${rand(R, 53, corpus.ALNUM + './')}", "$2y$10$"),
        (f"docker login -u bot -p {pw} registry.internal", pw),
        (f"sqlcmd -S db -U sa -P {pw} -Q 'select 1'", pw),
        (f"ssh-keygen -t ed25519 -N '{pw}' -f deploy_key", pw),
        (f"net use \\\\files\\share /user:corp\\admin {pw}", pw),
        (f"redis-cli> AUTH {pw}", pw),
        (f"some-new-tool -p {pw} --verbose", pw),
        (f"curl -H 'Authorization: Token {tok}' https://api.internal", tok),
        (f"curl -H 'X-Vendor-Api-Token: {tok}' https://api.internal", tok),
        (f"the wallet's private key is 0x{key64}", key64),
        (f"my recovery words: {phrase}", " ".join(phrase.split()[5:8])),
        (f"1. {phrase.replace(' ', ' 2. ', 1)}", " ".join(phrase.split()[9:12])),
    ]


@pytest.mark.parametrize("text,secret", _placed())
def test_a_credential_is_found_by_its_place_whatever_its_shape(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out.text and out.findings, (text, out.text)
    assert redact(out.text).findings == []  # idempotent


def test_a_jdbc_password_that_begins_with_an_at_sign_goes_whole() -> None:
    head, tail = rand(R, 6), rand(R, 8)
    out = redact(f"jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=@{head};{tail};encrypt=true").text
    assert head not in out and tail not in out and out.endswith(";encrypt=true"), out


@pytest.mark.parametrize("text", [
    "Export failed: cannot write /tmp/tmp.X7fa9Qz2Lk.json (disk full).",
    "mkdir -p /srv/app && docker run -p 8080:80 -u 1000:1000 app && ssh -p 2222 ops@host",
    "python -m pytest -p no:cacheprovider -k billing; virtualenv -p python3.11 .venv",
    "curl -w '%{http_code}' -u $USER:$TOKEN https://ci.internal/api",
    "mysql -u root -p app < dump.sql  # prompts for the password",
    "ALTER USER app PASSWORD EXPIRE; the password policy allows 90 days.",
    "Set auth: required and token: ${CI_TOKEN} in the runner config.",
    "Use #1f6feb for links and #fff for text; version 2.14.0rc1+build.7.",
    "Checksum sha256 9f2c4e1ab3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7 verified.",
    "Request 3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e failed; merged 2cc9c5a1f3b4e5d6a7b8c9d0e1f2a3b4c5d6e7f8.",
    "Approved cap_20261203101010_ab12cd into mem_20261203101010_x9y8 via patch_202612031010_ckhand.",
    "We abandon the ability to travel above the ocean, about which the actor wrote in april.",
    "docs: open http://127.0.0.1:8765/inbox?token=Xq3… in a browser",
    "class Base64EncodedStringV2Helper: pass",
    "tx 0x9f2c4e1ab3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5c7e9b1d3f5a7 confirmed; tar -xzf a.tgz -C out -k",
    "Content-Type: application/json; Authorization: Bearer $TOKEN; Set-Cookie: theme=dark; Path=/",
])
def test_benign_look_alikes_are_left_exactly_as_written(text: str) -> None:
    assert redact(text).text == text


def test_the_maintained_provider_rules_find_tokens_our_own_rules_never_named() -> None:
    assert provider.available(), "kingfisher-secret-scanner is a dependency (pyproject.toml)"
    from commonkeep.secrets.rules import find

    a, b = rand(R, 24, HEX), rand(R, 34, HEX)
    text = f"postman PMAK-{a}-{b} for the collection runner"
    assert not any(a in text[s:e] for s, e, _ in find(text))  # our rules alone miss it
    hits = provider.provider_values(text)
    assert hits and all(a not in kind for _, kind in hits)
    out = redact(text)
    assert a not in out.text and b not in out.text and out.findings == ["postmanapikey"], out


@pytest.mark.parametrize("value,random_token", [
    ("ops", False), ("release-2026-12-03", False), ("docs/security.md#secrets", False), ("v2.14.0rc1", False),
    ("3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e", False), ("2cc9c5a1f3b4e5d6a7b8c9d0e1f2a3b4c5d6e7f8", False),
    ("cap_20261203101010_ab12cd", False), ("/tmp/tmp.X7fa9Qz2Lk.json", True), ("build2026", False),
    ("a8Fk2LmQ9xZ7pR4t", True), ("https://ci.example.com/runs/8f3kQ29xLmPq7Rt2Vb", True),
    ("JavaScript", False), ("GitHubActions", False), ("XMLHttpRequest", False), ("getElementById", False),
    ("tLLCWPgEux", True), ("kQwErTzUiOpAsD", True),
    ("python3ubuntu2204", False), ("node18alpine3", False), ("k3jd9xq0pl2m", True), ("x9pq7kz3", True),
])
def test_token_like_tells_a_random_token_from_words_numbers_digests_and_ids(value: str, random_token: bool) -> None:
    assert token_like(value) is random_token


def test_single_value_fields_holding_a_token_are_redacted_whole_and_split_halves_both_go(root: Path) -> None:
    core, aws_a, aws_b, rest = rand(R, 20), rand(R, 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rand(R, 8, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"), rand(R, 18)
    cands = [
        write_candidate(root, "Deploys use the blue pool.", tags=["ops", core]),
        write_candidate(root, "Deploys use the green pool.", tags=[f"AKIA{aws_a}", aws_b]),
        write_candidate(root, "Deploys use the red pool.", evidence_refs=[f"ghp_{rest[:9]}"],
                        provenance={"agent": "hermes", "session_id": rest[9:]}),
        write_candidate(root, "Deploys use the grey pool.", tags=["ops"], evidence_refs=["docs/ops.md"],
                        provenance={"agent": "hermes", "session_id": "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e"}),
    ]
    data = (root / "inbox" / "captured.jsonl").read_text(encoding="utf-8")
    for part in (core, aws_a, aws_b, rest[:9], rest[9:]):
        assert part not in data, part
    assert cands[0]["tags"][0] == "ops" and cands[0]["tags"][1].startswith("[REDACTED:") and cands[0]["tags"][1].endswith("]")
    assert cands[1]["tags"] == ["[REDACTED:partial_token]", "[REDACTED:partial_token]"], cands[1]["tags"]
    benign = json.loads(data.splitlines()[-1])
    assert benign["tags"] == ["ops"] and benign["evidence_refs"] == ["docs/ops.md"]
    assert benign["provenance"]["session_id"] == "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e"
