"""Secrets known by their place, whatever they look like: the places ``structure`` and ``named``
do not read.

A value is a secret when where it stands says so, even a plain-looking one (lower case, a UUID,
digits, words):

- commands: the password argument of user-add commands (``useradd -p``, ``net user NAME PW /add``,
  ``echo user:pw | chpasswd``, ``… | passwd --stdin``), ``lftp -u user,pw``, Oracle's
  ``user/pw@db`` (``sqlplus``, ``expdp``), ``keytool -srcstorepass``, SNMP communities;
- config formats: ``psk=`` (wpa_supplicant, NetworkManager), the Wi-Fi QR ``P:…;``, OpenVPN's inline
  ``<auth-user-pass>``, a ``password VALUE`` line (msmtp, fetchmail, Cisco), any key whose name ends
  in a secret word (``SECRET_KEY``, ``secret_key_base``, ``APP_KEY``, ``DD_API_KEY``), a passphrase
  of words after ``passphrase:``;
- code: HTTP clients' ``auth=("user", "pw")``, ``BasicAuth("user", "pw")``, ``login("user", "pw")``;
- prose: ``the api key is <uuid>``, ``use token …``, ``use X as the password``, ``login: admin / X``,
  ``user X pass Y``, ``set the password to X``, and the dictated forms in other languages
  (``mijn wachtwoord is``, ``la mia password è``, ``moje hasło to``, ``パスワードは``, ``密码是``);
- shapes no provider owns: a Luhn-valid card number with a card word, code or expiry nearby (and
  that code), BitLocker and FileVault recovery keys, 1Password secret keys, Nostr ``nsec1`` keys,
  Zapier hook paths.

``rules.find`` runs these after its provider, password and ``named`` rules (a token a provider
rule knows keeps its kind), the passphrase of words before them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Gated, Literals
from commonkeep.secrets.structure import _REF

_Q = r"(?:'(?P<q1>[^'\n]{3,200})'|\"(?P<q2>[^\"\n]{3,200})\")"
_VAL = r"(?:'(?P<q1>[^'\n]{3,200})'|\"(?P<q2>[^\"\n]{3,200})\"|(?P<v>[^\s'\"`]{3,}))"

_USERADD = lazy(r"(?i)\b(?:useradd|usermod|adduser)\b[^\n|;&`]*?\s-p\s+" + _REF + _VAL)
_NET_USER = lazy(r"(?i)\bnet\s+user\s+(?:\"[^\"\n]+\"|\S+)\s+" + _REF + r"(?P<v>(?![/*])[^\s\"']{3,})(?=\s+/(?:add|domain|y|active))")
_CHPASSWD = lazy(r"(?i)\becho\s+(?:-[ne]\s+)?['\"]?[\w.-]{1,32}:(?P<v>[^\s'\"|]{3,})['\"]?\s*\|\s*(?:sudo\s+)?chpasswd")
_STDIN = lazy(r"(?i)\b(?:echo|printf)\s+(?:-[ne]\s+)?" + _REF + _VAL + r"\s*\|\s*(?:sudo\s+)?(?:passwd\s+--stdin|[\w-]+\s+[^\n|]*--password-stdin)")
_LFTP = lazy(r"(?i)\blftp\b[^\n|;&`]*?\s-u\s+[^\s,]+," + _REF + r"(?P<v>[^\s'\"]{3,})")
_ORACLE = lazy(r"(?i)\b(?:sqlplus|expdp|impdp|exp|imp|rman|sqlldr|dgmgrl|connect|conn)\s+(?:-\w+\s+)*['\"]?[\w$#]{1,30}/"
               r"(?P<v>[^\s@/'\"]{3,})@")
_KEYTOOL = lazy(r"(?i)\s-(?:src|dest|new)?(?:store|key)pass\s+" + _REF + _VAL)
_SNMP = lazy(r"(?i)(?:\bsnmp-server\s+community|\bsnmp(?:walk|get|set|bulkwalk|bulkget|trap)\b[^\n|;&`]*?\s-c)\s+" + _REF + _VAL)
_CISCO = lazy(r"(?im)^[ \t]*(?:enable\s+(?:secret|password)|username\s+\S+(?:\s+privilege\s+\d+)?\s+(?:secret|password)"
              r"|tacacs-server\s+key|radius-server\s+key|key-string)\s+(?:[0-9]\s+)?" + _REF + r"(?P<v>\S{3,})")
_PSK = lazy(r"(?i)(?<![\w-])(?:psk|wpa_passphrase|wpa-psk|wifi[_-]?password|wlan[_-]?password)\s*[=:]\s*" + _REF + r"(?:"
            + _Q + r"|(?P<v>[^\s\"';]{8,64}))")
_WIFI_QR = lazy(r"WIFI:[^\n]*?(?<=[:;])P:(?P<v>(?:\\.|[^;\\\n])+);")
_OVPN = lazy(r"(?i)<auth-user-pass>[ \t]*\r?\n[^\n]+\r?\n(?P<v>[^\n<]+?)[ \t]*\r?\n[ \t]*</auth-user-pass>")
_NMCLI = lazy(r"(?i)\b(?:nmcli\b[^\n|;&`]*?\bpassword|wpa_passphrase\s+\S+|iwctl\b[^\n|;&`]*?--passphrase)\s+" + _REF + _VAL)
_PASSWORD_LINE = lazy(r"(?im)^[ \t]*(?:password|passwd(?![ \t]+[a-z]+[ \t]*$)|passphrase|remotepass|remotepassword|smtp_?pass|imap_?pass|requirepass|masterauth)(?:[ \t]*[=:][ \t]*|[ \t]+)" + _REF
                      + r"(?:" + _Q + r"|(?P<v>[^\s\"'=:]{4,}))[ \t]*$")
_USER_PASS = lazy(r"(?i)\b(?:user(?:name)?|login|u(?=[ ]?:))\s*[:=]?\s*['\"]?[\w.@-]{1,40}['\"]?[,;]?\s+(?:password|passwd|pass|pwd|pw|p(?=\s*:))\s*[:=]?\s+"
                  + _REF + _VAL)
_SLASHED = lazy(r"(?i)\b(?:login|credentials?|creds|account)\b\s*(?:are|is|:|=)?\s*[\w.@-]{1,40}\s+/\s+" + _REF + r"(?P<v>\S{4,})")
# a key whose name ends in a secret word, in any config format (``SECRET_KEY = …``, ``secret_key_base: …``,
# ``APP_KEY=base64:…``, ``app.config['SECRET_KEY'] = …``, ``DD_API_KEY=…``)
_SECRET_NAME = lazy(r"(?i)(?<![\w.-])[\"'\[]?[\w.-]*?(?:secret[_.-]?key(?:[_.-]?base)?|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key"
                    r"|app[_.-]?key|api[_.-]?secret|app[_.-]?secret|api[_.-]?key|api[_.-]?token|auth[_.-]?token|access[_.-]?token"
                    r"|client[_.-]?secret|secret_?token|license[_.-]?key|session[_.-]?secret|cookie[_.-]?secret|jwt[_.-]?secret"
                    r"|private[_.-]?key|webhook[_.-]?secret|remotepass|community)[\"'\]]*\s*(?:=|:(?!//))\s*" + _REF
                    + r"(?!https?://|/|\./|~/)(?:" + _Q + r"|(?P<v>(?![\w.]*\()[^\s\"',;]{6,}))")
# more user-add and set-password commands: the password is a positional argument
_USER_ADD_MORE = lazy(r"(?i)\b(?:rabbitmqctl\s+(?:add_user|change_password)\s+\S+|mosquitto_passwd\s+-b\s+\S+\s+\S+"
                      r"|ldappasswd\b[^\n|;&`]*\s(?-i:-s)|mysqladmin\b[^\n|;&`]*?\spassword|dscl\s+\S+\s+-passwd\s+\S+|kadmin(?:\.local)?\b[^\n|;&`]*?\s-pw"
                      r"|ConvertTo-SecureString(?:\s+-String)?)\s+" + _REF + _VAL)
# ``.netrc``: ``machine HOST login USER password PW`` (one line or several)
_NETRC = lazy(r"(?i)\bmachine\s+\S+\s+(?:login\s+\S+\s+)?(?:account\s+\S+\s+)?password\s+" + _REF + r"(?P<v>\S{4,})")
# ipsec.secrets: ``left right : PSK "secret"``
_IPSEC_PSK = lazy(r"(?im)(?:^|\s):\s*(?:PSK|XAUTH|EAP)\s+" + _REF + r"(?:" + _Q + r"|(?P<v>\S{4,}))")
# a Terraform variable named for a secret, with its default: ``variable "db_password" { default = "…" }``
_HCL_VAR = lazy(r"(?i)\bvariable\s+\"[^\"\n]*(?:password|passwd|secret|token|api_?key|private_?key)[^\"\n]*\"\s*\{[^}]{0,200}?"
                r"\bdefault\s*=\s*" + _REF + _Q)
# a session cookie: ``Cookie: sessionid=…``, ``Set-Cookie: auth_token=…``
_COOKIE = lazy(r"(?i)\b(?:set-)?cookie\s*:[^\n]*?(?<![\w.-])[\w.-]*(?:sess|sid|token|auth|jwt|remember)[\w.-]*=" + _REF
               + r"(?P<v>[^;\s\"']{16,})")
_PASSPHRASE_WORDS = lazy(r"(?im)\bpass(?:phrase|word)\s*[:=]\s*(?P<v>[a-z]{3,}(?:[ \t]+[a-z]{3,}){2,7})[ \t]*[.!]?[ \t]*$")
_AUTH_TUPLE = lazy(r"(?i)\bauth\s*=\s*[(\[]\s*(['\"])[^'\"\n]{1,64}\1\s*,\s*" + _REF + _Q)
_AUTH_CALL = lazy(r"(?i)\b(?:HTTPBasicAuth|HTTPDigestAuth|HTTPProxyAuth|BasicAuth|DigestAuth|login|authenticate|set_password"
                  r"|simple_bind_s|bind_s|credentials)\s*\(\s*(['\"])[^'\"\n]{1,64}\1\s*,\s*" + _REF + _Q)
# prose: a key or token named, then its value (a digit and a letter in it, 16+ characters: a UUID, a lower-case token)
_KEY_PROSE = lazy(r"(?i)\b(?:(?:api|secret|access|private|auth|license|app|signing|master|account|service|client|deploy|bot"
                  r"|webhook|integration|personal|admin|root|registry|heroku|mailchimp|mailgun|sendgrid|stripe|twilio|datadog"
                  r"|openai|anthropic|github|gitlab|slack|discord|telegram|aws|azure|cloudflare|vercel|netlify|sentry|npm|pypi"
                  r"|docker|ngrok|google|maps|firebase|algolia|pagerduty|linear|notion|airtable|shopify|hubspot|zendesk)"
                  r"[ _-]?(?:key|token)|token|secret|pat|(?:my|our|your|his|her|their)\s+key)\b"
                  r"(?:\s+(?:for|of|to|on)\s+(?:the\s+)?[\w.-]+)?\s*(?:is now|is|was|=|:)?\s+" + _REF
                  + r"(?![0-9a-fA-F]{32,}(?![\w.+/=-]))(?P<v>(?=[\w.+/=-]*\d)(?=[\w.+/=-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_.+/=-]{15,199}|[A-Za-z]{20,199})(?![\w.+/=-])")
_USE_AS = lazy(r"(?i)\b(?:use|try|type|enter|(?:log|sign)\s?in\s+with)\s+['\"]?" + _REF + r"(?P<v>[^\s'\"]{4,})['\"]?\s+as\s+(?:the\s+|my\s+|our\s+|a\s+)?(?:[\w-]+\s+){0,2}"
               r"(?:password|passphrase|passcode|pin|pwd|api key|token|secret)\b")
# "I reset the admin password; it's now X": the password said again as "it"
_IT_NOW = lazy(r"(?i)\b(?:password|passphrase|passcode|pin)\b[;,:?]?\s+(?:and\s+)?(?:it['’]s|it\s+is|it\s+was)\s+(?:now\s+)?['\"]?" + _REF
               + r"(?P<v>[^\s'\"]{4,64})['\"]?(?=[ \t]*(?:$|\n|[.,;!?)](?:\s|$)))")
# the password given as what to type when asked: "type X when it asks for the password", "when prompted for a
# password, enter X"; or what to log in with: "use X to log in"
_TYPED = lazy(r"(?i)\b(?:type|enter|put\s+in)\s+['\"]?" + _REF + r"(?P<v>[^\s'\"]{4,64})['\"]?\s+when\s+(?:it|they|you(?:['’]re)?|the\s+[\w-]+)?\s*"
              r"(?:asks?|prompts?|are\s+prompted|is\s+asked)\s+(?:you\s+)?for\s+(?:the\s+|a\s+|your\s+)?(?:[\w-]+\s+)?(?:password|passphrase|passcode|pin)\b"
              r"|\b(?:prompted|asked)\s+for\s+(?:the\s+|a\s+|your\s+)?(?:[\w-]+\s+)?(?:password|passphrase|passcode|pin),?\s+(?:enter|type|use|put\s+in)\s+['\"]?"
              + _REF + r"(?P<q1>[^\s'\"]{4,64})")
_USE_TO_LOGIN = lazy(r"(?i)\buse\s+['\"]?" + _REF + r"(?P<v>[^\s'\"]{4,64})['\"]?\s+to\s+(?:log\s?in|sign\s?in|unlock|connect|get\s+in)\b")
# a password changed from one value to another: both go ("… was changed from X to Y": ``rules`` takes X)
_FROM_TO_FIRST = lazy(r"(?i)\b(?:password|passphrase|passcode|pin|pwd|pw)\b[^\n]{0,40}?\bfrom\s+['\"]?" + _REF + r"(?P<v>[^\s'\"]{4,64})['\"]?\s+to\s+")
_FROM_TO = lazy(r"(?i)\b(?:password|passphrase|passcode|pin|pwd|pw)\b[^\n]{0,40}?\bfrom\s+['\"]?[^\s'\"]{4,64}['\"]?\s+to\s+['\"]?" + _REF
                + r"(?P<v>[^\s'\"]{4,64})")
# "the secret is X", "the key to the admin panel is X", "the code to get in is X": a value with a password's shape
# (a key or a code only with what it opens: "the cache key is billing-3f2a1b2c" is an id)
_SECRET_IS = lazy(r"(?i)\b(?:the\s+|my\s+|our\s+)?(?:(?:[\w-]+\s+)?secret|key|code)(?=\s+(?:to|for|is|was)\b)(?:\s+(?:to|for)\s+(?:get(?:ting)?\s+in(?:to)?"
                  r"|(?:the\s+)?[\w-]+(?:\s+[\w-]+)?))?(?<!key)(?<!code)\s+(?:is|was)\s+(?:still\s+|now\s+)?['\"]?" + _REF
                  + r"(?P<v>(?=[^\s'\"]*\d)(?=[^\s'\"]*[a-z])[^\s'\"]{6,64})['\"]?(?=[ \t]*(?:$|\n|[.,;!?)](?:\s|$)|[ \t]+(?:and|but|or|for|btw)\b))")
# Russian leaves the verb out after a qualifier: "пароль от роутера X"
_RU_QUALIFIED = lazy(r"(?i)пароль(?:\s+(?:от|для|к|на|від|до)\s+[\w.-]+){1,2}\s+[\"'«]?(?P<v>[^\s\"'»]{4,64})")  # Russian, Ukrainian
_SET_TO = lazy(r"(?i)\b(?:set|changed?|reset|updated?|rotated?)\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+|their\s+)?(?:[\w'’-]+\s+){0,2}"
               r"(?:password|passphrase|passcode|pin|pwd)\s+(?:to|as)\s+['\"]?" + _REF + r"(?P<v>[^\s'\"]{4,})")
# the dictated password in other languages (``rules`` reads English, German, French, Spanish, Portuguese and Russian)
_PW_OTHER = (r"(?:mot de passe|clave|contrase[ñn]a|wachtwoord|has[łl]o|l[öo]senord(?:et)?|[şs]ifre(?:m|si|niz)?|parola(?:m|sı)?|salasana(?:ni|si)?"
             r"|adgangskode(?:n)?|passord(?:et)?|heslo|jelsz(?:[óo]|av(?:am|a|unk))|mật khẩu|kata sandi|kata laluan|lozinka|geslo|parool|parole"
             r"|slaptažodis|passwort|password|passphrase|пароль|парола|лозинка|senha|palavra-passe|nenosiri|পাসওয়ার্ড|رمز عبور|գաղտնաբառ|პაროლი"
             r"|contrasenya|pasahitza|κωδικός(?: πρόσβασης)?)")
# what may stand between the word and its value: up to three qualifiers ("de la base de datos", "of the admin
# account on the nas"), each a preposition (or a genitive article), an optional article and one or two words,
# and then a verb or a colon
_PW_QUALIFIER = (r"(?:\s+(?:del|de|do|da|du|della|van|von|vom|beim|от|від|od|для|för|til|na|for|of|für|pour|para|per|voor|dla|zum|zur|au|al|der|des"
                 r"|on|at|in|to|bei|auf|sur|en|su|w|we|z|ze|u|v|ve|pro)"
                 r"\s+(?:the\s+|la\s+|le\s+|el\s+|den\s+|dem\s+|der\s+|das\s+|die\s+|het\s+|il\s+|lo\s+|my\s+|our\s+|de\s+|des\s+)?"
                 r"[\w.-]+(?:['’]s)?(?:\s+[\w.-]+(?:['’]s)?)?"
                 r"|\s+(?:dell|dall|nell|sull|all|d)['’][\w.-]+){1,3}")
# the verbs that are English prepositions too (Polish/Estonian "on", Russian "to", Italian "e", Danish "er") count
# only before a value that ends its clause ("the root password on prod-db-2 is …" names a host, not a password),
# and never after the English word ("we have the password on file")
_PW_VERB = (r"(?:lautet|è|är|is|es|est|é|és|este|είναι|ist|jest|je|је|ir|yra|ialah|adalah|ay|ni|হল|:|：|՝|=|(?<![Pp]assword )(?:e|er|to|on)(?=\s+[\"'“«]?[^\s\"'”»]{4,}[\"'”»]?[ \t]*"
            r"(?:$|[\n.,;!?)])))")
_PROSE_OTHER = lazy(r"(?i)(?<![\w])(?:[\w]+-)?" + _PW_OTHER + r"(?:" + _PW_QUALIFIER + r"\s*" + _PW_VERB + r"|\s*" + _PW_VERB
                    + r"?)\s+[\"'“«]?" + _REF + r"(?!-[A-Za-z])(?P<v>[^\s\"'”»(][^\s\"'”»]{3,})")  # not an aside "(empty for none)", nor a flag
# ... with a relative clause between the word and its value: "la contraseña que puse para el wifi es X", "la password
# che ho messo per il router è X", "le mot de passe que j'ai mis pour le routeur est X", "das Passwort, das ich für den
# Router gesetzt habe, ist X", "пароль, который я поставил на роутер, X" (a comma closes the clause where no verb is said)
# ... with a few plain words between the word and a verb no English sentence uses, as languages without a
# preposition there say it: "kata sandi wifi kantor adalah X", "mật khẩu wifi là X", "heslo k wifi je X", "το password
# του router είναι X", "lösenordet till wifi:t är X", "كلمة السر للراوتر هي X", "a jelszó a routerhez: X" (a colon only
# after a word that is no English one)
_FOREIGN_VERB = r"(?:adalah|ialah|là|je|jest|είναι|هي|هو|är|ist|est|è|é|és|este|yra|ay|lautet|har|olarak)"
_PW_FOREIGN = (r"(?:mot de passe|contrase[ñn]a|wachtwoord|has[łl]o|l[öo]senord(?:et)?|[şs]ifre(?:m|si|niz)?|salasana(?:ni|si)?"
               r"|adgangskode(?:n)?|passord(?:et)?|heslo|jelsz(?:[óo]|av(?:am|a|unk))|mật khẩu|kata sandi|kata laluan|lozinka|geslo|parool"
               r"|slaptažodis|passwort|пароль|парола|лозинка|senha|palavra-passe|nenosiri|كلمة السر|كلمة المرور|κωδικός(?: πρόσβασης)?)")
_PW_BARE = lazy(r"(?i)(?<![\w])(?:(?:password|passphrase|" + _PW_FOREIGN[3:] + r"(?:\s+[\w:’'-]+){1,3}?\s+" + _FOREIGN_VERB
                + r"|" + _PW_FOREIGN + r"(?:\s+[\w’'-]+){1,3}?\s*:)\s*[\"'“«]?" + _REF
                + r"(?!-[A-Za-z])(?P<v>[^\s\"'”»(,][^\s\"'”»]{3,})")
_CLAUSE_WORDS = ("que", "che", "das", "die", "den", "dem", "der", "som", "dat", "welches", "который", "которую", "которое", "которая",
                 "które", "ktore", "który", "ktory", "którą", "ktora")
_PW_CLAUSE = lazy(r"(?i)(?<![\w])(?:[\w]+-)?" + _PW_OTHER + r",?\s+(?:" + "|".join(_CLAUSE_WORDS) + r")\s+(?:[\w'’-]+\s+){0,7}?[\w'’-]+"
                  r"(?:\s*,\s*(?:" + _PW_VERB + r")?|\s+" + _PW_VERB + r")\s*[\"'“«]?" + _REF
                  + r"(?!-[A-Za-z])(?P<v>[^\s\"'”»(,][^\s\"'”»]{3,})")
_CLAUSE_FINDER = Literals(_CLAUSE_WORDS)
_PROSE_CJK = lazy(r"(?:パスワード|密码|密碼|비밀번호|암호|暗証番号|口令)\s*(?:は|是|为|為|：|:|는|은|=|\s)\s*"
                  r"(?P<v>[!-~]{4,})")
# shapes no provider owns
_BITLOCKER = lazy(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])")
_RECOVERY_KEY = lazy(r"(?i)\brecovery\s+key\b[^\n\w]{0,6}(?P<v>[A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){3,9})\b")
_ONEPASSWORD = lazy(r"\bA3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b")
_NSEC = lazy(r"\bnsec1[02-9ac-hj-np-z]{58}\b")
_ZAPIER = lazy(r"hooks\.zapier\.com/hooks/catch/\d+/(?P<v>\w{5,})")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("password_command", _USERADD),
    ("password_command", _NET_USER),
    ("password_command", _CHPASSWD),
    ("password_command", _STDIN),
    ("password_command", _LFTP),
    ("password_command", _ORACLE),
    ("password_command", _KEYTOOL),
    ("password_command", _SNMP),
    ("password_command", _NMCLI),
    ("password_command", _USER_ADD_MORE),
    ("config_secret", _CISCO),
    ("config_secret", _PSK),
    ("config_secret", _WIFI_QR),
    ("config_secret", _OVPN),
    ("config_secret", _PASSWORD_LINE),
    ("config_secret", _SECRET_NAME),
    ("config_secret", _IPSEC_PSK),
    ("config_secret", _NETRC),
    ("config_secret", _HCL_VAR),
    ("session_cookie", _COOKIE),
    ("auth_argument", _AUTH_TUPLE),
    ("auth_argument", _AUTH_CALL),
    ("secret_in_prose", _USER_PASS),
    ("secret_in_prose", _SLASHED),
    ("secret_in_prose", _KEY_PROSE),
    ("secret_in_prose", _USE_AS),
    ("secret_in_prose", _SET_TO),
    ("secret_in_prose", _IT_NOW),
    ("secret_in_prose", _TYPED),
    ("secret_in_prose", _USE_TO_LOGIN),
    ("secret_in_prose", _FROM_TO_FIRST),
    ("secret_in_prose", _FROM_TO),
    ("secret_in_prose", _SECRET_IS),
    ("secret_in_prose", _RU_QUALIFIED),
    ("secret_in_prose", _PROSE_OTHER),
    ("secret_in_prose", _PW_CLAUSE),
    ("secret_in_prose", _PW_BARE),
    ("secret_in_prose", _PROSE_CJK),
    ("recovery_key", _BITLOCKER),
    ("recovery_key", _RECOVERY_KEY),
    ("recovery_key", _ONEPASSWORD),
    ("nostr_key", _NSEC),
    ("webhook_path", _ZAPIER),
)
# ... and one that must run before ``rules``' assignment rule (which would take the first word of the phrase)
EARLY: tuple[tuple[str, re.Pattern[str]], ...] = (("config_secret", _PASSPHRASE_WORDS),)
KINDS = frozenset(kind for kind, _ in PATTERNS) | {"card_number", "card_code"}
_MORE_COMMANDS = ("rabbitmqctl", "mosquitto_passwd", "ldappasswd", "mysqladmin", "dscl", "kadmin", "convertto-securestring")

_PW_LITERALS = ("mot de passe", "clave", "contrase", "wachtwoord", "hasło", "haslo", "lösenord", "losenord", "şifre", "sifre", "parola", "salasana",
                "pasahitza", "κωδικ",
                "adgangskode", "passord", "heslo", "jelsz", "mật khẩu", "kata sandi", "lozinka", "geslo", "parool", "passw", "passph",
                "parole", "slaptažod", "laluan", "nenosiri", "পাসওয়ার্ড", "رمز عبور", "palavra-passe", "парола", "лозинка", "գաղտնաբառ", "პაროლი",
                "пароль", "senha", "パスワード", "密码", "密碼", "비밀번호", "암호", "暗証番号", "口令")
# each kind's literals, looked up in the lower-cased text (``rules.NEEDLES``)
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "password_command": (("useradd", "usermod", "adduser", "net user", "chpasswd", "--stdin", "--password-stdin", "lftp", "/",
                          "pass ", "snmp", "nmcli", "wpa_passphrase", "iwctl", *_MORE_COMMANDS), True),
    "config_secret": (("secret", "password", "psk", "wpa", "wifi", "wlan", "p:", "auth-user-pass", "passwd", "passphrase",
                       "remotepass", "pass", "key", "token", "community", ": psk", ":psk", "xauth", "eap"), True),
    "auth_argument": (("auth", "login", "password", "bind", "credentials"), True),
    "secret_in_prose": (("pass", "pw", "login", "cred", "account", "key", "token", "secret", "pat", "use ", "code", "pin", *_PW_LITERALS), True),
    "recovery_key": (("-", "a3-"), True),
    "nostr_key": (("nsec1",), True),
    "session_cookie": (("cookie",), True),
    "webhook_path": (("hooks.zapier.com",), True),
}

_KEYISH = lazy(r"(?:key|token|secret|\bpat)\b")
_LONG_VALUE = lazy(r"[a-z0-9_.+/=-]{16}")
_SECRET_NAME_CONTEXT = lazy(r"(?:secret|key|token|remotepass|community)[\w\"'\]]*\s*[:=]")
# the words every match of the two expressions above holds, and the prose words: each looked up in one pass (``literals``)
_KEYISH_WORDS, _SECRET_WORDS = Literals(("key", "token", "secret", "pat")), Literals(("secret", "key", "token", "remotepass", "community"))
_PW_FINDER, _MORE_FINDER = Literals(_PW_LITERALS), Literals(_MORE_COMMANDS)
_USE_AS_FINDER = Literals(("use ", "try ", "type ", "enter ", "log in", "login", "sign in", "signin"))
_TYPED_FINDER = Literals(("type ", "enter ", "put in", "prompted", "asked"))
_SECRET_IS_FINDER = Literals(("secret ", "key ", "code "))
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _USERADD: lambda low: " -p" in low and ("useradd" in low or "usermod" in low or "adduser" in low),
    _NET_USER: lambda low: "net user" in low and " /" in low,
    _CHPASSWD: lambda low: "chpasswd" in low,
    _STDIN: lambda low: "-stdin" in low and "|" in low,
    _LFTP: lambda low: "lftp" in low,
    _ORACLE: lambda low: "/" in low and "@" in low,
    _KEYTOOL: lambda low: "pass " in low and ("storepass" in low or "keypass" in low),
    _SNMP: lambda low: "snmp" in low,
    _NMCLI: lambda low: "nmcli" in low or "wpa_passphrase" in low or "iwctl" in low,
    _USER_ADD_MORE: lambda low: _MORE_FINDER.any_in(low),
    _IPSEC_PSK: lambda low: ":" in low and ("psk" in low or "xauth" in low or "eap" in low),
    _HCL_VAR: lambda low: "variable" in low and "default" in low,
    _NETRC: lambda low: "machine" in low and "password" in low,
    _COOKIE: lambda low: "cookie" in low and "=" in low,
    _CISCO: lambda low: "enable" in low or "username" in low or "-server" in low or "key-string" in low,
    _PSK: lambda low: ("psk" in low or "passphrase" in low or "password" in low) and ("=" in low or ":" in low),
    _WIFI_QR: lambda low: "wifi:" in low,
    _OVPN: lambda low: "<auth-user-pass>" in low,
    _PASSWORD_LINE: lambda low: "pass" in low,
    _SECRET_NAME: lambda low: ("=" in low or ":" in low) and _SECRET_WORDS.any_in(low) and _SECRET_NAME_CONTEXT.search(low) is not None,
    _PASSPHRASE_WORDS: lambda low: "pass" in low and ("=" in low or ":" in low),
    _AUTH_TUPLE: lambda low: "auth" in low and ("(" in low or "[" in low),
    _AUTH_CALL: lambda low: "(" in low and ("auth" in low or "login" in low or "password" in low or "bind" in low or "credentials" in low),
    _USER_PASS: lambda low: ("user" in low or "login" in low or "u:" in low or "u :" in low) and ("pass" in low or "pw" in low or "p:" in low),
    _SLASHED: lambda low: " / " in low,
    _KEY_PROSE: lambda low: _KEYISH_WORDS.any_in(low) and _KEYISH.search(low) is not None and _LONG_VALUE.search(low) is not None,
    _USE_AS: lambda low: _USE_AS_FINDER.any_in(low) and " as " in low,
    _TYPED: lambda low: _TYPED_FINDER.any_in(low) and _TYPED.search(low) is not None,
    _USE_TO_LOGIN: lambda low: "use " in low and _USE_TO_LOGIN.search(low) is not None,
    _FROM_TO_FIRST: lambda low: " from " in low and _FROM_TO_FIRST.search(low) is not None,
    _FROM_TO: lambda low: " from " in low and _FROM_TO.search(low) is not None,
    _SECRET_IS: lambda low: _SECRET_IS_FINDER.any_in(low) and _SECRET_IS.search(low) is not None,
    _SET_TO: lambda low: ("pass" in low or "pin" in low or "pwd" in low) and (" to " in low or " as " in low),
    _IT_NOW: lambda low: ("pass" in low or "pin" in low) and _IT_NOW.search(low) is not None,
    _RU_QUALIFIED: lambda low: "пароль" in low,
    _PROSE_OTHER: lambda low: _PW_FINDER.any_in(low),
    _PW_CLAUSE: lambda low: _PW_FINDER.any_in(low) and _CLAUSE_FINDER.any_in(low) and _PW_CLAUSE.search(low) is not None,
    _PW_BARE: lambda low: _PW_FINDER.any_in(low) and _PW_BARE.search(low) is not None,
    _PROSE_CJK: lambda low: not low.isascii(),
    _NSEC: lambda low: "nsec1" in low,
    _ZAPIER: lambda low: "hooks.zapier.com" in low,
    _BITLOCKER: lambda low: low.count("-") >= 7,
    _RECOVERY_KEY: lambda low: "recovery" in low,
    _ONEPASSWORD: lambda low: "a3-" in low,
}

# --- card numbers with their codes ---------------------------------------------------------------

_PAN = lazy(r"(?<![\d-])(?:[2-6]\d{3})(?:[ -]?\d{4}){2}[ -]?\d{1,4}(?:[ -]?\d{1,3})?(?![\d-])")
_CARD_WORDS = lazy(r"(?i)\b(?:card|visa|master\s?card|amex|american express|discover|jcb|diners|maestro|cvv2?|cvc2?|cid|csc"
                   r"|security code|exp(?:iry|ires|iration)?|valid thru|pay(?:ment)?|pan|credit|debit)\b|\b(?:0[1-9]|1[0-2])\s?/\s?\d{2}\b")
_CARD_CODE = lazy(r"(?i)\b(?:cvv2?|cvc2?|cid|csc|security\s+code|card\s+code|code)\b[\"']?\s*[:=]?\s*[\"']?(?P<v>\d{3,4})(?!\d)")


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card_spans(text: str) -> list[tuple[int, int, str]]:
    """A Luhn-valid card number (13 to 19 digits) with a card word, a code or an expiry within 80
    characters, and the card code near it."""
    out: list[tuple[int, int, str]] = []
    for m in _PAN.finditer(text):
        digits = re.sub(r"[ -]", "", m.group(0))
        if not 13 <= len(digits) <= 19 or not _luhn(digits) or len(set(digits)) < 4:
            continue
        lo, hi = max(0, m.start() - 80), min(len(text), m.end() + 80)
        if _CARD_WORDS.search(text, lo, hi) is None:
            continue
        out.append((m.start(), m.end(), "card_number"))
        for c in _CARD_CODE.finditer(text, lo, hi):
            out.append((c.start("v"), c.end("v"), "card_code"))
    return out


# every context above needs one of these in the lower-cased text (a text without any is passed at once)
TRIGGER_WORDS = (
    " -p", "net user", "chpasswd", "-stdin", "lftp", "@", "pass", "snmp", "nmcli", "iwctl", "secret", "key", "psk",
    "wifi:", "token", "community", "auth", "login", "bind", "credentials", "user", "u:", "u :", " / ", "use ", "pin", "pwd", "recovery",
    "a3-", "nsec1", "hooks.zapier.com", "cookie", "pat", "variable", "machine", "eap", "code ", "try ", "type ", "enter ", "put in",
    "prompted", "asked", " from ", *_MORE_COMMANDS, *_PW_LITERALS)
_TRIGGER = Literals(TRIGGER_WORDS)  # one pass for all of them (a regular expression of the words cost ~8 µs a text)
# a card number's thirteen digits at least: ``(?:\d[ -]?){12}\d`` written out, which ``re`` searches in two
# thirds of the time (the repeated group is not unrolled by the compiler)
CARD_DIGITS = re.compile(r"\d[ -]?" * 12 + r"\d")
_DIGITS = b"0123456789"
_CARD_CLASSES = bytes(ord("d") if chr(c).isdigit() else ord("s") if chr(c) in " -" else ord(" ") for c in range(128)) + b" " * 128


def card_digits(text: str) -> bool:
    """``CARD_DIGITS.search(text) is not None``. In ASCII text (``\\d`` is 0-9 there) without the search:
    the digits are counted in one pass over its bytes (ten ``str.count`` cost ~0.9 µs a text of the token
    mix, this ~0.3); where there are thirteen, each byte becomes its class (a digit ``d``, a space or
    ``-`` ``s``, anything else a space) and a match is a piece between spaces and ``ss`` holding
    thirteen ``d`` (the search cost ~2 µs a lockfile entry full of digits)."""
    if not text.isascii():
        return CARD_DIGITS.search(text) is not None
    raw = text.encode("ascii")
    if len(raw) - len(raw.translate(None, _DIGITS)) < 13:
        return False
    for run in raw.translate(_CARD_CLASSES).split():
        if run.count(b"d") >= 13 and any(piece.count(b"d") >= 13 for piece in run.split(b"ss")):
            return True
    return False


# the words one of which each context needs (one of its conditions is that a word of these is in the
# text; ``None``: none such), so ``maybe`` asks only those whose words the text holds (``literals.Gated``);
# tests/governance/test_secrets_literal_passes.py reads each from the context's own code
CONTEXT_WORDS: dict[re.Pattern[str], tuple[str, ...] | None] = {
    _USERADD: (" -p",), _NET_USER: ("net user",), _CHPASSWD: ("chpasswd",), _STDIN: ("-stdin",), _LFTP: ("lftp",),
    _ORACLE: ("@",), _KEYTOOL: ("pass ",), _SNMP: ("snmp",), _NMCLI: ("nmcli", "wpa_passphrase", "iwctl"), _USER_ADD_MORE: _MORE_FINDER.words,
    _IPSEC_PSK: ("psk", "xauth", "eap"), _HCL_VAR: ("variable",), _COOKIE: ("cookie",), _NETRC: ("machine",),
    _CISCO: ("enable", "username", "-server", "key-string"), _PSK: ("psk", "passphrase", "password"), _WIFI_QR: ("wifi:",),
    _OVPN: ("<auth-user-pass>",), _PASSWORD_LINE: ("pass",), _SECRET_NAME: _SECRET_WORDS.words, _PASSPHRASE_WORDS: ("pass",),
    _AUTH_TUPLE: ("auth",), _AUTH_CALL: ("(",), _USER_PASS: ("user", "login", "u:", "u :"), _SLASHED: (" / ",), _KEY_PROSE: _KEYISH_WORDS.words,
    _USE_AS: _USE_AS_FINDER.words, _TYPED: _TYPED_FINDER.words, _USE_TO_LOGIN: ("use ",), _FROM_TO_FIRST: (" from ",), _FROM_TO: (" from ",),
    _SECRET_IS: _SECRET_IS_FINDER.words, _SET_TO: ("pass", "pin", "pwd"), _IT_NOW: ("pass", "pin"), _RU_QUALIFIED: ("пароль",), _PROSE_OTHER: _PW_FINDER.words, _PW_CLAUSE: _PW_FINDER.words, _PW_BARE: _PW_FINDER.words, _PROSE_CJK: None, _NSEC: ("nsec1",),
    _ZAPIER: ("hooks.zapier.com",), _BITLOCKER: None, _RECOVERY_KEY: ("recovery",), _ONEPASSWORD: ("a3-",),
}
_GATED = Gated(list(CONTEXTS.values()), [CONTEXT_WORDS[p] for p in CONTEXTS])


def maybe(low: str) -> bool:
    """Could one of these patterns, or a card number, match the lower-cased text? (``precheck``)"""
    if not low.isascii() or card_digits(low):
        return True
    return _TRIGGER.any_in(low) and _GATED.any_true(low)
