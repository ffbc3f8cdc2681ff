"""Issue 22 §5: terminal control characters are never stored raw nor printed raw, and they count
towards the risk score.

An OSC 8 hyperlink shows one text and opens another address (a collector); a CSI sequence can
clear the screen or hide a line. Capture writes each control as its visible ``\\xNN`` escape in
the text, tags, evidence refs and provenance; every CLI text output escapes what another writer
stored raw.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.governance.conftest import run_cli

ESC, BEL, CSI = "\x1b", "\x07", "\x9b"
LINK = f"Read {ESC}]8;;https://collector.example/x{BEL}the setup guide{ESC}]8;;{BEL} before deploying."
RAW = "[\x00-\x08\x0b-\x1f\x7f-\x9f]"


def test_capture_stores_controls_visible_and_scores_them(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import re

    code, out, err = run_cli(capsys, "write", "--root", str(root), "--tags", f"setup,{ESC}[31mred", "--evidence",
                             f"docs/{CSI}2J.md", "--evidence", "b", "--session", f"s{ESC}[1A", LINK)
    assert code == 0, err
    line = (root / "inbox" / "captured.jsonl").read_text(encoding="utf-8")
    assert not re.search(RAW, json.loads(line)["text"] + json.dumps(json.loads(line), ensure_ascii=False))
    cand = json.loads(line)
    assert cand["text"] == LINK.replace(ESC, "\\x1b").replace(BEL, "\\x07")  # what it said, visible
    # a tag holding an escape is shown visibly, or taken whole by the strict single-value rule of the
    # secret gate (it reads as a token there); either way never raw
    assert ({"\\x1b[31mred", "[REDACTED:token_in_field]"} & set(cand["tags"])) and "docs/\\x9b2J.md" in cand["evidence_refs"]
    assert cand["provenance"]["session_id"] == "s\\x1b[1A"
    assert cand["poisoning_risk"] == "high" and "terminal_control_characters" in cand["poisoning_risk_reasons"]


def test_a_cursor_sequence_alone_scores_medium() -> None:
    from commonkeep.gate.poisoning import assess_text

    assert assess_text(f"Build with {ESC}[2Kmake.").risk == "medium"
    assert assess_text("Build with \\x1b[2Kmake.").risk == "medium"  # as capture stored it
    assert assess_text("Build with make; tabs\tand\nnewlines are fine.").risk == "low"


def test_no_cli_path_prints_a_raw_control_another_writer_stored(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.patches.curate import record_from_candidate

    rec = record_from_candidate({"id": "cap_20261203000000_ctl00001", "text": f"Deploy with make release. {LINK}",
                                 "evidence_refs": ["a"]}, layer="L2")
    with (root / "memory" / "L2.playbooks.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")  # a raw append, as another writer could do
    for args in (["project"], ["search", "deploy"], ["select", "deploy"]):
        code, out, err = run_cli(capsys, *args, "--root", str(root))
        assert code == 0, (args, err)
        assert "Deploy with make release" in out and ESC not in out and BEL not in out, args
        assert "\\x1b]8;;" in out, args  # shown, not obeyed
    code, out, _ = run_cli(capsys, "search", "deploy", "--root", str(root), "--json")
    assert ESC not in out and json.loads(out)  # JSON stays JSON (escaped as \u001b by the JSON writer)


def test_every_control_but_newline_and_tab_is_made_visible_at_capture() -> None:
    """The quick look (the candidate's JSON) must not miss a control JSON writes with a short escape."""
    from commonkeep.store.candidates import new_candidate

    for code in [*range(0x00, 0x20), *range(0x7F, 0xA0)]:
        ch = chr(code)
        cand = new_candidate(f"keep {ch} this line visible", tags=[f"t{ch}"], evidence_refs=[f"e{ch}", "b"])
        raw = [ch in cand["text"], ch in cand["tags"][0], ch in cand["evidence_refs"][0]]
        if ch in "\n\t":
            assert raw[0], repr(ch)
        else:
            assert not any(raw), repr(ch)
