"""Public by structure: data that is high-entropy by design and public, known by its shape.

The shape rules (``high_entropy``, bare and prefixed hex, encoded runs, a provider token's
first half) judge a run of characters by how random it looks; these structures are random and
public, so they are recognised first and left out of what those rules read:

- integrity and content hashes with their algorithm (``sha512-…`` in lockfiles and SRI, ``h1:…``
  in ``go.sum``, ``sha256:``, ``SHA256:`` fingerprints, ``md5=``, a value named ``…Sha256Sum``);
- public keys and certificates (SSH public keys and hashed ``known_hosts``, PEM blocks that are
  public, a JSON Web Key's public members and any ``kid``, a value named ``public key``);
- base64 data URIs (images, fonts) whose bytes are not readable text;
- URLs: every path segment, query value and fragment, except a segment after a word that says
  secret (``/token/…``, ``/hooks/…``, ``/bot…``); not the host nor the user-info before ``@``;
- ids: ULIDs, IPFS CIDs, the hex-only segments of a file path, the objects of Stripe, OpenAI and Anthropic (``ch_``, ``cus_``,
  ``chatcmpl-``, ``msg_01…``), the values of id and hash headers (``X-Request-ID``, ``ETag``,
  ``x-amz-id-2``), CSP nonces.

Only the shape rules consult this: a value a context rule claims (``password=…``, ``--token …``)
goes whatever it looks like. Documentation keys marked ``EXAMPLE`` (``AKIAIOSFODNN7EXAMPLE``) are
kept by every rule (``example_key``).
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Iterator

from commonkeep.secrets.lazy import lazy
from commonkeep.secrets.literals import Literals

Span = tuple[int, int]

_HASHED = lazy(r"(?i)(?<![A-Za-z0-9])(?:sha-?(?:1|224|256|384|512)|md5|h1|zh|blake2[bs]?|blake3|crc32c?|sha3-\d+)[-:=]"
               r"[A-Za-z0-9+/_=-]{8,}")
# a value named for a hash: the name ends in the hash's word, an algorithm's number or a suffix that says how it
# is written (``sha256``, ``distributionSha256Sum``, ``content-hash``, ``checksums``, ``sha256_hex``); not a
# name that only starts with one (``summary_token``, ``sumo_api_key``, ``hashed_password``, ``digest_auth_token``)
_HASH_NAMED = lazy(r"(?i)(?:sha|md5|hash|checksum|digest|sum)(?:-?\d+)?(?:sum)?(?:es|s)?(?:[_-]?(?:hex|b64|base64|value))?"
                   r"[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9+/_=-]{16,})")
_SSH_PUB = lazy(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)"
                r"\s+AAAA[A-Za-z0-9+/]+={0,3}")
_KNOWN_HOSTS = lazy(r"\|1\|[A-Za-z0-9+/=]{20,}\|[A-Za-z0-9+/=]{20,}")
_PEM_PUBLIC = lazy(r"-----BEGIN (?P<l>CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|EC PUBLIC KEY|PGP PUBLIC KEY BLOCK|PGP SIGNATURE"
                   r"|PGP MESSAGE|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|X509 CRL|PKCS7|CMS|TRUSTED CERTIFICATE|SSH2 PUBLIC KEY)"
                   r"-----[\s\S]*?(?:-----END (?P=l)-----|\Z)")
_JWK_PUBLIC = lazy(r"\"(?:n|e|x|y|kid|x5t|x5t#S256|x5c|crv|alg|use|kty)\"\s*:\s*(?:\[\s*)?\"(?P<v>[^\"]{1,2048})\"")
_KID = lazy(r"(?i)(?<![\w-])(?:kid|key[_-]?id|x5t(?:#S256)?)[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9+/_=.-]{8,})")
_PUBLIC_NAMED = lazy(r"(?i)public[ _-]?key[\"']?(?:\s*[:=]\s*|\s+)[\"']?(?P<v>[A-Za-z0-9+/_=-]{16,})")
_DATA_URI = lazy(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,(?P<v>[A-Za-z0-9+/=]{16,})")
# a URL (not its user-info: ``rules`` claims a password there first)
_URL = lazy(r"(?i)(?<![\w.+-])(?:[a-z][a-z0-9+.-]{1,20}://|www\.)[^\s\"'<>`]+")
_SECRET_SEGMENT = lazy(r"(?i)(?:token|tokens|key|keys|secret|secrets|hooks?|webhooks?|bot|auth|apikey|api[_-]key|password"
                       r"|passwd|sig|signature|credentials?|session)$")
_ULID = lazy(r"(?<![A-Za-z0-9])[0-7][0-9A-HJKMNP-TV-Z]{25}(?![A-Za-z0-9])")
_CID = lazy(r"(?<![A-Za-z0-9])(?:Qm[1-9A-HJ-NP-Za-km-z]{44}|baf[a-z][a-z2-7]{50,})(?![A-Za-z0-9])")
_OBJECT_PREFIXES = ("ch", "cus", "pi", "pm", "in", "sub", "price", "prod", "evt", "txn", "re", "po", "acct", "src", "card", "ba", "seti", "si",
                    "ii", "il", "py", "dp", "chatcmpl", "resp", "run", "thread", "asst", "file", "batch", "ftjob", "step", "vs", "cmpl")
_OBJECT_01 = ("msg", "toolu", "srvtoolu", "req", "msgbatch")
_OBJECT_ID = lazy(r"(?<![A-Za-z0-9_-])(?:(?:" + "|".join(_OBJECT_PREFIXES) + r")[_-]|(?:" + "|".join(_OBJECT_01) + r")_01)"
                  r"[A-Za-z0-9]{8,40}(?![A-Za-z0-9_/+=-])")
# what every match starts with: an object's prefix and its ``_`` or ``-`` (a gate of ``_`` or ``-`` let nearly every text through)
_OBJECT_WORDS = (*(p + sep for p in _OBJECT_PREFIXES for sep in "_-"), *(p + "_01" for p in _OBJECT_01))
# the hex-only segments of a file path (a cache's content address, an overlay's id)
_PATH_HEX = lazy(r"/(?P<v>[0-9a-f]{16,})(?=/|$|\s|\.)")  # the ``/`` matched, not looked behind for: the search skips to each one
_ID_HEADER = lazy(r"(?im)(?:^|(?<=[\s\"'`]))(?:[\w-]*-id(?:-\d)?|(?:request|trace|correlation|transaction|event|build|run|job|order"
                  r"|invocation|execution|deployment|message|incident|ticket)[ _]id|etag|if-none-match|if-match|content-md5|x-goog-hash|digest|traceparent|tracestate"
                  r"|x-amzn-trace-id)[ \t]*:[ \t]*(?P<v>[^\n]+)")
_NONCE = lazy(r"'nonce-(?P<v>[A-Za-z0-9+/_=-]{8,})'")
_FINGERPRINT = lazy(r"(?i)(?:fingerprint|gpg|pgp|rsa key|dsa key|key id|keyid|signing key id)[^\n]{0,24}?(?<![0-9A-Fa-f])"
                    r"(?P<v>[0-9A-Fa-f]{16,40}|(?:[0-9A-F]{4} ?){10})(?![0-9A-Fa-f])")
# browser-side ids public by design: a reCAPTCHA site key, a Google OAuth client id, a JWT's header or
# payload alone (no signature after it: base64url of a JSON object, not a token)
_SITEKEY = lazy(r"(?i)site[_-]?key[\"']?\s*[:=]\s*[\"']?(?P<v>6L[\w-]{38})(?![\w-])")
_OAUTH_CLIENT = lazy(r"(?<![\w-])\d{6,}-[a-z0-9]{32}\.apps\.googleusercontent\.com")
_MAPBOX_PUBLIC = lazy(r"(?<![\w.-])pk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")
_STRIPE_PUBLIC = lazy(r"(?<![\w-])pk_(?:live|test)_[A-Za-z0-9]{16,}")
_JWT_PART = lazy(r"(?<![\w.-])eyJ[A-Za-z0-9_-]{10,}={0,2}(?![\w.=-])")
_ULID_HINT = lazy(r"[0-7][0-9A-Z]{25}")
# ASCII letters and digits as a ULID holds them (``x``: digits and capitals) or not (``a``), the rest a space:
# a ULID is a run of exactly 26 ``x`` (``_ULID``'s look-arounds end it at any other letter or digit)
_ULID_CLASSES = bytes(ord("x") if chr(c).isdigit() or "A" <= chr(c) <= "Z" else ord("a") if "a" <= chr(c) <= "z" else ord(" ")
                      for c in range(128)) + b" " * 128
_ULID_RUN = b" " + b"x" * 26 + b" "
_URL_PARTS = re.compile(r"([/?&#=])")


def _readable(b64: str) -> bool:
    try:
        raw = binascii.a2b_base64(b64 + "=" * (-len(b64.rstrip("=")) % 4))
        return raw.decode("utf-8").isprintable()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False


def _json_object(b64url: str) -> bool:
    """Whether ``b64url`` decodes to a whole JSON object (a JWT's header or payload, alone)."""
    import json

    try:
        raw = binascii.a2b_base64(b64url.replace("-", "+").replace("_", "/").rstrip("=") + "=" * (-len(b64url.rstrip("=")) % 4))
        return isinstance(json.loads(raw.decode("utf-8")), dict)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False


# ``_SECRET_SEGMENT``'s words, as the endings ``str.endswith`` looks up in one call (a search per segment cost ~0.4 µs)
_SECRET_ENDINGS = ("token", "tokens", "key", "keys", "secret", "secrets", "hook", "hooks", "bot", "auth", "password", "passwd",
                   "sig", "signature", "credential", "credentials", "session")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789+.-")


def _urls(text: str) -> Iterator[re.Match[str]]:
    """``_URL.finditer(text)``, in ASCII text tried only where a URL can start: before ``://``, the start
    of the scheme's letters (the look-behind rules out any later start: a scheme's character stands
    before it), and at ``www.``; each from the end of the last match on, as the search goes."""
    if not text.isascii():
        yield from _URL.finditer(text)
        return
    low = text.lower()
    starts: set[int] = set()
    for i in _found(low, "://"):
        s = i
        while s > 0 and i - s <= 21 and low[s - 1] in _SCHEME_CHARS:
            s -= 1
        starts.add(s)
    starts.update(_found(low, "www."))
    yield from _tried(_URL, text, starts)


def _found(low: str, word: str) -> Iterator[int]:
    """Where ``word`` stands in ``low``, every place (overlapping ones too)."""
    i = low.find(word)
    while i >= 0:
        yield i
        i = low.find(word, i + 1)


def _tried(rx: re.Pattern[str], text: str, starts: set[int]) -> Iterator[re.Match[str]]:
    """``rx`` tried at ``starts`` in order, each from the end of the last match on: ``finditer`` where
    every match starts at one of them."""
    end = 0
    for s in sorted(starts):
        if s < end:
            continue
        m = rx.match(text, s)
        if m is not None:
            yield m
            end = m.end()


def _url_spans(text: str, out: list[Span]) -> None:
    for m in _urls(text):
        url = m.group(0).rstrip(".,;:!?)]}")
        start = m.start()
        head = url.find("://")
        body = head + 3 if head >= 0 else 0
        auth_end = url.find("/", body)
        if auth_end < 0:
            continue  # a host alone: not an id's place (``www.<random>.com`` is read as any text)
        pos = body = auth_end  # the host and user-info are not public: a password or a random host is read as any text
        secret_before = False  # the segment before ends with a word of ``_SECRET_SEGMENT``
        for seg in _URL_PARTS.split(url[body:]):
            if seg and seg not in "/?&#=":
                low = seg.lower()
                if not secret_before and not low.startswith("bot"):
                    out.append((start + pos, start + pos + len(seg)))
                secret_before = low.endswith(_SECRET_ENDINGS)
            pos += len(seg)


# each structure's rule runs only on a text holding its literal (lower-cased): most texts hold few
_GATED: tuple[tuple[tuple[str, ...], re.Pattern[str], bool], ...] = (
    (("sha", "md5", "h1:", "zh:", "blake", "crc32"), _HASHED, False),
    (("sha", "md5", "hash", "checksum", "digest", "sum"), _HASH_NAMED, True),
    (("ssh-", "ecdsa-"), _SSH_PUB, False),
    (("|1|",), _KNOWN_HOSTS, False),
    (("-----begin",), _PEM_PUBLIC, False),
    (("qm", "baf"), _CID, False),
    (_OBJECT_WORDS, _OBJECT_ID, False),
    (("/",), _PATH_HEX, True),
    (('":',), _JWK_PUBLIC, True),
    (("kid", "key_id", "keyid", "key-id", "x5t"), _KID, True),
    (("public",), _PUBLIC_NAMED, True),
    (("-id", " id", "_id", "etag", "match", "md5", "hash", "digest", "trace"), _ID_HEADER, True),
    (("'nonce-",), _NONCE, True),
    (("sitekey", "site_key", "site-key"), _SITEKEY, True),
    ((".apps.googleusercontent.com",), _OAUTH_CLIENT, False),
    (("pk.eyj",), _MAPBOX_PUBLIC, False),
    (("pk_live_", "pk_test_"), _STRIPE_PUBLIC, False),
    (("fingerprint", "gpg", "pgp", "rsa key", "dsa key", "key id", "keyid"), _FINGERPRINT, True),
)


_GATE_LITERALS = sorted({w for literals, _, _ in _GATED for w in literals})
# the structures of ``_GATED`` that want each literal, a bit each
_GATE_WANT = [sum(1 << i for i, (literals, _, _) in enumerate(_GATED) if w in literals) for w in _GATE_LITERALS]
_GATE_FINDER = Literals(_GATE_LITERALS)


def _gates(low: str) -> int:
    """The bits of the structures of ``_GATED`` one of whose literals ``low`` holds: ``any(w in low for
    w in literals)`` for each, in one pass (``literals.Literals``)."""
    bits = 0
    for i in _GATE_FINDER.found(low):
        bits |= _GATE_WANT[i]
    return bits


# the pre-check, ``rules.find`` and ``provider.worth_scanning`` ask about one text in turn: its spans, and
# those of them public by design (``strong_spans``)
_LAST: tuple[str, tuple[Span, ...], tuple[Span, ...]] = ("", (), ())


def spans(text: str) -> list[Span]:
    """The spans of ``text`` that are public by structure (see the module doc), unsorted."""
    last = _LAST
    if last[0] == text:
        return list(last[1])
    found, strong = _both(text)
    _remember(text, tuple(found), tuple(strong))
    return found


def _remember(text: str, found: tuple[Span, ...], strong: tuple[Span, ...]) -> None:
    global _LAST
    _LAST = (text, found, strong)


# the words every match of a structure starts with (lower-cased), for the slow expressions: the search
# then tries only where one stands (``_tried``) instead of at every position (``_HASH_NAMED`` cost
# ~15 µs a lockfile entry searched, ~1 µs so)
_STARTS: dict[re.Pattern[str], tuple[str, ...]] = {
    _HASHED: ("sha", "md5", "h1", "zh", "blake", "crc32"),
    _HASH_NAMED: ("sha", "md5", "hash", "checksum", "digest", "sum"),
    _FINGERPRINT: ("fingerprint", "gpg", "pgp", "rsa key", "dsa key", "key id", "keyid", "signing key id"),
}


def _finditer(rx: re.Pattern[str], text: str, low: str) -> Iterator[re.Match[str]]:
    """``rx.finditer(text)``; for a pattern of ``_STARTS`` in ASCII text (``low`` its lower-cased copy,
    the same length), tried only where one of its first words stands: every match starts at one, and
    trying those positions in order, each from the end of the last match on, is what the search does."""
    words = _STARTS.get(rx)
    if words is None or not text.isascii():
        yield from rx.finditer(text)
        return
    yield from _tried(rx, text, {i for w in words for i in _found(low, w)})


def _spans(text: str) -> list[Span]:
    return _both(text)[0]


def _both(text: str, strong_only: bool = False) -> tuple[list[Span], list[Span]]:
    """The spans public by structure and, among what is found on the way, those public by design
    (``strong_spans``): the same searches answer both. ``strong_only``: only the second are wanted, and
    the structures that are not public by design (URLs, object ids, a path's hex) are not searched."""
    low = text.lower()
    out: list[Span] = []
    strong: list[Span] = []
    gates = _gates(low) & _STRONG_BITS if strong_only else _gates(low)
    while gates:  # the structures whose literals the text holds, in their order
        bit = gates & -gates
        gates ^= bit
        _, rx, value = _GATED[bit.bit_length() - 1]
        found = [m.span("v") if value else m.span() for m in _finditer(rx, text, low)]
        out += found
        if rx in _STRONG_GATED:
            strong += found
        elif rx is _ID_HEADER:
            strong += _one_token(text, found)
    if len(text) >= 26 and _maybe_ulid(text):
        ulids = [m.span() for m in _ULID.finditer(text)]
        out += ulids
        strong += ulids
    if "eyJ" in text:
        parts = [m.span() for m in _JWT_PART.finditer(text) if _json_object(m.group(0))]
        out += parts
        strong += parts
    if "data:" in low:
        data = [m.span("v") for m in _DATA_URI.finditer(text) if not _readable(m.group("v"))]
        out += data
        strong += data
    if "-----begin" in low:
        strong += [m.span() for m in _PEM_CLOSED.finditer(text)]
    if '":' in low:
        strong += [m.span("v") for m in _JWK_NUMBER.finditer(text)]
    if not strong_only and ("://" in text or "www." in low):
        _url_spans(text, out)
    return out, strong


def _maybe_ulid(text: str) -> bool:
    """Could ``_ULID`` match? In ASCII text, one pass over its bytes: a run of exactly 26 digits and
    capitals (a search of ``_ULID_HINT`` cost ~0.7 µs a text of the token mix, and let through
    every longer run of them, which ``_ULID`` then read for nothing)."""
    if not text.isascii():
        return _ULID_HINT.search(text) is not None
    return _ULID_RUN in b" " + text.encode("ascii").translate(_ULID_CLASSES) + b" "


# The structures every character of which is public by design, wherever they stand: a hash after its
# algorithm or named for one, an SSH public key or a hashed ``known_hosts`` entry, a public PEM block with its
# end line, a data URI's bytes, a JSON Web Key's public numbers, a key's id, a named public key, a key's
# fingerprint, a CSP nonce, a content id, a ULID, a JWT's header or payload alone, the browser-side keys (a
# reCAPTCHA site key, a Google OAuth client id, Mapbox's and Stripe's publishable keys) and the value of an id
# header when it is one token. Not URLs, the objects' ids and a path's hex segments, whose place may hold a
# token a provider's rule knows (a Resend key is ``re_…``, a PagerDuty integration key a URL's path).
# ``provider.worth_scanning`` does not call the maintained scanner for a run of letters and digits inside one
# of these (a lockfile's hashes, a key's base64, a request's id).
_PEM_CLOSED = lazy(r"-----BEGIN (?P<l>CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|EC PUBLIC KEY|PGP PUBLIC KEY BLOCK|PGP SIGNATURE"
                   r"|CERTIFICATE REQUEST|NEW CERTIFICATE REQUEST|X509 CRL|PKCS7|TRUSTED CERTIFICATE|SSH2 PUBLIC KEY)"
                   r"-----[A-Za-z0-9+/=\s:,.()'-]*?-----END (?P=l)-----")
_JWK_NUMBER = lazy(r"\"(?:n|e|x|y)\"\s*:\s*\"(?P<v>[A-Za-z0-9_-]{1,2048})\"")
# those of ``_GATED``, with their literals there (an id header's value too, where it is one token: ``_one_token``)
_STRONG_GATED = frozenset({_HASHED, _HASH_NAMED, _SSH_PUB, _KNOWN_HOSTS, _CID, _KID, _PUBLIC_NAMED, _NONCE, _SITEKEY, _OAUTH_CLIENT,
                           _MAPBOX_PUBLIC, _STRIPE_PUBLIC, _FINGERPRINT})


def _one_token(text: str, spans: list[Span]) -> list[Span]:
    """The values of id headers that are one token (``X-Request-ID: 58fa…``): not a line that goes on."""
    return [(s, e) for s, e in spans if len(text[s:e].split()) == 1]


# the bits of ``_GATED``'s structures public by design
_STRONG_BITS = sum(1 << i for i, (_, rx, _) in enumerate(_GATED) if rx in _STRONG_GATED or rx is _ID_HEADER)


def strong_spans(text: str) -> list[Span]:
    """The spans of ``text`` inside which every character is public by design (see above), unsorted:
    what the pre-check worked out with the rest (``_both``), or only these worked out now (most texts
    asked here were not asked ``spans``: a rule claimed something, or they hold no run a rule of shape wants)."""
    last = _LAST
    if last[0] != text:
        return _both(text, strong_only=True)[1]
    return list(last[2])


def example_key(value: str) -> bool:
    """A documentation key: marked ``EXAMPLE`` (``AKIAIOSFODNN7EXAMPLE``, ``…EXAMPLEKEY``)."""
    return "EXAMPLE" in value
