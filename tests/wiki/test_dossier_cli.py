"""The Dossier CLI as Orphus runs it: a subprocess argv vector, no shell, cwd = the memory dir.

Mirrors ``contracts/roundtable.md §8``: base command ``python -m commonkeep.dossier`` split on
whitespace, then ``["ingest", source]`` / ``["query", question]`` / ``["gardener"]`` /
``["doctor"]``; no ``--project``; stdin ignored; output decoded once as UTF-8.
"""

from __future__ import annotations

import json
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
    full_env["ORPHUS_MEMORY_COMMAND"] = " ".join(base)  # as Orphus runs it: pointed at us, gated in its own process
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


def test_one_rule_for_writes_with_no_role_set(tmp_path: Path) -> None:
    """As ``curate`` does, ``ingest`` with no role set is refused, unless the host says in the
    backend's environment that it gated in its own process (Orphus' ORPHUS_MEMORY_COMMAND,
    ``commonkeep memory``'s mark, or COMMONKEEP_HOST_GATED)."""
    memdir = tmp_path / "memory"
    (memdir / "raw").mkdir(parents=True)
    (memdir / "raw" / "design.md").write_text("# Design\n\nDecision: retries back off exponentially.\n", encoding="utf-8")
    plain = {k: v for k, v in os.environ.items() if not k.startswith(("ORPHUS_", "COMMONKEEP_"))}
    refused = subprocess.run(BASE + ["ingest", "raw/design.md"], cwd=memdir, capture_output=True, env=plain, timeout=60)
    assert refused.returncode == 3, refused.stderr
    assert b"no role is set" in refused.stderr and b"COMMONKEEP_HOST_GATED" in refused.stderr
    assert not (memdir / "sources").exists() and not (memdir / ".git").exists()
    for host in ({"COMMONKEEP_HOST_GATED": "my-host"}, {"ORPHUS_MEMORY_COMMAND": " ".join(BASE)}):
        done = subprocess.run(BASE + ["ingest", "raw/design.md"], cwd=memdir, capture_output=True, env={**plain, **host}, timeout=120)
        assert done.returncode == 0, done.stderr
    assert subprocess.run(BASE + ["query", "retries"], cwd=memdir, capture_output=True, env=plain, timeout=60).returncode == 0


def test_a_query_that_finds_nothing_says_which_wiki_was_searched(tmp_path: Path) -> None:
    memdir = tmp_path / "memory"
    memdir.mkdir()
    out = run_dossier(memdir, ["query", "what did we decide about retries"])
    assert out.returncode == 0
    assert out.stdout.decode().startswith("question: what did we decide about retries\ncandidates (0):")  # Dossier's shape
    assert f"nothing found in the wiki at {memdir}" in out.stderr.decode()
    # the roundtable alias names the memory dir and the backend it ran, on stderr and in --json
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ORPHUS_")}, "ORPHUS_MEMORY_DIR": str(memdir),
           "ORPHUS_MEMORY_COMMAND": " ".join(BASE)}
    cli = [str(Path(sys.executable).parent / "commonkeep")]
    alias = subprocess.run([*cli, "memory", "query", "retries"], capture_output=True, text=True, env=env, timeout=60)
    assert alias.returncode == 0 and f"nothing found in the wiki at {memdir}" in alias.stderr
    as_json = subprocess.run([*cli, "memory", "query", "retries", "--json"], capture_output=True, text=True, env=env, timeout=60)
    doc = json.loads(as_json.stdout)
    assert doc["memory_dir"] == str(memdir) and doc["found"] is False and doc["output"].startswith("question: retries")
