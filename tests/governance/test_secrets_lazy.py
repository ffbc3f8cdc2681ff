"""The secret rules' regular expressions are compiled on first use (``secrets/lazy.py``): each one
compiles, and a text with no secret leaves the rules it never needs uncompiled."""

from __future__ import annotations

import re
import subprocess
import sys

from commonkeep.secrets import lazy, rules, structure  # noqa: F401  (their patterns register)


def test_every_lazy_pattern_compiles_to_what_re_compiles() -> None:
    assert len(lazy.MADE) >= 60
    for p in lazy.MADE:
        rx = p.compiled()
        assert rx.pattern == p.pattern
        assert rx == re.compile(p.pattern, p._flags)


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    p, rx = lazy.lazy(r"(?i)(?P<k>key)\s*=\s*(\w+)"), re.compile(r"(?i)(?P<k>key)\s*=\s*(\w+)")
    text = "a KEY = v1, key=v2 and key = v3"
    assert [m.span() for m in p.finditer(text)] == [m.span() for m in rx.finditer(text)]
    assert p.findall(text) == rx.findall(text) and p.split(text) == rx.split(text)
    assert p.sub("X", text) == rx.sub("X", text) and p.subn(lambda m: "Y", text, 1) == rx.subn(lambda m: "Y", text, 1)
    assert p.search(text, 5).span() == rx.search(text, 5).span()  # type: ignore[union-attr]
    assert p.match(text) is None and p.fullmatch("key=1").group("k") == "key"  # type: ignore[union-attr]
    assert (p.groups, dict(p.groupindex), p.flags) == (rx.groups, dict(rx.groupindex), rx.flags)
    assert {p: 1}[p] == 1  # the rules key dicts by pattern


def test_redacting_plain_text_in_a_new_process_compiles_few_rules() -> None:
    code = ("from commonkeep.secrets import redact, lazy;"
            "redact('The release job runs the integration tests before merging on Fridays.');"
            "print(sum(p._rx is not None for p in lazy.MADE), len(lazy.MADE))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    used, made = map(int, out.stdout.split())
    assert used <= 3 < made
