"""A queue that announces itself (issue 36): the person learns that memories wait without opening
anything. One count (``commonkeep.store.backlog``), said in the same words by ``doctor``, the
agent's recall block, the Hermes session start and the digest file a notifier can watch.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from commonkeep.store.backlog import Backlog, backlog, digest_path, write_digest
from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store

WEEKS_AGO = "2026-10-09T09:00:00.000Z"
TODAY = "2026-12-04T09:00:00.000Z"  # 8 weeks later


def _write(root: Path, text: str, when: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COMMONKEEP_NOW", when)
    cand = new_candidate(text, provenance={"agent": "hermes", "session_id": "s1"})
    return str(Store(root).append_candidate(cand)["id"])


@pytest.fixture
def waiting(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three candidates waiting (the oldest 8 weeks old), one already rejected."""
    from commonkeep.reviews.review import reject

    _write(root, "The staging database listens on port 5433.", WEEKS_AGO, monkeypatch)
    _write(root, "Release notes are written before tagging.", "2026-11-30T10:00:00.000Z", monkeypatch)
    gone = _write(root, "Lunch is at noon today.", "2026-12-01T10:00:00.000Z", monkeypatch)
    _write(root, "The CI pipeline runs the full suite on Fridays.", "2026-12-03T10:00:00.000Z", monkeypatch)
    reject(root, [gone], role="librarian", reason="not durable")
    monkeypatch.setenv("COMMONKEEP_NOW", TODAY)
    return root


def test_the_count_and_the_oldest_age_in_one_line(waiting: Path) -> None:
    queue = backlog(waiting)
    assert queue == Backlog(3, WEEKS_AGO)
    assert queue.line() == "3 memories wait for review (oldest 8 weeks): run `commonkeep review`"
    assert Backlog(1, TODAY).line().startswith("1 memory waits for review (oldest just now)")
    assert Backlog(0, None).line() == ""


def test_the_count_agrees_with_the_parsed_inbox_whatever_the_line_looks_like(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines another writer formatted its own way, a status inside a nested object, a text that
    quotes a status, a broken line: the cheap count reads them as a full parse does."""
    _write(root, 'He wrote {"status":"new"} in the ticket.', WEEKS_AGO, monkeypatch)
    inbox = Store(root).layout.inbox
    spaced = {"id": "cap_x1", "created_at": "2026-09-01T00:00:00.000Z", "source": {"type": "chat", "ref": "a"},
              "text": "Spaced out by another writer.", "tags": [], "evidence_refs": ["a"], "status": "new"}
    nested = {"id": "cap_x2", "created_at": "2026-11-01T00:00:00.000Z", "source": {"type": "chat", "ref": "a"},
              "text": "Nested status.", "tags": [], "evidence_refs": ["a"], "status": "rejected",
              "provenance": {"status": "new"}}
    with inbox.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(spaced, indent=None, separators=(", ", ": ")) + "\n")
        fh.write(json.dumps(nested) + "\n")
        fh.write('{"id": "cap_broken", "status": "new", \n')
    parsed = [c for c in Store(root, warn=False).candidates() if c.get("status") == "new"]
    queue = backlog(root)
    assert queue.count == len(parsed) + 1 == 3  # the broken line is counted as waiting: it is still there to see
    assert queue.oldest == "2026-09-01T00:00:00.000Z"


def test_ten_thousand_pending_are_counted_without_parsing_them(root: Path) -> None:
    inbox = Store(root).layout.inbox
    row = {"id": "", "created_at": "", "source": {"type": "chat", "ref": "daily/x.md"}, "text": "The service %d caches invoices nightly.",
           "tags": ["svc"], "evidence_refs": ["daily/x.md"], "status": "new", "provenance": {"agent": "omp", "session_id": "s"}}
    lines = []
    for i in range(10_000):
        row.update(id=f"cap_{i:05d}", created_at=f"2026-11-{1 + i % 28:02d}T10:00:00.000Z", text=row["text"].replace("%d", str(i)))
        lines.append(json.dumps(row))
    inbox.write_text("\n".join(lines) + "\n", encoding="utf-8")
    started = time.perf_counter()
    queue = backlog(root)
    spent = time.perf_counter() - started
    assert queue == Backlog(10_000, "2026-11-01T10:00:00.000Z")
    print(f"\nbacklog at 10,000 pending: {spent * 1000:.1f} ms")


def test_the_digest_follows_the_count(waiting: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_digest(waiting)
    assert path == digest_path(waiting) == waiting / "reports" / "review-digest.txt"
    text = path.read_text(encoding="utf-8")
    assert text.splitlines() == ["3 memories wait for review (oldest 8 weeks): run `commonkeep review`",
                                 "waiting: 3", f"oldest: {WEEKS_AGO}", "date: 2026-12-04"]
    before = path.stat().st_mtime_ns
    assert write_digest(waiting) == path and path.stat().st_mtime_ns == before  # unchanged: not rewritten
    _write(waiting, "Feature flags live in flags.yaml.", TODAY, monkeypatch)
    write_digest(waiting)
    assert "waiting: 4" in path.read_text(encoding="utf-8")


def test_an_empty_queue_makes_no_digest_but_empties_one(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commonkeep.reviews.review import reject

    assert write_digest(root) is None and not digest_path(root).exists()
    cid = _write(root, "Feature flags live in flags.yaml.", TODAY, monkeypatch)
    write_digest(root)
    reject(root, [cid], role="librarian", reason="test")
    write_digest(root)
    assert digest_path(root).read_text(encoding="utf-8").startswith("No memory waits for review.\nwaiting: 0\n")


def test_doctor_says_the_count_and_the_oldest_age(waiting: Path) -> None:
    from commonkeep.governance.plugin import commonkeep_doctor_checks

    found = {f["code"]: f for f in commonkeep_doctor_checks(str(waiting))}
    assert found["review_pending"]["severity"] == "info"
    assert "3 candidate(s) wait for curation or review (oldest 8 weeks)" in found["review_pending"]["message"]
    assert "waiting: 3" in digest_path(waiting).read_text(encoding="utf-8")


def test_the_agents_recall_block_ends_with_the_queue(waiting: Path) -> None:
    from commonkeep.recall.select import select_for_prompt

    sel = select_for_prompt(waiting, "where does the staging database listen?")
    assert sel.text.rstrip().endswith(
        "## Review Queue\n3 memories wait for review (oldest 8 weeks): run `commonkeep review`")
    assert len(sel.text) <= 14_001
    assert digest_path(waiting).exists()


def test_the_agents_recall_block_has_no_queue_line_when_nothing_waits(root: Path) -> None:
    from commonkeep.recall.select import select_for_prompt

    assert "Review Queue" not in select_for_prompt(root, "where does the staging database listen?").text


class _Ctx:
    def __init__(self) -> None:
        self.hooks: dict[str, Any] = {}
        self.middleware: dict[str, Any] = {}
        self.profile_name = "default"
        self.register_middleware = self.middleware.__setitem__

    def register_hook(self, name: str, fn: Any) -> None:
        self.hooks[name] = fn

    def register_tool(self, name: str, **kw: Any) -> None:
        pass


def test_a_hermes_session_start_shows_the_queue_in_the_terminal(
        waiting: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    from commonkeep_hermes.governance import register

    home = tmp_path / "hermes"
    (home / "memories").mkdir(parents=True)
    (home / "config.yaml").write_text(f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {waiting}\n", encoding="utf-8")
    monkeypatch.setenv("HERMES_HOME", str(home))
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT", "COMMONKEEP_AGENT", "COMMONKEEP_HERMES_GATE"):
        monkeypatch.delenv(var, raising=False)
    ctx = _Ctx()
    register(ctx)
    capsys.readouterr()
    ctx.hooks["on_session_start"](session_id="s-cli", model="m", platform="cli")
    out = capsys.readouterr().out
    assert "commonkeep: 3 memories wait for review (oldest 8 weeks): run `commonkeep review`" in out
    # on a messaging platform the terminal is the gateway's log: said there, not printed
    caplog.set_level("INFO", logger="commonkeep_hermes")
    ctx.hooks["on_session_start"](session_id="s-tg", model="m", platform="telegram")
    assert capsys.readouterr().out == ""
    assert any("3 memories wait for review" in r.getMessage() for r in caplog.records)
    assert "waiting: 3" in digest_path(waiting).read_text(encoding="utf-8")


def test_an_omp_session_end_brings_the_digest_up_to_date(waiting: Path) -> None:
    from commonkeep_omp.session_end import session_end

    done = session_end(waiting)
    assert done["review_waiting"] == 3
    assert "\nwaiting: 3\n" in digest_path(waiting).read_text(encoding="utf-8")


def test_a_hermes_session_end_brings_the_digest_up_to_date(waiting: Path, tmp_path: Path) -> None:
    from commonkeep_hermes.governance import _on_session_finalize
    from commonkeep_hermes.settings import HermesProfile

    home = tmp_path / "hermes"
    (home / "memories").mkdir(parents=True)
    (home / "config.yaml").write_text(f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {waiting}\n", encoding="utf-8")
    assert not digest_path(waiting).exists()
    _on_session_finalize(HermesProfile(home))
    assert "\nwaiting: 3\n" in digest_path(waiting).read_text(encoding="utf-8")
