"""Selection for a prompt (contract §10): sections, caps, skips and the three runtime files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.recall.select import CAPS, TOTAL_BUDGET, select_for_prompt, skip_reason
from tests.recall.conftest import make_record, seed


@pytest.mark.parametrize("prompt", ["", "   ", "ok", "/render-memory", "thanks!", "ok thanks"])
def test_trivial_prompts_get_no_injection_and_write_nothing(root: Path, prompt: str) -> None:
    assert skip_reason(prompt) is not None
    sel = select_for_prompt(root, prompt)
    assert sel.skipped and sel.paths == []
    assert not (root / "runtime" / "context.md").exists()


def test_scoped_selection_writes_context_selected_memory_and_stats(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMONKEEP_NOW", "2026-12-02T10:00:00.000Z")
    rules = [
        make_record(f"mem_rule{i}", f"Hard rule number {i}.", confidence=0.9, ruleType="convention")
        for i in range(10)
    ]
    seed(
        root,
        [
            *rules,
            make_record("mem_pytest", "Run the test suite with pytest -q.", ruleType="testing"),
            make_record("mem_cat", "The office cat is called Tom."),
            make_record("mem_dispute", "Tabs or spaces?", status="contested"),
        ],
    )
    seed(
        root,
        [
            {
                "id": f"inq_{i}",
                "question": f"Open question {i}?",
                "context": "c",
                "tags": [],
                "sessions_touched": [],
                "first_seen": "x",
                "last_seen": "x",
                "status": "open",
                "priority": "high" if i == 4 else "low",
            }
            for i in range(5)
        ],
        file="memory/inquiries.jsonl",
    )
    (root / "daily" / "2026-12-02.md").write_text("Worked on the release.\n", encoding="utf-8")
    (root / "scratchpad.md").write_text(
        "# Scratchpad\n\n- [ ] ship it\n- [x] done already\n", encoding="utf-8"
    )
    sel = select_for_prompt(root, "How do I run the test suite?")
    text = (root / "runtime" / "context.md").read_text(encoding="utf-8")
    assert text == sel.text and text.startswith("# Persistent Intelligence Context\n\n## Hard Rules\n")
    order = [
        text.index(h)
        for h in (
            "## Hard Rules",
            "## Selected Memory",
            "## Scratchpad",
            "## Contested Memory",
            "## Open Inquiries",
            "## Daily Log (2026-12-02)",
        )
    ]
    assert order == sorted(order)
    assert len(sel.hard_rules) == 8  # at most 8 hard rules
    assert [r["id"] for r in sel.selected][0] == "mem_pytest"
    assert "- [ ] ship it" in text and "done already" not in text
    assert "Tabs or spaces?" in text
    assert len(sel.inquiries) == 3 and sel.inquiries[0]["id"] == "inq_4"  # high priority first, at most 3
    raw = (root / "runtime" / "selected_memory.json").read_text(encoding="utf-8")
    assert raw.endswith("]\n")
    assert [r["id"] for r in json.loads(raw)] == [r["id"] for r in [*sel.hard_rules, *sel.selected]]
    stats = json.loads((root / "runtime" / "injection-stats.json").read_text(encoding="utf-8"))
    assert stats["injectionMode"] == "scoped" and stats["charCount"] == len(text)
    assert stats["hardRuleCount"] == 8 and stats["inquiryCount"] == 3 and stats["contestedMemoryCount"] == 1
    assert stats["dailyDigestChars"] == len("Worked on the release.")


def test_sections_respect_their_caps_and_the_total_budget(root: Path) -> None:
    long = "word " * 300
    seed(
        root,
        [
            make_record(
                f"mem_{i}",
                f"Release notes item {i} {long}",
                confidence=0.9,
                ruleType="convention" if i % 2 else None,
            )
            for i in range(30)
        ],
    )
    (root / "daily").mkdir(exist_ok=True)
    from commonkeep.util.timeutil import today

    (root / "daily" / f"{today()}.md").write_text(
        "\n".join(f"line {i} {long}" for i in range(40)), encoding="utf-8"
    )
    sel = select_for_prompt(root, "release notes item")
    assert len(sel.text) <= TOTAL_BUDGET
    for title, cap in (("Hard Rules", CAPS["hard_rules"]), ("Selected Memory", CAPS["selected"])):
        if f"## {title}" in sel.text:
            section = sel.text.split(f"## {title}")[1].split("\n## ")[0]
            assert len(f"## {title}{section.rstrip()}") <= cap
    assert sel.daily_chars <= CAPS["daily"]
    assert len(sel.selected) <= 12


def test_policy_only_mode_writes_an_empty_selection(root: Path) -> None:
    (root / "config.json").write_text(
        json.dumps({"retrieval": {"injectionMode": "policy_only"}}), encoding="utf-8"
    )
    seed(root, [make_record("mem_a", "Use pytest.")])
    sel = select_for_prompt(root, "how do I use pytest here")
    assert sel.mode == "policy_only" and "## Memory Policy" in sel.text
    assert (root / "runtime" / "selected_memory.json").read_text(encoding="utf-8") == "[]\n"


def test_one_long_record_does_not_empty_selected_memory(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from commonkeep.cli import main

    long = ("Deploy tests must pass before a deploy; the deploy tests live in ci/deploy. " * 110)[:7_800]
    seed(
        root,
        [
            make_record("mem_long", long),
            make_record("mem_short", "Deploy only after the tests pass: run make deploy."),
        ],
    )
    assert main(["select", "how do I deploy after tests", "--dry-run", "--root", str(root)]) == 0
    text = capsys.readouterr().out
    assert "## Selected Memory" in text
    assert "- [mem_short] Deploy only after the tests pass: run make deploy. (L2, conf 0.80)" in text
    long_line = next(ln for ln in text.splitlines() if ln.startswith("- [mem_long]"))
    assert "…" in long_line and len(long_line) < 1_100  # cut, not dropped, and not 7,800 chars
    assert not (root / "runtime" / "context.md").exists()  # --dry-run wrote nothing


def test_records_too_long_for_the_room_left_are_skipped_and_shorter_ones_still_shown(root: Path) -> None:
    filler = "deploy tests " * 80  # ~1,000 chars each: about five fit in the 6,000-char section
    seed(
        root,
        [
            *[make_record(f"mem_big{i}", f"Big {i}: {filler}", confidence=0.9 - i / 100) for i in range(7)],
            # only one of the two terms: ranked after every big record
            make_record("mem_small", "Deploy with make release.", confidence=0.5),
        ],
    )
    sel = select_for_prompt(root, "deploy tests", write=False)
    section = sel.text.split("## Selected Memory")[1].split("\n## ")[0]
    assert len("## Selected Memory" + section.rstrip()) <= CAPS["selected"]
    ids = [r["id"] for r in sel.selected]
    assert ids[-1] == "mem_small" and 3 <= len(ids) < 8  # big ones were skipped, the small one still fits
    assert all(f"- [{i}]" in section for i in ids)  # what is reported is what is shown


def test_a_lone_surrogate_in_an_id_does_not_stop_the_context_being_written(root: Path) -> None:
    # A JS writer (OMP) can leave half a surrogate pair in a string; JSON carries it as \udcff.
    seed(
        root,
        [
            make_record("mem_rule\udcff", "Always run pytest before pushing.", confidence=0.9, ruleType="convention"),
            make_record("mem_c\udcff", "Tabs or spaces for pytest?", status="contested"),
        ],
    )
    sel = select_for_prompt(root, "how do I run pytest here please")
    context = (root / "runtime" / "context.md").read_text(encoding="utf-8")
    assert "- [mem_rule\ufffd] Always run pytest before pushing." in context
    assert "- [mem_c\ufffd] Tabs or spaces for pytest?" in context
    assert context == sel.text
    # the records themselves are passed on as they are (JSON escapes the lone surrogate)
    selected = json.loads((root / "runtime" / "selected_memory.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in selected] == ["mem_rule\udcff"]
