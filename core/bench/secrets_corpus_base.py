"""The random parts of the generated corpus (``corpus.py``, ``corpus_more.py``): alphabets, and
random strings holding every character class of their alphabet."""

from __future__ import annotations

import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
SYMBOLS = "!#%&*?+^~"


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters of ``alphabet`` holding every character class the alphabet has."""
    classes = [c for c in (str.isupper, str.islower, str.isdigit) if any(c(ch) for ch in alphabet)]
    while True:
        s = "".join(rng.choice(alphabet) for _ in range(n))
        if all(any(c(ch) for ch in s) for c in classes):
            return s


def password(rng: random.Random, n: int | None = None, extra: str = SYMBOLS) -> str:
    """A human-made password: letters, digits and a symbol or two."""
    n = n or rng.randint(10, 16)
    core = list(rand(rng, n - 2))
    for _ in range(2):
        core.insert(rng.randrange(len(core) + 1), rng.choice(extra))
    return "".join(core)
