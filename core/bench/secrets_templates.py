"""Corpora written as templates in data files (``bench/data/secrets_*.json``), filled at run time.

A template is text with ``{name}`` or ``{name:arg}`` slots, each filled from a seeded
``random.Random``; a slot written ``{!name:arg}`` is a secret: its value is one of the item's
``parts``, which must not survive the gate (``survivors``). Nothing in the data files is a secret;
every value is drawn when the corpus is built, so the repository never holds a real-looking one.

- ``secrets_kinds.json``: ``{"kinds": {kind: [template, ...]}}``: kinds known by their place
  (flags, URIs, config formats, headers around a UUID, prose in several languages, cards...).
- ``secrets_benign.json``: ``{"benign": [template, ...]}``: public, high-entropy-by-design data
  and ordinary text a coding agent keeps (lockfiles, ``go.sum``, SRI, public keys and JWKs,
  documentation keys, URLs with ids, log lines, configs without secrets, docstrings, tags).

Slots: ``hex:N``, ``HEX:N``, ``alnum:N``, ``lower:N`` (lower case and digits), ``alpha:N``,
``upper:N`` (upper case and digits), ``digits:N``, ``b58:N``, ``b32:N``, ``bech32:N``, ``b64:N`` (N random bytes, padded),
``b64u:N`` (URL-safe, unpadded), ``uuid``, ``UUID``, ``ulid``, ``pw`` (a person's password),
``words:N`` (a passphrase of N words), ``letters:N`` (lower-case letters), ``b32g:N`` (N groups of four lower-case
base32 characters), ``lgroups:N``/``lgroupsd:N`` (N groups of four letters, by spaces/dashes), ``bytes:N`` (a JSON
array of N bytes), ``word``, ``name``, ``host``, ``pkg``, ``ver``, ``int:A-B``,
``card`` (a Luhn-valid card number), ``cvv``, ``exp``, ``pick:a|b|c``; ``lb``/``rb`` write ``{``/``}``.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import uuid
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any

from commonkeep.bench.secrets_corpus_base import ALNUM, HEX, SYMBOLS, rand

_SLOT = re.compile(r"\{(!?)([a-zA-Z0-9]+)(?::([^{}]*))?\}")
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
WORDS = ["apple", "river", "stone", "cloud", "piano", "tiger", "orange", "window", "garden", "silver", "rocket", "candle", "ocean", "maple", "winter", "summer", "violet", "thunder", "meadow", "falcon", "harbor", "lantern", "marble", "copper", "velvet", "pepper", "cactus", "puzzle", "saddle", "timber", "walnut", "coral", "breeze", "canyon", "ember", "glacier", "hollow", "island", "jungle", "kettle", "ladder", "mango", "nickel", "orbit", "pebble", "quartz", "ribbon", "sparrow", "tulip", "umbrella", "valley", "wagon", "yellow", "zebra", "anchor", "basket", "cherry", "dragon", "feather", "sunflower", "butterfly", "dolphin", "lemonade", "paprika", "hazelnut"]
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "nia", "oscar", "peggy", "rupert", "sybil", "trent", "victor", "walter", "deploy", "ci", "admin", "app", "svc", "backup"]
HOSTS = ("db.internal", "cache.prod.local", "10.0.3.17", "api.example.com", "nas.home", "build-01", "mail.acme.io",
         "registry.acme.dev", "pg-primary.svc.cluster.local", "vpn.corp.example", "ldap.acme.io", "192.168.1.20")
PKGS = ["lodash", "react", "webpack", "typescript", "eslint", "express", "axios", "chalk", "debug", "semver", "uuid", "rxjs", "zod", "vite", "esbuild", "prettier", "jest", "mocha", "yargs", "commander", "dotenv", "tslib", "postcss", "tailwindcss"]


def _luhn(rng: random.Random) -> str:
    prefix = rng.choice(["4", "51", "52", "53", "54", "55", "37", "34", "6011", "35"])
    n = 15 if prefix in ("37", "34") else 16
    digits = [int(c) for c in prefix] + [rng.randrange(10) for _ in range(n - len(prefix) - 1)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 0:
            d *= 2
            d -= 9 if d > 9 else 0
        total += d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def _password(rng: random.Random) -> str:
    core = list(rand(rng, rng.randint(8, 13)))
    core.insert(rng.randrange(len(core) + 1), rng.choice(SYMBOLS))
    return "".join(core)


def _ulid(rng: random.Random) -> str:
    return rng.choice("01") + "".join(rng.choice(CROCKFORD) for _ in range(25))


def _rand(rng: random.Random, n: int, alphabet: str) -> str:
    if n < 4:  # too short to hold every class of its alphabet
        return "".join(rng.choice(alphabet) for _ in range(n))
    return rand(rng, n, alphabet)


def _fill(name: str, arg: str | None, rng: random.Random) -> str:
    n = int(arg) if arg and arg.isdigit() else 0
    makers: dict[str, Callable[[], str]] = {
        "hex": lambda: _rand(rng, n, HEX),
        "HEX": lambda: _rand(rng, n, HEX.upper()),
        "alnum": lambda: _rand(rng, n, ALNUM),
        "lower": lambda: _rand(rng, n, string.ascii_lowercase + string.digits),
        "alpha": lambda: _rand(rng, n, string.ascii_letters),
        "upper": lambda: _rand(rng, n, string.ascii_uppercase + string.digits),
        "digits": lambda: str(rng.randint(1, 9)) + "".join(rng.choice(string.digits) for _ in range(n - 1)),
        "b58": lambda: "".join(rng.choice(B58) for _ in range(n)),
        "b32": lambda: "".join(rng.choice(string.ascii_uppercase + "234567") for _ in range(n)),
        "bech32": lambda: "".join(rng.choice(BECH32) for _ in range(n)),
        "b64": lambda: base64.b64encode(rng.randbytes(n)).decode(),
        "b64u": lambda: base64.urlsafe_b64encode(rng.randbytes(n)).decode().rstrip("="),
        "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "UUID": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper(),
        "ulid": lambda: _ulid(rng),
        "pw": lambda: _password(rng),
        "words": lambda: " ".join(rng.choice(WORDS) for _ in range(n or 4)),
        "letters": lambda: _rand(rng, n, string.ascii_lowercase),
        "b32g": lambda: " ".join(_rand(rng, 4, string.ascii_lowercase + "234567") for _ in range(n or 8)),
        "lgroups": lambda: " ".join(_rand(rng, 4, string.ascii_lowercase) for _ in range(n or 4)),
        "lgroupsd": lambda: "-".join(_rand(rng, 4, string.ascii_lowercase) for _ in range(n or 4)),
        "bytes": lambda: "[" + ",".join(str(rng.randrange(256)) for _ in range(n or 64)) + "]",
        "word": lambda: rng.choice(WORDS),
        "name": lambda: rng.choice(NAMES),
        "host": lambda: rng.choice(HOSTS),
        "pkg": lambda: rng.choice(PKGS),
        "ver": lambda: f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}",
        "int": lambda: str(rng.randint(*map(int, (arg or "0-9").split("-")))),
        "card": lambda: _luhn(rng),
        "cvv": lambda: "".join(rng.choice(string.digits) for _ in range(3)),
        "exp": lambda: f"{rng.randint(1, 12):02d}/{rng.randint(27, 33)}",
        "pick": lambda: rng.choice((arg or "").split("|")),
        "lb": lambda: "{",
        "rb": lambda: "}",
    }
    if name not in makers:
        raise ValueError(f"unknown slot {{{name}}}")
    return makers[name]()


def expand(template: str, rng: random.Random) -> tuple[str, list[str]]:
    """The template filled, and the values of its secret slots (``{!…}``)."""
    parts: list[str] = []

    def one(m: re.Match[str]) -> str:
        value = _fill(m.group(2), m.group(3), rng)
        if m.group(1):
            parts.append(value)
        return value

    return _SLOT.sub(one, template), parts


@lru_cache(maxsize=4)
def data(name: str) -> Any:
    """A data file of ``commonkeep.bench.data`` (``secrets_kinds.json``, ``secrets_benign.json``)."""
    return json.loads((resources.files("commonkeep.bench.data") / name).read_text(encoding="utf-8"))


def kinds() -> dict[str, list[str]]:
    out: dict[str, list[str]] = data("secrets_kinds.json")["kinds"]
    return out


def planted(per_kind: int = 3, seed: int = 37) -> list[tuple[str, str, list[str]]]:
    """``(kind, text, parts)``: ``per_kind`` items of every kind, cycling through its templates."""
    rng = random.Random(seed)
    out = []
    for kind, templates in kinds().items():
        for i in range(per_kind):
            text, parts = expand(templates[i % len(templates)], rng)
            out.append((kind, text, parts))
    return out


def benign(n: int = 2400, seed: int = 41) -> list[str]:
    """``n`` benign texts, cycling through the templates of ``secrets_benign.json``."""
    rng = random.Random(seed)
    templates: list[str] = data("secrets_benign.json")["benign"]
    return [expand(templates[i % len(templates)], rng)[0] for i in range(n)]


def survivors(parts: list[str], text: str) -> list[str]:
    """What of ``parts`` is still in ``text``: a part of 8+ characters by any 8-character window (a
    secret cut short is still found), a shorter one (a PIN, a card code) as a whole word."""
    out = []
    for p in parts:
        if len(p) < 8:
            if re.search(r"(?<![A-Za-z0-9])" + re.escape(p) + r"(?![A-Za-z0-9])", text):
                out.append(p)
            continue
        if " " in p:  # a passphrase: any two of its words in a row
            words = p.split()
            out += [" ".join(words[i : i + 2]) for i in range(len(words) - 1) if " ".join(words[i : i + 2]) in text]
            continue
        out += [p[i : i + 8] for i in range(0, len(p) - 7) if p[i : i + 8] in text][:1]
    return out
