"""Is the value a rule found in a secret's place a credential, or a word of the sentence?

``rules.find`` asks ``keep(kind, value, text, end)`` of every value a rule of place found. A place
that names a password (``the wifi password is …``, ``password …`` in a config line, the argument
of a user-add command, the second half of an ``auth=`` tuple) gives its value whatever it looks
like: a plain lower-case value there is the password a person dictated (``Das Passwort lautet
sonnenblume``), unless it is a word the sentence goes on with:

- a word of the sentence's grammar or a placeholder (``the password is required``, ``… is then
  hashed``, ``password = none``): the closed classes in ``GRAMMAR`` (articles, pronouns, adverbs,
  auxiliaries, the predicates said of a password, placeholders), in the languages the prose rules
  read, and English inflections (``stored``, ``rotating``, ``weekly``);
- in prose, a value the clause does not end with (``the password is case sensitive``): a dictated
  password ends its clause (the text ends, a punctuation mark or a conjunction follows).
"""

from __future__ import annotations

import re

from commonkeep.secrets.identifier import identifier, names_itself, vocabulary
from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.structure import NEEDLES as _STRUCTURE_KINDS

# the words that say something of a password, or stand in for one, rather than being one
GRAMMAR = frozenset("""
a an the this that these those it its his her their our your my mine yours ours theirs one ones some any none
no not never always also still then now only just even too very quite rather already again often usually
is are was were be been being has have had do does did will would shall should can could may might must
and or but so if then than as at by for from in into of on onto to with without via per about after before
during until since upon over under through which what who whom whose where when why how there here
required mandatory optional needed necessary incorrect correct wrong right invalid valid expired empty blank
missing unknown known unset set same different new old current default temporary permanent random unique
long short weak strong secure insecure safe unsafe simple easy hard complex good bad fine okay ok true false
null nil none undefined void hidden masked visible shown plain plaintext cleartext encrypted unencrypted
hashed salted stored saved sent kept given taken written read made done changed reset rotated updated
generated printed logged cached shared reused leaked compromised lost forgotten locked unlocked disabled
enabled case sensitive insensitive ignored accepted rejected checked verified encoded decoded
changeme password passwd passphrase secret token key pass pwd example sample placeholder dummy test demo
foo bar baz qux xxx todo tbd fixme redacted prompt ask asked env auto automatic
der die das ein eine einen nicht kein keine ist sind war wird wurde muss kann noch schon auch nur sehr zu
falsch richtig erforderlich notwendig leer abgelaufen ungültig gültig geheim gespeichert geändert
le la les un une des est sont était pas ne jamais toujours aussi requis obligatoire incorrect vide expiré
invalide valide secret enregistré modifié
el los las uno una es son era no nunca siempre también obligatoria requerida incorrecta vacía caducada
inválida válida guardada cambiada
o os um uma é são era não nunca sempre também obrigatória incorreta inválida vazia expirada alterada
il lo gli uno è sono era non mai sempre anche obbligatoria errata sbagliata vuota scaduta
het een niet nooit altijd ook verplicht onjuist fout leeg ongeldig geldig verlopen
este nu prea obligatorie necesara incorecta corecta gresita invalida valida expirata goala noua veche sigura slaba
puternica schimbata salvata ascunsa temporara implicita scurta lunga simpla complexa ceruta aceeasi
massa obligatoria incorrecta correcta curta llarga nova antiga segura feble buida caducada necessaria requerida canviada desada
below above attached inside outside elsewhere somewhere nowhere everywhere gone here there ready available
unavailable identical similar obvious trivial guessable predictable fixed broken enough great perfect useless
nonsense gibberish absent present separate personal private public local remote global individual bogus
irrelevant unclear weird strange mine ours yours theirs elsewhere
weg hier unten oben sicher unsicher schwach stark neu alt ici faible fort nouveau aquí abajo débil segura nueva
only usually currently really actually likely probably daily weekly monthly yearly hourly nightly quarterly
automatically regularly periodically securely safely properly correctly incorrectly randomly manually locally
remotely separately temporarily permanently simply exactly rarely frequently silently immediately
feil riktig korrekt forkert rigtig endret ændret glemt utløpt udløbet lagret gemt hemmelig sterk stærk svak svag ny gammel
vaihdettu väärä oikea unohtunut vanhentunut tallennettu salainen vahva heikko uusi vanha liian lyhyt pitkä
nepareiza pareiza mainīta aizmirsta neteisingas teisingas pakeistas pamirštas mali tama salah benar betul diubah lupa
грешна правилна сменена погрешна исправна промењена ошибочный неверный
rahasia kuat lemah baru lama kosong tersimpan kedaluwarsa wajib sai đúng mới cũ špatně správně tajné nové staré prázdné
λάθος σωστό μυστικό νέο παλιό κενό fel rätt hemligt nytt gammalt tomt ändrat glömt rossz helyes titkos új régi üres
""".split())  # noqa: SIM905 - words, as prose has them
# English inflections: a participle, a gerund, an adjective or a noun of state (not ``-ly``: a butterfly,
# a family; the adverbs said of a password are in ``GRAMMAR``)
_INFLECTED = lazy(r"[a-z]{2,}(?:ed|ing|able|ible|tion|sion|ive|ous|ful|less|ness|ment)")
# what ends a dictated password's clause: the end, punctuation, a line break, or a conjunction
_CLAUSE_END = lazy(r"(?i)[ \t]*(?:$|[\n.,;:!?)\]}\"'»”]|[ \t]+(?:and|but|or|so|for|on|please|thanks|now|today|yesterday|tomorrow"
                   r"|again|too|also|btw|und|oder|et|ou|y|e|en|и|или)\b|です|でした|だ|。|、|，|！|？|입니다|이에요|예요|이다)")

# what says the value is the password, right before it (``… is``, ``… lautet``, ``password:``, ``set … to``), or
# after it (``use … as the password``); without it the word goes on the noun (``password database``)
_SAID = lazy(r"(?i)(?:\b(?:is|was|are|es|est|é|és|este|είναι|è|ist|lautet|to|as|jest|je|är|er|on|now|be|been|[şs]ifresi|[şs]ifrem|parolas[ıi]|là|adalah"
             r"|sandinya|هي|היא|है)|[:=：/?]|->|→|—|–|(?<=\s)-|は|是|为|為|คือ|는|은)\s*[\"'“«]?$")
_AS = lazy(r"[\"'”»]?\s+as\b")
# keys made to be published (a web page holds them): Stripe's publishable keys, Mapbox's public tokens
_PUBLISHABLE = lazy(r"pk_(?:live|test)_|pk\.eyJ")
_NAMED_PARTS = lazy(r"[a-z0-9]+(?:-[a-z0-9]+)+")  # lower-case parts joined by hyphens
COMPOUND = lazy(r"[a-z]{2,}-[a-z]{2,}")  # an English compound ("case-sensitive", "write-only"), not a passphrase
CHOICE = lazy(r"[a-z]{2,}(?:/[a-z]{2,})+")  # words offered as a choice ("and/or", "read/write")
_LETTERS = lazy(r"[A-Za-z]+")
# kinds found by their place whose value must still not be a plain word, a number or a file name
_LOOSE_PLACE = {"connection_string", "config_password"}
# kinds whose unquoted value may be a call's argument (``f(key=name, …)``): a name there names a value
_ARGUMENT_KINDS = {*_LOOSE_PLACE, "password_assignment"}
_PLAIN = lazy(r"[a-z]+|[0-9.:]+|[\w.-]+\.(?:md|txt|json|ya?ml|toml|ini|conf|cfg|pem|key|log|py|sh|env)")
_SQL = lazy(r"\bIDENTIFIED\b|(?i:\b(?:create|alter|grant)\s+(?:user|role|login)\b)")  # the statement around ``identified by``
_HEX = lazy(r"[0-9A-F]{16,}")  # upper-case hex is a key, not an ``ENV_NAME``
_PORTISH = lazy(r"[\d.:]+(?:/(?:tcp|udp))?|no:\S+")  # ``-p 8080:80``, ``-p 127.0.0.1:5432:5432``; pytest's ``-p no:cacheprovider``
_TYPE_NAMES = frozenset(("bool", "boolean", "str", "string", "int", "integer", "float", "number", "bytes", "bytearray", "dict",
                         "list", "tuple", "set", "any", "object", "none", "null", "optional", "secretstr", "text", "varchar", "char"))
_FILE = lazy(r"[\w.-]+\.(?:txt|json|ya?ml|toml|ini|conf|cfg|pem|key|log|py|sh|env|csv|sql|xml|p12|pfx|jks|gpg|kdbx)")
_HOSTNAME = lazy(r"(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|cloud|co|uk|de|fr|local|internal|example)")
# a value with a letter, a digit and a mark ("kqzm41#"): no word, version, path or address has all three
_MARKED = lazy(r"(?=[^\n]*[A-Za-z])(?=[^\n]*[0-9])(?=[^\n]*[!#%&*$^~?])[^\s]{6,}")
# the same with "+" and "@" too, for a value no rule of place reads across those (``login_pair``, ``network_password``)
_PW_MARKED = lazy(r"(?=[^\n]*[A-Za-z])(?=[^\n]*[0-9])(?=[^\n]*[!#%&*$^~?+@])[^\s]{6,}")
# cases mixed and a digit before a letter: "Tr0ub4dor3", not a word and a year ("Dashboard2024")
_MIXED = lazy(r"(?=[^\n]*[a-z])(?=[^\n]*[A-Z])(?=[^\n]*[0-9][A-Za-z])[^\s]{8,}")
# a text that speaks of a credential or of a device that has one ("I set it to X (the router one)")
_CREDENTIAL_TEXT = lazy(r"(?i)\b(?:passwords?|passphrase|passcode|pwd|pw|pass|pin|creds?|credentials?|log ?in|sign ?in|wifi|wi-fi"
                        r"|wlan|router|modem|nas|vpn|account|admin|keystore|vault)\b")
CONTEXT_LOOSE = frozenset({"password_command", "config_secret", "auth_argument", "secret_in_prose", "proxy_password", "acl_password"})
CODE_NAME = lazy(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+|[A-Z][A-Z0-9_]{2,}|[a-z]+_[a-z_]+")  # ``settings.KEY``, ``ENV_NAME``, ``snake_case``


def strong(value: str) -> bool:
    """A prose value that looks like a password: two character classes or more, not one word."""
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^\w\s]"))
    plain = value.rstrip(".,;:!?)")
    if plain.isalpha() or COMPOUND.fullmatch(plain) or CHOICE.fullmatch(plain):
        return False
    return classes >= 2 and len(plain) >= 6


def _random_part(value: str) -> bool:
    """A part of 20 characters or more that mixes letters and digits (``abcd.efgh.k3j2…``: a token, not ``module.attr``)."""
    return any(len(p) >= 20 and not p.isalpha() and not p.isdigit() for p in re.split(r"[._]", value))


_ENDINGS = ("ing", "ed", "able", "ible", "tion", "sion", "ive", "ous", "ful", "less", "ness", "ment")
_READS = lazy(r"(?:[aeiouy]|[b-df-hj-np-tv-xz]{1,3}(?=[aeiouy]|$))+")  # no run of four consonants


def _reads(low: str) -> bool:
    """Lower-case letters a reader says as a word: no four consonants in a row, a vowel in every four letters."""
    return _READS.fullmatch(low) is not None and 4 * sum(c in "aeiouy" for c in low) >= len(low)


def inflected(low: str) -> bool:
    """Whether ``low`` is an English word with an inflection or suffix ("rotated", "required",
    "unencrypted"): the ending, and the word or its stem a word of the vocabulary, or a stem that
    reads as one (a vowel in every four letters, no four consonants in a row: "encrypt", "tokeniz").
    A random password that happens to end so ("xkqvtred", "bqzrmting") is no word: about two in
    three such stems fail that reading."""
    if not _INFLECTED.fullmatch(low):
        return False
    words = vocabulary()
    if low in words:
        return True
    for end in _ENDINGS:
        if low.endswith(end):
            stem = low[: -len(end)]
            if stem in words or stem + "e" in words or (stem[-1:] == stem[-2:-1] and stem[:-1] in words):
                return True
            return _reads(stem)
    return False


def dictated(value: str, text: str = "", end: int = -1, *, prose: bool = True) -> bool:
    """Whether a plain lower-case ``value`` in a password's place is the password (see the module
    doc): not a word of ``GRAMMAR`` nor an English inflection, and in ``prose`` (``end``: where the
    value ends in ``text``) the last word of its clause."""
    v = value.rstrip(".,;:!?)")
    if v.isdigit() and v.isascii():  # a number is a password dictated in prose (4+ digits), in a config line (6+)
        if len(v) < (4 if prose else 6):
            return False
    elif not 4 <= len(v) <= 64 or _LETTERS.fullmatch(v) is None or v.lower() in GRAMMAR or inflected(v.lower()):
        return False
    if not prose or end < 0:
        return True
    start = end - len(v)
    said = _SAID.search(text, max(0, start - 24), start) is not None or _AS.match(text, end) is not None
    return said and _CLAUSE_END.match(text, end) is not None


def unsayable(v: str) -> bool:
    """Letters no reader says as a word, in a password's place with no verb ("my password vizmyzwsaqhw",
    "username bob password …"): eight or more, ``given`` (no word of English or of the grammar, no
    name), and not readable (four consonants in a row, or fewer than one vowel in four letters)."""
    low = v.lower()
    return v.isalpha() and v.isascii() and len(v) >= 8 and given(v) and not _reads(low)


def given(v: str) -> bool:
    """Whether a value given with no verb ("use password X for …", "login with admin/X", "-u U -p X") is a
    password: not a word of English or of the grammar, an acronym, a code name, a reference, a port or a short word."""
    low = v.lower()
    return not (low in GRAMMAR or low in vocabulary() or _INFLECTED.fullmatch(low) or (v.isupper() and len(v) <= 6)
                or CODE_NAME.fullmatch(v) or names_itself(v) or (v.isalpha() and len(v) < 8) or _PORTISH.fullmatch(v)  # "google/github"
                or "://" in v or _FILE.fullmatch(v) or COMPOUND.fullmatch(low) or CHOICE.fullmatch(low) or "," in v
                or _NAMED_PARTS.fullmatch(low)  # "aes256-cbc", "rsa-pkcs1": an algorithm's name
                or " " in v.strip())  # a message ("all components found"), not a password


def _words_phrase(value: str) -> bool:
    """Words that make a passphrase, not a clause: three or more, none after the first a word of the
    grammar or an inflected one (the first may be a word of the grammar, "correct horse battery staple", in four)."""
    words = value.lower().split()
    return len(words) >= 3 and not any(w in GRAMMAR or _INFLECTED.fullmatch(w) for w in words[1:]) \
        and not _INFLECTED.fullmatch(words[0]) and (words[0] not in GRAMMAR or len(words) >= 4)


# a mysql client's command up to a ``-p`` then white space, at the end of what is searched (the value's start)
_MYSQL_PROMPT = lazy(r"(?i)\b(?:mysql|mariadb|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck)\b[^\n|;&]*?\s-p[ \t]+$")
_HOME = lazy(r"~(?:[\w.-]*/|$)")  # a path from a home folder (``~``, ``~/x``, ``~bob/x``), not a password that starts with ``~``
_SECTION = lazy(r"(?m)^[ \t]*\[([^\]\n]{1,64})\][ \t]*\r?$")  # an INI section's header


# a value that starts with ``%`` is a reference or a format only so: ``%APPDATA%``, ``%(pw)s``, ``%s``, ``%{x}``
# (a password may start with ``%``: "%92JrcjmQZQ6")
_PERCENT_REF = lazy(r"%(?:\w+%|\(|\{|[sdrifx](?![A-Za-z0-9]))")


# a name in code (a path of names, or one name with no digit), and a name called: what an assignment holds
# when the value is computed, not written. A callee may also be one name with an ``_`` or a word of four
# letters in it (``b64decode``, ``utf8_to_utf16``), and its ``(`` opens arguments; "Xk29dm(Q8aLp3" and
# "Hunter2(!)x" are passwords with a parenthesis in them
_NAME = r"(?:[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+|[A-Za-z_$][A-Za-z_$]*)"
_NAME_PATH = lazy(_NAME)
_CALLEE = lazy(r"(?:" + _NAME + r"|[A-Za-z_$][\w$]*?(?:_|[a-z]{4})[\w$]*)")
_OPENS = r"\((?:[\w\"'`()\[{*$@&/-]|$)"  # a call's "(" and what follows it: an argument, or its end
_ARGUMENTS = lazy(_OPENS)
_CODE_LITERALS = frozenset(("undefined", "null", "none", "nil", "true", "false", "nan", "nullptr", "typeof", "instanceof", "await", "void"))
# what follows a name that is an operand, not a value: a comparison, a test, a ternary
_EXPR_NEXT = lazy(r"\s*(?:===?|!==?|&&|\|\||\?\?|\?(?=\s))")
_CALLED = lazy(r"(?:new\s+)?" + _CALLEE.pattern + r"(?=" + _OPENS + r")")


def keep(kind: str, value: str, text: str = "", end: int = -1) -> bool:
    """False when a rule of place or structure found a value that is not a credential after all
    (``end``: where ``value`` ends in ``text``, for the clause of a dictated one)."""
    if names_itself(value) or _PUBLISHABLE.match(value.strip("\"'")):
        return False
    if _CALLED.match(value) or (0 <= end < len(text) and _ARGUMENTS.match(text, end) and _CALLEE.fullmatch(value)):
        return False  # code calling something (``password = Prompt.ask(``, ``token = decode(raw)``): the value is computed
    if 0 <= end <= len(text) and _NAME_PATH.fullmatch(value) and _EXPR_NEXT.match(text, end):
        return False  # ``secret = storedId === flowId ? …``, ``token: oauthToken ? a : b``: an operand
    if value.strip("\"'`;,)").lower() in _CODE_LITERALS:
        return False  # ``token : undefined``, ``password = None``: no value
    if "…" in value or "..." in value:
        shown = value.replace("…", "").replace("...", "").strip("`'\"()[]{}.,;:")
        if len(shown) < 8:
            return False  # a value the writer elided ("token=Xq3…"), not the value
    if kind == "password_short_flag":  # any command: only a value with three character classes
        classes = sum(bool(re.search(c, value)) for c in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^\w.\-]"))
        return classes >= 3 and "[REDACTED" not in value
    if kind == "sql_password" and _SQL.search(text, 0, max(end, 0)) is None:
        if _LETTERS.fullmatch(value):
            return False  # "users are identified by 'name'": a word quoted in English, not SQL
        if " " in value.strip():
            return _words_phrase(value)  # 'use the password "from the vault"': a clause, not a passphrase
    if kind in ("password_aside", "password_set"):  # given beside its place (``asides.py``): one a person gives, a password's shape
        v = value.strip()
        if not (given(v) and strong(v)) or "[REDACTED" in v:
            return False  # and "I set it to X": a mark no word, version or path has, or a text about a credential
        return kind == "password_aside" or _MARKED.fullmatch(v) is not None or _CREDENTIAL_TEXT.search(text) is not None
    if kind == "password_named_after":  # "X is the password.": X, unless a word of the grammar ("This is the password.")
        core = value.strip().rstrip(".,;:!?)")
        return strong(core) or ((_LETTERS.fullmatch(core) is not None or core.isdigit()) and dictated(core, prose=False))
    if kind == "recovery_key" and value[:1].isalpha() and value.replace(",", " ").replace(";", " ").replace("-", " ").replace(" ", "").isalpha():
        codes = value.replace(",", " ").replace(";", " ").replace("-", " ").lower().split()  # letters only: codes, unless they are words
        return sum(c not in vocabulary() for c in codes) * 3 >= len(codes) * 2
    if kind == "passphrase_words":  # "the passphrase is velvet ember canal quartz", not "… is stored in the vault"
        return _words_phrase(value)
    if kind == "users_section_password":  # a line of svnserve's ``[users]`` section, not of another one
        headers = _SECTION.findall(text, 0, max(end, 0))
        return bool(headers) and headers[-1].strip().lower() == "users" and given(value)
    if kind == "pwd_given":  # "db pwd X": a password's shape (the shell's ``pwd`` in a list of names is a word)
        v = value.strip().rstrip(".,;:!?)")
        return given(v) and (strong(v) or unsayable(v))
    if kind in ("network_password", "login_pair"):  # "the guest wifi is X", "admin/X": no word, name or path, and a
        v = value.strip().rstrip(".,;:)")  # password's mark; an account's also cases and digits mixed ("Tr0ub4dor3")
        return given(v.rstrip("!?")) and (_PW_MARKED.fullmatch(v) is not None or (kind == "login_pair" and _MIXED.fullmatch(v) is not None))
    if kind in ("password_given", "admin_slash_password"):  # "use password X for …": X, unless a word ("… managers for", "email/password") or a name
        v = value.strip().rstrip(".,;:!?)")
        return _words_phrase(v) if " " in v else given(v)  # quoted words: "use the passphrase 'correct horse battery staple' for …"
    if kind in ("password_flag_pair", "password_option", "config_password_key", "config_password_quoted", "defined_secret"):  # a command's or config line's password: not a port, a
        v = value.strip().rstrip(".,;)")  # path, a URL, a flag, a reference or a word of the grammar
        if _PORTISH.fullmatch(v) or "://" in v or v.startswith(("/", "./", "@", "-", "$")) or _PERCENT_REF.match(v) or _HOME.match(v) \
                or "[REDACTED" in v:
            return False
        if v.isdigit():
            return len(v) >= 6
        if v.rstrip(",").lower() in _TYPE_NAMES:  # a signature's or a schema's type ("allow_change_password: bool,")
            return False
        if kind in ("password_flag_pair", "config_password_quoted", "defined_secret") and not given(v):
            return False
        if kind == "password_flag_pair" and end >= 0 and _MYSQL_PROMPT.search(text, 0, max(0, end - len(value))):
            # mysql's ``-p`` then a space prompts for the password: the word after it is the database
            # (``mysql -u root -p tailwindcss``), unless it has three kinds of character as a password does
            return sum(bool(re.search(c, v)) for c in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^\w.\-]")) >= 3
        return not (v.lower() in GRAMMAR or _INFLECTED.fullmatch(v.lower()) or CODE_NAME.fullmatch(v) and not _HEX.fullmatch(v)
                    or names_itself(v) or _FILE.fullmatch(v))
    if kind == "code_secret_value":  # a value written in code for a secret's name: a password's shape, not a name
        v = value.strip()  # (``contextWindow``), a path, a phrase, an aside ("(uncapped)") or a provider's name
        if " " in v or "/" in v or v.startswith(("(", "$", "@", "-")) or _PERCENT_REF.match(v) or "[REDACTED" in v:
            return False
        if CODE_NAME.fullmatch(v) and not _random_part(v) and not any(c.isdigit() for c in v):
            return False
        return given(v) and strong(v)
    if kind == "token_after_name":  # "secret_access_key S": S only when it has a token's shape, not a name's
        v = value.strip()
        return not identifier(v) and not names_itself(v) and (CODE_NAME.fullmatch(v) is None or _random_part(v)) \
            and (strong(v) or (v.isalpha() and len(v) >= 20)) and "[REDACTED" not in v
    if kind == "token_in_prose":  # a token given in prose: it must look like one, 16 characters or more
        v = value.strip().rstrip(".,;:!?)")
        code = CODE_NAME.fullmatch(v) is not None and not _random_part(v)
        return (strong(v) and len(v) >= 16 and not code and not names_itself(v)) or (len(v) >= 20 and v.isalpha() and v.isascii())
    if kind in CONTEXT_LOOSE:  # a place, so any shape; but not a word of the sentence, a number, a file name or a code-like name
        v = value.strip()
        if len(v) < 4 or "[REDACTED" in v or (CODE_NAME.fullmatch(v) and not _HEX.fullmatch(v) and not _random_part(v)) \
                or (kind == "auth_argument" and _HOSTNAME.fullmatch(v)):
            return False
        core = v.rstrip(".,;:!?)")
        if len(core) >= 20 and core.isalpha() and core.isascii():
            return True  # twenty letters in a secret's place: random, not a word
        if _PLAIN.fullmatch(core) or _LETTERS.fullmatch(core):
            at = end - (len(value) - len(value.rstrip(".,;:!?)"))) if end >= 0 else end
            return dictated(core, text, at, prose=kind == "secret_in_prose") or (
                kind == "secret_in_prose" and at >= 0 and unsayable(core) and _CLAUSE_END.match(text, at) is not None)
        return kind != "secret_in_prose" or strong(v) or len(v.split()) >= 3
    if kind in _ARGUMENT_KINDS and text[end : end + 1] in (",", ")") and CODE_NAME.fullmatch(value):
        return False  # a call's argument names a value: ``Error(code=INTERNAL_ERROR, …)``, ``f(api_key=settings.API_KEY)``
    if kind in _STRUCTURE_KINDS or kind in _LOOSE_PLACE:
        if value.isdigit() or not value.strip() or "[REDACTED" in value:
            return False
        if kind in _LOOSE_PLACE and (_PLAIN.fullmatch(value) or (value.istitle() and value.isalpha()) or len(value) < 4):
            return False  # a word ("auth: Authentication to use …"), not a password
        if kind == "password_flag" and CODE_NAME.fullmatch(value):
            return False  # ``--secrets HF_TOKEN``: the name of the secret, not its value
    return True
