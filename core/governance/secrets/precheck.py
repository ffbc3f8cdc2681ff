"""The redactor's pre-check: could ``rules.find`` redact anything in this text?

Nearly every text a host captures holds no secret, and ``find`` runs some fifty rules, so the
redactor first asks this cheaper question and leaves a text alone when the answer is no. It must
never say no where ``find`` would redact something, so it is built rule by rule from what every
match of a rule holds:

- a literal of the rule (a provider prefix, key armour, ``identified``, ``passw``, ``pwd``,
  ``/user:``…), looked up as a substring of the lower-cased text;
- for the rules that start from a common character or word (``=``, ``:``, ``--``, ``-u``,
  `` -``, ``$``, ``{``, ``"``, ``://``, ``key``, ``token``, ``bearer``…), that character or word
  first and then a short regex of the context the rule needs (``token`` followed by ``:`` or
  ``=``, a long flag naming a password or token, a URL with ``:`` and ``@`` in its authority…);
- for the rules that read runs of token characters: 16 letters and digits in a row (provider
  tokens, hex keys, hex-encoded text), a run of 20 token characters holding an upper-case letter
  (``looks_random`` wants one), a base64 run that decodes to readable text (``encoded_*``), and
  twelve words of a BIP-39 list or more (seed phrases).

Text with characters outside ASCII always gets the full scan (it may be disguised). Scanning a
text this lets through costs tens of microseconds; the pre-check costs a few.
``tests/governance/test_secrets_scan.py`` holds it to ``find`` on the whole generated corpus and
on random texts built around every rule's anchors.
"""

from __future__ import annotations

import re
from functools import lru_cache

from commonkeep.governance.secrets import structure
from commonkeep.governance.secrets.rules import _decoded

# literals one of which every match of a rule without a context regex below holds (lower-cased),
# grouped under a shorter literal each holds, so a text holding none of those is passed over quickly
_LITERALS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("-", ("-----begin", "---- begin", "putty-user-key-file", "age-secret-key-", "age-plugin-", "sk-", "pypi-", "api-key")),
    ("_", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "hf_", "npm_")),
    (":", (":aa", "pw:", "/user:")),
    (".", ("hooks.slack.com", "sg.")),
    ("pass", ("passw", "passph", "passc", "pass:", "requirepass", "auth_pass")),
    ("pw", ("pwd", "bindpw", "rootpw")),
    ("auth", ("masterauth", "rpcauth", "authorization")),
    ("glrt", ("glrt",)), ("xox", ("xox",)), ("aiza", ("aiza",)), ("akia", ("akia",)), ("eyj", ("eyj",)),
    ("kennwort", ("kennwort",)), ("senha", ("senha",)), ("mot de passe", ("mot de passe",)),
    ("identified", ("identified",)), ("apikey", ("apikey",)),
)
# a name of a secret right before ``:`` or ``=`` (assignments, config lines, connection strings, WireGuard)
_ASSIGN_WORDS = ("pass", "pw", "secret", "key", "token", "credential", "auth")
_ASSIGN = re.compile(r"(?:pass|pw|secret|key|token|credential|auth)\w*[\"']?\s*[:=]")
_CONNECTION_WORDS = ("sig", "sas", "code")
_CONNECTION = re.compile(r"(?:sig|signature|sas|code)\s*=")
# command lines: a long flag naming a credential, ``-u user:…``, a short flag with a long value
_LONG_FLAG = re.compile(r"--[\w-]*?(?:pass|pw|token|key|secret|auth|bearer)")
_USER_FLAG = re.compile(r"(?<![\w-])(?:-u|--user|--proxy-user|--username)(?:=|\s*)['\"]?[^\s:'\"/]{1,64}:")
_SHORT_FLAG = re.compile(r"(?<![\w-])-[pwakn]\s+['\"]?[^\s'\"`/:=,]{8,}")
# the commands whose short flag takes a password (``structure._SHORT_CMDS``)
_COMMANDS = ("sshpass", "mysql", "mariadb", "ldap", "redis-cli", "7z", "zip", "rar", "smbclient", "keytool",
             "htpasswd", "openssl", "login", "sqlcmd", "bcp", "osql", "isql", "mongo", "ssh-keygen")
_HASH = re.compile(r"\$(?:apr1|2[abxy]|[1567y]|gy|argon2|scrypt|pbkdf2|sha512|sha256|md5)\$|\{(?:S?SHA|S?MD5|CRYPT|PBKDF2)")
_PASS_WORD = re.compile(r"pass\sword")  # "pass word" in prose
_JWK = re.compile(r"\"(?:d|p|q|dp|dq|qi|k)\"\s*:")
_URL_PASSWORD = re.compile(r"://[^\s/@]*:[^\s/]*@")
_BEARER = re.compile(r"\b(?:bearer|basic)\b\s*[:=]?\s+[a-z0-9._~+/=-]{16}")
_HEADER = re.compile(r"x-[\w-]*(?:key|token|secret|auth|signature)[\w-]*\s*:")
_GITLAB = re.compile(r"gl[a-z]{1,5}-")
_PGPASS = re.compile(r"[^\s:]+:(?:\d+|\*):[^\s:]+:[^\s:]+:\S")
# runs of token characters
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9+/_=.-]{20,}")  # ``rules._TOKEN``
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")  # ``rules._B64_RUN``


def needs_scan(text: str) -> bool:
    """False only when ``rules.find(text)`` finds nothing (see the module doc)."""
    if not text.isascii():
        return True
    low = text.lower()
    for first, literals in _LITERALS:
        if first in low and any(lit in low for lit in literals):
            return True
    return _in_context(text, low) or _runs(text, low)


def _in_context(text: str, low: str) -> bool:
    if ("=" in low or ":" in low) and any(w in low for w in _ASSIGN_WORDS) and _ASSIGN.search(low):
        return True
    if "=" in low and any(w in low for w in _CONNECTION_WORDS) and _CONNECTION.search(low):
        return True
    if "-" in low:
        if "--" in low and _LONG_FLAG.search(low):
            return True
        if "-u" in low and ":" in low and _USER_FLAG.search(low):
            return True
        if " -" in low and _SHORT_FLAG.search(low):
            return True
        if "gl" in low and _GITLAB.search(low):
            return True
    if ("-" in low or "%" in low) and any(c in low for c in _COMMANDS):
        return True
    if "pass" in low and _PASS_WORD.search(low):
        return True
    if "AUTH" in text:  # redis's AUTH command, upper case as the rule wants it
        return True
    if ("$" in text or "{" in text) and _HASH.search(text):
        return True
    if '":' in text and _JWK.search(text):
        return True
    if "://" in text and _URL_PASSWORD.search(text):
        return True
    if ("bearer" in low or "basic" in low) and _BEARER.search(low):
        return True
    if "x-" in low and ":" in low and _HEADER.search(low):
        return True
    if "account" in low and ("machine" in low or "default" in low):  # .netrc: machine … account …
        return True
    return low.count(":") >= 4 and _PGPASS.search(low) is not None


def _runs(text: str, low: str) -> bool:
    if _ALNUM_RUN.search(text) is not None:  # provider tokens, hex keys and hex-encoded text
        return True
    for m in _TOKEN_RUN.finditer(text):  # ``looks_random`` wants an upper-case letter
        if m.group(0) != low[m.start() : m.end()]:
            return True
    if "=" in text or "+" in text or "/" in text or "_" in text or "-" in text:  # base64 that reads as text
        for m in _B64_RUN.finditer(text):
            if _decoded(m.group(0)) is not None:
                return True
    return len(text) >= _seed_chars() and structure.seedlike(low)


@lru_cache(maxsize=1)
def _seed_chars() -> int:
    """The shortest a seed phrase can be written: its words at their shortest, one character between."""
    shortest = min((len(w) for wl in structure.word_lists() for w in wl), default=1)
    return structure.SEED_LENGTHS[0] * (shortest + 1) - 1
