"""The rerank stage's cues on a real index (real JSONL, SQLite and the shipped MiniLM): a question
naming a period finds the memory from that time, a question naming a person finds that person's
own words, and the turns of one episode rank together. Each test shows the order with the cue and
without it (its weight set to 0), so it fails if the cue stops working."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from commonkeep.bench.locomo import session_day, turn_records
from commonkeep.recall.search import cues, semantic, sync
from commonkeep.recall.search.hybrid import search
from commonkeep.recall.search.timeframe import record_day
from tests.recall.conftest import make_record, seed

pytestmark = pytest.mark.skipif(semantic.LocalMiniLM().available() is not None, reason="needs the embed extra")


def _ids(root: Path, question: str, limit: int) -> list[str]:
    return [r.id for r in search(root, question, "rerank", limit, backends=[semantic.LocalMiniLM()]).results]


def _turn(rid: str, statement: str, ref: str) -> dict[str, Any]:
    return make_record(rid, statement, evidence=[{"type": "conversation", "ref": ref, "note": "a turn"}])


def test_a_question_naming_a_period_finds_the_memory_of_that_time(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root, [
        make_record("mem_may", "Joanna: I watched a film last night, it was fun.", created_at="2022-05-02"),
        make_record("mem_jan", "Joanna: I watched my favourite movie again, the best movie ever.", created_at="2022-01-15"),
        make_record("mem_x", "Nate: I won a video game tournament.", created_at="2022-05-01"),
    ])
    q = "What movie did Joanna watch on 1 May, 2022?"
    resp = search(root, q, "rerank", 3, backends=[semantic.LocalMiniLM()])
    assert resp.results[0].id == "mem_may"  # "last night", said on 2 May: 1 May
    assert resp.results[0].score_provenance["period"] == cues.PERIOD_BONUS
    assert "period" not in {k for r in resp.results if r.id == "mem_jan" for k in r.score_provenance}
    monkeypatch.setattr(cues, "PERIOD_BONUS", 0.0)
    assert _ids(root, q, 1) == ["mem_jan"]


def test_a_question_naming_a_person_finds_their_own_words(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root, [
        make_record("mem_asks", "Caroline: Melanie, have you painted anything lately?"),
        make_record("mem_own", "Melanie: I painted a horse last week."),
        make_record("mem_other", "Caroline: I am reading a book."),
    ])
    q = "What has Melanie painted?"
    assert _ids(root, q, 1) == ["mem_own"]
    monkeypatch.setattr(cues, "SPEAKER_BONUS", 0.0)
    assert _ids(root, q, 1) == ["mem_asks"]


def test_the_turns_of_one_episode_rank_together(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Session 1 holds both halves of the answer: that Gina opened the store, and how she paid.
    seed(root, [
        _turn("mem_opened", "Gina: I finally opened my online clothing store this morning!", "chat/s1#1"),
        _turn("mem_asked", "Jon: That is huge, tell me all about it.", "chat/s1#2"),
        _turn("mem_paid", "Gina: A loan from my aunt and months of late nights sewing.", "chat/s1#3"),
        _turn("mem_b1", "Jon: My aunt sent me a loan offer for the studio.", "chat/s2#1"),
        _turn("mem_b2", "Gina: Late nights are rough, I know.", "chat/s2#2"),
        _turn("mem_other", "Jon: Who paid for her new store downtown?", "chat/s4#1"),
        _turn("mem_c1", "Jon: Months of planning went into my dance studio.", "chat/s3#1"),
        _turn("mem_c2", "Gina: Your studio looks great, Jon.", "chat/s3#2"),
    ])
    q = "How did Gina pay for opening her clothing store?"
    resp = search(root, q, "rerank", 2, backends=[semantic.LocalMiniLM()])
    assert [r.id for r in resp.results] == ["mem_opened", "mem_paid"]
    assert resp.results[1].score_provenance["episode"] == pytest.approx(cues.EPISODE_WEIGHT)  # the best episode's share
    monkeypatch.setattr(cues, "EPISODE_WEIGHT", 0.0)
    assert "mem_paid" not in _ids(root, q, 2)


def test_the_reply_to_a_question_in_memory_ranks_with_it(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(root, [
        _turn("mem_asks", "Caroline: What instruments do you play, Melanie?", "chat/s1#1"),
        _turn("mem_reply", "Melanie: The clarinet and a bit of violin.", "chat/s1#2"),
        _turn("mem_x", "Melanie: I love music, it calms me down.", "chat/s2#1"),
        _turn("mem_y", "Caroline: Music festivals are so much fun.", "chat/s2#2"),
    ])
    q = "What instruments does Melanie play?"
    resp = search(root, q, "rerank", 1, backends=[semantic.LocalMiniLM()])
    assert resp.results[0].id == "mem_reply"
    assert resp.results[0].score_provenance["reply"] == pytest.approx(cues.REPLY_WEIGHT)  # the pool's best asked it
    monkeypatch.setattr(cues, "REPLY_WEIGHT", 0.0)
    assert _ids(root, q, 1) == ["mem_asks"]


def test_only_the_next_record_of_the_same_source_answers_a_question() -> None:
    facts = {"q": (None, "s1", 4), "a": (None, "s1", 5), "other": (None, "s2", 5), "later": (None, "s1", 6)}
    scores = {"q": 2.0, "a": 0.5, "other": 0.4, "later": 0.0}
    statements = {"q": "Caroline: Any photos? [shares a photo: a lake]", "a": "Yes!", "other": "Why?", "later": "Ok."}
    assert cues.reply_lifts(scores, facts, statements) == {"a": cues.REPLY_WEIGHT}
    assert cues.reply_lifts(scores, facts, {**statements, "q": "Caroline: Nice photos."}) == {}
    assert cues.is_question("Did you go? (photo) [link]") and not cues.is_question("I went (did you?)")


def test_other_questions_rank_as_before(root: Path) -> None:
    seed(root, [make_record("mem_a", "Run the test suite with pytest -q."), make_record("mem_b", "Use ruff for lint.")])
    resp = search(root, "how do I run the tests", "rerank", 2, backends=[semantic.LocalMiniLM()])
    assert all(not {"period", "speaker", "episode", "time_anchor", "reply"} & set(r.score_provenance) for r in resp.results)


def test_the_index_keeps_each_records_day_and_source(root: Path) -> None:
    seed(root, [_turn("mem_t", "Gina: hello", "chat/s1#1"), make_record("mem_n", "No source.", created_at="bad")])
    sync.sync_root(root, embed=False)
    with sqlite3.connect(root / "search" / "recall.db") as conn:
        got = dict((r[0], r[1:]) for r in conn.execute("SELECT id, day, source FROM records"))
    assert got == {"mem_t": (record_day("2026-12-02"), "chat/s1"), "mem_n": (None, "")}


def test_an_index_without_days_is_rebuilt_with_them(root: Path) -> None:
    """An index written before records kept days (format 3): the next search rebuilds ``records``."""
    seed(root, [make_record("mem_a", "Joanna: I watched a film last night.", created_at="2022-05-02")])
    sync.sync_root(root, embed=False)
    db = root / "search" / "recall.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "DROP TABLE recall_fts; ALTER TABLE records RENAME TO r4; CREATE TABLE records (id TEXT PRIMARY KEY, layer TEXT "
        "NOT NULL, rule_type TEXT NOT NULL, confidence REAL NOT NULL, statement TEXT NOT NULL, tags TEXT NOT NULL, "
        "context TEXT NOT NULL, ord INTEGER NOT NULL); INSERT INTO records SELECT id, layer, rule_type, confidence, "
        "statement, tags, context, ord FROM r4; DROP TABLE r4;"
    )
    conn.close()
    from commonkeep.recall.search import index

    index.forget_readers()
    assert [r.id for r in search(root, "What did Joanna watch on 1 May, 2022?", "keyword", 1).results] == ["mem_a"]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT day FROM records WHERE id = 'mem_a'").fetchone() == (record_day("2022-05-02"),)


def test_locomo_turns_carry_their_sessions_day() -> None:
    assert session_day("1:56 pm on 8 May, 2023") == "2023-05-08"
    assert session_day("sometime") is None
    conv = {"sample_id": "c", "conversation": {
        "session_1_date_time": "4:04 pm on 20 January, 2023", "session_1": [{"speaker": "Jon", "dia_id": "D1:1", "text": "Hi"}],
        "session_2_date_time": "?", "session_2": [{"speaker": "Gina", "dia_id": "D2:1", "text": "Yo"}]}}
    assert [r["created_at"] for r in turn_records(conv, "2026-12-02")] == ["2023-01-20", "2026-12-02"]
