"""Credentials known by the name they are given, in the places the assignment rule does not read.

``rules`` finds ``password = …`` and ``"api_key": "…"``: a name that says secret, ``=`` or ``:``,
a value. The same value is written many other ways, and each is a place, not a provider:

- other assignment operators: Go's ``:=``, PHP's and Ruby's ``=>``, R's ``<-``, a URL-encoded
  ``%3D`` (``password%3D…`` in a logged query string);
- names that say secret by a short last part: ``DB_PASS``, ``smtp_pass``, ``ldap.pwd``;
- a shell or image line that sets a variable without ``=``: ``ENV DB_PASS …`` (Dockerfile),
  ``setenv``, ``set -x`` (fish);
- markup: ``<password>…</password>``, ``<add key="DbPassword" value="…"/>`` (.NET settings), and
  the name/value pairs of an environment list (``- name: DB_PASS`` then ``value: …``);
- prose with the value in quotes, spaces and all: ``the wifi password is "correct horse"``;
- codes that unlock something: ``the PIN is 4821``, ``recovery codes: 5f2a1-9c3b7 …``.

A value that names where the secret is kept (``${DB_PASSWORD}``, ``os.environ[…]``, ``None``,
``changeme``) is not redacted, nor is code (``token := getToken(ctx)``): an unquoted value of
code (a call, a dotted name) stays. ``rules.find`` runs these after its own password rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Gated, Literals
from commonkeep.secrets.structure import _REF

# a name that says secret: a whole word of it anywhere in the name, or a short last part after a
# separator or a change of case (``DB_PASS``, ``smtp-pwd``, ``DbPass``; not ``bypass``, ``compass``, ``passenger``)
_STRONG = (r"password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key|auth[_-]?key"
           r"|private[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|credentials?")
_NAME = (r"(?:[\w.-]*?(?:" + _STRONG + r")|[\w.-]*?[A-Za-z0-9][_.-](?:pass|pwd|pw)|[\w.-]*?(?-i:[a-z0-9](?:Pass|Pwd|Pw)))"
         r"(?![A-Za-z0-9])")
# a value in quotes (spaces allowed), or one run of characters that is not code (an ``&`` ends it only
# before the next ``name=`` of a query string)
_QUOTED = r"(?:'(?P<q1>[^'\n]{3,200})'|\"(?P<q2>[^\"\n]{3,200})\")"
_PLAIN = r"(?P<v>(?![\w.]*\()(?![A-Za-z_]\w*\.[A-Za-z_][\w.]*(?:[\s,;)]|$))(?:[^\s\"'`,;&<>()]|&(?!\w+=)){4,})"
_NOT_VALUE = r"(?!\[REDACTED|…|\.\.\.)"

# ``name := "…"``, ``"name" => '…'``, ``name <- "…"``: code, so the value must be quoted
_OPERATOR = lazy(r"(?i)(?<![\w.-])[\"']?" + _NAME + r"[\"']?\s*(?::=|=>|<-)\s*" + _REF + _NOT_VALUE + _QUOTED)
# ``DB_PASS=…``, ``smtp_pass: "…"``: the short names with ``=`` or ``:`` (the long ones are ``rules``')
_SHORT_NAME = lazy(r"(?i)(?<![\w.-])[\"']?(?:[\w.-]*?[A-Za-z0-9][_.-](?:pass|pwd|pw)|[\w.-]*?(?-i:[a-z0-9](?:Pass|Pwd|Pw)))(?![A-Za-z0-9])[\"']?\s*[:=]\s*" + _REF
                   + _NOT_VALUE + r"(?:" + _QUOTED + r"|" + _PLAIN + r")")
# a URL-encoded ``=``: ``password%3D…`` up to the next ``&`` or ``%26``
_ENCODED = lazy(r"(?i)(?<![\w.-])" + _NAME + r"%3D" + _NOT_VALUE + r"(?P<v>(?:(?!%26)[^\s&\"'])+)")
# ``ENV DB_PASS value`` (a Dockerfile; ``ENV`` in capitals), ``setenv``, ``set -x`` / ``set -gx`` (fish), without ``=``,
# on a line of its own or quoted in a sentence
_SET_LINE = lazy(r"(?i)(?<![\w-])(?:(?-i:ENV)|setenv|set\s+-[gxU]+)[ \t]+" + _NAME + r"[ \t]+" + _REF + _NOT_VALUE
                 + r"(?:" + _QUOTED + r"|(?P<v>[^\s\"'`]{3,}))")
# ``<password>…</password>``, ``<DbPass>…</DbPass>``
_ELEMENT = lazy(r"(?i)<(?P<tag>" + _NAME + r")(?:\s[^<>]*)?>\s*" + _REF + _NOT_VALUE + r"(?P<v>[^<>\n]{3,200}?)\s*</(?P=tag)>")
# ``key="DbPassword" value="…"`` (.NET appSettings), ``name: DB_PASS`` then ``value: …`` (a container's env list)
_PAIR = lazy(r"(?i)\b(?:key|name)\s*[=:]\s*[\"']?" + _NAME + r"[\"']?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]*)?)?[ \t]*\bvalue\s*[=:]\s*"
             + _REF + _NOT_VALUE + r"(?:" + _QUOTED + r"|(?P<v>[^\s\"'`]{3,}))")
# a password box filled in: ``<input type="password" value="…">`` (either attribute first)
_INPUT = lazy(r"(?i)<input\b(?=[^<>]*\btype\s*=\s*[\"']?password\b)[^<>]*?\bvalue\s*=\s*" + _REF + _NOT_VALUE + _QUOTED)
# what may stand between a password's (or a code's) word and its verb: a place ("for the router admin page",
# "of my old work laptop", "für den Router im Büro", "vom Router im Keller", "della carta") or a clause ("I set
# for the guest network", "we use for the mailbox"), a few words none of which is a verb (the value follows the
# first verb, never a later one)
NOT_VERB = r"(?!(?:is|was|are|were|ist|war|est|es|era|é|è|lautet|became|has|will|would)\b)"
PREP_WORDS = r"for|of|to|on|at|in|from|behind|für|vom|von|zum|zur|im|am|pour|du|des|de|del|della|dello|dell['’]|di|da|do|dos|para|для|от"
PREP = r"(?:" + PREP_WORDS + r")"
# prose, the value quoted: ``the wifi password is "correct horse battery"``, ``changed my passphrase to 'x y z'``
_PW_WORDS = r"(?:password|passphrase|passcode|pass\s?word|pwd|mot de passe|contraseña|passwort|kennwort|senha|пароль)"
PROSE_QUOTED = lazy(r"(?i)\b" + _PW_WORDS + r"(?:\s+(?:for|of|on|at|in)\s+(?:the\s+|my\s+|our\s+)?[\w.@/:-]+(?:\s+[\w.-]+)?)?"
                     r"\s*(?:was changed to|was set to|changed to|set to|is now|now is|is still|became|is|was|are|to|ist|est|es|é|=|:)"
                     r"\s*[\"'“«‘]" + _REF + _NOT_VALUE + r"(?P<v>[^\"'”»’\n]{4,120}?)[\"'”»’]")
# codes that unlock something: a PIN, a door or safe code, 2FA recovery or backup codes (one or a list)
_CODE = lazy(r"(?i)\b(?:(?:code\s+)?pin(?:\s?code)?|puk\d?|passcode|(?:recovery|backup|unlock|door|alarm|safe|gate|entry|access|security)\s+codes?)\b"
             r"(?:\s+(?:" + PREP_WORDS + r"|der)\s+(?:the\s+|my\s+|our\s+|la\s+|le\s+|el\s+)?" + NOT_VERB + r"[\w.@/:-]+(?:\s+" + NOT_VERB
             + r"[\w.'’-]+){0,3}?)?\s*(?:is now|is|was|are|were|ist|war|est|es|era|é|è|=|:|(?=\s+\w*\d))\s*[\"']?"
             r"(?P<v>(?=[\w-]*\d)[A-Za-z0-9]{2,10}(?:-[A-Za-z0-9]{2,10})?(?:(?:[ \t,;]+|[ \t]*\r?\n[ \t]*)(?=[\w-]*\d)[A-Za-z0-9]{2,10}(?:-[A-Za-z0-9]{2,10})?)*)"
             r"(?![\w-])")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("password_assignment", _OPERATOR),
    ("password_assignment", _SHORT_NAME),
    ("password_assignment", _ENCODED),
    ("password_assignment", _SET_LINE),
    ("password_assignment", _ELEMENT),
    ("password_assignment", _PAIR),
    ("password_assignment", _INPUT),
    ("password_in_prose", PROSE_QUOTED),
    ("access_code", _CODE),
)
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {"access_code": (("pin", "code", "puk"), True)}

# the cheap regex every match of a pattern holds, in the lower-cased text (``rules`` skips a
# pattern where it finds nothing; ``precheck`` asks ``maybe``)
_WORDS = r"(?:pass|pw|secret|key|token|credential)"
_OPERATOR_CONTEXT = lazy(_WORDS + r"[\w.-]*[\"']?\s*(?::=|=>|<-)")
_SHORT_CONTEXT = lazy(r"[a-z0-9][_.-]?(?:pass|pwd|pw)[\"']?\s*[:=]")
_SET_CONTEXT = lazy(r"(?<![\w-])(?:env|setenv|set\s+-[gxu]+)[ \t]+[\w.-]*" + _WORDS)
_MARKUP_CONTEXT = lazy(r"<[\w.-]*" + _WORDS + r"|" + _WORDS + r"[\w.-]*[\"']?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]*)?)?[ \t]*value\s*[=:]")
_PROSE_CONTEXT = lazy(r"(?:passw|passph|passc|pass\sw|pwd|mot de passe|kennwort|senha)[^\"'“«‘\n]{0,80}[\"'“«‘]")
_CODE_CONTEXT = lazy(r"\bpin\b|\bpuk|passcode|\b(?:recovery|backup|unlock|door|alarm|safe|gate|entry|access|security)\s+codes?\b")
_QUOTES = ("\"", "'", "“", "«", "‘")  # PROSE_QUOTED below looks each up
_WORD_FINDER = Literals(("pass", "pw", "secret", "key", "token", "credential"))  # ``_WORDS``, every ``_SET_CONTEXT`` match holds one
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {  # each asks for a literal first: no regex compiled for plain text
    _OPERATOR: lambda low: (":=" in low or "=>" in low or "<-" in low) and _OPERATOR_CONTEXT.search(low) is not None,
    _SHORT_NAME: lambda low: ("pass" in low or "pw" in low) and _SHORT_CONTEXT.search(low) is not None,
    _ENCODED: lambda low: "%3d" in low,
    _SET_LINE: lambda low: ("env" in low or "set" in low) and _WORD_FINDER.any_in(low) and _SET_CONTEXT.search(low) is not None,
    _ELEMENT: lambda low: "</" in low and _MARKUP_CONTEXT.search(low) is not None,
    _PAIR: lambda low: "value" in low and _MARKUP_CONTEXT.search(low) is not None,
    _INPUT: lambda low: "<input" in low and "password" in low,
    PROSE_QUOTED: lambda low: ('"' in low or "'" in low or "“" in low or "«" in low or "‘" in low) and _PROSE_CONTEXT.search(low) is not None,
    _CODE: lambda low: ("pin" in low or "code" in low or "puk" in low) and _CODE_CONTEXT.search(low) is not None,
}


# the words one of which each context needs (as ``context.CONTEXT_WORDS``)
CONTEXT_WORDS: dict[re.Pattern[str], tuple[str, ...] | None] = {
    _OPERATOR: (":=", "=>", "<-"), _SHORT_NAME: ("pass", "pw"), _ENCODED: ("%3d",), _SET_LINE: ("env", "set"), _ELEMENT: ("</",),
    _PAIR: ("value",), _INPUT: ("<input",), PROSE_QUOTED: _QUOTES, _CODE: ("pin", "code", "puk"),
}
# ``maybe``'s own test for ``_CODE``: after its context, the pattern itself. The context lets every
# "pin the version" through (``\bpin\b``), and each such text then cost ``rules.find`` ~60 µs to find
# nothing; the pattern costs a few on the texts its context lets through. ``rules.find`` keeps the context.
_MAYBE = {**CONTEXTS, _CODE: lambda low: CONTEXTS[_CODE](low) and _CODE.search(low) is not None}
_GATED = Gated([c for p, c in _MAYBE.items() if p is not _ENCODED], [CONTEXT_WORDS[p] for p in _MAYBE if p is not _ENCODED])


def maybe(low: str) -> bool:
    """Could one of these patterns match the lower-cased ASCII text? (``precheck``: never no where
    one would.)"""
    if "%3d" in low and ("pass" in low or "pw" in low or "secret" in low or "key" in low or "token" in low or "credential" in low):
        return True
    return _GATED.any_true(low)
