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
- for the rules that read runs of token characters: a hex run of 48 digits, or of 32 beside a
  secret word, or after a provider-style prefix (``shpat_…``); a run of 20 token characters with
  an upper-case letter and a digit or a change of case (``looks_random`` wants them); a hex or
  base64 run that decodes to readable text (``encoded_*``); twelve words of a BIP-39 list or
  more (seed phrases). Provider tokens are known by their prefixes (literals above).

The first two are a wide net, not the answer: where they say maybe, ``rules.plan`` searches the
rules ``find`` would run (their literals, gates and contexts, in ``find``'s order) until one
matches, and ``find`` then starts at that rule (the rules before it matched nothing and are not run
again). Only a rule that matches can claim a span, so where none does (nor a card number that
``context.card_spans`` finds) the pre-check goes on to the runs, as it does where the net caught
nothing: the texts the net let through for a loose context (``/`` and ``@`` of Oracle's
``user/pw@db``, a line holding ``pass``, ``key`` beside ``=``, thirteen digits) no longer cost a
whole ``find`` each. The runs left once what is public is blanked out are read again with a run of
token characters judged as ``find``'s last rule judges it (``randomness.random_parts``), not by the
hint that it might be random: where no rule claimed anything, that rule reads exactly those runs.

In a process that pre-checks many texts, the rules' net (``rule_net.py``: every rule's pattern in
one Hyperscan prefilter pass, built in the background) replaces the wide net: it names the rules
whose pattern could match, ``plan`` searches only those, and where it names none ``plan`` answers
at once.

Text with characters outside ASCII always gets the full scan (it may be disguised). Scanning a
text this lets through costs tens of microseconds; the pre-check costs a few.
``tests/governance/test_secrets_scan.py`` holds it to ``find`` on the whole generated corpus and
on random texts built around every rule's anchors; ``test_secrets_plan.py`` holds ``plan`` to
every rule that matches.
"""

from __future__ import annotations

import re

from commonkeep.secrets import asides, context, flags, named, places, public, rule_net, rules, services
from commonkeep.secrets.literals import Literals
from commonkeep.secrets.rules import _BEARER_CONTEXT, _URL_CONTEXT
from commonkeep.secrets.runs import _runs, _words
from commonkeep.secrets.spans import mask
from commonkeep.secrets.structure import (
    ASSIGN,
    CONNECTION,
    HEADER,
    LONG_FLAG,
    PGPASS,
    SHORT_FLAG,
    USER_FLAG,
)

# provider prefixes and key armour, written as the rules want them (case-sensitive)
_PREFIXES = re.compile(r"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|Iza)|eyJ|xox|glrt|HRKU-|SG\.|hf_|npm_|sk-|pypi-|gh[pousr]_|github_pat_"
                       r"|_live_|_test_|hooks\.slack\.com|:AA|b3BlbnNzaC1rZXktdjE|AGE-|-----BEGIN|---- BEGIN|PuTTY-User"
                       r"|/api/webhooks/|access_token\$|:APA91b")
# ... the same, as the words it matches, looked up in one pass (``literals``; the expression cost ~2 µs a text)
PREFIX_WORDS = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIza", "eyJ", "xox", "glrt", "HRKU-", "SG.", "hf_", "npm_", "sk-",
                "pypi-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "_live_", "_test_", "hooks.slack.com", ":AA",
                "b3BlbnNzaC1rZXktdjE", "AGE-", "-----BEGIN", "---- BEGIN", "PuTTY-User",
                "/api/webhooks/", "access_token$", ":APA91b")
# the shapes whose literal is too common to say "scan" alone (``-us`` of a Mailchimp key, ``sdk-`` of a LaunchDarkly one)
_SERVICE_SHAPES = re.compile(r"[0-9a-f]{32}-us\d|(?:sdk|api|mob)-[0-9a-f]{8}-")
_PREFIX_FINDER = Literals(PREFIX_WORDS)
# the commands whose short flag takes a password (``structure._SHORT_CMDS``), as words of letters
# (``redis-cli`` is ``redis``, ``ssh-keygen`` ``keygen``, registry logins ``login``; ``7z`` is looked up as written)
_COMMANDS = frozenset(w.encode("ascii") for w in (
    "sshpass", "mysql", "mysqldump", "mysqladmin", "mysqlimport", "mariadb", "ldapsearch", "ldapadd", "ldapmodify",
    "ldapdelete", "ldappasswd", "ldapwhoami", "ldapcompare", "ldapmodrdn", "redis", "unzip", "zip", "zipcloak", "rar",
    "unrar", "smbclient", "keytool", "login", "sqlcmd", "bcp", "osql", "isql", "mongo", "mongosh", "mongodump",
    "mongorestore", "mongoexport", "mongoimport", "keygen", "htpasswd", "openssl"))
_HASH = re.compile(r"\$(?:apr1|2[abxy]|[1567y]|gy|argon2|scrypt|pbkdf2|sha512|sha256|md5)\$|\{(?:S?SHA|S?MD5|CRYPT|PBKDF2)")
_PASS_WORD = re.compile(r"pass\sword")  # "pass word" in prose
_JWK = re.compile(r"\"(?:d|p|q|dp|dq|qi|k)\"\s*:")
_GITLAB = re.compile(r"gl[a-z]{1,5}-")
_TWILIO = re.compile(r"SK[0-9a-fA-F]{32}")
_HEX_PRIVATE = re.compile(r"0x[0-9a-f]{64}")


def needs_scan(text: str) -> bool:
    """False only when ``rules.find(text)`` finds nothing (see the module doc)."""
    if not text.isascii():
        return True
    low = text.lower()
    net = rule_net.possible(text, rules._PLAN)  # the rules that could match, in one native pass, once built
    words = _words(low) if net is None else None  # its words of letters, when they are read
    if (words is None or _rules_maybe(text, low, words)) and (rules.plan(text, low, net) or _card(text)):
        return True
    if not _runs(text, low, words):
        return False
    # the runs the shape rules would read, less what is public by structure (``public.py``: a lockfile's
    # hash, a public key, an id in a URL), which ``rules.find`` leaves out of what they read too; read
    # again with the random-looking runs judged as ``find`` judges them (no rule claimed anything)
    pub = public.spans(text)
    if not pub:
        return _runs(text, low, words, exact=True)
    rest = mask(text, pub, " ")
    return _runs(rest, rest.lower(), words, exact=True, seed_low=low)


def _card(text: str) -> bool:
    """Does ``find`` claim a card number in ``text`` when no rule matches it (``context.card_spans``
    on the text as written: nothing was masked before it)?"""
    return context.card_digits(text) and bool(context.card_spans(text))


def _rules_maybe(text: str, low: str, words: list[bytes]) -> bool:
    """Could one of ``rules.find``'s rules, or a card number, redact something? A wide net, asked
    first: ``rules.plan`` answers for the rules exactly but costs more."""
    if _PREFIX_FINDER.any_in(text):
        return True
    if ("-us" in text or "-" in text and ("sdk-" in text or "api-" in text or "mob-" in text)) and _SERVICE_SHAPES.search(text):
        return True
    # the words of a password, a clause, a config line (each rule's literal; lower-cased)
    if "pass" in low and ("passw" in low or "passph" in low or "passc" in low or "pass:" in low or "requirepass" in low
                          or "auth_pass" in low or _PASS_WORD.search(low) is not None):
        return True
    if "pw" in low and ("pwd" in low or "pw:" in low or "bindpw" in low or "rootpw" in low):
        return True
    if "auth" in low and ("masterauth" in low or "rpcauth" in low or "authorization" in low):
        return True
    if ("kennwort" in low or "senha" in low or "mot de passe" in low or "identified" in low or "apikey" in low
            or "api-key" in low or "/user:" in low):
        return True
    return _in_context(text, low, words)


def _in_context(text: str, low: str, words: list[bytes]) -> bool:
    colon, equals, dash = ":" in low, "=" in low, "-" in low
    if (colon or equals) and ("pw" in low or "secret" in low or "key" in low or "token" in low or "credential" in low
                              or "auth" in low or "pass" in low) and ASSIGN.search(low):
        return True
    if equals and ("sig" in low or "sas" in low or "code" in low) and CONNECTION.search(low):
        return True
    if dash:
        if "--" in low and LONG_FLAG.search(low):
            return True
        if "-u" in low and colon and USER_FLAG.search(low):
            return True
        if " -" in low and SHORT_FLAG.search(low):
            return True
        if "gl" in low and _GITLAB.search(low):
            return True
    if (dash or "%" in low) and ("7z" in low or not _COMMANDS.isdisjoint(words)):
        return True
    if "AUTH" in text:  # redis's AUTH command, upper case as the rule wants it
        return True
    if ("$" in text or "{" in text) and _HASH.search(text):
        return True
    if '":' in text and _JWK.search(text):
        return True
    if "://" in text and _URL_CONTEXT.search(text):
        return True
    if ("bearer" in low or "basic" in low) and _BEARER_CONTEXT.search(low):
        return True
    if "x-" in low and colon and HEADER.search(low):
        return True
    if "account" in low and ("machine" in low or "default" in low):  # .netrc: machine … account …
        return True
    if "SK" in text and _TWILIO.search(text):
        return True
    if "0x" in low and _HEX_PRIVATE.search(low):
        return True
    if named.maybe(low):  # other operators and names, markup, quoted prose, codes (``named.py``)
        return True
    if context.maybe(low) or places.maybe(low) or flags.maybe(low) or services.maybe(low) or asides.maybe(low):  # commands, config formats, auth arguments, prose, cards (``context.py``, ``places.py``)
        return True
    return colon and low.count(":") >= 4 and PGPASS.search(low) is not None

