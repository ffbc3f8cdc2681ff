"""More kinds for the generated corpus (``corpus.py``): provider tokens our own rules never named,
credentials known only by their place (flags, SQL, config lines, connection strings, key armour,
seed phrases), and benign text shaped like tokens (temp paths, ids, digests, colours, commands).

Every value is drawn at run time from the caller's seeded ``random.Random``; the fixed strings
here are prefixes, labels and command words, never a secret.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable

from commonkeep.bench.secrets_corpus_base import ALNUM, HEX, password, rand

Made = tuple[list[str], list[str]]
UPPER_DIGITS = string.ascii_uppercase + string.digits
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
B64 = ALNUM + "+/"


def _one(text: str, *parts: str) -> Made:
    return [text], list(parts)


def _provider(prefix: str, n: int, alphabet: str = ALNUM, sep: str = "") -> Callable[[random.Random], Made]:
    def make(r: random.Random) -> Made:
        v = rand(r, n, alphabet)
        tok = prefix + v + sep
        return _one(r.choice([f"the new credential {tok} goes to CI", f"export CRED={tok}", f"{tok}"]), v)
    return make


def _seed(r: random.Random, n: int) -> Made:
    from commonkeep.secrets.structure import word_lists

    words = sorted(word_lists()[0]) if word_lists() else ["seed"]
    phrase = " ".join(r.choice(words) for _ in range(n))
    return _one(r.choice([f"wallet backup: {phrase}", f"recovery phrase\n{phrase}\n(keep offline)"]), phrase)


def _pem(label: str) -> Callable[[random.Random], Made]:
    def make(r: random.Random) -> Made:
        body = "\n".join(rand(r, 64, B64) for _ in range(3))
        return _one(f"key:\n-----BEGIN {label}-----\n{body}\n-----END {label}-----\n", *body.split("\n"))
    return make


def _putty(r: random.Random) -> Made:
    pub, priv, mac = rand(r, 48, B64), rand(r, 64, B64), rand(r, 40, HEX)
    return _one(f"PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\nPublic-Lines: 1\n{pub}\n"
                f"Private-Lines: 1\n{priv}\nPrivate-MAC: {mac}", priv, mac)


def _ssh2(r: random.Random) -> Made:
    body = "\n".join(rand(r, 70, B64) for _ in range(2))
    return _one(f"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"ops\"\n{body}\n"
                "---- END SSH2 ENCRYPTED PRIVATE KEY ----", *body.split("\n"))


def _split_tags(r: random.Random) -> Made:
    a, b = rand(r, 8, UPPER_DIGITS), rand(r, 8, UPPER_DIGITS)
    return ["AKIA" + a, b], [a, b]


def _jdbc_at(r: random.Random) -> Made:
    v = "@" + rand(r, 6) + ";" + rand(r, 8)
    return _one(f"jdbc:sqlserver://db.internal:1433;databaseName=app;user=sa;password={v};encrypt=true", v[1:7], v[8:])


def _odbc(r: random.Random) -> Made:
    v = rand(r, 6) + ";" + rand(r, 6) + "}}" + rand(r, 4)
    return _one(f"Driver={{ODBC Driver 18}};Server=tcp:db,1433;Uid=app;Pwd={{{v}}};", v[:6], v[7:13])


M: dict[str, Callable[[random.Random], Made]] = {
    # provider tokens our own rules never named (the maintained rule set knows them)
    "shopify_token": _provider("shpat_", 32, HEX),
    "digitalocean_token": _provider("dop_v1_", 64, HEX),
    "postman_key": lambda r: (lambda a, b: _one(f"postman PMAK-{a}-{b}", a, b))(rand(r, 24, HEX), rand(r, 34, HEX)),
    "databricks_token": _provider("dapi", 32, HEX),
    "rubygems_token": _provider("rubygems_", 48, HEX),
    "sourcegraph_token": _provider("sgp_", 40, HEX),
    "supabase_token": _provider("sbp_", 40, HEX),
    "dynatrace_token": lambda r: (lambda a, b: _one(f"dt token dt0c01.{a}.{b}", a, b))(rand(r, 24, UPPER_DIGITS), rand(r, 64, UPPER_DIGITS)),
    "airtable_token": lambda r: (lambda a, b: _one(f"airtable pat{a}.{b}", a, b))(rand(r, 14), rand(r, 64, HEX)),
    "newrelic_key": _provider("NRAK-", 27, UPPER_DIGITS),
    "mailchimp_key": lambda r: (lambda v: _one(f"mailchimp api key {v}-us{r.randint(1, 20)}", v))(rand(r, 32, HEX)),
    "buildkite_token": _provider("bkua_", 40, HEX),
    "langsmith_key": lambda r: (lambda a, b: _one(f"LANGSMITH lsv2_pt_{a}_{b}", a, b))(rand(r, 32, HEX), rand(r, 10, HEX)),
    # command lines
    "sshpass_flag": lambda r: (lambda v: _one(f"sshpass -p '{v}' ssh deploy@web1", v))(password(r)),
    "curl_user": lambda r: (lambda v: _one(f"curl -u admin:{v} https://ci.internal/api", v))(password(r)),
    "mysql_flag": lambda r: (lambda v: _one(f"mysql -h db -u root -p{v} app < dump.sql", v))(password(r, extra="!#%")),
    "long_flag": lambda r: (lambda v: _one(r.choice([f"deploy --api-token {v} --env prod", f"tool login --password={v}",
                                                     f"vault write --client-secret {v}"]), v))(rand(r, 18)),
    "ldap_flag": lambda r: (lambda v: _one(f"ldapsearch -x -D cn=admin,dc=corp -w {v} -b dc=corp", v))(password(r)),
    "redis_cli_flag": lambda r: (lambda v: _one(f"redis-cli -h cache -a {v} FLUSHALL", v))(password(r)),
    "openssl_pass": lambda r: (lambda v: _one(f"openssl enc -aes-256-cbc -pass pass:{v} -in a -out b", v))(password(r)),
    # SQL and config files
    "sql_identified_by": lambda r: (lambda v: _one(f"CREATE USER 'app'@'%' IDENTIFIED BY '{v}';", v))(password(r)),
    "sql_password": lambda r: (lambda v: _one(f"ALTER ROLE reporting WITH LOGIN PASSWORD '{v}';", v))(password(r)),
    "redis_requirepass": lambda r: (lambda v: _one(f"redis.conf:\nrequirepass {v}\nmaxmemory 2gb", v))(password(r)),
    "netrc_line": lambda r: (lambda v: _one(f"machine api.example.com login bot password {v}", v))(password(r)),
    "pgpass_line": lambda r: (lambda v: _one(f"db.internal:5432:app:report:{v}", v))(password(r)),
    "htpasswd_line": lambda r: (lambda s, h: _one(f"admin:$apr1${s}${h}", s, h))(rand(r, 8), rand(r, 22, ALNUM + "./")),
    "npmrc_token": lambda r: (lambda v: _one(f"//registry.npmjs.org/:_authToken={v}", v))(rand(r, 36)),
    "docker_auth": lambda r: (lambda v: _one(f'{{"auths": {{"registry.internal": {{"auth": "{v}"}}}}}}', v))(rand(r, 40, B64)),
    # connection strings
    "jdbc_password_at": _jdbc_at,
    "odbc_braced_password": _odbc,
    "url_password_colon": lambda r: (lambda a, b: _one(f"amqp://svc:{a}:{b}@mq.internal:5672/", a, b))(rand(r, 8), rand(r, 8)),
    "url_query_token": lambda r: (lambda v: _one(f"webhook https://hooks.internal/in?id=7&access_token={v}", v))(rand(r, 30)),
    "libpq_dsn": lambda r: (lambda v: _one(f"host=db port=5432 dbname=app user=app password={v} sslmode=require", v))(password(r)),
    # key material
    "ec_private_key": _pem("EC PRIVATE KEY"),
    "pgp_private_key": _pem("PGP PRIVATE KEY BLOCK"),
    "openvpn_static_key": lambda r: (lambda body: _one(f"-----BEGIN OpenVPN Static key V1-----\n{body}\n-----END OpenVPN Static key V1-----",
                                                      *body.split("\n")))("\n".join(rand(r, 32, HEX) for _ in range(4))),
    "ssh2_private_key": _ssh2,
    "putty_private_key": _putty,
    "age_secret_key": lambda r: (lambda v: _one(f"age key AGE-SECRET-KEY-1{v}", v))(rand(r, 58, BECH32)),
    "wireguard_private_key": lambda r: (lambda v: _one(f"[Interface]\nPrivateKey = {v}=\nListenPort = 51820", v))(rand(r, 43, B64)),
    "jwk_private_member": lambda r: (lambda v: _one(f'{{"kty": "EC", "crv": "P-256", "d": "{v}"}}', v))(rand(r, 43, ALNUM + "_-")),
    # seed phrases, short random tokens, and tokens split across single-value fields
    "seed_phrase_12": lambda r: _seed(r, 12),
    "seed_phrase_24": lambda r: _seed(r, 24),
    "short_random_token": lambda r: (lambda v: _one(f"the one-time code for the staging vault is {v}", v))(rand(r, 22)),
    "aws_id_split_across_tags": _split_tags,
    # a value given a secret name in the places ``password = …`` does not cover (``named.py``)
    "operator_assignment": lambda r: (lambda v: _one(r.choice([f'dbPassword := "{v}"', f"'smtp_password' => '{v}',",
                                                               f'api_token <- "{v}"']), v))(password(r)),
    "short_name_assignment": lambda r: (lambda v: _one(r.choice([f"DB_PASS={v}", f"smtp_pass: {v}", f'const mailPwd = "{v}";']), v))(password(r)),
    "env_line": lambda r: (lambda v: _one(r.choice([f"FROM python:3.12\nENV DB_PASS {v}\nRUN make", f"set -x GITHUB_TOKEN {v}",
                                                    f"setenv SMTP_PASSWORD {v}"]), v))(password(r)),
    "markup_password": lambda r: (lambda v: _one(r.choice([f"<password>{v}</password>", f'<add key="DbPassword" value="{v}" />',
                                                           f"env:\n  - name: DB_PASS\n    value: {v}",
                                                           f'<input type="password" value="{v}">']), v))(password(r)),
    # (words drawn at random: a lone lower-case word, say as a tag, cannot be told from any word, so the
    # phrase is never the text's last word)
    "quoted_prose_password": lambda r: (lambda a, b: _one(r.choice([f"my gpg passphrase is '{a} {b}' on the laptop",
                                                                    f'set the wifi password to "{a} {b}" today']), a, b))(
        rand(r, 8, string.ascii_lowercase), rand(r, 8, string.ascii_lowercase)),
    "recovery_codes": lambda r: (lambda a, b: _one(f"GitHub recovery codes: {a} {b}", a, b))(
        f"{rand(r, 5, HEX)}-{rand(r, 5, HEX)}", f"{rand(r, 5, HEX)}-{rand(r, 5, HEX)}"),
}


PLACED = frozenset({
    "sshpass_flag", "curl_user", "mysql_flag", "long_flag", "ldap_flag", "redis_cli_flag", "openssl_pass", "sql_identified_by",
    "sql_password", "redis_requirepass", "netrc_line", "pgpass_line", "htpasswd_line", "npmrc_token", "docker_auth",
    "jdbc_password_at", "odbc_braced_password", "url_password_colon", "url_query_token", "libpq_dsn", "ec_private_key",
    "pgp_private_key", "openvpn_static_key", "ssh2_private_key", "putty_private_key", "wireguard_private_key",
    "jwk_private_member", "seed_phrase_12", "seed_phrase_24", "short_random_token", "mailchimp_key", "operator_assignment",
    "short_name_assignment", "env_line", "markup_password", "quoted_prose_password", "recovery_codes",
})

_WORDS = ["build", "deploy", "billing", "search", "ingest", "cache", "runner", "docs", "worker"]


def benign_more(rng: random.Random) -> list[Callable[[], str]]:
    """Benign makers shaped like tokens: paths with random temp names, ids, digests, colours, commands."""
    def w() -> str:
        return rng.choice(_WORDS)

    def tmpname() -> str:
        return rand(rng, 10)

    return [
        lambda: f"The export failed: cannot write /tmp/tmp.{tmpname()}.json (disk full).",
        lambda: f"pytest left /tmp/pytest-of-root/pytest-{rng.randint(1, 99)}/test_{w()}0/tmp{rand(rng, 8, string.ascii_lowercase + string.digits)}/out.log",
        lambda: f"Edited src/commonkeep/{w()}/{w()}_{w()}.py and tests/{w()}/test_{w()}.py.",
        lambda: f"Checksum of the {w()} tarball: sha256 {rand(rng, 64, HEX)} (verified).",
        lambda: f"md5 {rand(rng, 32, HEX)} matches the upstream release.",
        lambda: f"Approved cap_2026120{rng.randint(1, 9)}{rng.randint(100000, 999999)}_{rand(rng, 6, string.ascii_lowercase + string.digits)} "
                f"into mem_2026120{rng.randint(1, 9)}{rng.randint(100000, 999999)}_{rand(rng, 4, string.ascii_lowercase + string.digits)}.",
        lambda: f"Applied patch_2026120{rng.randint(1, 9)}{rng.randint(1000, 9999)}_{rand(rng, 6, string.ascii_lowercase)} to the {w()} store.",
        lambda: f"Trace {rand(rng, 8, HEX)}-{rand(rng, 4, HEX)}-4{rand(rng, 3, HEX)}-a{rand(rng, 3, HEX)}-{rand(rng, 12, HEX)} timed out.",
        lambda: f"Use #{rand(rng, 6, HEX)} for the {w()} header and #{rand(rng, 3, HEX)} for links.",
        lambda: f"Upgraded to {w()}-{rng.randint(1, 9)}.{rng.randint(0, 40)}.{rng.randint(0, 9)}rc{rng.randint(1, 3)}+build.{rng.randint(10, 999)}.",
        lambda: f"Run `docker run -p {rng.randint(1024, 9999)}:80 -u 1000:1000 {w()}:latest` locally.",
        lambda: f"`ssh -p {rng.randint(1024, 9999)} deploy@{w()}.internal` then `mkdir -p /srv/{w()}`.",
        lambda: f"`python -m pytest -p no:cacheprovider -k {w()}` is faster on CI.",
        lambda: f"Branch {w()}/{rand(rng, 8, string.ascii_lowercase)}-{w()} was merged at {rand(rng, 12, HEX)}.",
        lambda: f"def {w()}_{w()}(self, key: str, token_budget: int = {rng.randint(100, 9000)}) -> None: ...",
        lambda: f"const {w()}Config = {{ retries: {rng.randint(1, 9)}, timeoutMs: {rng.randint(100, 9000)} }};",
        lambda: f"The S3 object is s3://{w()}-artifacts/{rng.randint(2020, 2026)}/{w()}/{rand(rng, 12, HEX)}.tar.gz.",
        lambda: f"Photo IMG_{rng.randint(1000, 9999)}.HEIC and report_{w()}_{rng.randint(2020, 2026)}Q{rng.randint(1, 4)}.pdf are attached.",
        lambda: f"Container {rand(rng, 12, HEX)} restarted; image {w()}@sha256:{rand(rng, 64, HEX)}.",
        lambda: f"SELECT id, name FROM {w()} WHERE created_at > now() - interval '{rng.randint(1, 30)} days';",
        # code and references beside secret names: nothing to redact (``named.py``)
        lambda: f"{w()}Users.map(user => user.passwordHash).filter(Boolean) in {w()}.ts",
        lambda: f"token := get{w().title()}Token(ctx) // then retry {rng.randint(2, 9)} times",
        lambda: f"DB_PASS_FILE=/run/secrets/{w()} and ENV API_TOKEN_FILE /run/secrets/{w()}_token",
        lambda: f"The {w()} API returns error code: {rng.randint(400, 599)}; pin the client to {rng.randint(1, 9)}.{rng.randint(0, 20)}.",
    ]
