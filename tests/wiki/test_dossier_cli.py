"""The Dossier CLI as Orphus runs it: a subprocess argv vector, no shell, cwd = the memory dir.

Mirrors ``contracts/roundtable.md §8``: base command ``python -m commonkeep.dossier`` split on
whitespace, then ``["ingest", source]`` / ``["query", question]`` / ``["gardener"]`` /
``["doctor"]``; no ``--project``; stdin ignored; output decoded once as UTF-8.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BASE = [sys.executable, "-m", "commonkeep.dossier"]
CONSOLE = [str(Path(sys.executable).parent / "commonkeep"), "dossier"]
EXPORT = (
    "[2026-01-05T10:00:00.000Z] planner#1: We need a limiter for the public API.\n"
    "[2026-01-05T10:01:00.000Z] architect#2: Decision: GCRA locally for rate limiting, with a 50 requests per second burst.\n"
    "[2026-01-05T10:02:00.000Z] reviewer#3: Token Bucket is the same as 'TB-Lite' in the old docs.\n"
)


def run_dossier(memdir: Path, argv: list[str], base: list[str] = BASE, **env: str) -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("COMMONKEEP_ROLE", "COMMONKEEP_WIKI_LLM_URL")}
    full_env.update(env)
    return subprocess.run(base + argv, cwd=memdir, stdin=subprocess.DEVNULL, capture_output=True, env=full_env, timeout=60, check=False)


def test_orphus_memory_tool_flow_ingest_then_query(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    (memdir / "raw").mkdir(parents=True)
    (memdir / "raw/design.md").write_text(EXPORT, encoding="utf-8")

    ingest = run_dossier(memdir, ["ingest", "raw/design.md"])
    assert ingest.returncode == 0, ingest.stderr.decode()
    out = ingest.stdout.decode("utf-8")
    assert out.startswith("routed: ingest_document\n") and "commit: " in out

    query = run_dossier(memdir, ["query", "what did we decide about rate limiting?"])
    assert query.returncode == 0, query.stderr.decode()
    text = query.stdout.decode("utf-8")
    assert text.startswith("question: what did we decide about rate limiting?\ncandidates (")
    assert re.search(r"^\s+wiki\s+(\S+\.md)\s+score=", text, re.M)
    assert re.search(r"^\s+fact\s+(\S+)\s+score=", text, re.M)
    assert "Decision: GCRA locally for rate limiting, with a 50 requests per second burst. [raw/design.md]" in text

    garden = run_dossier(memdir, ["gardener"])
    assert garden.returncode == 0
    assert re.match(r"gardener complete — orphans=\d+ stale=\d+ review=\d+ missing_xref=\d+\n", garden.stdout.decode())

    doctor = run_dossier(memdir, ["doctor"])
    assert doctor.returncode == 0 and "status: ok" in doctor.stdout.decode()


def test_console_command_and_module_print_the_same_bytes(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    (memdir / "raw").mkdir(parents=True)
    (memdir / "raw/design.md").write_text(EXPORT, encoding="utf-8")
    assert run_dossier(memdir, ["--project", str(memdir), "ingest", "raw/design.md"], base=CONSOLE).returncode == 0
    question = ["query", "Is Token Bucket the same as TB-Lite?", "--limit", "3"]
    a = run_dossier(memdir, question)
    b = run_dossier(tmp_path, ["--project", str(memdir), *question], base=CONSOLE)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout
    assert "alias chain: Token Bucket = TB-Lite" in a.stdout.decode()


def test_refused_path_exits_2_with_the_reason_on_stderr(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    memdir.mkdir()
    for base in (BASE, CONSOLE):
        res = run_dossier(memdir, ["ingest", "../etc/passwd"], base=base)
        assert res.returncode == 2 and res.stdout == b""
        assert res.stderr.decode().startswith("dossier ingest: error: source path ../etc/passwd contains '..'")


def test_non_writer_role_is_refused_before_any_work(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    (memdir / "raw").mkdir(parents=True)
    (memdir / "raw/design.md").write_text(EXPORT, encoding="utf-8")
    res = run_dossier(memdir, ["ingest", "raw/design.md"], COMMONKEEP_ROLE="planner")
    assert res.returncode == 3 and "only the writer role 'librarian'" in res.stderr.decode()
    assert not (memdir / "wiki").exists()
    ok = run_dossier(memdir, ["query", "anything"], COMMONKEEP_ROLE="planner")
    assert ok.returncode == 0  # reads are open to every role


def test_query_before_any_ingest_is_an_empty_answer_not_an_error(tmp_path: Path) -> None:
    res = run_dossier(tmp_path, ["query", "  what happened?  "])
    assert res.returncode == 0
    assert res.stdout.decode().startswith("question: what happened?\ncandidates (0):\n")
