"""JSON written exactly as JavaScript's ``JSON.stringify`` writes it.

OMP's OmpKeep extension (TypeScript) shares the store, so a line we write must be the bytes JS
would write for the same value (contracts/ompkeep-store.md §3.5 and §14.10): compact separators,
raw non-ASCII, integral floats as integers, and ``Number#toString`` formatting for very small
or very large magnitudes. Key order is the dict's insertion order.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

_SURROGATE = re.compile(r"[\ud800-\udfff]")
# What Python's float repr prints where JS differs: "1.0" (integral) and exponent forms.
# A match inside a string is only a false alarm that takes the exact slow path.
_PY_ONLY_FLOAT = re.compile(r"\d\.0(?![0-9])|\de[+-]\d")


def js_number(x: float | int) -> str:
    """Format a number as JS ``Number#toString`` does (shortest round-trip digits)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x) or math.isinf(x):
        return "null"  # JSON.stringify writes NaN and Infinity as null
    if x == 0:
        return "0"  # also -0
    sign, digits_t, exp = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    assert isinstance(exp, int)
    # n: position of the decimal point relative to the start of the digits
    n = len(digits_t) + exp
    k = len(digits)
    s = "-" if sign else ""
    if k <= n <= 21:
        return s + digits + "0" * (n - k)
    if 0 < n <= 21:
        return s + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return s + "0." + "0" * (-n) + digits
    e = n - 1
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{s}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def _needs_custom(x: float) -> bool:
    # Python's repr agrees with JS for 1e-4 <= |x| < 1e16 except integral values ("1.0").
    ax = abs(x)
    return not (1e-4 <= ax < 1e16) or x.is_integer() or math.isnan(x)


def _normalise(obj: Any) -> tuple[Any, bool]:
    """Return (obj with integral floats as ints, whether a float still needs custom text)."""
    if isinstance(obj, float):
        if x_is_int(obj):
            return int(obj), False
        return obj, _needs_custom(obj)
    if isinstance(obj, dict):
        out: dict[str, Any] | None = None
        custom = False
        for key, value in obj.items():
            new, c = _normalise(value)
            custom = custom or c
            if new is not value:
                if out is None:
                    out = dict(obj)
                out[key] = new
        return (obj if out is None else out), custom
    if isinstance(obj, list):
        lst: list[Any] | None = None
        custom = False
        for i, value in enumerate(obj):
            new, c = _normalise(value)
            custom = custom or c
            if new is not value:
                if lst is None:
                    lst = list(obj)
                lst[i] = new
        return (obj if lst is None else lst), custom
    return obj, False


def x_is_int(x: float) -> bool:
    """Integral floats that print the same as a Python int (beyond 2**53 JS pads with zeros)."""
    return x.is_integer() and abs(x) < 2**53


def _escape_surrogates(text: str) -> str:
    # JSON.stringify writes lone surrogates as \\udXXX escapes (well-formed JSON.stringify).
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _slow(obj: Any, indent: int | None, level: int = 0) -> str:
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [json.dumps(k, ensure_ascii=False) + (": " if indent else ":") + _slow(v, indent, level + 1) for k, v in obj.items()]
        return _join("{", "}", items, indent, level)
    if isinstance(obj, list):
        if not obj:
            return "[]"
        return _join("[", "]", [_slow(v, indent, level + 1) for v in obj], indent, level)
    if isinstance(obj, float | int) and not isinstance(obj, bool):
        return js_number(obj)
    return json.dumps(obj, ensure_ascii=False)


def _join(open_: str, close: str, items: list[str], indent: int | None, level: int) -> str:
    if not indent:
        return open_ + ",".join(items) + close
    pad = "\n" + " " * (indent * (level + 1))
    return open_ + pad + ("," + pad).join(items) + "\n" + " " * (indent * level) + close


def dumps_line(obj: Any) -> str:
    """One compact JSONL line (without the newline), byte-identical to ``JSON.stringify(obj)``."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if _PY_ONLY_FLOAT.search(text):
        norm, custom = _normalise(obj)
        text = _slow(norm, None) if custom else json.dumps(norm, ensure_ascii=False, separators=(",", ":"))
    return text


def encode_line(obj: Any) -> bytes:
    """``dumps_line`` as UTF-8 bytes, lone surrogates escaped as JS writes them."""
    text = dumps_line(obj)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _escape_surrogates(text).encode("utf-8")


def dumps_pretty(obj: Any, trailing_newline: bool = True) -> str:
    """``JSON.stringify(obj, null, 2)``, plus ``"\\n"`` when the file type has one (patches do)."""
    norm, custom = _normalise(obj)
    text = _slow(norm, 2) if custom else json.dumps(norm, ensure_ascii=False, indent=2)
    if _SURROGATE.search(text):
        text = _escape_surrogates(text)
    return text + ("\n" if trailing_newline else "")
