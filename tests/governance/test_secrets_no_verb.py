"""Passwords given with no verb and in places found by hand in session 15: "my password X", a user and
its password side by side, a config line that is only ``pass = X``, ``creds bob:X``, a quoted
passphrase after "use the passphrase"; each beside the ordinary text of the same shape it must keep."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact
from commonkeep.secrets.values import unsayable

RANDOM = "qxvrtmbkwzpl"  # letters no reader says as a word
STRONG = "Xk9vQ2mLp7Rt"


@pytest.mark.parametrize("text", [
    f"my password {RANDOM}",
    f"my wifi password {RANDOM}.",
    f"vpn: username bob password {RANDOM}",
    f"fetchmail: poll mail.example.com user bob pass {RANDOM}",
    f"Мой пароль {RANDOM}",
    f"pass = {RANDOM}",
    f"[remote]\ntype = sftp\nhost = nas.home\nuser = bob\npass = {RANDOM}\n",
    f"pass: {STRONG}",
    f"Pass {STRONG}",
    f"creds bob:{STRONG}",
    f"login root:{RANDOM}",
    "Use the passphrase 'velvet ember canal quartz' for the backup vault",
    'use the password "correct horse battery staple" when prompted',
])
def test_a_password_given_with_no_verb_or_in_a_bare_place_is_removed(text: str) -> None:
    found = redact(text)
    assert found.findings, text
    for secret in (RANDOM, STRONG, "velvet ember canal quartz", "correct horse battery staple"):
        assert secret not in found.text


@pytest.mark.parametrize("text", [
    "my password manager fills it in",
    "my password expired yesterday.",
    "my password keepassxc vault is synced",  # not the end of its clause: the word goes on
    "Ho la password dimenticata.",  # a word of another language reads as one
    "username bob password reset link sent",
    "user bob pass through to the proxy",
    "PASS: test_billing_imports",
    "PASS  src/billing.test.js",
    "a single coalescing pass: adjacent intervals are merged",
    "pass: 3\nfail: 0",
    "login bob:ssh-ed25519 key added",
    "credentials aws:prod",
    "log in with google:oauth2 on the staging site",
    'use the password "from the vault" for now',
    "Use the passphrase prompt for the vault",
])
def test_the_same_shapes_in_ordinary_text_are_kept(text: str) -> None:
    assert redact(text).text == text


def test_unsayable_letters_are_random_ones_not_words_or_names() -> None:
    assert unsayable(RANDOM) and unsayable("keepassxc") and unsayable("Qxvrtmbkwzpl")
    assert not unsayable("QXVRTMBKWZPL")  # capitals alone: the name of an environment variable
    for word in ("kubernetes", "dimenticata", "postgres", "manager", "keycloak", "sunshine", "bitwarden", "lastpass"):
        assert not unsayable(word), word  # readable, or a word of the vocabulary
    assert not unsayable("qxvrtmb")  # seven letters: too short to tell
    assert not unsayable("qxvrtmbk2") and not unsayable("qxvr tmbk")  # letters only


@pytest.mark.parametrize("text", [
    "La contrasenya és ml64lg2tjf8cz2", "pasahitza: Zq7mB2kLp9Xr", "κωδικός: ml64lg2tjf8cz2", "κωδικός πρόσβασης: ml64lg2tjf8cz2",
    "jelszavam ml64lg2tjf8cz2", "parola este ml64lg2tjf8cz2",
    "heroku auth token HRKU-a66b0d38-9d95-847e-bd29-9753a7677796",
    "HEROKU_API_KEY=HRKU-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9fG1hJ3kL5mN7pQ9rS1tU3vW5xY7",
])
def test_the_words_of_more_languages_and_heroku_s_prefixed_keys(text: str) -> None:
    found = redact(text)
    assert found.findings and "ml64lg2tjf8cz2" not in found.text and "Zq7mB2kLp9Xr" not in found.text and "9753a7677796" not in found.text
    assert "kL5mN7pQ9rS1" not in found.text


@pytest.mark.parametrize("text", ["La contrasenya és massa curta.", "κωδικός πρόσβασης: απαιτείται", "HRKU- keys are prefixed since 2024",
                                  "parola este obligatorie"])
def test_their_ordinary_sentences_are_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text", [
    "the router admin is admin/Tr0ub4dor&3",
    "Пароль від wifi nG7#qpL2zz, the router admin is admin/Tr0ub4dor&3",
    "the NAS is admin:Tr0ub4dor&3",
    "NAS: root:Tr0ub4dor&3 (change it)",
    "use sa:Tr0ub4dor&3 for the local SQL Server",
    "(root/Tr0ub4dor3)",
    "the wifi login is bob/Tr0ub4dor&3",
    "VPN account was jdoe:Tr0ub4dor3, same as last year",
    "NAS admin - Tr0ub4dor&3",
    "Grafana: `admin:Tr0ub4dor&3` on :3000",
    "[root/Tr0ub4dor&3]",
])
def test_an_account_and_its_password_in_one_word_with_no_login_word(text: str) -> None:
    """"admin/X", "root:X": an account a device ships with needs no login word beside it; any account
    does after a device's or a login's word and a verb ("the wifi login is bob/X")."""
    found = redact(text)
    assert found.findings and "Tr0ub4dor" not in found.text, found.text
    assert "nG7#qpL2zz" not in found.text


@pytest.mark.parametrize("text", [
    "default is admin/admin", "the path is admin/settings/users", "GET /admin/users/42", "FROM postgres:16-alpine",
    "image: ubuntu:22.04", "root:x:0:0:root:/root:/bin/bash", "see admin/Dashboard2024", "the admin page is admin/settings2",
    "user:JSmith2024 logged in", "system:serviceaccount:kube-system:default", "guest:guest", "admin:${ADMIN_PASSWORD}",
    "pi:raspberry is the default", "docker pull oracle:XE21c", "the switch is cisco/IOS-XE17",
    "https://git.acme.io/admin/Tr0ub4dor&3", "the wifi login is guest/guest", "the vpn account is ops/on-call",
    "the admin - a.k.a. ops - owns it", "admin - Dashboard2024", "root - x86_64-linux", "[f(x) = pi - asin\\C1*e   - 1/]",
])
def test_an_account_beside_a_path_a_tag_or_a_word_is_kept(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text", [
    "the guest wifi is Tr0ub4dor&3 btw",
    "the alarm code is 4762, the wifi is gvHbUaRh6K!1",
    "the guest wifi is 1goFSJExe+X btw",
    "the recovery key is ugdk-wxuo-n0m9-mtb6-pygf-czyq",
    "the recovery key is nfad-uwra-znun-gitp-nipo-crrp",
    "remember: gmail app pw -> bQ50TSEM?OYG",
    "smbpasswd -a bob <<< $'9QXtQcYb!moG\\n9QXtQcYb!moG'",
    "ldappasswd -x -D cn=admin -w gvHbUaRh6K!1 -s 1goFSJExe+X uid=bob",
    "password (for the shared drive) is Tr0ub4dor&3",
    "pass phrase: bQ50TSEM?OYG",
])
def test_a_network_s_password_a_recovery_key_and_a_password_fed_with_escapes(text: str) -> None:
    """Forms found by two probes of session 20: the wifi "is" X, the recovery key "is" X (letters alone
    too), "pw -> X", a here-string in the shell's ``$'…'`` quoting, ldappasswd's new password after its
    bind password, a parenthesis between the password and its verb, "pass phrase"."""
    found = redact(text)
    assert found.findings, text
    for secret in ("Tr0ub4dor&3", "gvHbUaRh6K!1", "1goFSJExe+X", "n0m9-mtb6", "gitp-nipo", "bQ50TSEM?OYG", "9QXtQcYb!moG"):
        assert secret not in found.text


@pytest.mark.parametrize("text", [
    "the wifi is down again", "the wifi is HomeNet5G", "the hotspot is on", "wifi is 5GHz-only?", "the wifi is me@home.net",
    "the wifi is slow!!! again", "the recovery key is stored in 1password", "the recovery key is kept-safe-with-your-data",
    "pw -> see the vault entry", "cat <<< $'line one\\nline two'", "gh secret set T <<< $HOME",
    "ldappasswd -x -S -W uid=bob", "the password (see above) is in the vault", "pass phrase: see the runbook",
    'pg_password = getpass.getpass("  PostgreSQL password (blank if none): ").strip()',
    "the password (the new one) is stored in the vault",
])
def test_the_same_shapes_about_a_network_or_a_key_are_kept(text: str) -> None:
    assert redact(text).text == text


def test_a_passphrase_of_words_is_three_plain_words_or_more() -> None:
    """``values._words_phrase``: three words or more, none after the first a word of the grammar or an
    inflected one; the first may be a word of the grammar only in four or more ("the velvet ember" is a
    clause's end, "the velvet ember canal" a passphrase), and not inflected ("expired velvet ember")."""
    from commonkeep.secrets.values import _words_phrase

    assert _words_phrase("velvet ember canal") and _words_phrase("velvet ember canal quartz")
    assert _words_phrase("the velvet ember canal")
    assert not _words_phrase("velvet ember") and not _words_phrase("the velvet ember")
    assert not _words_phrase("shining velvet ember") and not _words_phrase("velvet shining ember")  # an inflection, not a word of the grammar
    assert not _words_phrase("velvet ember the")
