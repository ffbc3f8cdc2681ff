"""doctor's secret scan: per JSON string, windows on long lines, and the same answers as the
full-line redactor on everything it reports."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from commonkeep.governance.secrets import _ANY, _needs_scan
from commonkeep.governance.secrets.rules import find
from commonkeep.governance.secrets.scan import WINDOW, scan_file

TOKEN = "ghp_" + "".join(random.Random(7).choice(string.ascii_letters + string.digits) for _ in range(36))


def test_the_fast_pre_check_never_skips_a_text_the_rules_would_change() -> None:
    rng = random.Random(3)
    alpha = string.ascii_letters + string.digits + "+/_=-.:@ "
    anchors = ["sshpass -p ", " --token ", "IDENTIFIED BY ", "machine h login u password ", "-----BEGIN X KEY-----",
               "requirepass ", "AGE-SECRET-KEY-1", "$apr1$", "pass:", "://", "EyJ", "aIzA", "SK-", "Sg.", "XOX", "-----BEGIN", "Bearer", "BASIC", "HF_", "glpat-", "GLRT-",
               "ghp_", "GHS_", "github_pat_", "Pass", "PWD", "Kennwort", "senha", "Credential", "KEY"]
    for _ in range(20000):
        s = "".join(rng.choice(alpha) for _ in range(rng.randint(1, 70)))
        if rng.random() < 0.3:
            s = s[: len(s) // 2] + rng.choice(anchors) + s[len(s) // 2 :]
        if _ANY.search(s) is not None or find(s):  # the first regex's anchors, the structure rules' finds
            assert _needs_scan(s), s


def test_jsonl_strings_are_scanned_as_decoded_and_field_names_do_not_count(tmp_path: Path) -> None:
    f = tmp_path / "captured.jsonl"
    rows = [{"id": f"cap_{i}", "text": f"Use port {5000 + i} for staging.", "normalized_key": "use-port"} for i in range(50)]
    rows[10] = {"id": "cap_x", "text": f"the token is {TOKEN}"}
    rows[20] = {"id": "cap_y", "text": "token " + TOKEN.replace("A", "\u0410")}  # Cyrillic A, \\u-escaped on disk
    f.write_text("\n".join(json.dumps(r, ensure_ascii=True) for r in rows) + "\nnot json " + TOKEN + "\n", encoding="utf-8")
    assert [n for n, _ in scan_file(f)] == [11, 21, 51]


def test_a_secret_deep_in_a_very_long_line_is_found_and_the_line_is_scanned_in_windows(tmp_path: Path) -> None:
    f = tmp_path / "notes.md"
    for at in (WINDOW - 10, 3 * WINDOW + 7, 10):  # across a window edge, deep inside, at the start
        f.write_text("x " * (2 * WINDOW) + "\n" + "y" * at + " " + TOKEN + " " + "z " * WINDOW + "\n", encoding="utf-8")
        found = list(scan_file(f))
        assert [n for n, _ in found] == [2] and "github_token" in found[0][1], at
