"""A generated corpus of fake secrets (and of benign memory text) for the secret gate.

Every value is drawn at run time from a seeded ``random.Random``: nothing here is a real secret,
and no real-looking secret is written down as a fixed string. Each ``Planted`` item is one secret
as an agent would write it: ``fields`` (one string, or two when the secret is split across two
fields) and ``parts``, the random cores that must not survive anywhere (a leak check looks for
each part and for every 8-character window of it, so a secret cut short is still found).

``benign(n)`` is ordinary memory text (preferences, conventions, commands, commit hashes and ids
in prose, URLs without credentials, prose that talks *about* passwords) that must come out of the
gate unchanged.
"""

from __future__ import annotations

import base64
import random
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field

from commonkeep.bench import secrets_corpus_more as corpus_more
from commonkeep.bench.secrets_corpus_base import ALNUM, HEX, SYMBOLS, password, rand

__all__ = ["ALNUM", "HEX", "MAKERS", "PLACED", "SYMBOLS", "Planted", "benign", "password", "planted", "rand", "survivors",
           "windows"]

WINDOW = 8
ZWSP = "\u200b"
_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits + "_-"}
# Latin letters and the Cyrillic letters that look like them
_CYRILLIC = {"a": "а", "c": "с", "e": "е", "o": "о", "p": "р", "x": "х", "y": "у", "A": "А", "B": "В", "C": "С",
             "E": "Е", "H": "Н", "K": "К", "M": "М", "O": "О", "P": "Р", "T": "Т", "X": "Х", "s": "ѕ", "i": "і"}


@dataclass
class Planted:
    """One planted secret: the field(s) it is written in and the random cores that must not persist."""

    kind: str
    fields: list[str]
    parts: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "fields": self.fields, "parts": self.parts}


def _one(text: str, *parts: str) -> tuple[list[str], list[str]]:
    return [text], list(parts)


def _provider_token(rng: random.Random) -> tuple[str, str]:
    """A provider token (prefix, random core) for the encoded and look-alike kinds."""
    prefix, n = rng.choice([("ghp_", 36), ("sk-proj-", 40), ("glpat-", 20), ("xoxb-", 30), ("hf_", 34), ("npm_", 36)])
    return prefix, rand(rng, n)


def _fullwidth(s: str) -> str:
    return "".join(_FULLWIDTH.get(c, c) for c in s)


def _cyrillic(rng: random.Random, s: str) -> str:
    out = [_CYRILLIC.get(c, c) if c in _CYRILLIC and rng.random() < 0.7 else c for c in s]
    if out == list(s):  # at least the prefix is disguised
        out = [_CYRILLIC.get(c, c) for c in s]
    return "".join(out)


def _zero_width(rng: random.Random, s: str) -> str:
    cuts = sorted(rng.sample(range(2, len(s) - 1), 3))
    for i, cut in enumerate(cuts):
        s = s[: cut + i] + rng.choice([ZWSP, "\u200c", "\u200d", "\u2060", "\ufeff"]) + s[cut + i :]
    return s


def _disguised(rng: random.Random, how: str) -> tuple[list[str], list[str]]:
    prefix, core = _provider_token(rng)
    if how == "fullwidth":
        written, part = _fullwidth(prefix + core), _fullwidth(core)
    elif how == "zero_width":
        written = part = _zero_width(rng, prefix + core)
    else:
        written = part = _cyrillic(rng, prefix + core)
    return _one(rng.choice([f"token {written} for the bot", f"the key {written} is for CI"]), part, core)


def _split(rng: random.Random) -> tuple[list[str], list[str]]:
    prefix, core = _provider_token(rng)
    cut = len(core) // 2
    a, b = core[:cut], core[cut:]
    return [f"deploy token, first half: {prefix}{a}", f"{b} is the rest of it"], [a, b]


def _prose(rng: random.Random) -> tuple[list[str], list[str]]:
    v = password(rng)
    who = rng.choice(["admin", "root", "the staging database", "the NAS", "Grafana", "the wifi", "my laptop", "the VPN"])
    text = rng.choice([
        f"The {who} password is {v}",
        f"password for {who} is {v} (do not share)",
        f"FYI the {who} passphrase is now {v}",
        f"remember: {who} password was changed to {v} yesterday",
        f"the {who} pwd is {v}",
    ])
    return _one(text, v)


def _hex_key(rng: random.Random) -> tuple[list[str], list[str]]:
    v = rand(rng, rng.choice([32, 48, 64, 80]), HEX)
    text = rng.choice([
        f"the webhook signing key {v} lives in the vault now",
        f"HMAC secret {v} for the billing callbacks",
        f"use {v} as the api key for the metrics service",
        f"staging encryption key is {v}",
        f"token {v} expires in March",
    ])
    return _one(text, v)


def _url_at(rng: random.Random) -> tuple[list[str], list[str]]:
    v = rand(rng, rng.randint(4, 8)) + "@" + (password(rng, 10, extra="!#@") if rng.random() < 0.5 else rand(rng, 10))
    scheme = rng.choice(["postgres", "mysql", "amqp", "mongodb", "https"])
    return _one(f"connect with {scheme}://app:{v}@db.internal:5432/main", v, v[v.index("@") + 1 :])


def _encoded_hex(rng: random.Random) -> tuple[list[str], list[str]]:
    prefix, core = _provider_token(rng)
    enc = (prefix + core).encode().hex()
    return _one(rng.choice([f"config blob {enc}", f"the hex-encoded token {enc} works", f"{enc}"]), enc, core)


def _encoded_b64(rng: random.Random) -> tuple[list[str], list[str]]:
    prefix, core = _provider_token(rng)
    enc = base64.b64encode((prefix + core).encode()).decode()
    return _one(rng.choice([f"ci secret (base64) {enc}", f"export ENCODED={enc}", f"stored as {enc} in the runner"]), enc, core)


def _basic(rng: random.Random) -> tuple[list[str], list[str]]:
    pw = password(rng)
    enc = base64.b64encode(f"deploy:{pw}".encode()).decode()
    return _one(rng.choice([f"Authorization: Basic: {enc}", f"send header Basic: {enc} to the registry", f"basic auth {enc}"]), enc, pw)


# kind -> maker(rng) returning (fields, parts)
MAKERS: dict[str, Callable[[random.Random], tuple[list[str], list[str]]]] = {
    "openai_key": lambda r: (lambda v: _one(f"use key sk-proj-{v} for the eval", v))(rand(r, 40)),
    "anthropic_key": lambda r: (lambda v: _one(f"ANTHROPIC key is sk-ant-api03-{v}", v))(rand(r, 60)),
    "github_token": lambda r: (lambda v: _one(f"push with ghp_{v} token", v))(rand(r, 36)),
    "github_pat": lambda r: (lambda v: _one(f"fine-grained github_pat_{v}", v))(rand(r, 60)),
    "gitlab_token": lambda r: (lambda v: _one(f"gitlab glpat-{v} works", v))(rand(r, 20)),
    "gitlab_runner_token": lambda r: (lambda v: _one(f"register the runner with glrt-{v}", v))(rand(r, 20, ALNUM + "_-")),
    "slack_token": lambda r: (lambda v: _one(f"bot token xoxb-{rand(r, 12, string.digits)}-{v}", v))(rand(r, 24)),
    "slack_webhook": lambda r: (lambda v: _one(f"alerts go to https://hooks.slack.com/services/T{v[:8]}/B{v[8:18]}/{v[18:]}", v[18:]))(rand(r, 42)),
    "stripe_key": lambda r: (lambda v: _one(f"billing uses sk_live_{v}", v))(rand(r, 24)),
    "google_api_key": lambda r: (lambda v: _one(f"maps key AIza{v}", v))(rand(r, 35)),
    "aws_access_key": lambda r: (lambda v: _one(f"aws id AKIA{v} in us-east-1", v))(rand(r, 16, string.ascii_uppercase + string.digits)),
    "aws_secret_key": lambda r: (lambda v: _one(f"the aws secret access key is {v}", v))(rand(r, 40, ALNUM + "+/")),
    "huggingface_token": lambda r: (lambda v: _one(f"hf pull with hf_{v}", v))(rand(r, 34)),
    "npm_token": lambda r: (lambda v: _one(f"publish via npm_{v}", v))(rand(r, 36)),
    "pypi_token": lambda r: (lambda v: _one(f"twine upload with pypi-AgEIcHlwaS5vcmc{v}", v))(rand(r, 60, ALNUM + "_-")),
    "sendgrid_key": lambda r: (lambda v: _one(f"mail key SG.{v[:22]}.{v[22:]}", v[:22], v[22:]))(rand(r, 65)),
    "telegram_bot_token": lambda r: (lambda v: _one(f"the bot answers as {r.randint(10**8, 10**10 - 1)}:AA{v}", v))(rand(r, 33, ALNUM + "_-")),
    "azure_storage_key": lambda r: (lambda v: _one(f"DefaultEndpointsProtocol=https;AccountName=logs;AccountKey={v}==;EndpointSuffix=core.windows.net", v))(rand(r, 86, ALNUM + "+/")),
    "jwt": lambda r: (lambda a, b, c: _one(f"session cookie eyJ{a}.eyJ{b}.{c}", a, b, c))(rand(r, 20), rand(r, 30), rand(r, 30)),
    "private_key": lambda r: (lambda v: _one(f"deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n{v}\n-----END OPENSSH PRIVATE KEY-----\nend", v))(rand(r, 64)),
    "password_in_url": lambda r: (lambda v: _one(f"connect to postgres://admin:{v}@db.internal:5432/app", v))(rand(r, 18)),
    "url_empty_user": lambda r: (lambda v: _one(f"cache is redis://:{v}@cache.internal:6379/0", v))(password(r)),
    "password_with_at": _url_at,
    "password_assignment": lambda r: (lambda v: _one(f"set DB_PASSWORD={v} in the env file", v))(password(r)),
    "password_in_prose": _prose,
    "bearer_token": lambda r: (lambda v: _one(f"curl -H 'Authorization: Bearer {v}' the api", v))(rand(r, 28, ALNUM + "._-")),
    "basic_auth": _basic,
    "high_entropy": lambda r: (lambda v: _one(f"the signing salt is {v} keep it", v))(rand(r, 44)),
    "hex_key": _hex_key,
    "hex_encoded_token": _encoded_hex,
    "base64_encoded_token": _encoded_b64,
    "fullwidth_token": lambda r: _disguised(r, "fullwidth"),
    "zero_width_token": lambda r: _disguised(r, "zero_width"),
    "cyrillic_token": lambda r: _disguised(r, "cyrillic"),
    "split_secret": _split,
    **corpus_more.M,
}
# kinds known only by their place (a flag, a clause, a line of a file): glued to a word they are no longer there
PLACED = corpus_more.PLACED


def placed(per_kind: int = 4, seed: int = 37) -> list[Planted]:
    """The kinds known by their place, from the templates of ``bench/data/secrets_kinds.json``
    (``secrets_templates.py``): ``per_kind`` of each."""
    from commonkeep.bench import secrets_templates

    return [Planted(kind, [text], parts) for kind, text, parts in secrets_templates.planted(per_kind, seed)]


def public_benign(n: int = 2400, seed: int = 41) -> list[str]:
    """Benign texts of public, high-entropy-by-design data and ordinary notes, from the templates of
    ``bench/data/secrets_benign.json``."""
    from commonkeep.bench import secrets_templates

    return secrets_templates.benign(n, seed)


def planted(n: int = 360, seed: int = 7) -> list[Planted]:
    """``n`` planted secrets cycling through every kind (``len(MAKERS)`` kinds)."""
    rng = random.Random(seed)
    kinds = list(MAKERS)
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        fields, parts = MAKERS[kind](rng)
        assert all(len(p) >= 6 for p in parts), (kind, parts)  # a short part would match anywhere
        out.append(Planted(kind, fields, parts))
    return out


def windows(part: str) -> list[str]:
    """The part and each of its ``WINDOW``-character windows (twice as long for hex, whose
    alphabet is small; runs of three words for a phrase): a secret cut short is still found."""
    if " " in part:  # a phrase of words (a seed phrase): its runs of three words, as 8 letters match prose
        words = part.split()
        return [part, *(" ".join(words[i : i + 3]) for i in range(len(words) - 2))]
    size = 2 * WINDOW if all(c in HEX for c in part.lower()) else WINDOW
    if len(part) <= size:
        return [part]
    return [part, *(part[i : i + size] for i in range(0, len(part) - size + 1, size // 2))]


def survivors(item: Planted, text: str) -> list[str]:
    """The windows of ``item``'s parts still present in ``text`` (``[]``: nothing survived); a
    part shorter than 6 characters (a PIN, a card code) counts as a whole word only."""
    short = [p for p in item.parts if len(p) < 6]
    found = [p for p in short if re.search(r"(?<![A-Za-z0-9])" + re.escape(p) + r"(?![A-Za-z0-9])", text)]
    return found + [w for p in item.parts if len(p) >= 6 for w in windows(p) if w in text]


_WORDS = ["build", "deploy", "billing", "search", "ingest", "auth", "cache", "runner", "docs", "frontend", "worker", "scheduler"]
_TOOLS = ["pytest -q", "ruff check .", "npm run build", "cargo test", "make lint", "uv sync", "docker compose up -d", "git log --oneline"]


def benign(n: int = 600, seed: int = 11) -> list[str]:
    """``n`` ordinary memory texts that hold no secret (and must come out of the gate unchanged)."""
    rng = random.Random(seed)

    def w() -> str:
        return rng.choice(_WORDS)

    makers: list[Callable[[], str]] = [
        lambda: f"Always run `{rng.choice(_TOOLS)}` before committing to the {w()} repo.",
        lambda: f"Never push directly to main in {w()}; open a merge request.",
        lambda: f"The user prefers {rng.choice(['tabs', 'spaces', 'short names', 'type hints', 'dataclasses'])} in {w()} code.",
        lambda: f"Fixed the {w()} flake in commit {rand(rng, 40, HEX)}.",
        lambda: f"Reverted {rand(rng, 7, HEX)} and {rand(rng, 12, HEX)} after the {w()} outage.",
        lambda: f"The {w()} image digest is sha256:{rand(rng, 64, HEX)}.",
        lambda: f"evidence {rand(rng, 32, HEX)} supports mem_20261202105616_{rand(rng, 4, string.ascii_lowercase + string.digits)}.",
        lambda: f"Request id {rng.choice(['', 'req-'])}{rand(rng, 8, HEX)}-{rand(rng, 4, HEX)}-{rand(rng, 4, HEX)}-{rand(rng, 4, HEX)}-{rand(rng, 12, HEX)} failed on {w()}.",
        lambda: f"Docs live at https://docs.example.org/{w()}/{w()}#section-{rng.randint(1, 9)}.",
        lambda: f"Connect to postgres://db.internal:5432/{w()} with the credentials from the vault.",
        lambda: f"The password policy says rotate every {rng.choice([30, 60, 90])} days.",
        lambda: f"The {w()} password is stored in 1Password under {w()}.",
        lambda: f"Never write a password or token into memory; the {w()} token is read from $TOKEN.",
        lambda: f'api_key = os.environ["{w().upper()}_API_KEY"]',
        lambda: f"password: ${{{w().upper()}_PASSWORD}}",
        lambda: f"Use basic auth for the {w()} staging site; credentials are in the vault.",
        lambda: f"The secret key rotation for {w()} happens on Mondays.",
        lambda: f"Bumped {w()} to v{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)} and pinned numpy>=1.26,<3.",
        lambda: f"See src/commonkeep/{w()}.py line {rng.randint(1, 900)} and docs/{w()}.md.",
        lambda: f"The {w()} service listens on 0.0.0.0:{rng.randint(1024, 65000)} in dev.",
        lambda: f"Use the {w()}_{w()}_{w()}_configuration_loader_factory helper for settings.",
        lambda: f"Internationalization and {w()} localization are handled by the i18n module.",
        lambda: f"Ping @{rng.choice(['alice', 'bob', 'carol'])} on {w()} questions; email {rng.choice(['alice', 'ops'])}@example.com.",
        lambda: f"The key insight: {w()} jobs must be idempotent.",
        lambda: f"Token budget for the {w()} agent is {rng.randint(1, 64)}k tokens per session.",
        lambda: f"Set LOG_LEVEL=debug and RETRIES={rng.randint(1, 9)} when debugging {w()}.",
        lambda: f"The {w()} cron runs at {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} UTC; see the runbook.",
        lambda: f"Base64 is used for the {w()} attachments, not for secrets.",
        lambda: f"Run `git cherry-pick {rand(rng, 10, HEX)}` onto the release branch.",
        lambda: f"The Russian docs say: пароль хранится в хранилище, see {w()}.",
        lambda: f"Use ＵＴＦ－８ everywhere in the {w()} exports.",
        *corpus_more.benign_more(rng),
    ]
    return [makers[i % len(makers)]() for i in range(n)]
