"""The text a hex or base64 run encodes, when it is readable: a secret may hide inside."""

from __future__ import annotations

import binascii

from commonkeep.secrets.lazy import lazy

_HEX_PAIRS = lazy(r"(?:[0-9a-fA-F]{2})+")


_URLSAFE = str.maketrans("-_", "+/")


def _decoded(token: str) -> str | None:
    """The text a hex or base64 run encodes, when it is readable; else None."""
    raw: bytes | None = None
    if _HEX_PAIRS.fullmatch(token):
        raw = bytes.fromhex(token)
    else:
        if token.isalpha() and (token.islower() or token.isupper()):
            return None
        body = token.rstrip("=")
        body += "=" * (-len(body) % 4)
        # ``base64.b64decode`` then ``urlsafe_b64decode`` (each skips the other's two characters)
        for text in (body, body.translate(_URLSAFE)):
            try:
                raw = binascii.a2b_base64(text.encode("ascii"))
                break
            except (binascii.Error, ValueError):
                continue
    if raw is None:
        return None
    try:
        s = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return s if s and s.isprintable() else None
