"""The secret gate, one rule at a time: every kind of the generated corpus is removed whole, benign
text is left as written (the end-to-end run through every entry point is ``test_secrets_e2e.py``).

``MAKERS`` and ``planted`` give (text, secret as written) for the one-field kinds of the corpus to
the other tests that plant secrets (roundtable, wiki)."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commonkeep.bench import secrets_corpus as corpus
from commonkeep.bench import secrets_corpus_more as corpus_more
from commonkeep.secrets import contains_secret, redact, redact_obj, summarize
from tests.governance.conftest import write_candidate

ALNUM = string.ascii_letters + string.digits


def _as_written(fields: list[str], part: str) -> str:
    """The whitespace-separated token of ``fields`` holding ``part`` (the secret as written)."""
    for tok in " ".join(fields).split():
        if part in tok:
            return tok.strip("'\"()")
    return part


def _maker(kind: str) -> Callable[[random.Random], tuple[str, str]]:
    def make(rng: random.Random) -> tuple[str, str]:
        fields, parts = corpus.MAKERS[kind](rng)
        return fields[0], _as_written(fields, parts[0])

    return make


# kind -> maker(rng) returning (text to write, the secret as written): the one-field kinds of the
# generated corpus (``commonkeep.bench.secrets_corpus``), for the tests that plant secrets
MAKERS: dict[str, Callable[[random.Random], tuple[str, str]]] = {
    kind: _maker(kind) for kind in corpus.MAKERS if kind not in ("split_secret", "aws_id_split_across_tags")
}
# the kinds our own rules name (a token glued to a word by ``_`` is theirs to find; the maintained
# provider rules and the rules by place need the token to stand on its own)
OWN = [k for k in MAKERS if k not in corpus_more.M]


def planted(n: int, seed: int = 7) -> list[tuple[str, str, str]]:
    """``n`` (kind, text, value) triples cycling through every one-field kind."""
    rng = random.Random(seed)
    kinds = list(MAKERS)
    return [(kinds[i % len(kinds)], *MAKERS[kinds[i % len(kinds)]](rng)) for i in range(n)]


def test_the_corpus_has_two_hundred_secrets_of_twenty_five_kinds_or_more() -> None:
    items = corpus.planted()
    assert len(items) >= 200 and len({i.kind for i in items}) >= 25
    assert all(p and p not in "".join(corpus.benign()) for i in items for p in i.parts)


@pytest.mark.parametrize("kind", list(corpus.MAKERS))
def test_every_kind_of_the_corpus_is_removed_whole(kind: str) -> None:
    items = [i for i in corpus.planted(len(corpus.MAKERS) * 4, seed=3) if i.kind == kind]
    for item in items:
        findings: list[str] = []
        out = redact_obj(item.fields, findings)
        assert corpus.survivors(item, " ".join(out)) == [], (kind, item.fields, out)
        assert findings and all(p not in f for p in item.parts for f in findings)
        assert redact_obj(out) == out  # idempotent


def test_benign_memory_text_is_left_exactly_as_written() -> None:
    changed = [(t, redact(t).text) for t in corpus.benign(600, seed=5) if redact(t).findings]
    assert changed == []


def test_a_password_holding_an_at_sign_is_removed_whole_not_cut_at_the_first_at() -> None:
    rng = random.Random(1)
    pw = corpus.rand(rng, 6) + "@" + corpus.rand(rng, 8)
    out = redact(f"db is postgres://app:{pw}@db.internal:5432/main").text
    assert pw.split("@")[1] not in out and out == "db is postgres://app:[REDACTED:password_in_url]@db.internal:5432/main"
    assert redact(f"cache redis://:{pw}@cache:6379").text == "cache redis://:[REDACTED:password_in_url]@cache:6379"


def test_disguised_tokens_are_removed_with_their_disguise() -> None:
    rng = random.Random(2)
    core = corpus.rand(rng, 36)
    for written in (corpus._fullwidth("ghp_" + core), corpus._zero_width(rng, "ghp_" + core), corpus._cyrillic(rng, "ghp_" + core)):
        out = redact(f"the bot uses {written} now").text
        assert out == "the bot uses [REDACTED:github_token] now", (written, out)


def test_encoded_tokens_and_basic_credentials_are_found_by_decoding() -> None:
    import base64

    rng = random.Random(3)
    token = "glpat-" + corpus.rand(rng, 20)
    assert redact(f"blob {token.encode().hex()} end").text == "blob [REDACTED:encoded_gitlab_token] end"
    assert redact(f"blob {base64.b64encode(token.encode()).decode()} end").text == "blob [REDACTED:encoded_gitlab_token] end"
    basic = base64.b64encode(f"deploy:{corpus.password(rng)}".encode()).decode()
    assert "[REDACTED:" in redact(f"Authorization: Basic: {basic}").text
    assert basic not in redact(f"the registry wants {basic} as its header").text


@pytest.mark.parametrize("text", ["The admin password is {v}", "the password for the NAS was changed to {v}",
                                  "Das Passwort ist {v}", "le mot de passe est {v}", "la contraseña es {v}",
                                  "a senha é {v}", "пароль: {v}", "密码：{v}", "パスワード: {v}"])
def test_a_password_in_prose_is_removed_in_several_languages(text: str) -> None:
    v = corpus.password(random.Random(8))
    assert redact(text.format(v=v)).text == text.format(v="[REDACTED:password_in_prose]")


def test_prose_about_passwords_is_kept() -> None:
    for text in ("the password is stored in 1Password", "The password policy says rotate every 90 days.",
                 "password: ${DB_PASSWORD}", "the token is expired", "пароль хранится в хранилище"):
        assert redact(text).text == text


def test_commit_hashes_and_digests_in_prose_are_kept_hex_keys_near_a_secret_word_are_not() -> None:
    rng = random.Random(4)
    sha1, sha256, key = (corpus.rand(rng, n, corpus.HEX) for n in (40, 64, 64))
    for text in (f"fixed the key rotation bug in commit {sha1}", f"image digest sha256:{sha256}",
                 f"the api key's sha256 is {sha256}", f"cherry-pick {sha1[:10]}"):
        assert redact(text).text == text
    assert redact(f"the webhook signing key {key} lives in the vault").text == \
        "the webhook signing key [REDACTED:hex_key] lives in the vault"
    assert key not in redact(f"use {key} as the api key").text


def test_a_token_split_across_two_fields_loses_both_halves(root: Path) -> None:
    rng = random.Random(6)
    core = corpus.rand(rng, 36)
    cand = write_candidate(root, f"deploy token, first half: ghp_{core[:18]}", tags=["deploy"],
                           proposed_known_exceptions=[f"{core[18:]} is the rest of it"])
    data = (root / "inbox" / "captured.jsonl").read_text(encoding="utf-8")
    assert core[:18] not in data and core[18:] not in data, cand


@pytest.mark.parametrize("kind", list(MAKERS))
def test_each_kind_is_redacted_and_reported_by_kind_only(kind: str) -> None:
    for _, text, value in planted(len(MAKERS) * 3)[list(MAKERS).index(kind)::len(MAKERS)]:
        out = redact(text)
        assert value not in out.text and out.findings, (kind, text)
        assert all(value not in f for f in out.findings)
        assert "[REDACTED:" in out.text
        assert redact(out.text).findings == []  # idempotent


@pytest.mark.parametrize("kind", OWN)
def test_a_secret_glued_to_a_word_by_an_underscore_is_redacted(kind: str) -> None:
    """``_`` is a word character, so ``\\b`` alone missed ``key_AKIA…`` or ``token_ghp_…``."""
    for _, text, value in planted(len(MAKERS) * 2, seed=7)[list(MAKERS).index(kind)::len(MAKERS)]:
        glued = text.replace(value, "prod_" + value)
        out = redact(glued)
        assert value not in out.text and out.findings, (kind, glued)


def test_ordinary_text_and_ids_are_left_alone() -> None:
    for text in (
        "Run the test suite with pytest -q before committing.",
        "mem_20261202105616_k3x9 superseded cap_20261202105616_k3x9",
        "evidence 3f2a9c0e1b7d4a6f8e5c2b1a0d9f8e7c",
        "sha 2cc9c5a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5",
        "see src/commonkeep/patch.py and docs/core-api.md",
        "the password policy says rotate every 90 days",
        "https://github.com/Mont3ll/pi-persistent-intelligence",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "password: ${DB_PASSWORD}",
        "SECRET_KEY={{ vault_secret }}",
        'token = "<your token here>"',
    ):
        assert not contains_secret(text), text
    findings: list[str] = []
    out = redact_obj({"a": ["sk-proj-" + "aB3" * 10], "b": 1}, findings)
    assert out == {"a": ["[REDACTED:openai_key]"], "b": 1} and summarize(findings) == "1 openai_key"


def test_evidence_excerpts_and_rendered_files_are_redacted(root: Path) -> None:
    from commonkeep.store.evidence import add_evidence
    from commonkeep.store.jsonl import append_jsonl
    from commonkeep.store.layout import Layout
    from commonkeep.store.render import render_all

    (_, text, value), (_, text2, value2) = planted(2, seed=11)
    ev = add_evidence(root, summary=f"user pasted {text}", excerpt=f"log line: {text2}", source_kind="conversation",
                      trust_class="direct_user_instruction", source_ref="session-1")
    assert ev["redaction_status"] == "redacted" and len(ev["id"]) == 32
    assert add_evidence(root, summary=f"user pasted {text}", excerpt=f"log line: {text2}", source_kind="conversation",
                        trust_class="direct_user_instruction", source_ref="session-1")["id"] == ev["id"]
    # a record hand-edited into the canonical file with a secret is never rendered with it
    (_, text3, value3), = planted(1, seed=12)
    rec = {"id": "mem_20261202120000_handedit", "layer": "L2", "scope": {"type": "global"}, "tags": [], "statement": text3,
           "evidence": [{"type": "manual", "ref": "x", "note": "y"}], "confidence": 0.9, "stability": "stable",
           "created_at": "2026-12-02", "updated_at": "2026-12-02",
           "review": {"cadence_days": 30, "next_review": "2027-01-01", "change_condition": "never"},
           "status": "active", "supersedes": [], "superseded_by": [], "vault_ref": None}
    append_jsonl(root / "memory" / "L2.playbooks.jsonl", [rec])
    render_all(Layout(root))
    rendered = (root / "rendered" / "MEMORY.md").read_text()
    assert "mem_20261202120000_handedit" in rendered and value3 not in rendered
    data = (root / "memory" / "evidence.jsonl").read_text()
    assert value not in data and value2 not in data and data.count("\n") == 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*(ALNUM + "+/_=-.:@ '\"\n"), "sk-", "ghp_", "://", "key=", "AKIA", "eyJ", "Bearer ",
                                                                 "glrt-", "pypi-AgE", "hf_", "Basic: ", "password is ", "://:", "@"]), max_size=120))
def test_the_fast_precheck_never_hides_a_secret(parts: list[str]) -> None:
    from commonkeep.secrets import _needs_scan, _redact_uncached

    text = "".join(parts)
    if not _needs_scan(text):
        assert _redact_uncached(text) == (text, ())


def test_bench_secrets_reads_a_corpus_file_and_prints_each_kind_beside_the_old_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.cli import main

    data = tmp_path / "corpus.json"
    assert main(["bench", "secrets", "--write-corpus", str(data), "--planted", "35", "--benign", "20",
                 "--placed", "0", "--public", "0"]) == 0
    capsys.readouterr()
    assert main(["bench", "secrets", "--data", str(data), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ours, old = out["results"]["commonkeep"], out["results"]["old rules"]
    assert ours["removed"] == ours["planted"] == 35 and ours["benign_changed"] == 0
    assert old["kinds"]["gitlab_runner_token"] == [0, 1] and old["removed"] < 35
    (tmp_path / "bad.json").write_text('{"planted": [{"kind": "x"}], "benign": []}')
    assert main(["bench", "secrets", "--data", str(tmp_path / "bad.json")]) != 0
    assert "planted[0] needs 'kind'" in capsys.readouterr().err


def test_bench_secrets_takes_the_docstrings_of_real_code_as_benign_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.cli import main

    code = tmp_path / "pkg"
    (code / "tests").mkdir(parents=True)
    (code / "mod.py").write_text('"""Utilities to get a password and/or the current user name.\n\nThe token is read at start."""\n'
                                 'def f():\n    """password: The password for the authentication."""\n')
    (code / "tests" / "test_mod.py").write_text('"""A test folder is left out of the sentences here."""\n')
    (code / "broken.py").write_text("def (:\n")  # not Python: skipped
    assert main(["bench", "secrets", "--benign-docstrings", str(code), "--planted", "5", "--placed", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["results"]["commonkeep"]["benign"] == 3 and out["results"]["commonkeep"]["benign_changed"] == 0
    assert main(["bench", "secrets", "--benign-docstrings", str(tmp_path / "nowhere")]) != 0
    assert "is not a folder" in capsys.readouterr().err


def test_a_long_run_of_one_or_two_hex_digits_is_padding_not_a_key() -> None:
    """A 4,000-character 'dddd…' (or '0000…') was redacted as a hex key: low entropy is no secret."""
    from commonkeep.secrets import redact

    for text in ("d" * 4001, "0" * 64, "ab" * 40, f"separator {'f' * 80} end"):
        assert redact(text).findings == [], text
    import secrets as stdlib_secrets

    assert redact(stdlib_secrets.token_hex(30)).findings == ["hex_key"]  # (64 digits alone read as a sha256 digest)
