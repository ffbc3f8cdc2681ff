"""Service credentials known by a shape of their own that neither the rules of shape nor the
maintained scanner read (issue 37): a UUID behind a service's prefix, a webhook URL whose path is
the credential, a signature percent-encoded in a query string.

- Plaid access and processor tokens (``access-sandbox-<uuid>``, ``processor-production-<uuid>``);
- Microsoft Teams / Office 365 incoming webhooks (``….webhook.office.com/webhookb2/…`` and the old
  ``outlook.office.com/webhook/…``): everything after the host;
- New Relic keys (``NRAK-``, ``NRII-``, ``NRAA-`` and 27 upper-case letters and digits);
- a URL parameter named for a credential the assignment rules do not read (``?key=``, ``session``,
  ``sid``, ``jwt``), and a path segment after one that names one (``/token/…``), when its value has a
  token's shape;
- a product or licence key given as such (``Windows product key: XXXXX-XXXXX-…``);
- an Azure shared access signature's ``sig=`` (base64, percent-encoded in a URL: ``%2F``, ``%2B``,
  ``%3D`` cut it into runs too short for the rules of shape);
- a Twilio auth token written beside its account SID (32 hex digits, which alone are a digest's shape);
- an HTTP header named for a key or token (``Fastly-Key:``, ``Circle-Token:``) with a token's value.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Literals, Maybe

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_PLAID = lazy(r"(?i)(?<![\w-])(?:access|processor)-(?:sandbox|development|production)-" + _UUID + r"(?![\w-])")
_TEAMS = lazy(r"(?i)(?:\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)/(?P<v>[\w@./-]{30,})")
_NEW_RELIC = lazy(r"(?<![\w-])NR(?:AK|II|AA)-[A-Z0-9]{27}(?![\w-])")
_LICENSE = lazy(r"(?i)\b(?:product|license|licence|serial|activation|registration)\s+(?:key|code|number)\b[^\n\w]{0,4}(?:is\s+)?"
                r"(?P<v>[A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){3,5})(?![\w-])")
# a URL's query or fragment parameter named for a credential the assignment rules do not read
# (``?key=``, ``&session=``, ``sessionid``, ``sid``, ``jwt``): a token's shape only (16 characters or more,
# a UUID, a hex run); ``?key=path/to/file`` and ``?key=42`` stay
_URL_PARAM = lazy(r"(?i)[?&;#](?:key|session(?:[_-]?id)?|sid|jwt)=(?P<v>(?=[\w.~-]*[0-9])(?=[\w.~-]*[a-zA-Z])[\w.~-]{16,512})(?![\w.~%/-])")
# a Twilio account SID and its auth token side by side ("AC… 9f8e…", "AC…:9f8e…"): the 32 hex digits after the SID
_TWILIO_PAIR = lazy(r"(?<![A-Za-z0-9])AC[0-9a-f]{32}(?:[ \t]*[:,;|/][ \t]*|\s+)(?P<v>[0-9a-f]{32})(?![A-Za-z0-9])")
_TWILIO_LOW = lazy(r"ac[0-9a-f]{32}(?:[ \t]*[:,;|/][ \t]*|\s+)[0-9a-f]{32}")  # the same, lower-cased (``CONTEXTS``)
# the URL path segment after one that names a credential (``/token/X``, ``/apikey/X``), when it has a token's shape (the rules
# of shape judge about one random 32-character token in a hundred not random)
# (after a hook's segment, up to two more: ``hooks.acme.io/services/<uuid>``, ``/webhooks/catch/12/<token>``)
_URL_PATH = lazy(r"(?i)(?:/(?:token|tokens|secret|secrets|apikey|api[_-]key|access[_-]token|auth[_-]token)/"
                 r"|(?://hooks?\.[\w.-]+/|/(?:hooks?|webhooks?)/)(?:[\w-]{1,24}/){0,2})"
                 r"(?P<v>(?=[\w.~-]*[0-9])(?=[\w.~-]*[a-zA-Z])[\w.~-]{16,512})(?![\w.~%-])")
_PATH_WORDS = ("/token", "/secret", "/apikey", "/api_key", "/api-key", "/access_token", "/access-token", "/auth_token", "/auth-token",
               "//hook", "/hook", "/webhook")
_PATH_FINDER = Literals(_PATH_WORDS)
# an HTTP header named for a key or token of a service no rule names (``Fastly-Key: …``, ``Circle-Token: …``): written
# as headers are (capitalised words joined by ``-``), the value a token's shape; not a header of ids (``Idempotency-Key``)
_HEADER_TOKEN = lazy(r"(?m)(?:^|(?<=[\s'\"]))(?!(?:Idempotency|Cache|Sort|Partition|Primary|Foreign|Public|Routing|Dedup(?:lication)?)-)"
                     r"(?:[A-Z][A-Za-z0-9]*-)+(?:Key|Token|Secret|KEY|TOKEN|SECRET)[ \t]*:[ \t]*"
                     r"(?P<v>(?=[\w.~+/=-]*[0-9])(?=[\w.~+/=-]*[A-Za-z])[A-Za-z0-9][\w.~+/=-]{15,511})(?![\w.~+/=-])")
_HEADER_WORDS = ("-key", "-token", "-secret")
_HEADER_FINDER = Literals(_HEADER_WORDS)
_SAS_SIG = lazy(r"(?i)[?&]sig=(?P<v>(?:[A-Za-z0-9+/]|%2[BbFf]|%3[Dd]){20,}(?:=|%3[Dd]){0,2})")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("plaid_token", _PLAID),
    ("teams_webhook", _TEAMS),
    ("new_relic_key", _NEW_RELIC),
    ("azure_sas_signature", _SAS_SIG),
    ("license_key", _LICENSE),
    ("url_credential_param", _URL_PARAM),
    ("url_credential_param", _URL_PATH),
    ("twilio_auth_token", _TWILIO_PAIR),
    ("service_header_token", _HEADER_TOKEN),
)
KINDS = frozenset(kind for kind, _ in PATTERNS)
# each kind's literals, looked up in the lower-cased text (``rules.NEEDLES``)
NEEDLES: dict[str, tuple[tuple[str, ...], bool]] = {
    "plaid_token": (("-sandbox-", "-development-", "-production-"), True),
    "teams_webhook": (("webhook.office.com", "outlook.office"), True),
    "new_relic_key": (("nrak-", "nrii-", "nraa-"), True),
    "azure_sas_signature": (("sig=",), True),
    "license_key": (("product", "license", "licence", "serial", "activation", "registration"), True),
    "url_credential_param": (("key=", "session", "sid=", "jwt=", *_PATH_WORDS), True),
    "twilio_auth_token": (("ac",), True),
    "service_header_token": (_HEADER_WORDS, True),
}
_URL_FINDER = Literals(("key=", "session", "sid=", "jwt="))
CONTEXTS: dict[re.Pattern[str], Callable[[str], bool]] = {
    _PLAID: lambda low: ("access-" in low or "processor-" in low) and _PLAID.search(low) is not None,
    _TEAMS: lambda low: "webhook" in low,
    _NEW_RELIC: lambda low: "nrak-" in low or "nrii-" in low or "nraa-" in low,
    _SAS_SIG: lambda low: "sig=" in low,
    _TWILIO_PAIR: lambda low: "ac" in low and _TWILIO_LOW.search(low) is not None,
    _URL_PATH: lambda low: _PATH_FINDER.any_in(low),
    _HEADER_TOKEN: lambda low: _HEADER_FINDER.any_in(low),
    _LICENSE: lambda low: " key" in low or " code" in low or " number" in low,
    _URL_PARAM: lambda low: _URL_FINDER.any_in(low) and _URL_PARAM.search(low) is not None,
}
CONTEXT_WORDS: dict[re.Pattern[str], tuple[str, ...] | None] = {
    _PLAID: ("access-", "processor-"), _TEAMS: ("webhook",), _NEW_RELIC: ("nrak-", "nrii-", "nraa-"), _SAS_SIG: ("sig=",),
    _LICENSE: (" key", " code", " number"),
    _URL_PARAM: _URL_FINDER.words, _TWILIO_PAIR: ("ac",), _URL_PATH: _PATH_FINDER.words, _HEADER_TOKEN: _HEADER_FINDER.words,
}
TRIGGER_WORDS = ("-sandbox-", "-development-", "-production-", "webhook.office.com", "outlook.office", "nrak-", "nrii-", "nraa-",
                 "sig=", "product", "license", "licence", "serial", "activation", "registration", "key=", "session", "sid=", "jwt=",
                 "ac", *_PATH_WORDS, *_HEADER_WORDS)
# could one of these patterns match the lower-cased text? (``precheck``)
maybe = Maybe(TRIGGER_WORDS, CONTEXTS, CONTEXT_WORDS, outside_ascii=False)
