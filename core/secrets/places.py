"""More places that say a value is a secret, whatever it looks like (``context.py`` holds the first):
the forms people and tools write that no rule of shape can see (issue 37).

- commands that take a password as a positional argument or after a flag of their own
  (``samba-tool user create NAME PW``, ``db2 connect … using PW``, ``neo4j-admin set-initial-password
  PW``, ``networksetup -setairportnetwork IF SSID PW``, ``poetry config http-basic.X USER PW``,
  ``cqlsh``/``twine``/``influx … -p PW``, ``gh secret set … --body PW``, ``netsh wlan … key=PW``),
  a password piped into ``sudo -S``, ``openconnect --passwd-on-stdin``, ``pw useradd -h 0`` or
  ``docker secret create``, and an ``expect`` script's answer to a password prompt;
- config formats: Oracle's ``jdbc:oracle:thin:user/PW@``, IKE and router pre-shared keys,
  Windows Wi-Fi profiles (``<keyMaterial>``), PPP ``chap-secrets`` lines, ASP.NET ``machineKey``,
  a JSON or YAML ``"pass":``;
- code: any call whose name says credentials, its last string argument
  (``new NetworkCredential("u", "PW")``, ``SetBasicAuth("u", "PW")``, sbt's ``Credentials(…, "PW")``),
  and a ``user:PW`` pair given as auth (``http -a``, ``CURLOPT_USERPWD``, ``auth: 'u:PW'``);
- prose: the Wi-Fi or network key in German, French, Spanish and English, the dictated password
  in Vietnamese, Indonesian, Thai, Arabic, Hebrew and Hindi, ``pass is …``/``pw: …``, ``creds
  for the box: USER / PW``; PINs, door, alarm and safe codes and combinations; recovery and backup
  codes.

A plain value found here is judged as ``context``'s are (``values.keep``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets.context import _Q, _VAL
from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Literals, Maybe
from commonkeep.secrets.structure import _REF

_UNTIL = r"[^\n|;&`]*?"  # the rest of one command
_CMD = lazy(r"(?i)\b(?:samba-tool\s+user\s+(?:create|add|setpassword)\s+\S+|ds(?:add|mod)\s+user\b" + _UNTIL + r"\s-pwd"
            r"|neo4j-admin\s+(?:dbms\s+)?set-initial-password|db2\s+connect\s+to\s+\S+\s+user\s+\S+\s+using"
            r"|networksetup\s+-setairportnetwork\s+\S+\s+(?:\"[^\"\n]+\"|\S+)|poetry\s+config\s+http-basic\.\S+\s+\S+"
            r"|mc\s+(?:alias\s+set|config\s+host\s+add)\s+\S+\s+\S+\s+\S+|security\s+add-(?:generic|internet)-password\b" + _UNTIL + r"\s-w"
            r"|(?:cqlsh|twine|influx|clickhouse-client|mssql-cli|nuget|dotnet\s+nuget)\b" + _UNTIL + r"\s(?:-p|-password|--password)"
            r"|drush\s+(?:user:password|user-password|upwd)\s+(?:\"[^\"\n]+\"|\S+)|ssh-keygen\b" + _UNTIL + r"\s-N"
            r"|nmcli\b" + _UNTIL + r"\b(?:wifi-sec|802-11-wireless-security)\.psk|isql\s+(?:-[a-z]\w*\s+)*[^\s-]\S*\s+[^\s-]\S*"
            # (pulumi: a value set as a secret, or under a key that names one; not ``aws:region``)
            r"|pulumi\s+config\s+set\s+(?=[^\n|;&]*--secret\b|(?:--\w+\s+|-s\s+\S+\s+)*\S*(?:pass|secret|token|key)\S*\s)"
            r"(?:--(?:secret|path|plaintext)\s+|-s\s+\S+\s+)*[^\s-]\S*"
            r"|(?:gh\s+secret\s+set|aws\s+ssm\s+put-parameter|az\s+keyvault\s+secret\s+set|doppler\s+secrets\s+set)\b"
            + _UNTIL + r"\s(?:--body|-b|--value)|netsh\s+wlan\b" + _UNTIL + r"\bkey(?:material)?=)"
            r"(?:(?<==)|\s+)" + _REF + _VAL)
# a password fed to a command without a flag of its own: a process substitution after a flag naming a password file
# (``--password-file=<(echo X)``, ``--vault-password-file <(printf X)``) or a here-string into a command that reads one
# (``chpasswd <<< 'bob:X'``, ``keepassxc-cli open db.kdbx <<< X``, ``cryptsetup open … <<< X``)
_FED = lazy(r"(?i)(?:(?:pass\w*|secret\w*|key|token)[^\n|;&<]*?(?:=|\s)<\(\s*(?:echo|printf)\s+(?:-[ne]\s+)?"
            r"|\b(?:\w*passwd|keepassxc-cli|cryptsetup|openconnect|sudo\s+-S|vault\s+login|\w+\s+login\b[^\n|;&]*--password-stdin"
            r"|[^\n|;&]*--pass(?:word|phrase|wd)-(?:stdin|fd)\b|pass\s+(?:insert|add|edit)\b"
            # any command that names what it is fed ("vercel env add DB_PASSWORD production <<< X", "gh secret set T <<< X")
            r"|[\w.-]+\s[^\n|;&<]*?(?:passw(?:or)?d|passphrase|secret|token|credential|api[_-]?key))[^\n|;&<]*<<<\s*)"
            + r"(?:\$'(?P<q3>[^'\n]{3,200})'|" + _REF  # ``$'X\nX'``: the shell's quoting with escapes, no variable
            + r"(?:'(?P<q1>[^'\n]{3,200})'|\"(?P<q2>[^\"\n]{3,200})\"|(?P<v>[^\s'\"`)]{3,})))")
# the password said twice into a command that asks for it twice: ``(echo X; echo X) | smbpasswd -a -s bob``
_TWICE = lazy(r"(?i)\(\s*(?:echo|printf)\s+(?:-[ne]\s+)?" + _REF + _VAL + r"\s*;\s*(?:echo|printf)\b[^)\n]*\)\s*\|\s*[\w-]*passwd\b")
_TWICE_AGAIN = lazy(r"(?i)\(\s*(?:echo|printf)\s+[^;)\n]*;\s*(?:echo|printf)\s+(?:-[ne]\s+)?" + _REF + _VAL + r"\s*\)\s*\|\s*[\w-]*passwd\b")
_PIPED = lazy(r"(?i)\b(?:echo|printf)\s+(?:-[ne]\s+)?" + _REF + _VAL + r"\s*\|\s*(?:sudo\s+(?:-\w+\s+)*-S\b"
              r"|[\w-]+\b[^\n|]*?(?:--passwd-on-stdin|\s-h\s*0\b|\bsecrets?\s+(?:create|set|put|add)\b|--data-file[= ]-(?!\S)))")
_EXPECT = lazy(r"(?i)\bexpect\s+(?:-\w+\s+)?\"[^\"\n]*pass[^\"\n]*\"\s*\n\s*send\s+(?:--\s+)?\"(?P<v>[^\"\n\\]{3,})(?:\\[rn])?\"")
_ORACLE_THIN = lazy(r"(?i)jdbc:oracle:(?:thin|oci):@?[\w$#]{1,30}/(?P<v>[^\s@/'\"]{3,})@")
_PRE_SHARED = lazy(r"(?im)(?:^[ \t]*(?:pre-shared-key|crypto\s+isakmp\s+key)(?:\s+(?:ascii|hex|local|remote))?(?:\s+[0-9](?=\s))?\s+"
                   r"|(?<![\w-])(?:wpa2?-)?pre-shared-key\s*=\s*)" + _REF + r"(?:" + _Q + r"|(?P<v>[^\s\"';]{4,}))")
_XML_KEY = lazy(r"(?i)<(?P<tag>keymaterial|sharedsecret|presharedkey|psk|wpakey|networkkey)>" + _REF + r"(?P<v>[^<\s]{4,})</(?P=tag)>")
_CHAP = lazy(r"(?m)^[ \t]*\"?[\w.@-]{1,40}\"?[ \t]+\*[ \t]+\"?(?P<v>[^\s\"*]{4,})\"?[ \t]+(?:\*|[\d.]+)[ \t]*$")
_MACHINE_KEY = lazy(r"(?i)\b(?:validationkey|decryptionkey)\s*=\s*\"(?P<v>[0-9A-Fa-f]{16,})\"")
# svnserve's passwd file: ``name = password`` lines under a ``[users]`` header (``values.keep`` reads the text
# back to the line's section), judged as a password given with no verb (Grafana's ``[users]`` holds ``default_theme = dark``)
_USERS_LINE = lazy(r"(?m)^[ \t]*[\w.@-]{1,40}[ \t]*=[ \t]*(?P<v>[^\s]{4,64})[ \t]*\r?$")
_PORT_USER = re.compile(r":\d{2,5}:[a-z_]")  # what every match of ``_HOST_PORT_USER`` holds (an ISO time does not)
# a proxy or service list's ``host:port:user:password`` (four fields, the second a port)
_HOST_PORT_USER = lazy(r"(?i)(?<![\w.:@/-])(?:(?:[a-z0-9-]+\.)+[a-z0-9-]+|[a-z][a-z0-9-]*):\d{2,5}:[a-z_][\w.@-]{0,63}:"
                       r"(?P<v>[^\s:'\"`(){}\[\]<>]{4,128})(?![\w:])")
_PASS_LINE = lazy(r"(?m)^[ \t]*(?:pass|Pass)[ \t]+" + _REF + r"(?:" + _Q + r"|(?P<v>[^\s\"']{4,}))[ \t]*$")  # isync/mbsync
_PASS_KEY = lazy(r"(?i)[\"']pass[\"']\s*:\s*" + _REF + _Q)
# a config line that is only ``pass = X`` or ``pass: X`` (rclone, mail clients), not in capitals (``PASS: test_x``,
# ``PASS  src/x.test.js``: a test runner's line); "a single pass: adjacent …" is prose, not a whole line holding one value
_PASS_ASSIGN = lazy(r"(?m)^[ \t]*(?:pass|Pass)[ \t]*[=:][ \t]*" + _REF + r"(?:" + _Q + r"|(?P<v>[^\s\"']{4,}))[ \t]*$")
# ... and a line that ends so after a colon ("rclone config: pass = X"), judged as a password given with no verb
# ("phase 2: pass = first" is a word)
_PASS_AFTER = lazy(r"(?m)(?<=[:;,])[ \t]+(?:pass|Pass)(?:[ \t]*=|:)[ \t]+" + _REF + r"['\"]?(?P<v>[^\s\"'`]{4,64})['\"]?[ \t]*$")
_CRED_CALL = lazy(r"(?i)\b(?:new\s+)?[\w.]*(?:auth|credential|login|passw|bind)[\w.]*\s*\(\s*(?:(?:\$\w+|[\w.]*(?:conn|connection|session|client|ctx|handle|link|ld|db)\w*)\s*,\s*)?(?:(?:(['\"])[^'\"\n]{1,64}\1|[\w.]{0,30}(?:user|email|login|account)\w{0,20})\s*,\s*){1,3}"
                  + _REF + _Q + r"\s*\)")
# what every match of it holds: the call's name and a quote in its arguments (``_CRED_CALL``'s leading
# ``\b(?:new\s+)?[\w.]*`` is tried at every position; the words first cost a third)
# (a first argument that is a connection or a PHP variable: ``ldap_bind($conn, 'cn=admin', 'X')``)
_CRED_CALL_CONTEXT = lazy(r"(?:auth|credential|login|passw|bind)[\w.]*\s*\([^)\n]*['\"]")
_USER_PAIR = lazy(r"(?i)(?:\bhttps?\s+(?:-\S+\s+)*?-a\s+|curlopt_userpwd\s*,\s*|\bauth\s*[:=]\s*)[\"']?[\w.@-]{1,40}:" + _REF
                  + r"(?P<v>[^\s\"'@]{3,})")
_KEY_WORDS = (r"(?:wlan-schl[üu]ssel|netzwerkschl[üu]ssel|wlan-passwort|wifi-passwort|wlan-kennwort|cl[ée] wpa|cl[ée] wi-?fi"
              r"|cl[ée] de s[ée]curit[ée]|clave wpa|clave de red|clave del wi-?fi|clave wi-?fi|code wi-?fi|wi-?fi key|network key|wpa key|security key"
              r"|m[ậa]t kh[ẩa]u|kata sandi(?:nya)?|كلمة (?:المرور|السر)|ה?סיסמ[הא]|पासवर्ड|รหัสผ่าน)")
_PROSE_KEY = lazy(r"(?i)(?<![\w])" + _KEY_WORDS + r"(?:\s+(?:for|of|del|de|du|für)\s+(?:the\s+|la\s+|le\s+|el\s+|den\s+)?[\w.-]+)?"
                  r"\s*(?:is|lautet|ist|est|es|là|adalah|คือ|هي|היא|है|:|：|=)?\s*[\"'“«]?" + _REF + r"(?P<v>[^\s\"'”»]{4,})")
# (not ``pw = …``: code assigns a variable so; not a value with ``(``, ``:`` or a backtick: code and markup)
# (``pass:`` is English too: "a single coalescing pass: adjacent intervals …")
# (``the pw for the router = X``: an article or a possessive first says prose, not code's ``pw = …``)
_PROSE_SHORT = lazy(r"(?i)(?<![\w-])(?:pass (?:is|was)(?: still| now)?|pw(?: ?:| is(?: still| now)?| was)|(?:pwd|passwd)\s*(?:\bis|\bwas|:)"
                    r"|pw\s+(?:for|of|on|to|at)\s+(?:the\s+|my\s+|our\s+)?[\w.-]+(?:\s+[\w.-]+)?\s*(?::|\bis\b|\bwas\b)"
                    r"|(?:the|my|our|your|his|her|their)\s+(?:pw|pwd|pass)\s+(?:for|of|on|to|at)\s+(?:the\s+|my\s+|our\s+)?[\w.-]+(?:\s+[\w.-]+)?"
                    r"\s*(?:=|:|\bis\b|\bwas\b))\s*[\"'“«]?" + _REF
                    + r"(?P<v>[^\s\"'”»(`:]{4,})(?![(`:\w])")
_CREDS_SLASHED = lazy(r"(?i)\b(?:creds|credentials?|login|basic[ -]auth)(?:\.(?:txt|conf|cfg|ini))?\b(?:\s+(?:for|on|to|of)\s+(?:the\s+)?[\w.-]+(?:\s+[\w.-]+)?)?\s*(?:are|is|:|=)"
                      r"\s*[\w.@-]{1,40}\s+/\s+" + _REF + r"(?P<v>\S{4,})")
# a token or key given in prose without a ``… is``: ``use X to authenticate``, ``set the webhook secret to X``,
# ``paste this token into the app: X``, ``X (do not share)``; the value must look like one (``values.keep``)
_TOKEN_VALUE = r"(?P<v>[A-Za-z0-9][A-Za-z0-9_.+/=-]{15,199})(?![\w.+/=-])"
_USE_TO = lazy(r"(?i)\buse\s+['\"]?" + _REF + _TOKEN_VALUE + r"['\"]?\s+(?:to|for)\s+(?:authenticate|auth|log\s?in|sign\s?in|connect|access)\b")
_SET_TOKEN = lazy(r"(?i)\b(?:set|changed?|reset|updated?|rotated?)\s+(?:the\s+|my\s+|our\s+|its\s+)?(?:[\w-]+\s+){0,2}"
                  r"(?:token|secret|key|api key|access key)\s+(?:to|as)\s+['\"]?" + _REF + _TOKEN_VALUE)
_COLON_AFTER = lazy(r"(?i)\b(?:token|secret|api key|access key|credentials?)\b[^\n:]{0,40}:\s+['\"]?" + _REF + _TOKEN_VALUE)
_NOT_SHARE = lazy(r"(?i)(?<![\w.+/=-])" + _TOKEN_VALUE + r"[\s\"')]{0,3}[(\[-]?\s*(?:do not|don't|never)\s+share")
# the value named first, the password after it: ``X is the password.``, ``it's X (the wifi password)``; the
# clause ends after ``password`` (not "Entropy is the password property …")
_PW_NOUN = r"(?:the|my|our|your)\s+(?:new\s+|current\s+|old\s+)?(?:[\w-]+\s+)?(?:password|passphrase|passcode|pwd)(?!['’]s)"
_NAMED_AFTER = lazy(r"(?i)(?<![\w-])(?P<v>[^\s\"'“”«»()]{4,64})[\"'”»]?\s+(?:is|was|will be)\s+" + _PW_NOUN
                    + r"(?=[ \t]*(?:$|[\n.,;:!?)]))|(?:\bit['’]?s\s+[\"'“«]?(?P<q1>[^\s\"'“”«»()]{4,64})[\"'”»]?\s*\(\s*)"
                    + _PW_NOUN + r"\s*\)")
_RUN16 = lazy(r"[a-z0-9_.+/=-]{16}")  # every token value above holds 16 such characters in a row (lower-cased)
_PIN_PLACE = r"(?:door|gate|alarm|safe|lock|locker|garage|building|house|keypad|padlock)"
_PIN_PLACE_OTHER = (r"(?:porte|portail|entr[ée]e|immeuble|alarme|coffre(?:-fort)?|cadenas|garage|puerta|portal|port[óo]n|alarma"
                    r"|caja\s+fuerte|candado|garaje|porta|portone|cancello|allarme|cassaforte|lucchetto|port[ãa]o|cofre|garagem"
                    r"|cadeado|edif[íi]cio|edificio)")
_PIN = lazy(r"(?i)\b(?:(?:pin(?:[ -]?(?:code|number))?|passcode|(?:door|alarm|gate|entry|lock|garage|safe|locker|keypad)\s+code"
            r"|combination)\b(?:\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+)?[\w-]+(?:\s+[\w-]+)?)?"
            # "the code for the front door", "le code de la porte", "il codice del cancello", "der Türcode"
            r"|code\s+(?:for|of|to|on)\s+(?:the\s+|my\s+|our\s+)?(?:front\s+|back\s+|main\s+|side\s+)?" + _PIN_PLACE + r"\b"
            r"|(?:code|codice|c[óo]digo)\s+(?:d['’]acc[èe]s\s+|de\s+acceso\s+|di\s+accesso\s+|de\s+acesso\s+)?"
            r"(?:de\s+la|de\s+l['’]|du|de|del|della|dell['’]|do|da|des|dello|al|au)\s*" + _PIN_PLACE_OTHER + r"\b"
            r"|(?:t[üu]r|tor|haust[üu]r|alarm(?:anlage)?|tresor|safe|garagen|zugangs|schloss|zahlen)-?code\b"
            r"(?:\s+f[üu]r\s+(?:das|die|den|unser|unsere|meinen)\s+\w+)?)"
            r"\s*(?:is|was|=|:|lautet|est|es|é|è|ist)?"
            r"\s*(?P<v>\d{4,8}|\d{1,2}(?:-\d{1,2}){2,3})(?![\d-])")
_CODE = r"(?:(?=[A-Za-z-]*\d)[A-Za-z0-9]{4,8}(?:-[A-Za-z0-9]{4,8}){1,9}|[A-Za-z]{4}(?:-[A-Za-z]{4}){4,9}|\d{4}\s?\d{4})"
_RECOVERY = lazy(r"(?i)\b(?:recovery|backup)\s+(?:codes?|keys?)\b(?:\s+(?:is|are|was|were)\b)?[^\n\w]{0,6}(?P<v>" + _CODE + r"(?:[ ,;]+" + _CODE + r")*)")
# a letters-only code list after "backup codes" (judged random by ``values.keep``: no word of the vocabulary)
_RECOVERY_LETTERS = lazy(r"(?i)\b(?:recovery|backup)\s+codes\b[^\n\w]{0,6}(?P<v>[a-z]{8,10}(?:[ \t]*[,;\n][ \t]*[a-z]{8,10}|[ \t]+[a-z]{8,10}){2,15})\b")
# the seed of a one-time-password app, given as its setup key: base32, in groups of four or whole
_OTP_SEED = lazy(r"(?i)\b(?:2fa|mfa|totp|otp|authenticator|two[- ]factor|2-step|two-step)\b[^\n]{0,30}?\b(?:setup\s+key|secret(?:\s+key)?"
                 r"|seed|key)\b\s*(?:is|was|:|=)?\s*[\"'`]?(?P<v>[a-z2-7]{4}(?:[ -][a-z2-7]{4}){3,15}(?![\w-])|[A-Za-z2-7]{16,64}(?![\w-]))")
# an app password (Google's four groups of four letters, Apple's app-specific password with dashes)
_APP_PASSWORD = lazy(r"(?i)\bapp(?:lication)?[- ](?:specific[- ])?password\b[^\n\w]{0,4}(?:\s*(?:is|was|for\s+[\w.@-]+\s*(?:is|:)))?"
                     r"\s*[\"'`]?(?P<v>[a-z]{4}([ -])[a-z]{4}\2[a-z]{4}\2[a-z]{4})(?![\w-])")
# a passphrase of plain words after "the passphrase is" (each word judged by ``values.keep``: not grammar, not
# an inflection, and the phrase ends its clause): "the passphrase is velvet ember canal quartz"
_PASSPHRASE_IS = lazy(r"(?i)\bpassphrase\s+(?:is|was|will\s+be|is\s+now)\s*[:\"'“«]?\s*(?P<v>[a-z]{3,}(?:[ \t]+[a-z]{3,}){2,7})"
                      r"[\"'”»]?(?=[ \t]*(?:$|[\n.,;!?)]))")
# a keypair as the byte array a wallet's key file holds (Solana's ``id.json``: 64 numbers of 0-255)
_KEY_BYTES = lazy(r"(?i)(?:keypair|key\s*pair|private[ _]?key|secret[ _]?key|id\.json|wallet)[^\n\[]{0,40}[:=]?\s*"
                  r"(?P<v>\[\s*(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*){31,63}(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*\])"
                  r"|(?P<q1>\[\s*(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*,\s*){63}(?:25[0-5]|2[0-4]\d|1?\d?\d)\s*\])[^\n]{0,40}"
                  r"(?:keypair|key\s*pair|private[ _]?key|secret[ _]?key|id\.json|wallet)")
# a password given in an instruction, with no "is": "use password X for the box", "log in with admin/X"
# (the value must not be an English word: "use password managers for …", "log in with email/password")
_GIVEN = lazy(r"(?i)\b(?:use\s+(?:the\s+)?(?:password|passphrase|pw)\s+(?:['\"](?P<q2>[^'\"\n]{4,64})['\"]|['\"]?(?P<v>[^\s'\"/]{4,64})['\"]?)"
              r"\s+(?:for|to|on|with|when|at)\b"
              # (a colon: not after a sign-in provider or method, "log in with google:oauth2"; not before a port)
              r"|(?:log\s?in|sign\s?in|connect|ssh\s+in)\s+(?:with|as|using)\s+(?:[\w.@-]{1,40}\s?/\s?|(?!(?:google|github|gitlab|microsoft"
              r"|azure|apple|facebook|okta|auth0|saml|sso|oidc|oauth\d?|ldap|kerberos|passkey|token|key|email|sms|totp|webauthn)\b)"
              r"[\w.@-]{1,40}:(?!\d+(?:$|[\s.,;!?)/])))"
              r"(?P<q1>[^\s/'\":]{4,64})(?=$|[\s.,;!?)]))")
# "creds bob:X", "login root:X": a user and its password joined by a colon after a word for credentials
_CREDS_COLON = lazy(r"(?i)\b(?:creds?|credentials|login)\s+(?:(?:->|→|=>)\s*)?[\w.@-]{1,40}:(?P<v>[^\s/'\"@:]{4,64})" + r"(?=[ \t]*(?:$|\n|[.,;!?)](?:\s|$))|[ \t]+(?:and|but|or|then|so|und|et|y)\b)")
# short asides that give a password with no verb, one pattern each (each asked only when its words are there) (judged as ``_GIVEN``'s: not an English word, the clause's end):
# "guest wifi pw X", "wifi: HomeNet / X", "router admin: admin/X", "SSID HomeNet, key X", "NAS login admin X",
# "the zip is encrypted with X"
# the aside's clause ends: at a mark followed by a space ("Node.js" is no clause's end) or at a conjunction
_ASIDE_END = r"(?=[ \t]*(?:$|\n|[.,;!?)](?:\s|$))|[ \t]+(?:and|but|or|then|so|und|et|y)\b)"
_PW_ASIDE = lazy(r"(?i)(?<![\w-])pw(?:\s*(?:->|→|=>)\s*|\s+)['\"]?(?P<v>[^\s'\"]{4,64})['\"]?" + _ASIDE_END)
# a password in parentheses after its word: ``ssh root@10.0.0.5 (pass X)``, ``(pw: X)``
_PAREN_PASS = lazy(r"(?i)\((?:pass(?:word)?|pw|pwd)\s*[:=]?\s+['\"]?(?P<v>[^\s)'\"]{4,64})['\"]?\s*\)")
# "db pwd X" (the shell's ``pwd`` takes no value): judged as a password's shape (``values.keep``: not "pwd xxsubtype")
_PWD_ASIDE = lazy(r"(?i)(?<![\w$(.'\"-])pwd\s+['\"]?(?P<v>[^\s'\"()\[\]{}<>`]{6,64})['\"]?" + _ASIDE_END)
# "db1 root / X", "staging: sa / X": a host's name, an administrator's account, a slash between spaces, and its
# password (not code: ``self.root / name``, ``(root / c)``, ``np.pi / 2``)
# the accounts a device or a database ships with (``_ADMIN_SLASH``, ``_ACCOUNT_PAIR``)
_ACCOUNTS = ("root", "admin", "administrator", "sa", "postgres", "pi", "ubnt", "guest", "ubuntu", "ec2-user", "oracle", "sys", "system")
_ADMIN_SLASH = lazy(r"(?i)(?:^|(?<=\s))(?:[\w.-]+:?|->|=>|→)[ \t]+(?:" + "|".join(_ACCOUNTS) + r")[ \t]+/[ \t]+['\"]?(?P<v>[^\s/'\"()\[\]{}<>`]{4,64})['\"]?" + _ASIDE_END)
_NET_SLASH = lazy(r"(?i)\b(?:wifi|wi-fi|wlan|router|modem|nas|switch|firewall|admin|creds?|login|e-?mail|mailbox|account|acct)\b[^\n:=]{0,24}[:=]\s*[\w.@-]{1,40}\s?/\s?"
                  r"(?P<v>[^\s/'\"<][^\s/'\"]{3,63})" + _ASIDE_END)
# an account a device ships with and its password in one word, no login word needed: "the router admin is
# admin/X", "NAS: root:X" (X judged by its shape, ``values.keep``: a path, an image's tag or a word is not one)
_PAIR_VALUE = r"(?P<v>[^\s/'\"()\[\]{}<>`=:@,;]{6,64})(?=[\s'\"),;`\]}]|$)"
_DASHED = tuple(a for a in _ACCOUNTS if len(a) >= 4)  # "NAS admin - X" (not "pi - asin…", a formula)
_ACCOUNT_PAIR = lazy(r"(?i)(?:^|(?<=[\s(\[{\"'`,;]))(?:(?:" + "|".join(_ACCOUNTS) + r")[/:]|(?:" + "|".join(_DASHED) + r") [-–—][ \t]+)"
                     + _PAIR_VALUE)
# any account with its password, given with a verb after a device's or a login's word: "the wifi login is bob/X"
_ACCOUNT_IS = lazy(r"(?i)\b(?:wifi|wi-fi|wlan|router|modem|nas|switch|firewall|vpn|login|creds?|credentials|account|acct|admin)\b"
                   r"[^\n:=/]{0,24}?\s(?:is|are|was|were)\s+[\w.@-]{1,40}[/:]" + _PAIR_VALUE)
# "the guest wifi is X": the network named, a password's mark in X ("the wifi is down", "… is HomeNet5G" stay)
_WIFI_IS = lazy(r"(?i)\b(?:wifi|wi-fi|wlan|hotspot) +(?:is|was) +(?:still\s+|now\s+)?['\"]?(?P<v>[^\s'\"]{6,64})(?=[\s'\"]|$)")
_SSID_KEY = lazy(r"(?i)\b(?:ssid|wifi|wi-fi|wlan)\s*:?\s+['\"]?[\w.-]+['\"]?\s*[,;|]?\s+(?:key|pw|password|pass|psk|passphrase)\s*:?\s*"
                 r"(?P<v>[^\s'\"]{4,64})" + _ASIDE_END)
_LOGIN_USER = lazy(r"(?i)\blog\s?in\s+(?:admin|root|user|administrator|pi|ubnt|sa|postgres|guest)\s+(?P<v>[^\s'\"]{4,64})" + _ASIDE_END)
_LOCKED_WITH = lazy(r"(?i)\b(?:encrypted|protected|locked|unlock(?:ed|s)?|decrypt(?:ed|s)?)\s+(?:it\s+|them\s+|this\s+)?(?:with|using)\s+"
                    r"(?:the\s+)?(?:password|passphrase|pw|key)?\s*['\":]?\s*(?P<v>[^\s'\"`]{4,64})['\"]?" + _ASIDE_END)
# ``rclone obscure X``: the password it obscures (judged as given with no verb: "rclone obscure reads …" is a word)
_OBSCURE = lazy(r"(?i)\brclone\s+obscure\s+['\"]?(?P<v>[^\s'\"-][^\s'\"]{3,63})['\"]?(?=\s|$)")
# a constant or setting defined with a name that says secret (PHP's ``define('DB_PASSWORD', 'X')``, WordPress's
# ``define('AUTH_KEY', 'X')``, ``setenv``/``putenv``/``System.setProperty``): the quoted value (judged as a config
# line's quoted password: not words, "put your unique phrase here")
_DEFINE = lazy(r"(?i)\b(?:define|setenv|putenv|setproperty|set_env|setdefault)\s*\(\s*(['\"])[\w.-]*(?:pass(?:word|wd)?|pwd|secret|token"
               r"|_key|salt|auth)[\w.-]*\1\s*,\s*" + _REF + r"(['\"])(?P<v>[^'\"\n]{4,200})\2")
_DEFINE_WORDS = ("define", "setenv", "putenv", "setproperty", "set_env", "setdefault")
_DEFINE_FINDER = Literals(_DEFINE_WORDS)
# a connection's password as the third argument of a call that opens one (``DriverManager.getConnection(url, "u", "X")``,
# ``new mysqli('db', 'u', 'X', 'app')``, ``new PDO($dsn, 'u', 'X')``, ``pg_connect``)
_CONNECT_CALL = lazy(r"(?i)(?:\bgetconnection|\bmysqli_connect|\bmysql_connect|\bnew\s+mysqli|\bnew\s+pdo)\s*\(\s*(?:[^,()\n]+,\s*){2}"
                     + _REF + r"(['\"])(?P<v>[^'\"\n]{3,128})\1")
# a Java properties file in XML, or any element whose key or name says secret: ``<entry key="db.password">X</entry>``,
# ``<param name="password">X</param>``
_XML_ENTRY = lazy(r"(?i)<(?P<tag>entry|param|property|setting|add|item|string|var|value)\s+(?:key|name)=(['\"])[^'\"\n]*(?:pass(?:word|wd)?|pwd|secret"
                  r"|token)[^'\"\n]*\2\s*>" + _REF + r"(?!@)(?P<v>[^<\s]{3,200})</(?P=tag)>")  # (``@string/token``: a resource)
_XML_WORDS = ("<entry", "<param", "<property", "<setting", "<add", "<item", "<string", "<var", "<value")
_XML_FINDER = Literals(_XML_WORDS)
# Windows' ``setx NAME X`` for a name that says secret
_SETX = lazy(r"(?i)\bsetx\s+(?:/m\s+)?\w*(?:pass(?:word|wd)?|pwd|secret|token|key)\w*\s+" + _REF + _VAL)
# a remote desktop's id and its password ("anydesk 123 456 789 / X", "teamviewer id 123 456 789 pw X")
_REMOTE_DESK = lazy(r"(?i)\b(?:anydesk|teamviewer|rustdesk)\b[^\n]{0,40}?(?:\s/|\bpw|\bpass(?:word)?)\s*:?\s+['\"]?"
                    r"(?P<v>[^\s'\"/]{4,64})['\"]?" + _ASIDE_END)
_REMOTE_WORDS = ("anydesk", "teamviewer", "rustdesk")
_REMOTE_FINDER = Literals(_REMOTE_WORDS)
# the words a name ends in when it names a secret (``DB_PASSWORD``, ``apiToken``), and such a name
_SECRET_WORD = r"(?:pass(?:word|wd|phrase)?|pwd|secret|token|api_?key|credential)s?"
_SECRET_NAME = r"[\w.-]*" + _SECRET_WORD
# a PowerShell variable whose name ends in a secret's word: ``Set-Variable -Name DbPassword -Value 'X'``, ``New-Variable apiToken X``
# (not ``tokenCount``, nor a value that is a call or a variable)
_PS_VARIABLE = lazy(r"(?i)\b(?:set|new)-variable\b[^\n|;]*?(?:-name\s+)?['\"]?\w*" + _SECRET_WORD + r"['\"]?\s+(?:-value\s+)?" + _REF + r"(?:'(?P<q1>[^'\n]{3,200})'|\"(?P<q2>[^\"\n]{3,200})\"|(?P<v>[^\s'\"`()|;-][^\s'\"`)|;]{2,}))")
# Windows' ``net use [Z:] \\server\share PASSWORD /user:bob`` (and the password after ``/user:…``); ``*`` asks for one
_NET_USE = lazy(r"(?i)\bnet\s+use\s+(?:[a-z]:\s+|\*\s+)?\\\\\S+\s+(?:/user:\S+\s+)?" + _REF
                + r"(?:\"(?P<q1>[^\"\n]{1,127})\"|(?P<v>[^\s/\"*][^\s\"]{0,127}))")
# a secret's value given in code by the secret's name (the name ends in the word): set by subscript
# (``os.environ['DB_PASSWORD'] = 'X'``, ``config["token"] = "X"``; not ``==``), the default of a lookup
# (``os.getenv('DB_PASSWORD', 'X')``, ``config.get("password", "X")``), after an or-else (``db.password ?: 'X'``,
# ``process.env.API_TOKEN || 'X'``, ``os.getenv("PW") or "X"``); a password given to be hashed or set
# (``bcrypt('X')``, ``Hash::make('X')``, ``user.set_password('X')``)
_SUBSCRIPT_SET = lazy(r"(?i)\[\s*(['\"])" + _SECRET_NAME + r"\1\s*\]\s*(?::=|=(?!=))\s*" + _REF + r"(['\"])(?P<v>[^'\"\n]{3,200})\2")
_LOOKUP_DEFAULT = lazy(r"(?i)\b(?:get|getenv|fetch|getproperty|get_env|env|getordefault|getstring|setdefault)\s*\(\s*(['\"])" + _SECRET_NAME
                       + r"\1\s*,\s*" + _REF + r"(['\"])(?P<v>[^'\"\n]{3,200})\2\s*\)")
# (the name is code's, not a quoted word: "apiKey" or "oauth" is required; `` ?:`` with a space, not TypeScript's
# ``maxTokens?: "x"``; the value ends the expression)
_OR_DEFAULT = lazy(r"(?i)" + _SECRET_WORD + r"(?:['\"]\s*[)\]]|[)\]])?\s*(?:\s\?:|\?\?|\|\||\bor\b)\s*"
                   + _REF + r"(['\"])(?P<v>[^'\"\n]{3,200})\1(?=\s*(?:[;,)\]}]|$))")
_HASHED = lazy(r"(?i)\b(?:bcrypt|hash::make|password_hash|make_password|generate_password_hash|hashpw|hash_password|set_password|setpassword"
               r"|cookieparser|hmac\.new|curlopt_(?:password|proxypassword|keypasswd)\s*,"
               r"|jwt\.(?:sign|encode|verify|decode)\s*\(\s*[^,()\n]{1,80},|createhmac\s*\(\s*['\"][\w-]{2,20}['\"]\s*,)"
               r"\s*\(?\s*b?" + _REF + r"(['\"])(?P<v>[^'\"\n]{3,200})\1")
_SECRET_WORD_FINDER = Literals(("pass", "pwd", "secret", "token", "key", "credential"))
_LOOKUP_WORDS = ("get", "fetch", "env", "setdefault")
_OR_WORDS = ("?:", "??", "||", " or ")
_HASH_WORDS = ("bcrypt", "hash", "make_password", "set_password", "setpassword", "cookieparser", "hmac", "curlopt_", "jwt.")
_LOOKUP_FINDER, _OR_FINDER, _HASH_FINDER = Literals(_LOOKUP_WORDS), Literals(_OR_WORDS), Literals(_HASH_WORDS)
# a network device's shared secret on its config line (Cisco, Juniper): ``radius-server host H key X``, ``ntp
# authentication-key 1 md5 X``, ``snmp-server user U G v3 auth sha X priv aes 128 X``, ``ikev1 pre-shared-key X``,
# ``pre-shared-key ascii-text "X"``, ``plain-text-password-value X``, ``key-string X``
_DEVICE_KEY = lazy(r"(?i)(?:\b(?:radius-server|tacacs-server)\b[^\n]*?\bkey(?:\s+[07](?=\s))?|\bntp\s+authentication-key\s+\d+\s+md5"
                   r"|\bsnmp-server\b[^\n]*?\bauth\s+(?:md5|sha\d*)"
                   r"|(?<![\w-])pre-shared-key(?:\s+(?:ascii-text|ascii|hex|0))?|\bplain-text-password-value|\bkey-string(?:\s+[07](?=\s))?)"
                   r"\s+" + _REF + r"(?:\"(?P<q2>[^\"\n]{3,128})\"|(?P<v>[^\s\"]{3,128}))")
# (an SNMPv3 user's privacy key after its authentication key: a pattern of its own, as both are on one line)
_SNMP_PRIV = lazy(r"(?i)\bsnmp-server\b[^\n]*?\bpriv\s+(?:aes(?:\s+\d+)?|3?des)\s+" + _REF + r"(?:\"(?P<q2>[^\"\n]{3,128})\"|(?P<v>[^\s\"]{3,128}))")
_DEVICE_WORDS = ("radius-server", "tacacs-server", "authentication-key", "snmp-server", "pre-shared-key", "plain-text-password", "key-string")
_DEVICE_FINDER = Literals(_DEVICE_WORDS)
# a token as an https URL's user with no password: ``https://<token>@github.com/`` (git's ``insteadOf``); a digit and a
# letter (not ``ssh://<job id>@host``: a user there is a user)
_URL_TOKEN_USER = lazy(r"(?i)\bhttps?://(?P<v>(?=[\w.~-]*\d)(?=[\w.~-]*[a-z])[\w.~-]{20,256})@[\w-]+(?:\.[\w-]+)+")
# a user and its password side by side after a word that says so: ``creds: bob X``, ``u/p: bob/X``, ``user=bob pw=X``
_CREDS_PAIR = lazy(r"(?i)(?:\bcreds?\s*:\s*[\w.@-]{1,40}\s+|\bu/p\s*:?\s*[\w.@-]{1,40}\s*/\s*|\buser(?:name)?=[\w.@-]{1,40}\s+(?:pw|pwd|pass)=)"
                   r"['\"]?(?P<v>[^\s/'\"]{4,64})['\"]?" + _ASIDE_END)
# a Redis ACL user's password: ``ACL SETUSER app on >X ~* +@all``, a users.acl line ``user default on >X …``
_ACL_USER = lazy(r"(?i)\b(?:acl\s+setuser|user)\s+[\w.@-]{1,64}\s+(?:(?:on|off|reset|resetpass|nopass|allkeys|allcommands"
                 r"|allchannels|nocommands|[~&%]\S*|[+-]@?\S*|#[0-9a-f]{64})\s+)*>(?P<v>[^\s]{4,128})")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("password_command", _CMD),
    ("password_command", _PIPED),
    ("password_command", _EXPECT),
    ("password_command", _FED),
    ("password_command", _TWICE),
    ("password_command", _TWICE_AGAIN),
    ("acl_password", _ACL_USER),  # a kind of its own: its literal, ">", is in much code
    ("password_command", _SETX),
    ("password_command", _PS_VARIABLE),
    ("password_command", _NET_USE),
    ("config_secret", _ORACLE_THIN),
    ("config_secret", _PRE_SHARED),
    ("config_secret", _DEVICE_KEY),
    ("config_secret", _SNMP_PRIV),
    ("config_secret", _URL_TOKEN_USER),
    ("config_secret", _XML_KEY),
    ("config_secret", _CHAP),
    ("config_secret", _MACHINE_KEY),
    ("proxy_password", _HOST_PORT_USER),  # a kind of its own: its literal, ":", is in most texts
    ("config_secret", _XML_ENTRY),
    ("defined_secret", _DEFINE),
    ("code_secret_value", _SUBSCRIPT_SET),
    ("code_secret_value", _LOOKUP_DEFAULT),
    ("code_secret_value", _OR_DEFAULT),
    ("code_secret_value", _HASHED),
    ("config_secret", _PASS_KEY),
    ("config_secret", _PASS_LINE),
    ("config_password_key", _PASS_ASSIGN),  # judged as a config line's password (not a type name: ``pass: number,``)
    ("auth_argument", _CRED_CALL),
    ("auth_argument", _USER_PAIR),
    ("auth_argument", _CONNECT_CALL),
    ("secret_in_prose", _PROSE_KEY),
    ("secret_in_prose", _PROSE_SHORT),
    ("secret_in_prose", _CREDS_SLASHED),
    ("token_in_prose", _USE_TO),
    ("token_in_prose", _SET_TOKEN),
    ("token_in_prose", _COLON_AFTER),
    ("token_in_prose", _NOT_SHARE),
    ("password_named_after", _NAMED_AFTER),
    ("pin_code", _PIN),
    ("recovery_key", _RECOVERY),
    ("recovery_key", _RECOVERY_LETTERS),
    ("otp_seed", _OTP_SEED),
    ("app_password", _APP_PASSWORD),
    ("passphrase_words", _PASSPHRASE_IS),
    ("key_bytes", _KEY_BYTES),
    ("password_given", _GIVEN),
    ("password_given", _PW_ASIDE),
    ("password_given", _PAREN_PASS),
    ("pwd_given", _PWD_ASIDE),
    ("admin_slash_password", _ADMIN_SLASH),  # a kind of its own: its literal, "/", is in most texts
    ("password_given", _PASS_AFTER),
    ("password_given", _REMOTE_DESK),
    ("password_given", _OBSCURE),
    ("users_section_password", _USERS_LINE),
    ("password_given", _NET_SLASH),
    ("password_given", _SSID_KEY),
    ("password_given", _LOGIN_USER),
    ("password_given", _LOCKED_WITH),
    ("password_given", _CREDS_COLON),
    ("password_given", _CREDS_PAIR),
    ("login_pair", _ACCOUNT_PAIR),
    ("login_pair", _ACCOUNT_IS),
    ("network_password", _WIFI_IS),
)
KINDS = frozenset(kind for kind, _ in PATTERNS)

_COMMANDS = ("samba-tool", "dsadd", "dsmod", "neo4j-admin", "db2", "networksetup", "poetry", "mc alias", "mc config", "add-generic-password", "add-internet-password",
             "cqlsh", "twine", "influx",
             "clickhouse-client", "mssql-cli", "nuget", "secret set", "secrets set", "put-parameter", "netsh", "drush", "ssh-keygen", "nmcli", "isql", "pulumi")
_CALL_WORDS = ("auth", "credential", "login", "passw", "bind")
_PROSE_WORDS = ("schlüssel", "schlussel", "wlan-", "wifi", "wi-fi", "clé", "cle ", "clave", "network key", "wpa key", "security key",
                "mật", "mat khau", "sandi", "كلمة", "סיסמ", "पासवर्ड", "รหัสผ่าน")
_OTP_WORDS = ("2fa", "mfa", "totp", "otp", "authenticator", "two-factor", "two factor", "2-step", "two-step")
_KEY_BYTES_WORDS = ("keypair", "key pair", "private", "secret", "id.json", "wallet")
_GIVEN_WORDS = ("use ", "login", "log in", "signin", "sign in", "connect", "ssh in")
_ASIDE_WORDS = ("pw", "ssid", "login", "log in", "crypt", "protected", "locked", "unlock", "wifi", "wi-fi", "wlan", "router", "modem",
                "nas", "switch", "firewall", "admin", "cred")
_OTP_FINDER, _KEY_BYTES_FINDER, _GIVEN_FINDER = Literals(_OTP_WORDS), Literals(_KEY_BYTES_WORDS), Literals(_GIVEN_WORDS)
_NET_WORDS = ("wifi", "wi-fi", "wlan", "router", "modem", "nas", "switch", "firewall", "admin", "cred", "login", "mail", "account", "acct")
_LOCK_WORDS = ("crypt", "protected", "locked", "unlock")
_NET_FINDER, _LOCK_FINDER = Literals(_NET_WORDS), Literals(_LOCK_WORDS)
_ACCOUNT_WORDS = (*_NET_WORDS, "vpn")
_ACCOUNT_FINDER = Literals([f"{a}{sep}" for a in _ACCOUNTS for sep in "/:"] + [f"{a}{sep}" for a in _DASHED for sep in (" -", " –", " —")])
_ACCOUNT_WORD_FINDER = Literals(_ACCOUNT_WORDS)
_PAREN_FINDER = Literals(("(pass", "(pw"))
_SSID_FINDER = Literals(("ssid", "wifi", "wi-fi", "wlan"))
_CRED_FINDER = Literals(("cred", "login"))
_PAIR_WORD_FINDER = Literals(("cred", "u/p", "user"))
_PIN_WORDS = ("pin", "passcode", "code", "codice", "digo", "combination")
_PAIR_WORDS = ("auth:", "auth=", "auth =", "auth :", "curlopt_userpwd", "-a ")
# every match of ``_PROSE_SHORT`` holds one of these (``pw``, ``pwd``, ``passwd`` then a space, a colon or ``is``;
# ``the pw for …``: `` pw `` or `` pass ``)
_SHORT_WORDS = ("pass is", "pass was", "pw:", "pw :", "pw is", "pw was", "pwd", "passwd", " pw ", " pass ", "pw for", "pw of", "pw on", "pw to",
                "pw at")
_CMD_FINDER, _CALL_FINDER, _PROSE_FINDER, _PIN_FINDER = (Literals(_COMMANDS), Literals(_CALL_WORDS), Literals(_PROSE_WORDS),
                                                          Literals(_PIN_WORDS))
_PAIR_FINDER, _SHORT_FINDER = Literals(_PAIR_WORDS), Literals(_SHORT_WORDS)
_PW_FINDER = Literals(("password", "passphrase", "passcode", "pwd"))
_SHARE_FINDER = Literals(("not share", "n't share", "never share", "password", "passphrase",
                 "passcode", "pwd"))  # every match of ``_NOT_SHARE`` holds one
# each kind's literals, looked up in the lower-cased text (``rules.NEEDLES``; merged with ``context``'s there)
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "pin_code": (_PIN_WORDS, True),
    "password_named_after": (("password", "passphrase", "passcode", "pwd"), True),
    "token_in_prose": (("use ", "token", "secret", "key", "credential", "not share", "n't share", "never share"), True),
    "otp_seed": (_OTP_WORDS, True),
    "app_password": (("app password", "app-password", "app-specific password", "app specific password",
                      "application password", "application-specific password"), True),
    "passphrase_words": (("passphrase",), True),
    "key_bytes": (_KEY_BYTES_WORDS, True),
    "password_given": ((*_GIVEN_WORDS, *_ASIDE_WORDS, "pass", *_REMOTE_WORDS, "obscure", "mail", "account", "acct", "u/p", "user"), True),
    "admin_slash_password": (("/ ", "/\t"), True),
    "login_pair": (_ACCOUNT_FINDER.words + _ACCOUNT_WORDS, True),
    "network_password": (("wifi", "wi-fi", "wlan", "hotspot"), True),
    "proxy_password": ((":",), True),
    "acl_password": ((">",), True),
    "users_section_password": (("[users]",), True),
    "pwd_given": (("pwd",), True),
    "defined_secret": (_DEFINE_WORDS, True),
    "code_secret_value": (("pass", "pwd", "secret", "token", "key", "credential", "bcrypt", "hash", "cookieparser", "hmac", "curlopt_", "jwt."), True),
}
# the literals of this module's patterns for the kinds ``context.NEEDLES`` names too (``rules`` joins them)
MORE_NEEDLES: dict[str, tuple[str, ...]] = {
    "password_command": (*_COMMANDS, "|", "expect", "<(", "<<<", "setx", "-variable", "net use", "passwd"),
    "config_secret": ("jdbc:oracle", "pre-shared-key", "isakmp", "<", " * ", "key", "pass", "snmp-server", "://"),
    "auth_argument": (*_CALL_WORDS, *_PAIR_WORDS, "connect", "mysqli", "pdo"),
    "secret_in_prose": (*_PROSE_WORDS, "pass", "pw", "cred", "login", "basic auth", "basic-auth", "u:", "u :"),
    "recovery_key": ("recovery", "backup"),
}
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _CMD: lambda low: _CMD_FINDER.any_in(low) and _CMD.search(low) is not None,  # "db2" inside a hash: no command
    _PIPED: lambda low: "|" in low and ("sudo" in low or "stdin" in low or "-h" in low or "secret" in low),
    _EXPECT: lambda low: "expect" in low and "send" in low,
    _FED: lambda low: ("<(" in low or "<<<" in low) and _FED.search(low) is not None,
    _TWICE: lambda low: "passwd" in low and "echo" in low and _TWICE.search(low) is not None,
    _TWICE_AGAIN: lambda low: "passwd" in low and "echo" in low and _TWICE_AGAIN.search(low) is not None,
    _ORACLE_THIN: lambda low: "jdbc:oracle" in low,
    _PRE_SHARED: lambda low: "pre-shared-key" in low or "isakmp" in low,
    _DEVICE_KEY: lambda low: _DEVICE_FINDER.any_in(low) and _DEVICE_KEY.search(low) is not None,
    _SNMP_PRIV: lambda low: "snmp-server" in low and _SNMP_PRIV.search(low) is not None,
    _URL_TOKEN_USER: lambda low: "://" in low and "@" in low and _URL_TOKEN_USER.search(low) is not None,
    _XML_KEY: lambda low: "<" in low and ("key" in low or "secret" in low or "psk" in low),
    _CHAP: lambda low: " * " in low,
    _MACHINE_KEY: lambda low: "validationkey" in low or "decryptionkey" in low,
    _USERS_LINE: lambda low: "[users]" in low,
    _HOST_PORT_USER: lambda low: ":" in low and _PORT_USER.search(low) is not None and _HOST_PORT_USER.search(low) is not None,
    _PASS_KEY: lambda low: '"pass"' in low or "'pass'" in low,
    _PASS_LINE: lambda low: "pass " in low or "pass\t" in low,
    _PASS_ASSIGN: lambda low: "pass" in low and _PASS_ASSIGN.search(low) is not None,
    _CRED_CALL: lambda low: "(" in low and _CALL_FINDER.any_in(low) and _CRED_CALL_CONTEXT.search(low) is not None,
    _USER_PAIR: lambda low: ":" in low and _PAIR_FINDER.any_in(low),
    _PROSE_KEY: lambda low: not low.isascii() or (_PROSE_FINDER.any_in(low) and _PROSE_KEY.search(low) is not None),
    _PROSE_SHORT: lambda low: _SHORT_FINDER.any_in(low),
    _CREDS_SLASHED: lambda low: " / " in low,
    _USE_TO: lambda low: "use " in low and (" to " in low or " for " in low) and _RUN16.search(low) is not None,
    _SET_TOKEN: lambda low: (" to " in low or " as " in low) and ("token" in low or "secret" in low or "key" in low)
    and _RUN16.search(low) is not None,
    _COLON_AFTER: lambda low: ":" in low and ("token" in low or "secret" in low or "key" in low or "credential" in low)
    and _RUN16.search(low) is not None,
    _NOT_SHARE: lambda low: _SHARE_FINDER.any_in(low) and _RUN16.search(low) is not None,
    _NAMED_AFTER: lambda low: (" is " in low or " was " in low or " be " in low or "(" in low) and _PW_FINDER.any_in(low),
    _PIN: lambda low: _PIN_FINDER.any_in(low) and _PIN.search(low) is not None,  # "pin requests==2.20": no code
    _RECOVERY: lambda low: ("recovery" in low or "backup" in low) and _RECOVERY.search(low) is not None,
    _RECOVERY_LETTERS: lambda low: "codes" in low and ("recovery" in low or "backup" in low) and _RECOVERY_LETTERS.search(low) is not None,
    _OTP_SEED: lambda low: _OTP_FINDER.any_in(low) and _OTP_SEED.search(low) is not None,
    _APP_PASSWORD: lambda low: "password" in low and "app" in low and _APP_PASSWORD.search(low) is not None,
    _PASSPHRASE_IS: lambda low: "passphrase" in low and _PASSPHRASE_IS.search(low) is not None,
    _KEY_BYTES: lambda low: _KEY_BYTES_FINDER.any_in(low) and "[" in low and _KEY_BYTES.search(low) is not None,
    _GIVEN: lambda low: _GIVEN_FINDER.any_in(low) and _GIVEN.search(low) is not None,
    _PW_ASIDE: lambda low: "pw" in low and _PW_ASIDE.search(low) is not None,
    _PAREN_PASS: lambda low: _PAREN_FINDER.any_in(low) and _PAREN_PASS.search(low) is not None,
    _PWD_ASIDE: lambda low: "pwd" in low and _PWD_ASIDE.search(low) is not None,
    _ADMIN_SLASH: lambda low: ("/ " in low or "/\t" in low) and _ADMIN_SLASH.search(low) is not None,
    _PASS_AFTER: lambda low: "pass" in low and _PASS_AFTER.search(low) is not None,
    _NET_SLASH: lambda low: "/" in low and _NET_FINDER.any_in(low) and _NET_SLASH.search(low) is not None,
    _SSID_KEY: lambda low: _SSID_FINDER.any_in(low) and _SSID_KEY.search(low) is not None,
    _REMOTE_DESK: lambda low: _REMOTE_FINDER.any_in(low) and _REMOTE_DESK.search(low) is not None,
    _ACL_USER: lambda low: ">" in low and _ACL_USER.search(low) is not None,
    _OBSCURE: lambda low: "obscure" in low,
    _DEFINE: lambda low: _DEFINE_FINDER.any_in(low) and _DEFINE.search(low) is not None,
    _CONNECT_CALL: lambda low: ("connect" in low or "mysqli" in low or "pdo" in low) and _CONNECT_CALL.search(low) is not None,
    _SUBSCRIPT_SET: lambda low: "[" in low and _SECRET_WORD_FINDER.any_in(low) and _SUBSCRIPT_SET.search(low) is not None,
    _LOOKUP_DEFAULT: lambda low: _LOOKUP_FINDER.any_in(low) and _SECRET_WORD_FINDER.any_in(low) and _LOOKUP_DEFAULT.search(low) is not None,
    _OR_DEFAULT: lambda low: _OR_FINDER.any_in(low) and _SECRET_WORD_FINDER.any_in(low) and _OR_DEFAULT.search(low) is not None,
    _HASHED: lambda low: _HASH_FINDER.any_in(low) and _HASHED.search(low) is not None,
    _XML_ENTRY: lambda low: _XML_FINDER.any_in(low) and _XML_ENTRY.search(low) is not None,
    _SETX: lambda low: "setx" in low,
    _PS_VARIABLE: lambda low: "-variable" in low and _PS_VARIABLE.search(low) is not None,
    _NET_USE: lambda low: "net use" in low and _NET_USE.search(low) is not None,
    _LOGIN_USER: lambda low: ("login" in low or "log in" in low) and _LOGIN_USER.search(low) is not None,
    _LOCKED_WITH: lambda low: _LOCK_FINDER.any_in(low) and _LOCKED_WITH.search(low) is not None,
    _CREDS_COLON: lambda low: ":" in low and _CRED_FINDER.any_in(low) and _CREDS_COLON.search(low) is not None,
    _CREDS_PAIR: lambda low: _PAIR_WORD_FINDER.any_in(low) and _CREDS_PAIR.search(low) is not None,
    _ACCOUNT_PAIR: lambda low: _ACCOUNT_FINDER.any_in(low) and _ACCOUNT_PAIR.search(low) is not None,
    _ACCOUNT_IS: lambda low: ("/" in low or ":" in low) and _ACCOUNT_WORD_FINDER.any_in(low) and _ACCOUNT_IS.search(low) is not None,
    _WIFI_IS: lambda low: (" is " in low or " was " in low) and _WIFI_IS.search(low) is not None,
}
# the words one of which each context needs (``literals.Gated``; ``None``: none such)
CONTEXT_WORDS: dict[re.Pattern[str], tuple[str, ...] | None] = {
    _CMD: _CMD_FINDER.words, _PIPED: ("sudo", "stdin", "-h", "secret"), _EXPECT: ("expect",), _FED: ("<(", "<<<"), _TWICE: ("passwd",), _TWICE_AGAIN: ("passwd",), _ORACLE_THIN: ("jdbc:oracle",),
    _PRE_SHARED: ("pre-shared-key", "isakmp"), _DEVICE_KEY: _DEVICE_WORDS, _SNMP_PRIV: ("snmp-server",), _URL_TOKEN_USER: ("://",), _XML_KEY: ("key", "secret", "psk"), _CHAP: (" * ",), _MACHINE_KEY: ("validationkey", "decryptionkey"),
    _USERS_LINE: ("[users]",), _HOST_PORT_USER: (":",),
    _PASS_KEY: ('"pass"', "'pass'"), _PASS_LINE: ("pass ", "pass\t"), _PASS_ASSIGN: ("pass",), _CRED_CALL: _CALL_FINDER.words, _USER_PAIR: _PAIR_FINDER.words,
    _PROSE_KEY: None, _PROSE_SHORT: _SHORT_FINDER.words, _CREDS_SLASHED: (" / ",),
    _PIN: _PIN_FINDER.words, _RECOVERY: ("recovery", "backup"), _USE_TO: ("use ",), _SET_TOKEN: (" to ", " as "),
    _COLON_AFTER: (":",), _NOT_SHARE: _SHARE_FINDER.words, _NAMED_AFTER: _PW_FINDER.words,
    _RECOVERY_LETTERS: ("codes",), _OTP_SEED: _OTP_FINDER.words, _APP_PASSWORD: ("password",),
    _PASSPHRASE_IS: ("passphrase",), _KEY_BYTES: _KEY_BYTES_FINDER.words, _GIVEN: _GIVEN_FINDER.words,
    _PW_ASIDE: ("pw",), _PAREN_PASS: _PAREN_FINDER.words, _PWD_ASIDE: ("pwd",), _ADMIN_SLASH: ("/ ", "/\t"), _PASS_AFTER: ("pass",), _NET_SLASH: _NET_FINDER.words, _SSID_KEY: _SSID_FINDER.words, _REMOTE_DESK: _REMOTE_FINDER.words, _ACL_USER: (">",), _OBSCURE: ("obscure",), _DEFINE: _DEFINE_FINDER.words, _CONNECT_CALL: ("connect", "mysqli", "pdo"), _XML_ENTRY: _XML_WORDS, _SUBSCRIPT_SET: ("[",), _LOOKUP_DEFAULT: _LOOKUP_WORDS,
    _OR_DEFAULT: _OR_WORDS, _HASHED: _HASH_WORDS,
    _SETX: ("setx",), _PS_VARIABLE: ("-variable",), _NET_USE: ("net use",), _LOGIN_USER: ("login", "log in"),
    _LOCKED_WITH: _LOCK_FINDER.words, _CREDS_COLON: _CRED_FINDER.words, _CREDS_PAIR: _PAIR_WORD_FINDER.words,
    _ACCOUNT_PAIR: _ACCOUNT_FINDER.words, _ACCOUNT_IS: _ACCOUNT_WORDS, _WIFI_IS: (" is ", " was "),
}
TRIGGER_WORDS = (*_COMMANDS, "|", "expect", "<(", "<<<", "[users]", ":", "/ ", "/\t", ">", *_REMOTE_WORDS, "obscure", *_DEFINE_WORDS, "connect", "mysqli", "pdo", *_XML_WORDS, "[", *_LOOKUP_WORDS, *_OR_WORDS, *_HASH_WORDS,
                 "setx", "-variable", "net use", "passwd", *_DEVICE_WORDS, "://", "jdbc:oracle", "pre-shared-key", "isakmp", "<", " * ", "validationkey", "decryptionkey",
                 "pass ", "pass\t", "pass=", "pass:", *_SHORT_WORDS, *_CALL_WORDS, *_PAIR_WORDS, *_PROSE_WORDS, " / ", *_PIN_WORDS, "recovery", "backup", "use ",
                 "token", "secret", "key", "credential", "share", *_OTP_WORDS, "password", "passphrase", *_KEY_BYTES_WORDS, *_GIVEN_WORDS, *_ASIDE_WORDS, "mail", "account", "acct", "u/p", "user",
                 *_ACCOUNT_FINDER.words, "vpn", "hotspot")
# could one of these patterns match the lower-cased text? (``precheck``)
maybe = Maybe(TRIGGER_WORDS, CONTEXTS, CONTEXT_WORDS, outside_ascii=True)
