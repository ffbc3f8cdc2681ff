"""Secrets never persist through the roundtable → wiki path (export, ingest, gardener, query).

Planted secrets of every kind the governance test knows (its generator, reused) are posted in
a room, exported by the librarian, ingested, gardened and queried through the real broker and
the real Dossier CLI. Afterwards no file under the agent dir (memory dir included: raw/, wiki/,
``.hmlr/facts.db``, ``wiki/log.md``) and no git object holds a planted value, and every step
that redacted something said so by kind, never by value.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

from commonkeep.secrets import redact, summarize
from commonkeep_roundtable import LocalRoundtable
from tests.governance.test_secrets import MAKERS, planted

DECISION = "Decision: the billing service keeps GCRA rate limiting for every tenant."


def _files(base: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in sorted(base.rglob("*")) if p.is_file() and not p.is_symlink()]


def _git_objects(repo: Path) -> bytes:
    done = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, check=True)
    return done.stdout


def _kinds(texts: list[str]) -> Counter[str]:
    return Counter(kind for text in texts for kind in redact(text).findings)


def test_planted_secrets_in_a_room_never_reach_the_wiki_files_or_git(agent_base: Path) -> None:
    memory_dir = agent_base / "memory"
    secrets = planted(len(MAKERS) * 2, seed=11)  # every kind, twice
    room_plants, note_plants, stray_plants = secrets[::3], secrets[1::3], secrets[2::3]
    values = [value for _, _, value in secrets]

    with LocalRoundtable(agent_base, memory_dir=memory_dir) as rt:
        rt.post("planner", "ops", DECISION, topic="billing")
        for i, (_, text, _) in enumerate(room_plants):
            rt.post(("researcher", "critic", "planner")[i % 3], "ops", f"Note {i}: {text}.")
        rt.post("planner", "ops", "Decision: the billing service authenticates with " + room_plants[0][2] + " from now on.")

        # 1. export redacts before writing and reports a count and kinds
        exported = rt.export("librarian", "ops", "raw/ops.md")
        expected = _kinds([t for _, t, _ in room_plants]) + _kinds([room_plants[0][2]])
        assert Counter(exported.redacted) == expected
        assert exported.details["redacted"] == {"count": sum(expected.values()), "kinds": dict(sorted(expected.items()))}
        assert f"Redacted {sum(expected.values())} secret(s) before writing: {summarize(list(expected.elements()))}." in exported.text
        assert not any(value in exported.text or value in str(exported.details) for value in values)
        transcript = (memory_dir / "raw" / "ops.md").read_text(encoding="utf-8")
        assert "[REDACTED:" in transcript and f"planner#1: {DECISION}\n" in transcript

        # 2. a source written straight into raw/ is redacted in place by ingest, before its commit
        notes = "\n".join(f"Design note {i}: {text}." for i, (_, text, _) in enumerate(note_plants)) + "\n"
        (memory_dir / "raw" / "notes.md").write_text(notes, encoding="utf-8")
        # 3. a stray raw file nobody ingested yet is kept out of git by every commit
        stray = "\n".join(text for _, text, _ in stray_plants) + "\n"
        (memory_dir / "raw" / "stray.md").write_text(stray, encoding="utf-8")

        out_ops = rt.memory("librarian", "ingest", source="raw/ops.md")
        assert "redacted:" not in out_ops  # the export already redacted it
        out_notes = rt.memory("librarian", "ingest", source="raw/notes.md")
        note_kinds = _kinds([notes])
        assert (f"redacted: {sum(note_kinds.values())} secret(s) in raw/notes.md ({summarize(list(note_kinds.elements()))}); "
                "the raw file was rewritten in place") in out_notes
        assert "[REDACTED:" in (memory_dir / "raw" / "notes.md").read_text(encoding="utf-8")

        out_garden = rt.memory("librarian", "gardener")
        assert "stale=0" in out_garden  # the rewritten raw file is the one facts.db knows
        objects = _git_objects(memory_dir)
        assert not any(value.encode() in objects for value in values)
        assert b"raw/stray.md" in objects  # named (kinds only) in the commit message that left it out

        out_stray = rt.memory("librarian", "ingest", source="raw/stray.md")
        assert "secret(s) in raw/stray.md" in out_stray
        rt.memory("librarian", "gardener")

        # grounding still works on the redacted sources
        answer = rt.memory("reviewer", "query", question="how does the billing service authenticate")
        assert "authenticates with [REDACTED:" in answer, answer
        answer = rt.memory("reviewer", "query", question="which rate limiting does the billing service keep")
        assert DECISION in answer, answer

    assert not list((memory_dir / "wiki").rglob("*redacted*"))  # a redaction marker is not an entity
    log = (memory_dir / "wiki" / "log.md").read_text(encoding="utf-8")
    assert f"- redacted: {sum(note_kinds.values())} secret(s) ({summarize(list(note_kinds.elements()))}); raw file rewritten in place" in log
    assert not any(value in out for out in (out_ops, out_notes, out_garden, out_stray) for value in values)
    leaks = [(str(path), kind) for path, data in _files(agent_base) for kind, _, value in secrets if value.encode() in data]
    assert leaks == []
    objects = _git_objects(memory_dir)
    assert not [kind for kind, _, value in secrets if value.encode() in objects]
    tracked = subprocess.run(["git", "-C", str(memory_dir), "ls-files"], capture_output=True, text=True, check=True).stdout
    assert {"raw/ops.md", "raw/notes.md", "raw/stray.md"} <= set(tracked.split())
