"""A password given beside its place, not after its name and a verb (issue 37): the forms people write in
notes and comments that the rules of place before these do not read.

- a comment on a line that names a password, giving its value: ``KEYSTORE_PASSWORD: ${{ secrets.KS }}
  # was X``, ``createuser -P app  # typed X``, ``auth-user-pass creds.txt  # bob / X``;
- a user and a password for a place: ``bob / X for the VPN``, ``VPN creds are bob and X``;
- a password's word, more words, then a colon and the value: ``the vpn password is the same as the
  wifi one: X``;
- ``pass - X``, ``volume pw = X``;
- a list of places and their passwords: ``passwords: router X, nas Y`` (the first three items of a line
  and its last);
- a value set with no name: ``I set it to X``, ``changed it back to X``: only where the value holds a
  mark no word, version or path does (a letter, a digit and one of ``!#%&*$^~?``), or the text speaks of
  a credential or a device that has one (``(the router one)``);
- a password a config line runs a command to print (``passwd.cmd = "echo X"``, msmtp's ``passwordeval "echo X"``);
- a tool's ``config set KEY X`` with a key that names a secret (``npm config set //registry/:_password X``);
- a value between escaped quotes after a secret's name (``password=\\"X\\";`` in a quoted JAAS line);
- SQL Server's ``sp_addlogin 'bob', 'X'`` and ``sp_password 'old', 'X'``;
- a password's short word with another language's verb ("el pass es X", "PW lautet X", "le mdp c'est X")
  or English's contraction ("my pw's X"), its name in Markdown's emphasis ("- **Password**: `X`"), a
  short XML tag of its own (``<pass>X</pass>``), a pair given to a name for credentials
  (``credentials = ('bob', 'X')``).

The value must be one a person gives (``values.given``: no word of English or of the grammar, no name
from code, no path or port) and have a password's shape (``values.strong``); see ``values.keep``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Literals, Maybe
from commonkeep.secrets.structure import _REF

# the value: no quote, no space; a closing quote or the sentence's punctuation may follow
_V = r"['\"]?(?P<v>[^\s'\"`<>()\[\]{}]{3,63}[^\s'\"`<>()\[\]{}.,;:])['\"]?"
_END = r"(?=[ \t]*(?:$|\n|[.,;!?)](?:\s|$))|[ \t]+(?:and|but|or|then|so|for|this|that|since|until|on|in|at|after|before|when|because|today|yesterday|earlier|again|last)\b)"
_PW_NAME = r"(?:pass\w*|pwd|pw|secret\w*|creds?|credentials?|passphrase|keystore\w*|auth-user-pass|(?<=\s)-p)"
# a comment after a line that names a password: its words (was, typed, old…), maybe a user and a slash, the value
_COMMENT = lazy(r"(?im)^[^\n#]*?(?<![a-z])" + _PW_NAME + r"\b[^\n#]*?[ \t](?:#|//)[ \t]*"
                r"(?:(?:was|typed|old|is|it'?s|pw|password|pass|default|initial|current|now|set to|changed to|reset to|=|:|->)[ \t]*)*"
                r"(?:[\w.@-]{1,40}[ \t]?/[ \t]?)?" + _REF + _V + r"[ \t]*$")
# a user, a slash and a password, for a place
_PLACES = (r"(?:vpn|wifi|wi-fi|wlan|router|modem|nas|server|box|db|database|admin|portal|site|account|ssh|rdp|ftp|sftp|smb"
           r"|share|printer|camera|nvr|console|dashboard|panel|vm|host|switch|firewall|mail|mailbox|email|login)")
_PAIR_FOR = lazy(r"(?i)(?<![\w/.-])[\w.@-]{2,40} / " + _REF + r"['\"]?(?P<v>[^\s/'\"`<>()\[\]{}]{3,63}[^\s/'\"`<>()\[\]{}.,;:])['\"]? (?:for|on|to|at) "
                 r"(?:the |my |our |this |that )?" + _PLACES + r"\b")
# "VPN creds are bob and X", "login: bob and X"
_CREDS_AND = lazy(r"(?i)\b(?:creds|credentials|logins?)\b(?: (?:for|on|to|of) (?:the |my |our )?[\w.-]+)? ?(?:are|is|:|=) ?"
                  r"[\w.@-]{1,40} (?:and|&|\+) " + _REF + _V + _END)
# "the vpn password is the same as the wifi one: X": a password's word, words, a colon, the value
_COLON_LATER = lazy(r"(?i)\b(?:password|passphrase|passcode|pwd|pw)\b[^\n:=]{4,60}?: " + _REF + _V + _END)
# "pass - X", "pw = X" after a name ("veracrypt volume pw = X"), "PW=X" ("pass X" alone is the verb: "pass --flag")
_PASS_DASH = lazy(r"(?i)(?<![\w-])(?:pass(?:word)?|pw|pwd)(?: [-–—] | ?= ?)" + _REF + _V + _END)
# an e-mail address as the login, then the password ("my bank login: bob@example.com, X", "bob@example.com pass X";
# judged as ``password_set``)
_EMAIL_THEN = lazy(r"(?i)(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+(?:[,;] ?| |\n)(?:(?:pass(?:word)?|pw|pwd) ?:? )?"
                   + _REF + _V + _END)
# a user and a password for an administrator's account in a login's sentence ("the router admin login is admin/X")
_ADMIN_GLUED = lazy(r"(?i)\b(?:log ?in|creds?|credentials|account|user(?:name)?)\b[^\n]{0,40}?(?<![\w/.-])(?:root|admin|administrator"
                    r"|sa|postgres|pi|ubnt|guest|ubuntu|oracle|system)[:/]" + _REF + _V + _END)
# "ssh into the box as bob with X", "logged in as bob using X"
_AS_WITH = lazy(r"(?i)\b(?:ssh|log(?:ged)? ?in|sign(?:ed)? ?in|connect(?:ed)?)\b[^\n]{0,40}? as [\w.@-]{1,40} (?:with|using) "
                r"(?:(?:the )?(?:password|pw|pass) )?" + _REF + _V + _END)
# commands that take a password of their own: Bitwarden's ``bw unlock X``/``bw login U X``, ``iwconfig … key s:X``, Oracle's
# Data Pump and loaders given ``user/X`` without ``@db`` (``expdp system/X schemas=app``)
_OWN_COMMAND = lazy(r"(?i)(?:\bbw (?:unlock|login \S+) |\biwconfig\b[^\n|;&]*? key s:|\b(?:expdp|impdp|sqlldr|rman|dgmgrl|exp|imp) "
                    r"[\w$#]{1,30}/)" + _REF + r"['\"]?(?P<v>[^\s'\"`@/]{3,63}[^\s'\"`@/.,;:])['\"]?(?=\s|$)")
# "passwords: router X, nas Y": the first item after the list's head, and the last at the end of its line
_LIST_HEAD = r"\b(?:passwords|passwds|pws|creds|credentials|logins|pins) ?: ?"
_ITEM = r"(?:the )?[\w.@-]{2,30} ?[:=]? "
_LIST_FIRST = lazy(r"(?i)" + _LIST_HEAD + _ITEM + _REF + _V + r"(?=[ \t]*(?:$|\n|[,;.](?:\s|$)))")
_LIST_LAST = lazy(r"(?im)" + _LIST_HEAD + r"[^\n]*?[,;] ?" + _ITEM + _REF + _V + r"[ \t]*\.?[ \t]*$")
# ... and the second and third, each followed by another item
_LIST_SECOND = lazy(r"(?i)" + _LIST_HEAD + r"[^\n,;]*[,;] ?" + _ITEM + _REF + _V + r"(?=[ \t]*[,;])")
_LIST_THIRD = lazy(r"(?i)" + _LIST_HEAD + r"[^\n,;]*[,;][^\n,;]*[,;] ?" + _ITEM + _REF + _V + r"(?=[ \t]*[,;])")
# "I set it to X", "changed it back to X"
_SET_IT = lazy(r"(?i)\b(?:set|changed|change|reset|switched|updated|made) (?:it|that|this|them|the thing) (?:back )?to "
               + _REF + _V + _END)
# a config line that runs a command to print a password (himalaya's ``passwd.cmd``, aerc's ``*-cred-cmd``)
_CMD_ECHO = lazy(r"(?i)\b(?:passw(?:or)?d|pass|pw|secret|cred)[\w.-]*(?:\s*=\s*|\s+)['\"]\s*(?:echo|printf)\s+(?:-[ne]\s+)?" + _REF
                 + r"['\"]?(?P<v>[^\s'\"`]{4,64})['\"]?")

# a tool's ``config set KEY VALUE`` with a key that names a secret (``npm config set //registry/:_password X``)
_CONFIG_SET = lazy(r"(?i)\bconfig\s+set\s+(?:--?[\w-]+\s+)*\S*?(?:pass(?:word)?|secret|token|_auth)[\w.-]*\s+" + _REF
                   + r"['\"]?(?P<v>[^\s'\"`]{3,199}[^\s'\"`.,;:])['\"]?(?=\s|$)")
# a value between escaped quotes after a secret's name (a JAAS line inside a quoted property: ``password=\"X\";``)
_ESCAPED_QUOTES = lazy(r"(?i)(?:passw(?:or)?d|pwd|secret|token)\w*(?:\\?[\"'])?\s*[:=]\s*\\[\"']" + _REF + r"(?P<v>[^\\\"'\n]{4,200})\\[\"']")
# SQL Server's stored procedures that set a login's password: ``sp_addlogin 'bob', 'X'``, ``sp_password 'old', 'X'``
_SP_LOGIN = lazy(r"(?i)\bsp_(?:addlogin|password)\s+(?:@\w+\s*=\s*)?(?:N?'[^'\n]*'|NULL)\s*,\s*(?:@\w+\s*=\s*)?N?'(?P<v>[^'\n]{3,128})'")

# a password's short word and a verb of another language ("el pass es X", "PW lautet X", "le mdp c'est X",
# "mdp: X"), or English's contraction ("my pw's X", "password's X")
_SHORT_VERB = lazy(r"(?i)(?<![\w-])(?:(?:pass|pw|pwd)\s+(?:es|est|ist|lautet|è|é|är|er|on|je|jest|c'est)|mdp\s*(?:c'est|est|:|=)"
                   r"|(?:password|passwd|passphrase|passcode|pass|pw|pwd)['’]s)\s+" + _REF + _V + _END)
# a password's name in Markdown's emphasis, then its value, maybe in backticks ("- **Password**: `X`", "__pw:__ X")
_EMPHASIS = lazy(r"(?i)(?<![\w*])(?:\*\*|__|\*|_)(?:password|passwd|passphrase|pw|pwd|pass|secret|token|api key)"
                 r"(?::(?:\*\*|__|\*|_)(?![\w*])|(?:\*\*|__|\*|_)(?![\w*])\s*:)\s*`?"  # a colon inside the emphasis or after it
                 + _REF + r"(?:\*\*|__)?(?P<v>[^\s`'\"()\[\]{}<>]{3,63}[^\s`'\"()\[\]{}<>.,;:])`?" + _END)
# a password in a short XML tag of its own (``<pass>X</pass>``; the longer names are the assignment rule's)
_SHORT_TAG = lazy(r"(?i)<(?P<tag>pass|pwd|pw)>" + _REF + r"(?P<v>[^<\s]{4,64})</(?P=tag)>")
# a user and a password as a pair given to a name for credentials (``credentials = ('bob', 'X')``)
_CRED_PAIR = lazy(r"(?i)\b(?:creds?|credentials|auth|login|basic_auth|userpass)\w*\s*[:=]\s*[(\[]\s*(['\"])[^'\"\n]{1,64}\1\s*,\s*"
                  r"(['\"])" + _REF + r"(?P<v>[^'\"\n]{3,128})\2\s*[)\]]")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("password_aside", _COMMENT),
    ("password_aside", _PAIR_FOR),
    ("password_aside", _CREDS_AND),
    ("password_aside", _COLON_LATER),
    ("password_aside", _PASS_DASH),
    ("password_aside", _LIST_FIRST),
    ("password_aside", _LIST_LAST),
    ("password_aside", _LIST_SECOND),
    ("password_aside", _LIST_THIRD),
    ("password_aside", _CMD_ECHO),
    ("password_aside", _ADMIN_GLUED),
    ("password_aside", _AS_WITH),
    ("password_aside", _OWN_COMMAND),
    ("password_aside", _CONFIG_SET),
    ("password_aside", _ESCAPED_QUOTES),
    ("password_aside", _SP_LOGIN),
    ("password_aside", _SHORT_VERB),
    ("password_aside", _EMPHASIS),
    ("password_aside", _SHORT_TAG),
    ("password_aside", _CRED_PAIR),
    ("password_set", _SET_IT),
    ("password_set", _EMAIL_THEN),
)
KINDS = frozenset(kind for kind, _ in PATTERNS)

_COMMENT_WORDS = ("#", "//")
_CREDS_WORDS = ("creds", "credential", "login")
_LIST_WORDS = ("passwords", "passwds", "pws", "creds", "credentials", "logins", "pins")
_SET_WORDS = (" it to ", " that to ", " this to ", " them to ", " it back to ", " that back to ", " this back to ",
              " them back to ", " thing to ", " thing back to ")
_DASH_WORDS = ("pass", "pw")  # every match of ``_PASS_DASH`` holds one ("pwd" holds "pw")
_ADMIN_WORDS = ("login", "log in", "cred", "account", "user")
_AS_WORDS = (" as ",)
_OWN_WORDS = ("bw ", "iwconfig", "expdp", "impdp", "sqlldr", "rman", "dgmgrl", "exp ", "imp ")
_ECHO_WORDS = ("echo", "printf")
_COMMENT_FINDER, _CREDS_FINDER, _LIST_FINDER = Literals(_COMMENT_WORDS), Literals(_CREDS_WORDS), Literals(_LIST_WORDS)
_SET_FINDER, _DASH_FINDER, _ECHO_FINDER = Literals(_SET_WORDS), Literals(_DASH_WORDS), Literals(_ECHO_WORDS)
_ADMIN_FINDER, _OWN_FINDER = Literals(_ADMIN_WORDS), Literals(_OWN_WORDS)
_ESCAPED_WORDS = ('\\"', "\\'")
_SHORT_VERB_WORDS = ("pass", "pw", "mdp")  # "pwd" holds "pw", "password" "pass"
_EMPHASIS_WORDS = ("*", "_")
_TAG_WORDS = ("<pass>", "<pwd>", "<pw>")
_PAIR_WORDS = ("cred", "auth", "login", "userpass")
_ESCAPED_FINDER = Literals(_ESCAPED_WORDS)
_SHORT_VERB_FINDER, _TAG_FINDER, _PAIR_FINDER = Literals(_SHORT_VERB_WORDS), Literals(_TAG_WORDS), Literals(_PAIR_WORDS)
_PW_FINDER = Literals(("password", "passphrase", "passcode", "pwd", "pw"))
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "password_aside": ((*_COMMENT_WORDS, " / ", *_CREDS_WORDS, ":", *_DASH_WORDS, *_LIST_WORDS, *_ECHO_WORDS, *_ADMIN_WORDS,
                        *_AS_WORDS, *_OWN_WORDS, "config", *_ESCAPED_WORDS, "sp_", *_SHORT_VERB_WORDS, *_EMPHASIS_WORDS, *_TAG_WORDS,
                        *_PAIR_WORDS), True),
    "password_set": ((*_SET_WORDS, "@"), True),
}
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _COMMENT: lambda low: _COMMENT_FINDER.any_in(low) and _COMMENT.search(low) is not None,
    _PAIR_FOR: lambda low: " / " in low and _PAIR_FOR.search(low) is not None,
    _CREDS_AND: lambda low: _CREDS_FINDER.any_in(low) and _CREDS_AND.search(low) is not None,
    _COLON_LATER: lambda low: ": " in low and _PW_FINDER.any_in(low) and _COLON_LATER.search(low) is not None,
    _PASS_DASH: lambda low: _DASH_FINDER.any_in(low) and _PASS_DASH.search(low) is not None,
    _LIST_FIRST: lambda low: _LIST_FINDER.any_in(low) and _LIST_FIRST.search(low) is not None,
    _LIST_LAST: lambda low: _LIST_FINDER.any_in(low) and _LIST_LAST.search(low) is not None,
    _LIST_SECOND: lambda low: _LIST_FINDER.any_in(low) and _LIST_SECOND.search(low) is not None,
    _LIST_THIRD: lambda low: _LIST_FINDER.any_in(low) and _LIST_THIRD.search(low) is not None,
    _CMD_ECHO: lambda low: _ECHO_FINDER.any_in(low) and _CMD_ECHO.search(low) is not None,
    _SET_IT: lambda low: _SET_FINDER.any_in(low) and _SET_IT.search(low) is not None,
    _EMAIL_THEN: lambda low: "@" in low and _EMAIL_THEN.search(low) is not None,
    _ADMIN_GLUED: lambda low: _ADMIN_FINDER.any_in(low) and _ADMIN_GLUED.search(low) is not None,
    _AS_WITH: lambda low: " as " in low and _AS_WITH.search(low) is not None,
    _OWN_COMMAND: lambda low: _OWN_FINDER.any_in(low) and _OWN_COMMAND.search(low) is not None,
    _CONFIG_SET: lambda low: "config" in low and _CONFIG_SET.search(low) is not None,
    _ESCAPED_QUOTES: lambda low: _ESCAPED_FINDER.any_in(low) and _ESCAPED_QUOTES.search(low) is not None,
    _SP_LOGIN: lambda low: "sp_" in low and _SP_LOGIN.search(low) is not None,
    _SHORT_VERB: lambda low: _SHORT_VERB_FINDER.any_in(low) and _SHORT_VERB.search(low) is not None,
    _EMPHASIS: lambda low: ("*" in low or "_" in low) and _EMPHASIS.search(low) is not None,
    _SHORT_TAG: lambda low: _TAG_FINDER.any_in(low),
    _CRED_PAIR: lambda low: _PAIR_FINDER.any_in(low) and _CRED_PAIR.search(low) is not None,
}
# the words one of which each context needs (``literals.Gated``)
CONTEXT_WORDS: dict[re.Pattern[str], tuple[str, ...] | None] = {
    _COMMENT: _COMMENT_WORDS, _PAIR_FOR: (" / ",), _CREDS_AND: _CREDS_WORDS, _COLON_LATER: (": ",), _PASS_DASH: _DASH_WORDS,
    _LIST_FIRST: _LIST_WORDS, _LIST_LAST: _LIST_WORDS, _LIST_SECOND: _LIST_WORDS, _LIST_THIRD: _LIST_WORDS, _CMD_ECHO: _ECHO_WORDS, _SET_IT: _SET_WORDS, _EMAIL_THEN: ("@",),
    _ADMIN_GLUED: _ADMIN_WORDS, _AS_WITH: _AS_WORDS, _OWN_COMMAND: _OWN_WORDS, _CONFIG_SET: ("config",), _ESCAPED_QUOTES: _ESCAPED_WORDS,
    _SP_LOGIN: ("sp_",), _SHORT_VERB: _SHORT_VERB_WORDS, _EMPHASIS: _EMPHASIS_WORDS, _SHORT_TAG: _TAG_WORDS, _CRED_PAIR: _PAIR_WORDS,
}
TRIGGER_WORDS = (*_COMMENT_WORDS, " / ", *_CREDS_WORDS, ": ", *_DASH_WORDS, *_LIST_WORDS, *_ECHO_WORDS, *_SET_WORDS, "@", *_ADMIN_WORDS,
                 *_AS_WORDS, *_OWN_WORDS, "config", *_ESCAPED_WORDS, "sp_", *_SHORT_VERB_WORDS, *_EMPHASIS_WORDS, *_TAG_WORDS, *_PAIR_WORDS)
# could one of these patterns match the lower-cased text? (``precheck``)
maybe = Maybe(TRIGGER_WORDS, CONTEXTS, CONTEXT_WORDS, outside_ascii=True)
