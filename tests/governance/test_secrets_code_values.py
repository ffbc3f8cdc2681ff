"""Secrets written in code by a secret's name, and code that computes a value (issue 37, session 17's
probe of 83 code and config forms: 26 leaked, 7 left). Removed: a value set by subscript, the default
of a lookup, the value after an or-else, a password given to be hashed or set, an XML element whose
``name`` says secret, a credential call whose first argument is a connection, ``ssh-keygen``'s ``-N``
beside ``-P``, ``openssl passwd``'s argument, ``drush user:password``. Kept: a value that is computed
(a call: 1,333 lines of real code were redacted so before), an aside, a provider's name, a path, a
reference; ``undefined`` and its kin."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

SECRET = "qv7Rk2mXwz9L"  # generated
WORDY = "falcon57"
ODD = "%92JrcjmQZQ6"  # a password that starts with "%" (not a reference: ``%APPDATA%``, ``%s``)

GONE = [
    f"os.environ['DB_PASSWORD'] = '{SECRET}'",
    f'config["api_token"] = "{WORDY}"',
    f"PASSWORD = os.getenv('DB_PASSWORD', '{WORDY}')",
    f"password = config.get('password', '{SECRET}')",
    f"db.password ?: '{ODD}'",
    f"const token = process.env.API_TOKEN || '{WORDY}';",
    f'pw = os.getenv("DB_PASS") or "{SECRET}"',
    f"'password' => bcrypt('{WORDY}')",
    f"user.set_password('{SECRET}')",
    f'<param name="password">{WORDY}</param>',
    f'<setting name="SmtpPassword">{SECRET}</setting>',
    f"ldap_bind($conn, 'cn=admin', '{WORDY}')",
    f"ssh-keygen -p -P {SECRET} -N {WORDY} -f id_rsa",
    f"ssh-keygen -t ed25519 -N '{WORDY}' -f key",
    f"openssl passwd -1 {WORDY}",
    f'drush user:password admin "{SECRET}"',
    f"Set-Variable -Name password -Value {WORDY}",
    f"app.use(cookieParser('{SECRET}'))",
    f'curl_easy_setopt(curl, CURLOPT_PASSWORD, "{WORDY}");',
    f"jwt.sign(payload, '{SECRET}', {{ expiresIn: '1h' }})",
    f"crypto.createHmac('sha256', '{WORDY}')",
    f"hmac.new(b'{SECRET}', msg, hashlib.sha256)",
]


@pytest.mark.parametrize("text", GONE)
def test_the_value_written_for_a_secret_goes(text: str) -> None:
    out = redact(text).text
    for value in (SECRET, WORDY, ODD):
        assert value not in out, out


KEPT = [
    "password = getpass.getpass()",
    "password = input('Password: ')",
    "password = Prompt.ask(",
    "passphrase = cls.normalize_string(passphrase)",
    "const token = decodeJsonPointerToken(rawToken);",
    "streamOpts.apiKey = buildGatewayApiKeyResolver(",
    "username, password = auth_token.split(':')",
    "credential: deserializeCredential(row),",
    "os.environ['DB_PASSWORD'] = password",
    "os.getenv('DB_PASSWORD', '')",
    "if config['token'] == 'abc123def':",
    'agent.api_key = api_key or "moa-virtual-provider"',
    "print(f\"  Context budget: {hcfg.context_tokens or '(uncapped)'} tokens\")",
    'maxTokens?: "contextWindow";',
    "if 'accessToken' not in token or 'expiresAt' not in token:",
    'Provider: "apiKey" or "oauth" is required',
    "user.set_password(form.cleaned_data['password1'])",
    "make_password('password')",
    '<param name="password">${DB_PASSWORD}</param>',
    '<item name="token">@string/token</item>',
    '<setting name="ApiKey">%API_KEY%</setting>',
    "ldap_bind($conn, $dn, $password)",
    'requireDynamicCredentialExpiration(body.Expiration, "AWS container credential", "container")',
    "ssh-keygen -t ed25519 -N '' -f key",
    "openssl passwd -1 -stdin < pw.txt",
    "apiKey: isValid(apiKey) ? apiKey : undefined,",
    "token = b64encode(userpass).decode()",
    "password = utf8_to_utf16_dup(v);",
    "token = MutmutCallStack.set((orig_qual_name, depth + 1))",
    "const token = text.split(/\\s+/, 1)[0] ?? '';",
    "app.use(cookieParser())",
    "jwt.sign(payload, secret, { expiresIn: '1h' })",
    "jwt.sign(payload, 'secret')",
    "crypto.createHmac('sha256', key)",
]


@pytest.mark.parametrize("text", KEPT)
def test_code_that_computes_or_names_a_value_stays(text: str) -> None:
    assert redact(text).text == text


def test_a_password_with_a_parenthesis_is_no_call() -> None:
    # a call is a path of names, or one name without a digit, before "(": a random value is not one
    out = redact(f"password: {SECRET[:6]}({SECRET[6:]}").text
    assert SECRET[:6] not in out and SECRET[6:] not in out, out
