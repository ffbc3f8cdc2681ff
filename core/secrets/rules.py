"""Where the secrets are in a text: ``find(text)`` returns the spans to redact, by kind.

The rules run most specific first over one text; a span a rule claimed is masked (same length,
so offsets hold) before the next rule runs, so a URL password is not claimed again as an
assignment. After the rules: runs of hex or base64 that *decode* to a secret (or to
``user:password``) are claimed whole, then long random-looking runs (``high_entropy``).

Measured on the generated corpus (``commonkeep bench secrets``), Yelp's detect-secrets
keyword, entropy and Basic-auth plugins found fewer of these and changed more benign text than
these rules (``docs/security.md``), so the rules are ours; the look-alike letters are folded with
the maintained Unicode confusables table (``confusable-homoglyphs``), see ``fold.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets import asides, flags, named, places, provider, public, rule_net, services, structure
from commonkeep.secrets import context as placed
from commonkeep.secrets.decoding import _decoded
from commonkeep.secrets.lazy import lazy, source
from commonkeep.secrets.literals import Wanted
from commonkeep.secrets.randomness import random_head, random_parts, shannon_entropy
from commonkeep.secrets.runs import shape_runs
from commonkeep.secrets.spans import MASK, Span, claim, mask, overlaps, value_span
from commonkeep.secrets.values import dictated, keep, strong

_ASSIGN_NAMES = (
    r"(?:(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|account[_-]?key"
    r"|auth[_-]?key|private[_-]?key|client[_-]?secret|credentials?|sas[_-]?token|shared[_-]?access[_-]?key))"
)
# values that name where a secret comes from rather than being one (code and config templates)
_PLACEHOLDER = (
    r"\$|\{\{|<|%\(|%\w+%|os\.environ|os\.getenv|process\.env|getenv|env\.|None\b|null\b|true\b|false\b|\*{3,}"
    r"|x{6,}|changeme\b|required\b|\[REDACTED"
)
# Where a token may start: not inside a longer word or number, but right after ``_`` too
# (``key_AKIA…``, ``token_ghp_…``), which ``\b`` would miss (``_`` is a word character).
_START = r"(?<![A-Za-z0-9])"
_NOT_MARKER = r"(?!\[REDACTED|…|\.\.\.)"
# a URL password that only names one (``scheme://user:pass@host`` in documentation)
_PLACEHOLDER_PW = lazy(r"(?i)pass|password|passwd|pwd|pw|secret|token|x{3,}|\*{3,}|<[^>]*>")

# The words for "password" in prose, in the languages the injection rules score too.
_PW_WORDS = (r"(?:password|passphrase|passcode|pass\s?word|pass\s?phrase|pwd|mot de passe|contraseña|passwort|kennwort"
             r"|senha|пароль|密码|パスワード)")
_FILLER = (r"(?:\s*\((?:for|of|on|at|in|to|from|the|my|our)\s[^()\n]{1,60}\))?(?:\s+" + named.PREP + r"\s+(?:the\s+|my\s+|our\s+)?" + named.NOT_VERB + r"[\w.@/:-]+(?:\s+" + named.NOT_VERB
           + r"[\w.'’-]+){0,4}?|\s+(?:i|we|you|they)\s+" + named.NOT_VERB + r"[\w'’-]+(?:\s+" + named.NOT_VERB + r"[\w.'’-]+){0,8}?)?")
_VERB = (r"(?:was changed to|was reset to|was set to|changed to|reset to|set to|will be|would be|has been|is now|now is|is still|became"
         r"|(?:was\s+|got\s+)?changed\s+from|(?:should|must|shall|has\s+to)\s+be|is\s*:"
         r"|lautet:?|c'est|is|was|are|ist|est|es|é|=|:|->|→|—|–|-(?=\s)|\?"
         r"|,(?=\s+[^\s,()\[\]{}*&][^\s,]{3,},\s))")  # (an apposition in prose: "the new password, X, works now")

_BEARER = lazy(r"(?i)\b(?:bearer|basic)\b\s*[:=]?\s+" + _NOT_MARKER
                     + r"(?P<v>(?=[A-Za-z0-9._~+/=-]*[0-9A-Z+/=])[A-Za-z0-9._~+/=-]{16,})")
# ``scheme://user:password@host``, the user may be empty (``redis://:pw@host``) and the password may
# hold ``@`` (the host starts after the last one)
_URL = lazy(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,20}://[^\s:/@\[\]]{0,64}:" + _NOT_MARKER
                  + r"(?P<v>[^\s/]{1,256})@(?=[^\s@/]*[A-Za-z0-9])")
# a quoted value goes whole, to its closing quote, whatever it holds (a passphrase of words, a ``#``)
_ASSIGNMENT = lazy(r"(?i)" + _ASSIGN_NAMES + r"[\"']?\s*[:=]\s*(?:!!str\s+)?" + _NOT_MARKER + r"(?!" + _PLACEHOLDER + r"|[\"'](?:" + _PLACEHOLDER
                   + r"))(?:\"(?P<q2>[^\"\n]{4,200})\"|'(?P<q1>[^'\n]{4,200})'|[\"']?(?P<v>[^\s\"',;]{6,}))")
_URL_CONTEXT = lazy(r"://[^\s/@]*:[^\s/]*@")
_BEARER_CONTEXT = lazy(r"\b(?:bearer|basic)\b\s*[:=]?\s+[a-z0-9._~+/=-]{16}")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private_key",
        lazy(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"
        ),
    ),
    *structure.PATTERNS,
    *placed.EARLY,  # a passphrase of words (before the assignment rule takes its first word)
    ("anthropic_key", lazy(_START + r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}")),
    ("openai_key", lazy(_START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}")),
    ("github_token", lazy(_START + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("gitlab_runner_token", lazy(_START + r"glrtr?-[A-Za-z0-9_-]{20,}")),
    # Heroku's prefixed API keys: ``HRKU-`` and a UUID, or 60-odd token characters
    ("heroku_key", lazy(_START + r"HRKU-(?:[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}|[A-Za-z0-9_-]{40,})")),
    ("gitlab_token", lazy(_START + r"gl(?:pat|dt|ptt|ft|imt|oas|soat|cbt|agent)-[A-Za-z0-9_-]{20,}")),
    ("slack_token", lazy(_START + r"xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("slack_webhook", lazy(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}")),
    ("discord_webhook", lazy(r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/\d{15,21}/[\w-]{40,}")),
    ("mailchimp_key", lazy(r"(?<![0-9A-Za-z])[0-9a-f]{32}-us\d{1,2}(?![0-9A-Za-z])")),
    ("braintree_token", lazy(r"access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}")),
    ("launchdarkly_key", lazy(_START + r"(?:sdk|api|mob)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9A-Za-z-])")),
    ("fcm_server_key", lazy(_START + r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}")),
    ("asana_token", lazy(r"(?<![\w/])[012]/\d{10,20}(?:/\d{10,20})?:[0-9a-f]{32}(?![0-9A-Za-z])")),
    ("stripe_key", lazy(_START + r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("google_api_key", lazy(_START + r"AIza[0-9A-Za-z_-]{35}")),
    ("aws_access_key", lazy(_START + r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}\b")),
    ("huggingface_token", lazy(_START + r"hf_[A-Za-z0-9]{30,}")),
    ("npm_token", lazy(_START + r"npm_[A-Za-z0-9]{36}\b")),
    ("pypi_token", lazy(_START + r"pypi-AgE[A-Za-z0-9_-]{40,}")),
    ("sendgrid_key", lazy(_START + r"SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}")),
    ("twilio_key", lazy(_START + r"SK[0-9a-fA-F]{32}\b")),
    ("telegram_bot_token", lazy(r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{30,}")),
    ("jwt", lazy(_START + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    # ``Bearer …``, ``Basic …`` and ``Basic: …`` (a value that is not one plain lower-case word)
    ("bearer_token", _BEARER),
    # ``scheme://user:password@host``, the user may be empty (``redis://:pw@host``) and the
    # password may hold ``@`` (the host starts after the last one)
    ("password_in_url", _URL),
    ("password_assignment", _ASSIGNMENT),
    # prose: "the admin password is …", "password for the NAS was changed to …"
    (
        "password_in_prose",
        lazy(r"(?i)(?=[pmcksп密パ])\b" + _PW_WORDS + _FILLER + r"\s*" + _VERB + r"(?:\s+(?:still|now|currently|probably|just))?\s*[\"'“«]?" + _NOT_MARKER + r"(?!" + _PLACEHOLDER + r")"
                   + r"(?P<v>[^\s\"'”»]{4,})"),
    ),
    # the same values in the places these do not read: other operators and names, markup, quoted prose, codes
    *named.PATTERNS,
    # a provider-style token of any provider: a short prefix word, then 32+ hex digits (``shpat_…``, ``lsv2_pt_…``)
    ("prefixed_hex_token", lazy(r"(?<![A-Za-z0-9_.-])(?!(?:sha\d*|md5|commit|blob|tree|digest|hash|uuid|id|object|cache|etag"
                                      r"|rev|ref|build|run|trace|span|session|request|req|file|tmp|temp)[_-])"
                                      r"[A-Za-z][A-Za-z0-9]{1,11}[_-](?:[A-Za-z0-9]{1,8}[_-]){0,2}(?P<v>[0-9a-f]{32,}(?:[_-][0-9a-f]{6,})?)"
                                      r"(?![A-Za-z0-9])")),
    # the first half of a provider token whose rest is elsewhere (a digit and a letter after the prefix)
    ("partial_token", lazy(_START + r"(?:sk-(?:proj-|ant-api\d\d-)?|gh[pousr]_|github_pat_|glpat-|glrtr?-|xox[abposr]-"
                                 r"|hf_|npm_|AKIA|AIza|SG\.|pypi-|eyJ)(?P<v>[A-Za-z0-9_-]{8,})")),
    # places the others do not read: user-add commands, config formats, auth tuples, prose (``context.py``);
    # after the provider rules and a token's first half, which keep their kinds
    *placed.PATTERNS,
    *places.PATTERNS,
    *flags.PATTERNS,
    *services.PATTERNS,
    *asides.PATTERNS,
    # a hex key with a secret word before it and no assignment: "signing key 4f3a…"
    (
        "hex_key",
        lazy(r"(?i)\b(?:key|secret|token|password|passphrase|credentials?|salt|hmac|signing|seed|pepper|api|pat)\b"
                   r"[^\n]{0,40}?(?<![0-9A-Za-z])(?P<v>[0-9a-f]{32,}|[0-9A-F]{32,})(?![0-9A-Za-z])"),
    ),
    # ... or after it: "use 4f3a… as the api key"
    (
        "hex_key",
        lazy(r"(?i)(?<![0-9A-Za-z])(?P<v>[0-9a-f]{32,}|[0-9A-F]{32,})(?![0-9A-Za-z])[^\n]{0,30}?"
                   r"\b(?:key|secret|token|password|passphrase|credentials?|salt|hmac|seed|pepper)s?\b"),
    ),
)

_GITLAB = ("glpat-", "gldt-", "glptt-", "glft-", "glimt-", "gloas-", "glsoat-", "glcbt-", "glagent-")
_GITHUB = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")
_AWS = ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA")
_SECRET_WORDS = ("pass", "pwd", "pw", "secret", "token", "key", "credential")
_PROSE_WORDS = ("pass", "pwd", "contraseña", "kennwort", "senha", "пароль", "密码", "パスワード")
# A rule runs only on a text holding one of its literals (case-sensitive, or in the lower-cased
# text for the words): most texts hold none, and a regex that cannot match is skipped unread.
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    **structure.NEEDLES,
    **placed.NEEDLES,
    **{kind: (placed.NEEDLES[kind][0] + more, True) for kind, more in places.MORE_NEEDLES.items()},
    **places.NEEDLES,
    **flags.NEEDLES,
    **services.NEEDLES,
    **asides.NEEDLES,
    **named.NEEDLES,
    "private_key": (("PRIVATE KEY", *structure.PEM_NEEDLES), False),
    "anthropic_key": (("sk-ant-",), False),
    "openai_key": (("sk-",), False),
    "github_token": (_GITHUB, False),
    "gitlab_runner_token": (("glrt",), False),
    "heroku_key": (("HRKU-",), False),
    "gitlab_token": (_GITLAB, False),
    "slack_token": (("xox",), False),
    "slack_webhook": (("hooks.slack.com",), False),
    "discord_webhook": (("/api/webhooks/",), False),
    "mailchimp_key": (("-us",), False),
    "braintree_token": (("access_token$",), False),
    "launchdarkly_key": (("sdk-", "api-", "mob-"), False),
    "fcm_server_key": ((":APA91b",), False),
    "asana_token": (("0/", "1/", "2/"), False),
    "stripe_key": (("_live_", "_test_"), False),
    "google_api_key": (("AIza",), False),
    "aws_access_key": (_AWS, False),
    "huggingface_token": (("hf_",), False),
    "npm_token": (("npm_",), False),
    "pypi_token": (("pypi-",), False),
    "sendgrid_key": (("SG.",), False),
    "twilio_key": (("SK",), False),
    "telegram_bot_token": ((":AA",), False),
    "jwt": (("eyJ",), False),
    "bearer_token": (("bearer", "basic"), True),
    "password_in_url": (("://",), False),
    "password_assignment": (_SECRET_WORDS, True),
    "password_in_prose": (_PROSE_WORDS, True),
    "prefixed_hex_token": (("_", "-"), False),
    "partial_token": (("sk-", "gh", "github_pat_", "glpat-", "glrt", "xox", "hf_", "npm_", "AKIA", "AIza", "SG.", "pypi-", "eyJ"), False),
}


# Words that say a hex run is a digest or an id, not a key (``commit``, ``sha256:``, ``evidence``).
_DIGEST_WORDS = lazy(r"(?i)\b(?:sha\d*|commit|digest|checksum|hash|md5|fingerprint|evidence|uuid|id|ref|object|blob|tree)\b")
_DIGEST_LENGTHS = {32, 40, 56, 64, 96, 128}
_HEX32 = lazy(r"[0-9a-fA-F]{32}")
# a random hex key carries ~4 bits a character; a run of one or two digits repeated carries ~0-1
MIN_HEX_ENTROPY = 2.5
_FRACTION = lazy(r"[0-9]\.$")  # what stands right before the digits of a decimal fraction
_BARE_HEX = lazy(r"(?<![0-9A-Za-z])(?:[0-9a-f]{48,}|[0-9A-F]{48,})(?![0-9A-Za-z])")
_HEX_RUN = lazy(r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{2}){12,}(?![0-9A-Za-z])")
_B64_RUN = lazy(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_USER_PASS = lazy(r"[^\s:]{1,64}:\S{4,}")
_TOKEN = lazy(r"[A-Za-z0-9+/_=.-]{20,}")


_NOT_TOKENS = {"password_in_url", "password_assignment", "password_in_prose", "access_code", "private_key", "bearer_token", "slack_webhook",
               "seed_phrase", "discord_webhook", *structure.NEEDLES, *placed.KINDS, *places.KINDS, *flags.KINDS, *services.KINDS, *asides.KINDS}
_NEXT_HEAD = lazy(r"[\s,;:]{1,4}([A-Za-z0-9_-]{8,})(?![A-Za-z0-9_-])")


# ... and a pattern listed here only where its context holds (``structure.CONTEXTS``)
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    **structure.CONTEXTS,
    **placed.CONTEXTS,
    **places.CONTEXTS,
    **flags.CONTEXTS,
    **services.CONTEXTS,
    **asides.CONTEXTS,
    **named.CONTEXTS,
    _ASSIGNMENT: lambda low: structure.ASSIGN.search(low) is not None,
    _URL: lambda low: _URL_CONTEXT.search(low) is not None,
    _BEARER: lambda low: _BEARER_CONTEXT.search(low) is not None,
}

# (kind, pattern, its literals, whether they are looked up lower-cased, the pattern's own gate, its context)
_PLAN = [(kind, pattern, frozenset(NEEDLES.get(kind, ((), False))[0]), NEEDLES.get(kind, ((), False))[1],
          frozenset(structure.GATES[pattern]) if pattern in structure.GATES else None, CONTEXTS.get(pattern))
         for kind, pattern in PATTERNS]
# each rule's literals looked up once for all the rules, in one pass (``literals.Wanted``; hex_key wants none)
_WANTED = Wanted([(needles, ci) for _, _, needles, ci, _, _ in _PLAN], {n for *_, gate, _ in _PLAN for n in gate or ()},
                 always=sum(1 << i for i, (kind, *_) in enumerate(_PLAN) if kind == "hex_key"), patterns=[source(p) for _, p, *_ in _PLAN])
_ALL_CS, _ALL_CI = _WANTED.cs, _WANTED.ci


class _Pass:
    """``find``'s pass over its rules for one text, in their order: ``plan`` starts it and stops after the
    first rule that claims something, ``find`` goes on from there. ``live``: the rules still to run (bits
    of ``_PLAN``); ``work``: the text as the next rule reads it (what was claimed masked, same length);
    ``net``: the rules' net's answer for ``work`` (``rule_net.possible``; ``None``: no net, and ``live``
    holds the rules whose literals the text holds, ``present_ci`` the lower-cased literals, which the
    rules' gates read); ``hexy`` (32 hex digits in a row) is worked out when a rule needs it."""

    __slots__ = ("ascii", "hexy", "live", "low", "low_work", "net", "present_ci", "pub", "spans", "text", "work")

    def __init__(self, text: str, low: str, net: int | None) -> None:
        self.text = self.work = text
        self.low = self.low_work = low
        self.ascii = text.isascii()  # contexts read the lower-cased text: case folding outside ASCII differs
        self.net = net
        self.spans: list[Span] = []
        self.pub: list[tuple[int, int]] | None = None  # public by structure (``public.py``), once a rule of shape needs it
        self.hexy: bool | None = None
        self.present_ci: set[str] | None = None
        if net is None:
            _, self.present_ci, self.live = _WANTED.present(text, low)
        else:  # the net names every rule whose pattern could match: the others are not looked at
            self.live = net

    def copy(self) -> _Pass:
        """The same pass, to go on with (the one ``plan`` kept is left as it is: another thread may ask too)."""
        other = _Pass.__new__(_Pass)
        for name in _Pass.__slots__:
            setattr(other, name, getattr(self, name))
        other.spans = list(self.spans)
        return other

    def run(self, first: bool = False) -> bool:
        """Run the rules left; with ``first``, stop after the first that claims something. True when one did."""
        text = self.text
        claimed = False
        while self.live:
            bit = self.live & -self.live
            self.live ^= bit
            kind, pattern, _, _, gate, context = _PLAN[bit.bit_length() - 1]
            if kind in ("hex_key", "prefixed_hex_token"):
                if self.hexy is None:
                    self.hexy = _HEX32.search(text) is not None
                if not self.hexy:
                    continue
            if gate is not None and not self._gated(gate):
                continue
            if context is not None and self.ascii and not context(self.low_work):
                continue
            found = self._claims(kind, pattern)
            if not found:
                continue
            self.spans.extend(found)
            self.work = mask(self.work, found)
            self.low_work = self.work.lower()
            if self.net is not None:  # a mask can join a match: the net is asked again of what the later rules read
                net = rule_net.possible(self.work, _PLAN)
                if net is None:  # (the net was swapped meanwhile) the later rules whose literals the text holds
                    _, self.present_ci, net = _WANTED.present(text, self.low)
                self.net = net
                self.live = net & ~((bit << 1) - 1)
            claimed = True
            if first:
                break
        return claimed

    def _gated(self, gate: frozenset[str]) -> bool:
        """Does the text hold one of a rule's own literals (its gate)? Looked up one by one where the net
        answered (a gate has a few), in the literals found where it did not."""
        if self.present_ci is not None:
            return not gate.isdisjoint(self.present_ci)
        return any(w in self.low for w in gate)

    def _claims(self, kind: str, pattern: re.Pattern[str]) -> list[Span]:
        """What one rule claims in ``work``: each match's value, unless ``values.keep`` or the rule's own test says no."""
        text, work = self.text, self.work
        found: list[Span] = []
        for m in pattern.finditer(work):
            s, e = value_span(m)
            value = _untailed(text[s:e])  # the clause's or the call's mark after it is not the value's
            e = s + len(value)
            if MASK in work[s:e] or not keep(kind, value, text, e) or (kind == "password_in_url" and _PLACEHOLDER_PW.fullmatch(value)):
                continue
            if kind == "password_in_prose" and pattern is not named.PROSE_QUOTED:  # a quoted value may be words
                value = value.rstrip(".,;:!?)")
                e = s + len(value)
                if not (strong(value) or dictated(value, text, e)):
                    continue
            if kind == "hex_key" and _digest_in_context(work, m.start(), s, e):
                continue
            if kind in _SHAPE_KINDS:
                if self.pub is None:
                    self.pub = public.spans(text)
                if self.pub and overlaps(self.pub, s, e):
                    continue
            if kind == "prefixed_hex_token":
                s = m.start()
            if kind == "partial_token":  # the prefix goes too; the rest must look random (not ``hf_transfer``)
                if not random_head(value):
                    continue
                s = m.start()
            claim(found, s, e, kind)
        return found


def _untailed(value: str) -> str:
    """``value`` without the commas, semicolons and unopened ``)`` after it: "Пароль від wifi X, the router",
    ``Client(auth=auth)``, ``f(key=X, retries=3)`` (the judges see the value; the mark stays in the text)."""
    while value[-1:] in (",", ";") or (value[-1:] == ")" and value.count(")") > value.count("(")):
        value = value[:-1]
    return value


# What ``plan`` learnt about the last text it was asked (the pre-check asks, then the redactor runs ``find``
# on the same text): the text, the list of rules it read (a test that swaps ``_PLAN`` does not get an answer
# about the old one) and its pass (``_Pass``), stopped after the first rule that claimed something or run
# to the end. One entry, replaced whole (threads asking about other texts only miss it).
_PLANNED: tuple[str | None, object, _Pass | None] = (None, None, None)
_NONE_NAMED = _Pass("", "", 0)  # (``plan``'s answer where the net named no rule: ``find`` makes its own empty pass)


def plan(text: str, low: str, net: int | None = None) -> bool:
    """Does one of the rules claim something in ``text`` as written (``low``: lower-cased)? ``find``'s
    rules are run in its order until one claims a span: a rule that matches but whose values are not
    kept ("the password is in the vault") does not count. Exact where the pre-check's own tests are
    wide: where no rule claims anything, nothing was masked, and ``find``'s later steps read the text
    as written. ``find`` then goes on from the rule after the first that claimed (``_PLANNED``) instead
    of running them again. ``net``: the rules that could match (``rule_net.possible``), the others are
    not searched, nor are the literals the gates read looked up unless a rule it names has a gate."""
    global _PLANNED
    if net == 0:  # the net named no rule (most texts): none can claim anything, and ``find`` has none to run
        _PLANNED = (text, _PLAN, _NONE_NAMED)
        return False
    state = _Pass(text, low, net)
    claimed = state.run(first=True)
    _PLANNED = (text, _PLAN, state)
    return claimed


def find(text: str, depth: int = 0, known: tuple[provider.Hit, ...] = ()) -> list[Span]:
    """The spans of ``text`` to redact, sorted, not overlapping; ``known``: the values the
    maintained provider rules found (``provider.provider_values``), claimed first."""
    planned = _PLANNED
    if planned[0] == text and planned[1] is _PLAN and planned[2] is not None:  # the pre-check ran the rules up to the first that claims
        state = _Pass(text, text.lower(), 0) if planned[2] is _NONE_NAMED else planned[2].copy()
    else:
        state = _Pass(text, text.lower(), None)
    state.run()
    spans, work, pub = state.spans, state.work, state.pub
    if placed.card_digits(text):  # card numbers with their codes (``context.card_spans``)
        cards = [sp for sp in placed.card_spans(work) if MASK not in work[sp[0] : sp[1]]]
        for s, e, kind in cards:
            claim(spans, s, e, kind)
        if cards:
            work = mask(work, spans)
    # the maintained provider rules' values: where one of our rules found the same token its kind
    # name stays; what they found beyond ours is claimed, the uncovered rest of a longer value too
    for s, e, kind in sorted(provider.spans(text, known), key=lambda sp: (sp[0], -sp[1])):
        inside = sorted(sp for sp in spans if sp[0] < e and s < sp[1])
        if inside:  # one secret, one finding: the spans it overlaps grow into one, named as ours
            for sp in inside:
                spans.remove(sp)
            spans.append((min(s, inside[0][0]), max(e, *(sp[1] for sp in inside)), inside[0][2]))
        else:
            spans.append((s, e, kind))
    work = mask(work, spans)
    # the rules of shape below read runs of token characters (and seed phrases): where what is left holds
    # none a rule could want (``runs.shape_runs``, the pre-check's test), they are not run
    shaped = shape_runs(work)
    if shaped:
        if pub is None:
            pub = public.spans(text)
        if pub:  # what is public by structure is not read by the rules of shape below
            work = mask(work, [(s, e, "") for s, e in pub if MASK not in work[s:e]])
        _claim_seeds_and_hex(work, spans)
        work = mask(work, spans)
    for _s, e, kind in list(spans):
        if kind not in _NOT_TOKENS:  # the rest of a split token may follow on the next line or after a space
            head = _NEXT_HEAD.match(work, e)
            if head and random_head(head.group(1)):
                claim(spans, head.start(1), head.end(1), "partial_token")
    work = mask(work, spans)
    if shaped:
        if depth < 2:
            for s, e, kind in _encoded(work, depth):
                claim(spans, s, e, kind)
            work = mask(work, spans)
        for m in _TOKEN.finditer(work):
            for s, e in random_parts(m.group(0)):
                claim(spans, m.start() + s, m.start() + e, "high_entropy")
    spans = [sp for sp in spans if not public.example_key(text[sp[0] : sp[1]])]  # documentation keys
    return _glued_tails(text, sorted(spans))


def _claim_seeds_and_hex(work: str, spans: list[Span]) -> None:
    """The first rules of shape: seed phrases, and bare hex keys (not padding, a fraction's digits or a digest)."""
    for s, e, kind in structure.seed_spans(work):
        claim(spans, s, e, kind)
    for m in _BARE_HEX.finditer(work):
        if shannon_entropy(m.group(0)) < MIN_HEX_ENTROPY:  # "dddd…", "0000…": padding, not a key
            continue
        if m.group(0).isdigit() and _FRACTION.search(work, max(0, m.start() - 2), m.start()):
            continue  # the digits after a decimal point ("0.1000000000000000055511151231257827…"): a number
        if len(m.group(0)) not in _DIGEST_LENGTHS and not _DIGEST_WORDS.search(work[max(0, m.start() - 24) : m.start()]):
            claim(spans, m.start(), m.end(), "hex_key")


# the rules that judge a run by its shape (not by its place): ``public.py``'s structures are not theirs
_SHAPE_KINDS = frozenset({"prefixed_hex_token", "hex_key", "partial_token", "twilio_key"})


_GLUED = lazy(r"[A-Za-z0-9_]+")


def _glued_tails(text: str, spans: list[Span]) -> list[Span]:
    """A token's span reaches over letters and digits glued to its end (a token pasted twice with
    nothing between, ``ghp_…ghp_…``, left its last character after the marker): no word starts
    inside a run of letters and digits."""
    out: list[Span] = []
    for i, (s, e, kind) in enumerate(spans):
        glued = _GLUED.match(text, e) if kind not in _NOT_TOKENS and e > s and _GLUED.fullmatch(text[e - 1]) else None
        if glued:
            e = min(glued.end(), spans[i + 1][0] if i + 1 < len(spans) else len(text))
        out.append((s, e, kind))
    return out


def _digest_in_context(work: str, start: int, s: int, e: int) -> bool:
    before = work[max(0, start - 8) : s]
    return bool(_DIGEST_WORDS.search(before)) and (e - s) in _DIGEST_LENGTHS


def _encoded(work: str, depth: int) -> list[Span]:
    """Hex and base64 runs that decode to a secret, or to ``user:password``."""
    out: list[Span] = []
    for regex in (_HEX_RUN, _B64_RUN):
        for m in regex.finditer(work):
            if MASK in m.group(0):
                continue
            plain = _decoded(m.group(0))
            if plain is None:
                continue
            inner = find(plain, depth + 1, provider.provider_values(plain))
            if inner:
                out.append((m.start(), m.end(), "encoded_" + inner[0][2]))
            elif regex is _B64_RUN and _USER_PASS.fullmatch(plain) and strong(plain.split(":", 1)[1]):
                out.append((m.start(), m.end(), "basic_auth"))
    return out
