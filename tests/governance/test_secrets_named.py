"""Credentials known by their name in the places ``password = …`` does not cover (``secrets/named.py``):
other operators, short names, shell and image lines, markup, quoted prose, unlock codes. The value
goes, the name and the rest of the line stay; a reference to a secret kept elsewhere, or code, stays."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from commonkeep.secrets import redact

PW = "Kx9!mQ2vLp"


@pytest.mark.parametrize(("text", "expected"), [
    (f'dbPassword := "{PW}"', 'dbPassword := "[REDACTED:password_assignment]"'),
    (f"'password' => '{PW}',", "'password' => '[REDACTED:password_assignment]',"),
    (f'api_token <- "{PW}"', 'api_token <- "[REDACTED:password_assignment]"'),
    (f"DB_PASS={PW}", "DB_PASS=[REDACTED:password_assignment]"),
    (f"SMTP_PASS: {PW}", "SMTP_PASS: [REDACTED:password_assignment]"),
    ("ldap.pwd = postgres-main", "ldap.pwd = [REDACTED:password_assignment]"),
    (f'smtp_pass = "{PW}"', 'smtp_pass = "[REDACTED:password_assignment]"'),
    ("GET /login?user=ann&password%3DKx9%21mQ2vLp&next=/", "GET /login?user=ann&password%3D[REDACTED:password_assignment]&next=/"),
    (f"ENV DB_PASS {PW}", "ENV DB_PASS [REDACTED:password_assignment]"),
    (f"RUN make\nENV API_TOKEN {PW}\n", "RUN make\nENV API_TOKEN [REDACTED:password_assignment]\n"),
    (f"set -x GITHUB_TOKEN {PW}", "set -x GITHUB_TOKEN [REDACTED:password_assignment]"),
    (f"setenv SMTP_PASSWORD {PW}", "setenv SMTP_PASSWORD [REDACTED:password_assignment]"),
    (f"<password>{PW}</password>", "<password>[REDACTED:password_assignment]</password>"),
    (f'<DbPass type="s">{PW}</DbPass>', '<DbPass type="s">[REDACTED:password_assignment]</DbPass>'),
    (f'<add key="DbPassword" value="{PW}" />', '<add key="DbPassword" value="[REDACTED:password_assignment]" />'),
    (f"env:\n  - name: DB_PASS\n    value: {PW}\n", "env:\n  - name: DB_PASS\n    value: [REDACTED:password_assignment]\n"),
    (f'<input type="password" name="pw" value="{PW}">', '<input type="password" name="pw" value="[REDACTED:password_assignment]">'),
    ("my gpg passphrase is 'blue elephant dances at noon'", "my gpg passphrase is '[REDACTED:password_in_prose]'"),
    ('set the wifi password to "correct horse battery" today', 'set the wifi password to "[REDACTED:password_in_prose]" today'),
    ("the password for the NAS is “open sesame now”.", "the password for the NAS is “[REDACTED:password_in_prose]”."),
    ("the PIN is 4821", "the PIN is [REDACTED:access_code]"),
    ("door code for the lab: 7741#", "door code for the lab: [REDACTED:access_code]#"),
    ("GitHub recovery codes: 5f2a1-9c3b7 8d4e2-1a6f0 3b9c8-7e2d1", "GitHub recovery codes: [REDACTED:access_code]"),
])
def test_a_value_given_a_secret_name_goes_and_the_name_stays(text: str, expected: str) -> None:
    assert redact(text).text == expected


@pytest.mark.parametrize("text", [
    "token := getToken(ctx)",                         # code: a call
    "secret := cfg.Secret",                           # code: a dotted name, unquoted
    'password: "${DB_PASSWORD}"',                     # a reference
    "DB_PASS=${DB_PASS}",
    "DB_PASS_FILE=/run/secrets/db",                   # a path to the secret, under another name
    "ENV DB_PASS_FILE /run/secrets/db",
    "<password>required</password>",
    'the password is "required"',
    "a bypass=true and the compass: north",           # words that end in pass
    "tests pass: 42 of 42",
    "error code: 404, exit code is 2",                # codes that unlock nothing
    "the pin is bumped in requirements.txt",
    "users.map(user => user.passwordHash)",          # an arrow function
    "passwordHash <- hash(password)",
    '<input type="text" value="Ann">',
])
def test_references_code_and_ordinary_words_stay(text: str) -> None:
    assert redact(text).text == text


def test_a_blank_text_is_left_alone_not_a_traceback() -> None:
    """The pre-check once took the longest word of a text of only whitespace: ValueError."""
    for text in (" " * 40, "\t" * 20 + "\n" * 5, "\u00a0" * 30):
        assert redact(text).text == text


def test_write_with_a_blank_evidence_ref_stores_the_fact_without_it(tmp_path: Path) -> None:
    """``commonkeep write … --evidence '<spaces>'`` ended in a traceback (the redactor on a blank ref);
    now the blank ref names nothing and is dropped, the default ref (today's daily log) taken."""
    root = tmp_path / "root"
    out = subprocess.run([sys.executable, "-m", "commonkeep.cli", "--root", str(root), "write", "--init",
                          "The deploy runs on Fridays.", "--evidence", " " * 20, "--evidence", "ci.log"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    line = (root / "inbox" / "captured.jsonl").read_text(encoding="utf-8")
    assert '"evidence_refs":["ci.log"]' in line


def test_a_named_secret_written_through_the_cli_never_reaches_the_inbox(tmp_path: Path) -> None:
    root = tmp_path / "root"
    text = f"The staging Dockerfile sets\nENV DB_PASS {PW}\nand the app reads <add key=\"SmtpPassword\" value=\"{PW}\"/>"
    out = subprocess.run([sys.executable, "-m", "commonkeep.cli", "--root", str(root), "write", "--init", text],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    stored = "".join(p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".md"))
    assert PW not in stored
    assert "ENV DB_PASS [REDACTED:password_assignment]" in stored.replace("\\n", "\n")


@pytest.mark.parametrize("tag", ["1ADi~k31gT#M", "0kNH+*v3Ng", "+LczBMMJN6?D4wp", "v^*cxnx4FY"])
def test_a_generated_password_as_a_tag_goes_though_its_symbols_cut_it_short(tag: str) -> None:
    """Cut at ``# + ?`` (as a path or a version is), a generated password left pieces too short to
    read as random, and the field was stored as written."""
    from commonkeep.store.candidates import new_candidate

    cand = new_candidate("Tagged fact about deploys.", tags=["ops", tag])
    assert cand["tags"] == ["ops", "[REDACTED:token_in_field]"]


@pytest.mark.parametrize("tag", ["C++17", "node.js", "x86_64-linux-gnu", "iOS17+iPadOS", "v1.2.3-rc1", "AT&T", "~/.config", "100%"])
def test_names_versions_and_paths_as_tags_stay(tag: str) -> None:
    from commonkeep.store.candidates import new_candidate

    assert new_candidate("Tagged fact about deploys.", tags=["ops", tag])["tags"] == ["ops", tag]


def test_product_names_joined_by_slashes_stay_and_random_segments_still_go() -> None:
    """``age/WireGuard/OpenVPN/PuTTY`` (a line of docs/benchmarks.md) was one high-entropy token: a
    path whose segments are names of words run together is judged segment by segment."""
    assert redact("keys: age/WireGuard/OpenVPN/PuTTY keys").text == "keys: age/WireGuard/OpenVPN/PuTTY keys"
    assert redact("key KCFAzvvhRr/Xv1Or2/uCWWLTq9Zp2Lk8Wm ok").text == "key [REDACTED:high_entropy] ok"
