"""Passwords on command lines and config lines that name no command of their own (issue 37):
the place is the shape of the line, not a list of tools.

- a user flag with its value and a password flag in the same command, in either order (``az login
  -u U -p PW``, ``ipmitool -U admin -P PW``, ``psexec -u U -p PW``, ``xcrun altool -u U -p PW``);
  a value that is a port (``-p 8080:80``, ``-p 5432``), a path, a URL, a flag or a name of its own
  stays;
- Windows' ``/p:PW`` beside ``/u:``, and ``/pass:PW``, ``/password:PW`` (``cmdkey``, ``wmic``,
  ``xfreerdp``); PuTTY's ``-pw PW``; ``-passwd PW`` (VNC); ``-auth USER:PW`` (Jenkins' CLI); an
  SNMPv3 command's ``-A``/``-X`` pass phrases; Redis' ``CONFIG SET requirepass PW``; ``composer
  config http-basic.HOST USER PW``;
- ``user:PW@host`` with no scheme (``DATABASE=app:PW@db.internal:5432/app``), not a mail address;
- a secret's name and a token-shaped value with only a space between (``… secret_access_key S``);
- a config line whose key is a password by its last part, with no operator (``olcRootPW: PW``,
  ``wpa-psk PW``), and a build file's ``storePassword "PW"`` / ``keyPassword 'PW'`` (judged as strictly
  as a flag pair's: CMake's ``message(CHECK_PASS "found")`` is no password).

Values are judged by ``values.keep``: not a port, path, URL, flag, file name, reference or word of
the grammar; after a user flag (``password_flag_pair``, where ``-p`` may be a port or a profile: ``mvn
-U clean -P release``) not an English word either.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets.context import _Q
from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Literals, Maybe
from commonkeep.secrets.structure import _REF

_ONE = r"[^\n|;&]*?"  # the rest of one command
_VALUE = r"(?P<v>[^\s'\"`-][^\s'\"`]{2,63})(?=\s|$|['\")])"
_FLAGVAL = r"(?:'(?P<q1>[^'\n]{3,64})'|\"(?P<q2>[^\"\n]{3,64})\"|" + _VALUE + r")"
_USER = r"(?:-u|-U|--user(?:name)?|-l|--login)(?:[ \t]+|=)(?!-)[^\s=]+(?=\s)"  # not ``-l app=web`` (a label)
_PASS = r"(?:-p|-P|--pass(?:word)?)(?:[ \t]+|=)"
_PAIR = lazy(r"(?<![\w-])" + _USER + _ONE + r"[ \t]" + _PASS + _REF + _FLAGVAL)
_PAIR_AFTER = lazy(r"(?<![\w-])" + _PASS + _REF + _FLAGVAL + r"(?=" + _ONE + r"[ \t]" + _USER + r")")  # the user flag after it
_WINDOWS = lazy(r"(?i)(?<![\w/])/(?:pass|password|pwd):" + _REF + r"(?P<v>[^\s/\"']{3,64})"
                r"|(?<![\w/])/u(?:ser)?:\S+" + _ONE + r"\s/p:" + _REF + r"(?P<q1>[^\s/\"']{3,64})")
_PUTTY = lazy(r"(?<![\w-])-pw\s+" + _REF + _FLAGVAL)
_VNC = lazy(r"(?<![\w-])-passwd\s+" + _REF + _FLAGVAL)
_JENKINS = lazy(r"(?<![\w-])-auth\s+[\w.@-]{1,40}:" + _REF + r"(?P<v>[^\s'\"@]{3,64})")
_SNMP = lazy(r"(?<![\w-])-[AX]\s+" + _REF + _FLAGVAL)  # asked only of a text that names an SNMP command
_REDIS = lazy(r"(?i)\bconfig\s+set\s+(?:requirepass|masterauth)\s+" + _REF + _FLAGVAL)
_COMPOSER = lazy(r"(?i)\bcomposer\s+config\s+(?:--global\s+|-g\s+)?http-basic\.\S+\s+\S+\s+" + _REF + _FLAGVAL)
# a key that is a password by its last part: ``rootPW``, ``storePassword``, ``wpa-psk``, ``db_pass``
_KEY = (r"(?:[A-Za-z][\w]*[_.-](?i:pass(?:word|wd|phrase)?|pwd|pw|psk)"
        r"|[a-z][A-Za-z0-9]*(?:Pass(?:word|wd|phrase)?|Pwd|PW|Psk|PSK)"
        r"|(?i:wpa-psk|wpa-passphrase))")
_KEY_LINE_TAIL = r"[ \t]*(?::[ \t]*|[ \t]+)" + _REF + r"(?:" + _Q + r"|(?P<v>[^\s\"'=:]{3,64}))[ \t]*$"
_KEY_LINE = lazy(r"(?m)^[ \t]*" + _KEY + _KEY_LINE_TAIL)
_KEY_LINE_LOW = lazy(r"(?im)^[ \t]*" + _KEY + _KEY_LINE_TAIL)  # the same, asked of the lower-cased text (a superset)
# a secret's name then its value with only a space between, on a command line (``rclone config create R s3
# access_key_id A secret_access_key S``, ``aws configure set aws_secret_access_key S``): a token's shape only
# (not after a flag or a key that names one: ``--token-name my-github-account``, ``secret_id X``)
_NAMED_SPACE = lazy(r"(?i)(?<![\w-])(?:[a-z0-9]+[_.])*(?:secret|token|api[_-]?key|access[_-]?key|passw(?:or)?d)[\w.-]*"
                    r"(?<![-_.]name)(?<![-_.]id)(?<![-_.]arn)(?<![-_.]file)(?<![-_.]path)[ \t]+" + _REF
                    + r"(?P<v>[A-Za-z0-9+/_=.][A-Za-z0-9+/_=.-]{15,127})(?=\s|$)")
# ``user:PW@host`` with no scheme before it (a connection string in a config value, a clone address); not a
# mail address (``mailto:``, ``email:``), an image's tag before its digest (``python:3.12-slim@sha256:…``)
# or a redaction marker; the value judged as a flag pair's (no word, no name)
_USER_AT = lazy(r"(?i)(?<![\w.:/@%+\[-])(?!(?:mailto|email|e-mail|from|to|cc|bcc|reply-to|sip|sips|xmpp|tel|mail|user|login):)"
                r"[a-z_][\w.-]{0,31}:(?!\d+(?:\.\d+)+)(?P<v>[^\s:@/'\"`\[\]]{4,64})"
                r"@(?!(?:sha\d+|blake2\w*|md5|sha3-\d+)\b)(?:(?:tcp|unix)\(|[a-z0-9][\w-]*(?:\.[\w-]+)*(?::\d{1,5})?(?=$|[\s/:,;)'\"]))")
_KEY_QUOTED = lazy(r"(?<![\w.-])" + _KEY + r"[ \t]+" + _REF + _Q)
_KEY_QUOTED_LOW = lazy(r"(?i)(?<![\w.-])" + _KEY + r"[ \t]+" + _REF + _Q)  # asked of the lower-cased text (a superset)

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("password_flag_pair", _PAIR),
    ("password_flag_pair", _PAIR_AFTER),
    ("password_option", _WINDOWS),
    ("password_option", _PUTTY),
    ("password_option", _VNC),
    ("password_option", _JENKINS),
    ("password_option", _SNMP),
    ("password_option", _REDIS),
    ("password_option", _COMPOSER),
    ("config_password_key", _KEY_LINE),
    ("config_password_quoted", _KEY_QUOTED),
    ("token_after_name", _NAMED_SPACE),
    ("password_flag_pair", _USER_AT),
)
KINDS = frozenset(kind for kind, _ in PATTERNS)

_PAIR_WORDS = ("-u", "--user", "-l", "--login")
_WINDOWS_WORDS = ("/pass:", "/password:", "/pwd:", "/p:")
_KEY_WORDS = ("pass", "pwd", "pw", "psk")
_NAMED_WORDS = ("secret", "token", "key", "passw", "passwd")
# Maven's command (its ``-P`` is a profile): the word, not "mvn" inside a password ("hatmvnz4")
_MAVEN = re.compile(r"(?<![\w-])mvnw?(?![\w-])")
_PAIR_FINDER, _WINDOWS_FINDER, _KEY_FINDER = Literals(_PAIR_WORDS), Literals(_WINDOWS_WORDS), Literals(_KEY_WORDS)
_NAMED_FINDER = Literals(_NAMED_WORDS)
# each kind's literals, looked up in the lower-cased text (``rules.NEEDLES``)
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "password_flag_pair": ((*_PAIR_WORDS, "@"), True),
    "password_option": (("/pass:", "/password:", "/pwd:", "/p:", "-pw", "-passwd", "-auth", "-a", "-x", "requirepass", "masterauth",
                         "composer"), True),
    "config_password_key": (_KEY_WORDS, True),
    "config_password_quoted": (_KEY_WORDS, True),
    "token_after_name": (_NAMED_WORDS, True),
}
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    # (not Maven's: ``mvn -U clean install -P prod``, its -U updates and its -P names a profile)
    _PAIR: lambda low: _PAIR_FINDER.any_in(low) and ("-p" in low or "--pass" in low) and not ("mvn" in low and _MAVEN.search(low))
    and _PAIR.search(low) is not None,
    _PAIR_AFTER: lambda low: _PAIR_FINDER.any_in(low) and ("-p" in low or "--pass" in low) and not ("mvn" in low and _MAVEN.search(low))
    and _PAIR_AFTER.search(low) is not None,
    _WINDOWS: lambda low: _WINDOWS_FINDER.any_in(low),
    _PUTTY: lambda low: "-pw" in low,
    _VNC: lambda low: "-passwd" in low,
    _JENKINS: lambda low: "-auth" in low,
    _SNMP: lambda low: "snmp" in low and ("-a" in low or "-x" in low),
    _REDIS: lambda low: "requirepass" in low or "masterauth" in low,
    _COMPOSER: lambda low: "composer" in low,
    _KEY_LINE: lambda low: _KEY_FINDER.any_in(low) and _KEY_LINE_LOW.search(low) is not None,
    _KEY_QUOTED: lambda low: _KEY_FINDER.any_in(low) and ('"' in low or "'" in low) and _KEY_QUOTED_LOW.search(low) is not None,
    _NAMED_SPACE: lambda low: _NAMED_FINDER.any_in(low) and _NAMED_SPACE.search(low) is not None,
    _USER_AT: lambda low: "@" in low and ":" in low and _USER_AT.search(low) is not None,
}
# the words one of which each context needs (``literals.Gated``)
CONTEXT_WORDS: dict[re.Pattern[str], tuple[str, ...] | None] = {
    _PAIR: _PAIR_FINDER.words, _PAIR_AFTER: _PAIR_FINDER.words, _WINDOWS: _WINDOWS_FINDER.words, _PUTTY: ("-pw",), _VNC: ("-passwd",), _JENKINS: ("-auth",),
    _SNMP: ("snmp",), _REDIS: ("requirepass", "masterauth"), _COMPOSER: ("composer",), _KEY_LINE: _KEY_FINDER.words, _KEY_QUOTED: _KEY_FINDER.words,
    _NAMED_SPACE: _NAMED_FINDER.words, _USER_AT: ("@",),
}
TRIGGER_WORDS = (*_PAIR_WORDS, *_WINDOWS_WORDS, "-pw", "-passwd", "-auth", "snmp", "requirepass", "masterauth", "composer", *_KEY_WORDS, *_NAMED_WORDS, "@")
# could one of these patterns match the lower-cased text? (``precheck``)
maybe = Maybe(TRIGGER_WORDS, CONTEXTS, CONTEXT_WORDS, outside_ascii=False)
