"""``--json`` on stdout parses back to the stored values, but its bytes carry no character a
terminal would obey or hide behind (C1 controls such as CSI U+009B, bidi overrides such as
U+202E): those are written as ``\\uXXXX`` escapes (``commonkeep.util.jsonout``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from commonkeep.util.jsonout import dumps

NASTY = "Use black for formatting x\u009b2KApproved\u202e evil \u2066y\u2069 \u200f\u061c\x7f\x1b[0m"
# capture stores terminal controls visible (issue 22): C1, DEL and ESC as \xNN text; bidi stays and is escaped in JSON
STORED = NASTY.replace("\u009b", "\\x9b").replace("\x7f", "\\x7f").replace("\x1b", "\\x1b")
RAW = [c.encode() for c in ("\u009b", "\u202e", "\u2066", "\u2069", "\u200f", "\u061c", "\x7f", "\x1b")]


def ck(*args: str) -> bytes:
    out = subprocess.run([sys.executable, "-m", "commonkeep.cli", *args], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


def _clean(stdout: bytes) -> Any:
    assert not [c for c in RAW if c in stdout], stdout
    assert b"\\u202e" in stdout
    return json.loads(stdout)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_json_outputs_escape_c1_and_bidi_controls_and_parse_back_to_the_same_text(tmp_path: Path) -> None:
    root = str(tmp_path / "r")
    ck("init", "--root", root)
    ck("write", NASTY, "--root", root, "--evidence", "a", "--evidence", "b")

    inbox = _clean(ck("inbox", "--json", "--root", root))  # commonkeep.store.cli
    assert inbox[0]["text"] == STORED
    pid = json.loads(ck("curate", "--root", root, "--role", "librarian", "--min-confidence", "0", "--min-evidence", "0", "--json"))["patch_id"]
    patch = _clean(ck("patches", "--show", pid, "--json", "--root", root))  # commonkeep.governance.cli
    assert STORED in _strings(patch)
    ck("apply", pid, "--ops", "op_001", "--root", root, "--role", "librarian")
    projected = _clean(ck("project", "--json", "--root", root))  # commonkeep.recall.cli
    assert STORED in projected["text"]
    found = _clean(ck("search", "formatting", "--json", "--root", root))  # commonkeep.recall.search.cli
    assert found["results"][0]["statement"] == STORED


def test_the_escaping_is_lossless_and_leaves_other_text_alone() -> None:
    value = {"k\u202e": ["\u009b\\\u202e", "é ß 日本 ✓", "\ud800", 1.5, None], "tab\t": "\x00"}
    text = dumps(value)
    assert json.loads(text) == value
    assert "é ß 日本 ✓" in text  # ensure_ascii=False stays the default
    assert text.encode("utf-8", errors="strict")  # a lone surrogate no longer breaks the write
    assert dumps(value, indent=None, ensure_ascii=True) == json.dumps(value)
