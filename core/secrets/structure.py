"""Credentials recognised by where they stand, whatever the provider.

A provider rule knows a token by its prefix; these rules know a credential by its place: the value
after a credential flag of a command line, a password clause of SQL, a line of a credentials file
(``.netrc``, ``.pgpass``, ``htpasswd``, ``.npmrc``, ``redis.conf``), a key of a connection
string or URL query, key material in any armour (PEM of every private type, SSH2, PuTTY, age,
WireGuard, JWK), a password hash, and a BIP-39 seed phrase (the word lists of the maintained
``mnemonic`` package, read from the installed package). ``rules.find`` runs them before its own
password rules, so their spans are claimed first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from commonkeep.secrets.lazy import lazy

# what a value may not start with: a reference to a secret kept elsewhere, not the secret (a template's
# ``%(name)s``, ``%s``, Windows' ``%NAME%``; a password may start with any other ``%``)
_REF = (r"(?![\"']?(?:[$<{]|%\(|%\w+%|%[sdr]\b|\[REDACTED|\*{3}|x{6}|\.\.\.|/|~/|\.{1,2}/|os\.environ|os\.getenv|process\.env|getenv|env\.|"
        r"(?:None|null|true|false|changeme|required|optional|secret|password|pass|passwd|pw|user|token|redacted|hidden"
        r"|example)\b))")
# in a connection string ``{…}`` is ODBC quoting; ``{{name}}`` and ``{name}`` are templates
_REF_CS = _REF.replace("[$<{]", "[$<]|\\{\\{|\\{\\w+\\}")
# a value after a flag: quoted (spaces allowed) or one run of non-space characters
_VAL = r"(?:'(?P<q1>[^'\n]{3,})'|\"(?P<q2>[^\"\n]{3,})\"|(?P<v>[^\s'\"`]{3,}))"

# long flags that always take a credential
_LONG = (r"--(?:password|passwd|pass|pw|passphrase|token|api[-_]?key|apikey|access[-_]?key|secret[\w-]*|"
         r"[\w-]*-(?:token|secret|password|passwd|key-?id|api-?key)|auth(?:-token)?|bearer|private-key-data|"
         r"storepass|keypass|srcstorepass|deststorepass|http-password|proxy-password|ftp-password|"
         r"registry-password|client-secret|signing-key|encryption-key|master-key)")
# commands whose short flag takes a password (``sshpass -p``, ``mysql -pX``, ``ldapsearch -w``, ``redis-cli -a``)
_SHORT_CMDS = (r"\b(?:sshpass\s+-p|(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb(?:-dump|-admin)?)\b[^\n|;&`]*?\s-p(?=\S)"
               r"|ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)\b[^\n|;&`]*?\s-[wy]"
               r"|redis-cli\b[^\n|;&`]*?\s-a|(?:7z|7za|7zr|unzip|zip|zipcloak|rar|unrar)\b[^\n|;&`]*?\s-[pP]"
               r"|smbclient\b[^\n|;&`]*?%|keytool\b[^\n|;&`]*?-(?:store|key)pass"
               r"|(?:docker|podman|buildah|skopeo|helm|oc|nerdctl|crane)\b[^\n|;&`]*?\blogin\b[^\n|;&`]*?\s-p"
               r"|(?:sqlcmd|bcp|osql|isql)\b[^\n|;&`]*?\s-P|(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\n|;&`]*?\s-p"
               r"|ssh-keygen\b[^\n|;&`]*?\s-P"
               r"|openssl\s+passwd(?:\s+-(?:\d|apr1|aixmd5|crypt|quiet|table|noverify|salt\s+\S+))*(?=\s+[^\s-])|\bnet\s+use\b[^\n|;&`]*?/user:\S+\s|(?:^|\n|>\s?)AUTH(?:\s+[\w.@-]{1,32}(?=[ \t]+\S{6}))?(?=\s+\S{6})"
               r"|\sAUTH(?:\s+[\w.@-]{1,32}(?=[ \t]+(?![A-Za-z]+\b)\S{6}))?(?=\s+(?![A-Za-z]+\b)\S{6})"
               r"|htpasswd\s+-\w*b\w*\s+\S+\s+\S+|(?:openssl)\b[^\n|;&`]*?\s-(?:k|pass(?:in|out)?)\s+(?:pass:|(?!pass:)))")
_PEM = lazy(
    r"-----BEGIN (?!(?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|X509 CRL"
    r"|PKCS7|CMS|TRUSTED CERTIFICATE|PGP PUBLIC KEY BLOCK|PGP SIGNATURE|PGP MESSAGE|SSH2 PUBLIC KEY)-----)"
    r"(?P<label>[A-Za-z0-9 ._-]{1,60})-----[\s\S]*?(?:-----END (?P=label)-----|-----END [^\n]{1,60}-----|\Z)")
_SHORT = lazy(_SHORT_CMDS + r"\s*" + _REF + _VAL)
_SQL_PASSWORD = lazy(r"(?i)\b(?:ENCRYPTED\s+|UNENCRYPTED\s+)?PASSWORD\s*(?:=\s*|\(\s*|\s+)" + _REF + r"(?:'(?P<q1>[^'\n]{3,})'|\"(?P<q2>[^\"\n]{3,})\")")
_CS_KEYS = (r"password|passwd|pwd|pass|user\s?password|secret|accountkey|sharedaccesskey|"
            r"sharedaccesssignature|sig|signature|x-amz-signature|x-goog-signature|access_token|refresh_token|id_token|"
            r"api[_-]?key|apikey|token|auth|authtoken|client_secret|private_key|sas|sastoken|code")
_CONNECTION = lazy(
    r"(?i)(?:^|(?<=[;?&\s(,\"']))(?:" + _CS_KEYS + r")\s*=\s*" + _REF_CS
    + r"(?![A-Za-z_][\w.]*\()(?P<v>\{(?:[^}]|\}\})*\}|'[^'\n]*'|\"[^\"\n]*\"|(?:[^;&\s\"']|[;](?![A-Za-z][\w .-]{0,40}=)(?=[^\s;]))+)")
_WIREGUARD = lazy(r"(?i)\b(?:private|preshared)[_-]?key\s*[=:]\s*(?P<v>[A-Za-z0-9+/]{42,43}=)")
# not a flag naming where the secret is (``--secret-id``, ``--password-file``)
_LONG_FLAG = lazy(r"(?i)(?<![\w-])" + _LONG + r"(?<!-id)(?<!-name)(?<!-arn)(?<!-ref)(?<!-file)(?<!-path)(?<!-env)(?:=|\s+)" + _REF + _VAL)
_USER_FLAG = lazy(r"(?<![\w-])(?:-u|--user|--proxy-user|-U|--username)(?:=|\s*)['\"]?[^\s:'\"/]{1,64}:" + _REF
                        + r"(?P<v>[^\s'\"`]{3,})")
_PASS_COLON = lazy(r"\b(?:pass|password|pw):(?P<v>[^\s'\"`]{4,})")  # openssl pass:…
_SHORT_FLAG = lazy(r"(?<![\w-])-[pPwakNK]\s+['\"]?(?P<v>[^\s'\"`/:=,]{8,})")
_AUTHORIZATION = lazy(r"(?i)(?:^|[\s'\"])(?:proxy-)?authorization\s*:\s*(?:[A-Za-z-]+\s+)?" + _REF + r"(?P<v>[^\s'\"`]{8,})")
_X_HEADER = lazy(r"(?i)(?:^|[\s'\"])(?:x-[\w-]*(?:key|token|secret|auth|signature)[\w-]*|api-key|apikey"
                       r")\s*:\s*" + _REF + r"(?P<v>[^\s'\"`][^\n'\"`]{7,}?)(?=['\"`]|\s*$|;\s)")
# SQL's ``IDENTIFIED BY``: a quoted value anywhere; an unquoted one (Oracle) only in SQL: written in capitals,
# or in a ``CREATE``/``ALTER USER`` statement ("users are identified by their email" is English)
_IDENTIFIED = lazy(r"(?i)\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?(?:BY|AS)\s+(?:PASSWORD\s+)?(?:'(?P<q1>[^'\n]{3,})'|\"(?P<q2>[^\"\n]{3,})\")")
_IDENTIFIED_BARE = lazy(r"(?:\bIDENTIFIED|(?i:\b(?:create|alter)\s+(?:user|role|login)\b[^\n;]*?\bidentified))"
                        r"\s+(?i:(?:WITH\s+\w+\s+)?(?:BY|AS)\s+(?:PASSWORD\s+)?)(?P<v>[^\s'\"`;]{3,})")
_NETRC = lazy(r"(?i)\b(?:machine\s+\S+|default)\b[^\n]*?\b(?:password|passwd|account)\s+" + _REF + _VAL)
_NETRC_LOGIN = lazy(r"(?i)\blogin\s+\S+\s+(?:password|passwd)\s+" + _REF + _VAL)
_PGPASS_LINE = lazy(r"(?<![\w.:*-])(?![0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}:)(?:\*|[A-Za-z][\w.-]*|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):(?:\d{1,5}|\*)"
                          r":[\w.*$-]+:[\w.*$@-]+:(?P<v>[^\s\"'{}]{3,})(?=\s|$)")
_AUTH_FIELD = lazy(r"(?i)(?:^|[\s\"'{,])_?(?:auth|authToken|_password|auth_token|identitytoken|registrytoken)[\"']?\s*[=:]\s*[\"']?"
                         + _REF + r"(?P<v>[A-Za-z0-9+/=._~-]{8,})(?![\w.]*\()")
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # every PEM block but the public ones; SSH2 (RFC 4716) private keys; PuTTY key files
    ("private_key", _PEM),
    ("private_key", lazy(r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----[\s\S]*?(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----|\Z)")),
    ("private_key", lazy(r"PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-(?:MAC|Hash):\s*\S+|\Z)")),
    ("private_key", lazy(r"(?<![A-Za-z0-9+/])b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/=\s]*")),  # a bare OpenSSH key body
    ("age_key", lazy(r"AGE-(?:SECRET-KEY|PLUGIN-[A-Z0-9]+)-1[0-9A-Z]{20,}")),
    ("wireguard_key", _WIREGUARD),
    # a JSON Web Key's private members
    ("jwk_private", lazy(r"\"(?:d|p|q|dp|dq|qi|k)\"\s*:\s*\"(?P<v>[A-Za-z0-9_-]{16,})\"")),
    # crypt(3) hashes (htpasswd, /etc/shadow, bcrypt, argon2) and LDAP {SHA}/{SSHA}
    ("password_hash", lazy(r"(?<![\w$])\$(?:apr1|2[abxy]|1|5|6|7|y|gy|argon2(?:id|i|d)|scrypt|pbkdf2[\w-]*|sha512|sha256|md5)"
                                 r"\$[A-Za-z0-9./+=$,-]{8,}")),
    ("password_hash", lazy(r"\{(?:SSHA|SHA|SSHA256|SSHA512|SHA256|SHA512|MD5|SMD5|CRYPT|PBKDF2[\w-]*)\}[A-Za-z0-9+/=.$-]{8,}")),
    # command lines: a long credential flag, a known command's short password flag, user:password
    ("password_flag", _LONG_FLAG),
    ("password_flag", _SHORT),
    ("password_flag", _USER_FLAG),
    ("password_flag", _PASS_COLON),  # openssl pass:…
    # any command's short flag followed by a value a person would only type as a password (three
    # character classes, not a path, a port, a version or key=value)
    ("password_short_flag", _SHORT_FLAG),
    # a 0x hex private key with a key or wallet word before it (an address is 40 digits, a key 64)
    ("hex_private_key", lazy(r"(?i)\b(?:private|priv|secret|signing|wallet|key)\b[^\n]{0,30}?(?<![0-9A-Za-z])0x"
                                   r"(?P<v>[0-9a-f]{64})(?![0-9A-Za-z])")),
    # HTTP headers that carry a credential: Authorization (any scheme), X-…-Key/Token/Secret
    ("credential_header", _AUTHORIZATION),
    ("credential_header", _X_HEADER),
    # SQL
    ("sql_password", _IDENTIFIED),
    ("sql_password", _IDENTIFIED_BARE),
    ("sql_password", _SQL_PASSWORD),
    # config files: redis, .netrc, .pgpass, .npmrc, docker's "auth"
    ("config_password", lazy(r"(?im)^\s*(?:requirepass|masterauth|masterpassword|rpcpassword|rpcauth|auth_pass|"
                                   r"server_password|bindpw|rootpw)\b\s*[=:]?\s*" + _REF + _VAL)),
    ("config_password", _NETRC),
    ("config_password", _NETRC_LOGIN),
    ("config_password", _PGPASS_LINE),
    ("config_password", _AUTH_FIELD),
    # connection strings (ADO, ODBC, JDBC properties, libpq, Azure) and URL queries: a value runs to the next
    # ``;key=``, ``&`` or space, so a password holding ``;`` or ``@`` goes whole; ``{…}`` is ODBC quoting
    ("connection_string", _CONNECTION),
)

# A rule runs only on a text holding one of its literals (lower-cased text when the flag says so).
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "age_key": (("AGE-",), False),
    "wireguard_key": (("key",), True),
    "jwk_private": (('":',), False),
    "password_hash": (("$", "{"), False),
    "password_flag": (("-", "pass:", "password:", "pw:", "net use", "auth "), True),
    "sql_password": (("identified", "password"), True),
    "config_password": (("pass", "auth", "machine", "default", "login", "token", "rpc", "bindpw", "rootpw", ":"), True),
    "connection_string": (("=",), False),
    "password_short_flag": ((" -",), False),
    "hex_private_key": (("0x",), False),
    "credential_header": ((":",), False),
}
# ... and a pattern listed here only on a text holding one of these (lower-cased)
GATES: dict[re.Pattern[str], tuple[str, ...]] = {
    _PEM: ("-----begin",),
    _PASS_COLON: ("pass:", "password:", "pw:"),  # its kind's literals (``-``, ``auth ``…) let most texts through
    _SHORT: ("sshpass", "mysql", "mariadb", "ldap", "redis-cli", "7z", "zip", "rar", "smbclient", "keytool", "htpasswd",
             "openssl", "login", "sqlcmd", "bcp", "osql", "isql", "mongo", "ssh-keygen", "net use", "auth"),
    _SQL_PASSWORD: ("password",),
    _CONNECTION: ("pass", "pwd", "secret", "key", "sig", "token", "auth", "sas", "code"),
}
PEM_NEEDLES = ("-----BEGIN", "---- BEGIN", "PuTTY-User-Key-File", "b3BlbnNzaC1rZXktdjE")

# Contexts: on ASCII text, a pattern listed here runs only where a cheaper regex finds, in the
# lower-cased text, what every match of it holds (a name of a secret before ``:`` or ``=``, the
# flag, the clause). A case-insensitive regex that starts with alternatives is tried at every
# position (~10 µs a sentence); these cost ~1. ``precheck.py`` asks the same ones.
ASSIGN = lazy(r"(?:pass|pw|secret|key|token|credential|auth)\w*[\"']?\s*[:=]")
CONNECTION = lazy(r"(?:pass|pw|secret|key|token|credential|auth|sig|sas|code)\w*\s*=")
LONG_FLAG = lazy(r"--[\w-]*?(?:pass|pw|token|key|secret|auth|bearer)")
USER_FLAG = lazy(r"(?<![\w-])(?:-u|--user|--proxy-user|--username)(?:=|\s*)['\"]?[^\s:'\"/]{1,64}:")
SHORT_FLAG = lazy(r"(?<![\w-])-[pwakn]\s+['\"]?[^\s'\"`/:=,]{8,}")
HEADER = lazy(r"(?:x-[\w-]*(?:key|token|secret|auth|signature)[\w-]*|api-key|apikey)\s*:")
PGPASS = lazy(r"[^\s:]+:(?:\d+|\*):[^\s:]+:[^\s:]+:\S")
_SQL_CONTEXT = lazy(r"password\s*[=(]?\s*['\"]")
_NETRC_CONTEXT = lazy(r"(?:machine|default)[^\n]*(?:passw|account)")
_LOGIN_CONTEXT = lazy(r"login\s+\S+\s+passw")
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _WIREGUARD: lambda low: ASSIGN.search(low) is not None,
    _LONG_FLAG: lambda low: "--" in low and LONG_FLAG.search(low) is not None,
    _USER_FLAG: lambda low: "-u" in low and USER_FLAG.search(low) is not None,
    _SHORT_FLAG: lambda low: SHORT_FLAG.search(low) is not None,
    _AUTHORIZATION: lambda low: "authorization" in low,
    _X_HEADER: lambda low: HEADER.search(low) is not None,
    _IDENTIFIED: lambda low: "identified" in low,
    _IDENTIFIED_BARE: lambda low: "identified" in low,
    _SQL_PASSWORD: lambda low: _SQL_CONTEXT.search(low) is not None,
    _NETRC: lambda low: _NETRC_CONTEXT.search(low) is not None,
    _NETRC_LOGIN: lambda low: _LOGIN_CONTEXT.search(low) is not None,
    _PGPASS_LINE: lambda low: low.count(":") >= 4 and PGPASS.search(low) is not None,
    _AUTH_FIELD: lambda low: ASSIGN.search(low) is not None,
    _CONNECTION: lambda low: CONNECTION.search(low) is not None,
}

# --- BIP-39 seed phrases --------------------------------------------------------------------

SEED_LENGTHS = (12, 15, 18, 21, 24)
_WORD = lazy(r"[^\W\d_]+")
# between two words of a phrase: spaces, commas, dashes, or a list number ("1. abandon 2) ability")
_GAP = lazy(r"[\s,;:|/-]*(?:\d{1,2}[.):]?[\s,;:|/-]*)?")
_LANGUAGES = ("english", "spanish", "french", "italian", "portuguese", "czech")


@lru_cache(maxsize=1)
def word_lists() -> tuple[frozenset[str], ...]:
    """The BIP-39 word lists the ``mnemonic`` package ships; ``()`` when it is not installed."""
    out: list[frozenset[str]] = []
    try:
        from importlib import resources  # here: loading the lists is rare, the import is not free (~4 ms)

        base = resources.files("mnemonic") / "wordlist"
        for lang in _LANGUAGES:
            out.append(frozenset(w.strip() for w in (base / f"{lang}.txt").read_text(encoding="utf-8").split() if w.strip()))
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return ()
    return tuple(out)


@lru_cache(maxsize=1)
def any_list() -> frozenset[str]:
    """Every word of every list: a quick first look (a phrase has 8 distinct words of it at least)."""
    return frozenset().union(*word_lists())


def seedlike(low: str) -> bool:
    """Could the lower-cased text hold a seed phrase (8+ distinct words of the lists, 12+ words)?"""
    if low.isascii():  # its words of letters as bytes: what ``_WORD`` finds there, in a quarter of the time
        words = low.encode("ascii").translate(_LETTERS).split()
        return len(words) >= SEED_LENGTHS[0] and len(ascii_words().intersection(words)) >= 8
    plain = _WORD.findall(low)
    return len(plain) >= SEED_LENGTHS[0] and len(any_list().intersection(plain)) >= 8


# lower-case ASCII letters stay, every other byte becomes a space: ``_WORD``'s words of a lower-cased ASCII text
_LETTERS = bytes(c if 97 <= c <= 122 else 32 for c in range(256))


@lru_cache(maxsize=1)
def ascii_words() -> frozenset[bytes]:
    """The ASCII words of every list, as bytes (a word outside ASCII is never one of an ASCII text's)."""
    return frozenset(w.encode("ascii") for w in any_list() if w.isascii())


def seed_spans(text: str) -> list[tuple[int, int, str]]:
    """Spans of 12 or more consecutive words of one BIP-39 word list (a phrase is 12 to 24 words)."""
    low = text.lower()
    if not seedlike(low):
        return []
    plain = _WORD.findall(low)
    lists = [wl for wl in word_lists() if len([w for w in plain if w in wl]) >= SEED_LENGTHS[0]]
    if not lists:
        return []
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(low)]
    spans: list[tuple[int, int, str]] = []
    for wl in lists:
        run: list[tuple[int, int, str]] = []
        for w in [*words, (-1, -1, "")]:
            joined = bool(run) and w[0] >= 0 and _GAP.fullmatch(text, run[-1][1], w[0]) is not None
            if w[2] in wl and (not run or joined):
                run.append(w)
                continue
            if len(run) >= SEED_LENGTHS[0]:
                spans.append((run[0][0], run[-1][1], "seed_phrase"))
            run = [w] if w[2] in wl else []
    return spans
