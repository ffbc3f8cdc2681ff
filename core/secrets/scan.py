"""Scan a store file for text the redactor would change: ``doctor``'s check for secrets that
reached disk by another way than commonkeep's write path (OMP, a hand edit).

Fast on the common case and bounded on the rare one:

- a JSONL line is parsed and its strings (keys and values) are checked one by one, as JSON
  decodes them: field names such as ``normalized_key`` do not send every line down the slow
  path, strings that repeat across lines (statuses, agents, refs) are checked once (``redact``
  caches them), and a token written with ``\\uXXXX`` escapes is seen as the characters it is;
- a line that is not JSON, or is a markdown/JSON file's line, is checked as text;
- a very long line is checked in overlapping windows, so one 100 MB line never costs more than
  a window's worth of scanner memory;
- an armoured block in a text file (``-----BEGIN …-----`` to its ``-----END``) is checked whole,
  so a certificate's or public key's lines are read as the public block they are, and a private
  key is reported at its first line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from commonkeep.secrets import redact

WINDOW = 64 * 1024
OVERLAP = 1024  # longer than any token a rule matches, so a secret across a window edge is seen whole
MAX_PARSED_LINE = 1024 * 1024


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def text_kinds(text: str) -> list[str]:
    """The kinds of secret in ``text``, scanning long text in overlapping windows."""
    if len(text) <= WINDOW:
        return redact(text).findings
    kinds: list[str] = []
    for start in range(0, len(text), WINDOW - OVERLAP):
        kinds += redact(text[start : start + WINDOW]).findings
        if start + WINDOW >= len(text):
            break
    return kinds


def line_kinds(line: str, *, as_json: bool) -> list[str]:
    """The kinds of secret in one line of a store file."""
    if as_json and len(line) <= MAX_PARSED_LINE:
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict | list):
            found: list[str] = []
            for s in _strings(doc):
                if len(s) >= 8:
                    found += text_kinds(s)
            return found  # strings as JSON decodes them: escapes (\\u0433…) cannot hide a token here
    return text_kinds(line)


# an armoured block (a certificate, a public key, a signature, or a private key) is read whole: its
# lines alone are runs of base64 that say nothing of what they are
_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,60})-----")
MAX_BLOCK_LINES = 400


def scan_file(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, kinds)`` for each line of ``path`` that holds something secret-like (an
    armoured block in a text file: its first line, the block read whole)."""
    as_json = path.suffix == ".jsonl"
    block: list[str] = []
    start = 0
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if block:
                block.append(line)
                if "-----END " in line or len(block) >= MAX_BLOCK_LINES:
                    kinds = text_kinds("\n".join(block))
                    block = []
                    if kinds:
                        yield start, kinds
                continue
            if not as_json and "-----BEGIN " in line and "-----END " not in line and _BEGIN.search(line):
                block, start = [line], n
                continue
            if len(line) < 8:
                continue
            kinds = line_kinds(line, as_json=as_json)
            if kinds:
                yield n, kinds
    if block:
        kinds = text_kinds("\n".join(block))
        if kinds:
            yield start, kinds
