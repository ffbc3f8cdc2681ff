"""Passwords given by place with no word that says so (issue 37, found by hand probes): a password fed
to a command through a process substitution or a here-string, svnserve's ``[users]`` lines, ``pwd X``,
``root / X``, ``host:port:user:password``, a Twilio auth token beside its SID, a URL path after
``/token/``, ``…: pass = X``, MinIO's ``mc alias set``, ``rclone obscure``, Redis ACL users and ``AUTH user
X``, a remote desktop's password, a header named for a key, PHP's ``define``, a Go DSN, a connection
call's third argument, a Java XML property, ``setx``, the keychain's ``-w``, "it's now X", ``u: … p: …``;
and the ordinary text beside each that stays as it is."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

SECRET = "qv7Rk2mXwz9L"  # generated

GONE = [
    f"borg init --passphrase-file=<(echo {SECRET}) /srv/repo",
    f"restic -r /srv/restic --password-file <(echo '{SECRET}') backup",
    f"ansible-vault view --vault-password-file <(printf {SECRET}) x.yml",
    f"chpasswd <<< 'bob:{SECRET}'",
    f"keepassxc-cli open db.kdbx <<< {SECRET}",
    f"[users]\nalice = {SECRET}\nbob = other{SECRET}",
    f"[users]\r\n# accounts\r\nalice = {SECRET}\r\n",
    f"db pwd {SECRET}",
    f"db1 root / {SECRET}",
    f"staging: sa / {SECRET}",
    f"10.0.0.5:3128:bob:{SECRET}",
    f"proxy.acme.io:8080:alice:{SECRET}",
    f"rclone config: pass = {SECRET}",
    "TWILIO: AC0123456789abcdef0123456789abcdef 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "https://api.acme.io/v1/token/46zkY44rdmNzTH8NCkk6Z94P7449tGy4",
    f"mc alias set myminio http://minio:9000 admin {SECRET}",
    f"rclone obscure {SECRET}",
    f"vncpasswd -f <<< {SECRET} > ~/.vnc/passwd",
    f"ACL SETUSER app on >{SECRET} ~* +@all",
    f"user default on >{SECRET} ~* &* +@all",
    f"AUTH default {SECRET}",
    f"anydesk 123 456 789 / {SECRET}",
    f"teamviewer id 987654321 pw {SECRET}",
    f"wifi: Office5G pass {SECRET}",
    f"Router login -> admin / {SECRET}",
    f"age -d -i key.txt f.age  # key passphrase {SECRET}",
    f"plink -ssh carol@host -pw ~{SECRET}",
    "Fastly-Key: WN1WWWurZpaAIbvoI4w60vaXXXp4vYfI",
    f"define('DB_PASSWORD', '{SECRET}');",
    f'sql.Open("mysql", "app:{SECRET}@tcp(db:3306)/app")',
    f'DriverManager.getConnection(url, "app", "{SECRET}")',
    f"$mysqli = new mysqli('db', 'app', '{SECRET}', 'app');",
    f'<entry key="db.password">{SECRET}</entry>',
    f"setx API_KEY {SECRET}",
    f"gcloud secrets versions add db-pw --data-file=<(echo -n {SECRET})",
    f"echo -n '{SECRET}' | gcloud secrets create db-pw --data-file=-",
    f"security add-generic-password -a bob -s svc -w {SECRET}",
    f"I reset the admin password; it's now {SECRET}",
    f"u: bob p: {SECRET}",
    f"the password for the wifi at grandma's is {SECRET}",
    f"das Passwort vom NAS: {SECRET}",
    f"пароль от роутера {SECRET}",
    f"passordet er {SECRET}",
    f"adgangskoden er {SECRET}",
    f"parole ir {SECRET}",
    f"slaptažodis yra {SECRET}",
    f"kata laluan ialah {SECRET}",
    f"ang password ay {SECRET}",
    f"a palavra-passe é {SECRET}",
    f"лозинка је {SECRET}",
    f"salasanani on {SECRET}",
]


@pytest.mark.parametrize("text", GONE)
def test_the_value_in_its_place_goes(text: str) -> None:
    out = redact(text).text
    assert SECRET not in out, out
    for token in ("9f8e7d6c5b4a39281706f5e4d3c2b1a0", "46zkY44rdmNzTH8NCkk6Z94P7449tGy4", "WN1WWWurZpaAIbvoI4w60vaXXXp4vYfI"):
        assert token not in out, out
    if "AC0123456789abcdef" in text:
        assert "AC0123456789abcdef0123456789abcdef" in out  # the SID names the account: it stays


KEPT = [
    "[users]\nallow_sign_up = false\nauto_assign_org_role = Viewer\ndefault_theme = dark",  # Grafana's section
    "[users]\nalice = qv7Rk2mXwz9L\n[general]\nrealm = qz8x7k2mvvbn",  # only the users' lines
    "run pwd first, then ls.",
    "cd $(pwd)/build && make",
    "pwd -P",
    "admin / users page lists everyone",
    "read / write access for root / home",
    "diff <(echo a) <(echo b)",
    'grep key <<< "$line"',
    "mysql -u root -p tailwindcss",  # mysql's -p then a space prompts: the word after it is the database
    "mysqldump -u root -p appdb > dump.sql",
    "phase 2: pass = first",
    "result: pass = true",
    "localhost:8080:/api:x",
    "https://docs.acme.io/token/refresh-token-rotation",
    "AC0123456789abcdef0123456789abcdef is the account SID of the staging project",
    "rclone obscure reads the password from stdin when given -",
    "user bob on nopass ~* +@read",
    "Enter passphrase (empty for no passphrase):",
    "Password (hidden): ",
    "the passphrase is stored in the vault",
    "Idempotency-Key: 3f2c1a9e-8b7d-4c6e-9f01-23456789abcd",
    "sshpass -p ~/pw.txt ssh host",
    "define('WP_DEBUG', true);",
    "define('AUTH_KEY', 'put your unique phrase here');",
    "<entry key=\"db.url\">jdbc:postgresql://db/app</entry>",
    "the password was reset; it is now shown only once",
    "menu: File p: 3",
    "u: 1 p: 2",
    "Salasanani on vaihdettu.",
    "Passordet er feil.",
    "He was released on parole in 2019.",
]


@pytest.mark.parametrize("text", KEPT)
def test_the_ordinary_text_beside_it_stays(text: str) -> None:
    out = redact(text).text
    if text.startswith("[users]\nalice"):
        assert "qv7Rk2mXwz9L" not in out and "realm = qz8x7k2mvvbn" in out
    else:
        assert out == text


def test_a_password_typed_after_mysql_s_prompt_flag_still_goes() -> None:
    assert "Hunter2!x" not in redact("mysql -u root -p Hunter2!x").text
    assert "S3cret99" not in redact("mysql -u root -pS3cret99 app").text
