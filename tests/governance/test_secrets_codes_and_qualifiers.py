"""Secrets known by their place, a third round (issue 37): a password named after a longer qualifier
("de la base de datos", "of the admin account on the nas"), a door or alarm code in other
languages, ``the pw for the router = …``, a one-time-password app's setup key, an app password,
letters-only backup codes, a passphrase of plain words, a keypair as a byte array, and a password
given in an instruction ("use password X for …", "log in with admin/X"). Each secret form has a
benign twin with the same words that must stay as it is."""

from __future__ import annotations

import pytest

from commonkeep.secrets import redact

V = "qorvantelmi"  # lower-case letters only, no English word: known by its place alone
SECRET_FORMS = [
    "La contraseña de la base de datos es {v}",
    "Das Passwort von dem Konto der Firma ist {v}",
    "Het wachtwoord van de server van het lab is {v}",
    "A senha do banco de dados é {v}",
    "Le mot de passe du compte de la banque est {v}",
    "the password of the admin account on the nas is {v}",
    "the password to the shared drive for finance is {v}",
    "salasana on {v}",
    "the pw for the router = {v}",
    "my pw for gmail is {v}",
    "our pass for the lab wifi: {v}",
    "auth-user-pass creds.txt  # creds.txt: dana / {v}",
    "use password {v} for the staging box",
    "login with admin/{v} on the switch",
    "connect with sa/{v}",
]


@pytest.mark.parametrize("form", SECRET_FORMS)
def test_a_plain_password_after_a_qualifier_or_in_an_instruction_goes(form: str) -> None:
    out = redact(form.format(v=V))
    assert V not in out.text, out.text
    assert out.findings


CODES = [
    ("Il codice del cancello è 4921", "4921"),
    ("Le code de la porte est 49217", "49217"),
    ("El código de la alarma es 4921", "4921"),
    ("Der Türcode ist 492170", "492170"),
    ("Zahlencode für das Schloss: 7092", "7092"),
    ("le code d'accès de l'immeuble: 4921", "4921"),
    ("the code for the front door is 4921#", "4921"),
    ("The 2FA setup key is w2ec vkso ija4 bn3k 7ggq yn5e 2y3s 65yh", "vkso ija4"),
    ("authenticator setup key: jbsw y3dp ehpk 3pxp", "y3dp ehpk"),
    ("Gmail app password akpw xtip oguy dmci", "xtip oguy"),
    ("App-specific password: abqd-efgh-ijkl-mnop", "efgh-ijkl"),
    ("the app password for ci is akpw xtip oguy dmci", "xtip oguy"),
    ("Backup codes: cxehhqsq, lldeepqt, bzhxsblf, chbehpzq", "bzhxsblf"),
    ("recovery codes qwzhrtkmpl xcvbnmlkjh pqlzmxnvbc", "xcvbnmlkjh"),
    ("the passphrase is velvet ember canal quartz", "ember canal"),
    ("The passphrase is correct horse battery staple.", "horse battery"),
    ("id.json: [" + ",".join(str(i * 37 % 256) for i in range(64)) + "]", "37,74,111"),
    ("[" + ",".join(str(i * 91 % 256) for i in range(64)) + "]  # the deploy keypair", "91,182,17"),
]


@pytest.mark.parametrize(("text", "secret"), CODES)
def test_codes_setup_keys_app_passwords_and_key_bytes_go(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out.text, out.text


KEPT = [
    "La contraseña de la base de datos es importante para todos",
    "the root password on prod-db-2 rotates weekly",
    "we have your password on file",
    "the password to use is in the vault",
    "the password for the admin is required",
    "the pw for the router is in the drawer",
    "my pass for the gym is valid until may",
    "error code of the request is 4921",
    "the code for issue 4921 is merged",
    "exit code 4921",
    "the 2fa key is on my phone",
    "the app password for ci is in 1password",
    "backup codes printed yesterday and stored elsewhere",
    "Recovery codes: bathroom, elephant, sandwich",
    "the passphrase is stored in the vault",
    "the passphrase is correct for this vault",
    "the passphrase is case sensitive",
    "the passphrase was never written down anywhere",
    "use password managers for everything",
    "use password authentication for ssh",
    "use password policies when possible",
    "use the password from the vault for prod",
    "log in with email/password",
    "log in with SSO/SAML",
    "sign in with google/github",
    "password: !secret mqtt_password",
    "api_key: !env_var OPENAI_KEY",
    "ansible_become_password: !vault |",
    "DbPassword: !Ref DbPasswordParam",
    "a lookup table: [" + ",".join(str(i) for i in range(64)) + "]",
]


@pytest.mark.parametrize("text", KEPT)
def test_the_same_words_in_ordinary_text_stay(text: str) -> None:
    assert redact(text).text == text


def test_a_password_that_starts_like_a_yaml_tag_still_goes() -> None:
    assert "Summer2024" not in redact("password: !Summer2024").text


# --- command lines and config lines that name no command of their own (``secrets/flags.py``) ---
P = "cloudcanal16"  # a plain password with digits
FLAG_FORMS = [
    "az login -u dana@acme.io -p {p}",
    "cf login -u dana -p {p} -a api.cf.io",
    "ipmitool -I lanplus -H bmc -U admin -P {p} power status",
    "psexec \\\\host -u dana -p {p} cmd",
    "rdesktop -u dana -p {p} host",
    "xcrun altool --upload-app -f app.ipa -u dana@acme.io -p {p}",
    "az sql server create -n srv -g rg -u dana -p {p}",
    "tool --password {p} --user dana",
    "xfreerdp /u:dana /p:{p} /v:host",
    "cmdkey /add:srv01 /user:dana /pass:{p}",
    "wmic /node:host /user:dana /password:{p} os get caption",
    "plink -ssh dana@host -pw {p}",
    "x11vnc -passwd {p} -display :0",
    "java -jar jenkins-cli.jar -s http://jenkins:8080 -auth dana:{p} who-am-i",
    "snmpwalk -v3 -l authPriv -u dana -a SHA -A {p} -x AES -X {p} host",
    "redis-cli CONFIG SET requirepass {p}",
    "composer config http-basic.repo.acme.io dana {p}",
    "olcRootPW: {p}",
    "wpa-psk {p}",
    'signingConfigs {{ release {{ storePassword "{p}"\n keyPassword \'{p}\' }} }}',
    "rclone config create s3r s3 access_key_id AKIA1234 secret_access_key luyiXabzAMjlXJtXjghlnnSmhv{p}",
    "guest wifi pw {p}",
    "ssh dana@host, pw {p}",
    "wifi: HomeNet / {p}",
    "router admin: admin/{p}",
    "SSID HomeNet, key {p}",
    "NAS login admin {p}",
    "the zip is encrypted with {p}",
    "unlock it with {p}.",
]


def test_mvn_inside_a_password_is_not_maven() -> None:
    """Maven's ``-P`` names a profile, so a user-and-password pair is not read on its command line; the word
    ``mvn`` inside a password ("hat**mvn**z4") is not that command."""
    assert "nwp7hatmvnz4" not in redact("ipmitool -I lanplus -H bmc -U admin -P nwp7hatmvnz4 power status").text
    assert redact("mvn -U user -P release deploy").text == "mvn -U user -P release deploy"


@pytest.mark.parametrize("form", FLAG_FORMS)
def test_a_password_on_a_command_or_config_line_of_any_tool_goes(form: str) -> None:
    text = form.format(p=P)
    out = redact(text)
    assert P not in out.text, out.text


COMMANDS_KEPT = [
    "docker run -u 1000 -p 8080:80 nginx",
    "docker run -u node -p 127.0.0.1:3000:3000 app",
    "ssh -l dana -p 2222 host",
    "psql -U app -p 5433 -h db",
    "mysql -u root -P 3306 -h db",
    "cp -u -p src dst",
    "kubectl logs -l app=web -p mypod",
    "mvn -U clean install -P prod-eu",
    "./mvnw -U -P dev,local verify",
    "tsc -p tsconfig.json -u",
    "iperf3 -u -p 5201 -c host",
    "xcrun altool -u dana@acme.io -p @keychain:AC_PASSWORD",
    "pytest -p no:cacheprovider -u",
    "curl -u dana -p -x proxy:3128 https://x",
    "curl -X POST -A myagent https://x",
    "config set maxmemory 100mb",
    "composer config http-basic.repo.acme.io dana $TOKEN",
    'message(CHECK_PASS "all components found")',
    'message(CHECK_PASS "found")',
    "aws deploy delete-git-hub-account-token --token-name my-github-account",
    "aws secretsmanager delete-resource-policy \\",
    "the secret_key_base configuration option",
    "api_key get_api_key_from_environment",
    "data protected using the Node.js APIs this is considered a vulnerability.",
    "keys will be decrypted with `options.passphrase`. Multiple keys using",
    "the object database that should have been protected with mutex.",
    "bypass true",
]


@pytest.mark.parametrize("text", COMMANDS_KEPT)
def test_ports_profiles_labels_paths_and_messages_on_such_lines_stay(text: str) -> None:
    assert redact(text).text == text


CODE_KEPT = [  # lines of real code and docs that the first draft of these rules changed
    "The cleartext input is encrypted using aes256-cbc. The final block is",
    "bytes, encrypted using rsa-pkcs1.",
    "allow_change_password: bool,",
    "master_user_password: str,",
    "mk_file.write('\\tmkdir -p `cygpath -u \"%s\"`\\n' % od)",
]


@pytest.mark.parametrize("text", CODE_KEPT)
def test_signatures_algorithm_names_and_command_substitutions_stay(text: str) -> None:
    assert redact(text).text == text


# --- service shapes no provider owns (``secrets/services.py``) ---
U1, U2, U3 = "3f1c2b7a-9d4e-4f6a-8b2c-1d2e3f4a5b6c", "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d", "7e7c7df3-4380-4f4c-80c5-3b5bd047f8dd"
SERVICES = [
    (f"access-sandbox-{U1}", U1),
    (f"PROCESSOR=processor-production-{U2}", U2),
    (f"https://acme.webhook.office.com/webhookb2/{U1}@{U2}/IncomingWebhook/1decfc3df97c68fa1337688fab2e1234/{U3}", "1decfc3df97c68fa"),
    (f"https://outlook.office.com/webhook/{U1}@{U2}/IncomingWebhook/1decfc3df97c68fa1337688fab2e1234/{U3}", U3),
    ("NRAK-PFEAMKVTORXX1LQOB1BEBNSOOWF", "PFEAMKVTORXX1LQOB1"),
    ("https://a.blob.core.windows.net/c?sv=2022-11-02&sig=%2FF1gMxDJKv%2FLlo8sRAp67piS45%2F9qB9n8SekOKgiEig%3D", "LLo8sRAp67piS45"),
    ("Windows product key: X0BSH-OEUBV-YHCC7-OPEUP-ZDPWT", "YHCC7-OPEUP"),
]


@pytest.mark.parametrize(("text", "secret"), SERVICES)
def test_service_credentials_known_by_their_own_shape_go(text: str, secret: str) -> None:
    assert secret not in redact(text).text


@pytest.mark.parametrize("text", ["plaid access tokens look like access-sandbox-<uuid>", "the serial number is on the box",
                                  "New Relic browser keys start with NRJS-", "see the Teams webhook docs", "sig=abc"])
def test_the_services_named_without_a_credential_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize(("value", "password"), [
    ("harborstone1", True), ("a1b2c3", True), ("qzxvbnmk", True), ("1ABCDEF", True), ("Str0ng!pw", True),
    ("qzxvbnm", False),  # letters only, under 8: a short word or a name ("google/github")
    ("1ABCDE", False),  # upper case, 6 or fewer: an acronym
    ("managers", False), ("the", False), ("rotated", False),  # a word of English, of the grammar, an inflection
    ("settings.KEY", False), ("db_password", False),  # a code name; a name of its own
    ("8080:80", False), ("https://x.example/y", False), ("creds.txt", False), ("db-creds.txt", False),  # a port, a URL, a file
    ("prod-eu", False), ("read/write", False), ("dev,local1", False), ("aes256-cbc", False), ("two words", False),
])
def test_a_value_given_with_no_verb_is_a_password_only_when_no_word_or_name(value: str, password: bool) -> None:
    from commonkeep.secrets.values import given

    assert given(value) is password



# ordinary sentences an agent keeps, around every place of this round (the words, the flags, the codes)
PLAIN_ENGLISH = [
    'Log in as admin to the dashboard and approve the PR.',
    'login admin panel is at /admin on the staging host.',
    'admin: read/write for the ops group, read-only for everyone else.',
    'router: 192.168.1.1/24 is the LAN range.',
    'The NAS login uses the admin account; ask Dana for access.',
    'Use password managers for everything; never reuse passwords.',
    'use password authentication only on the bastion, keys elsewhere.',
    'We log in with SSO/SAML on every internal tool.',
    'Sign in with google/github on the login page.',
    'The pw field is masked in the form.',
    'pw reset links expire after 30 minutes.',
    'the PW column in the sheet is hashed.',
    'SSID guest, key rotation happens monthly.',
    'The zip is encrypted with AES-256, not ZipCrypto.',
    'unlock it with your fingerprint.',
    'Encrypted using TLS 1.3 everywhere.',
    'The files are protected with a passphrase stored in 1Password.',
    'the passphrase is long enough to resist brute force.',
    'The passphrase was rotated last week.',
    'Backup codes are printed and kept in the safe.',
    'Recovery codes: generate new ones after each use.',
    'the app password for ci is stored in the vault.',
    'App passwords are required when 2FA is on.',
    'The 2FA setup key is shown only once, so scan the QR code right away.',
    'The TOTP secret is stored encrypted in the users table.',
    'door code changes every quarter; ask facilities.',
    'Le code de la porte change chaque mois.',
    'Der Türcode wird jeden Monat geändert.',
    'The license key is emailed to the customer after purchase.',
    'Product key activation failed on two machines.',
    'serial number 12345 belongs to the old printer.',
    'Run docker run -u 1000 -p 8080:80 nginx for a quick test.',
    'psql -U app -p 5433 -h localhost connects to the replica.',
    'ssh -l dana -p 2222 bastion.internal is the jump host.',
    'kubectl logs -l app=web -p shows the previous container.',
    'mvn -U clean install -P release builds the release profile.',
    'tsc -p tsconfig.build.json emits the declaration files.',
    'pytest -p no:randomly -x keeps the order.',
    'iperf3 -u -p 5201 -c host measures UDP throughput.',
    'curl -u dana https://api.example.com asks for the password interactively.',
    'mysql -u root -p prompts for the password.',
    'Set storePassword and keyPassword in gradle.properties, not in build.gradle.',
    'olcRootPW is set with ldapmodify from a hashed value.',
    'wpa-psk comes from the vault at boot.',
    'The redis requirepass setting is loaded from an env var.',
    'Run aws configure set region eu-west-1 for the profile.',
    'rclone config create s3r s3 provider AWS env_auth true',
    'secret_access_key comes from the instance profile.',
    'The token endpoint returns an access_token and a refresh_token.',
    'Plaid sandbox tokens start with access-sandbox- and expire.',
    'Teams webhooks are configured per channel.',
    'New Relic license keys are 40 characters.',
    'The SAS token needs sig, se and sp parameters.',
    'Our wifi password is on the fridge.',
    'The password to the shared drive is in 1Password.',
    'Das Passwort für den Server steht im Tresor.',
    'La contraseña de la base de datos está en el gestor.',
    'Le mot de passe du compte est dans le coffre.',
    'A senha do banco de dados está no cofre.',
    'Il codice del cancello è sul biglietto in cucina.',
    'the pw for the router is on the sticker.',
    'my pw for gmail is in the password manager.',
    'our pass for the lab wifi: ask IT.',
    'wifi: HomeNet / ask Dana for the key',
    'router admin: admin/ see the sticker',
    'NAS login admin only from the LAN.',
    'guest wifi pw on the whiteboard.',
    'switch: vlan10/vlan20 trunk on port 24.',
]


@pytest.mark.parametrize("text", PLAIN_ENGLISH)
def test_ordinary_sentences_around_these_places_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("param", ["key", "session", "sessionid", "session_id", "sid", "jwt"])
def test_a_url_parameter_named_for_a_credential_goes_when_it_holds_a_token(param: str) -> None:
    for value in ("3f1c2b7a-9d4e-4f6a-8b2c-1d2e3f4a5b6c", "63c43fcc4b2bf9573c08239257aaca76", "tZm5Hw4IHRts9lDwplKVNM2mIxfZzm4N"):
        assert value not in redact(f"https://api.example.com/v1/data?page=2&{param}={value}&x=1").text


@pytest.mark.parametrize("text", ["https://s3.example.com/bucket?list-type=2&key=path/to/file.txt", "https://x.io/a?key=42",
                                  "https://x.io/a?session=abc", "?key=my-long-key-name-here"])
def test_a_url_parameter_of_that_name_holding_no_token_stays(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text", ["dana:appleharbor30@host", "DATABASE=app:Str0ngPw9@db.internal:5432/app",
                                  "git clone dana:tok3n8xq@git.internal:repo.git"])
def test_a_user_and_password_before_a_host_with_no_scheme_go(text: str) -> None:
    out = redact(text).text
    assert "appleharbor30" not in out and "Str0ngPw9" not in out and "tok3n8xq" not in out


@pytest.mark.parametrize("text", ["mailto:dana.smith@acme.io", "email:dana@acme.io", "scp file dana@host:/tmp", "npm:react@18.2.0",
                                  "pkg:npm/lodash@4.17.21", "docker.io/library/python:3.12@sha256", "Time: 10:30@home",
                                  "node:20-alpine@sha256"])
def test_mail_addresses_packages_and_images_with_an_at_stay(text: str) -> None:
    assert redact(text).text == text


@pytest.mark.parametrize("text", ["ssh dana@10.0.0.5, pw riverfrost14 and DATABASE=app:Str0ngPw9@db.internal:5432/app",
                                  "guest wifi pw riverfrost14 but only for guests", "NAS login admin riverfrost14 and then reboot"])
def test_an_aside_goes_when_a_conjunction_ends_its_clause(text: str) -> None:
    """Found running ``commonkeep write`` by hand: the aside took only a mark or the end as its clause's end."""
    out = redact(text).text
    assert "riverfrost14" not in out and "Str0ngPw9" not in out
