"""OMP's session start says how many memories wait for review (issue 36), in the real omp (Bun).

The extension counts the inbox itself (no Python runs inside OMP); its count, its oldest time and
its line must be the ones ``commonkeep.store.backlog`` gives, on lines our writers write and on
lines another writer formatted its own way. In a real ``omp acp`` session the line is in the
session file (ACP clients never see ``notify``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commonkeep.cli import main
from commonkeep.store.backlog import backlog
from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store
from commonkeep.store.layout import ensure_layout
from commonkeep_omp.acp import AcpClient
from tests.hosts import omp as omp_host
from tests.omp.conftest import OmpWorld

pytestmark = pytest.mark.omp
EXTENSION = Path(__file__).resolve().parents[2] / "plugins" / "omp" / "commonkeep.ts"
NOW = "2026-12-04T09:00:00.000Z"


def _queue(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ensure_layout(root)
    store = Store(root)
    for when, text in (("2026-10-09T09:00:00.000Z", "The staging database listens on port 5433."),
                       ("2026-12-01T10:00:00.000Z", "Release notes are written before tagging.")):
        monkeypatch.setenv("COMMONKEEP_NOW", when)
        store.append_candidate(new_candidate(text, provenance={"agent": "omp", "session_id": "s1"}))
    monkeypatch.delenv("COMMONKEEP_NOW")
    with store.layout.inbox.open("a", encoding="utf-8") as fh:  # another writer's lines
        fh.write(json.dumps({"id": "cap_sp", "created_at": "2026-09-01T00:00:00.000Z", "text": "Spaced.", "status": "new",
                             "source": {"type": "chat", "ref": "a"}, "tags": [], "evidence_refs": ["a"]}) + "\n")
        fh.write(json.dumps({"id": "cap_nest", "created_at": "2026-08-01T00:00:00.000Z", "text": "Nested.",
                             "status": "rejected", "provenance": {"status": "new"}, "source": {"type": "chat", "ref": "a"},
                             "tags": [], "evidence_refs": ["a"]}) + "\n")


def test_the_extension_counts_as_python_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "root"
    _queue(root, monkeypatch)
    script = tmp_path / "count.ts"
    script.write_text(
        f'import {{ reviewWaiting, waitingLine }} from {json.dumps(str(EXTENSION))};\n'
        f'const w = reviewWaiting({json.dumps(str(root))});\n'
        f'console.log(JSON.stringify({{ ...w, line: waitingLine(w, Date.parse({json.dumps(NOW)})) }}));\n')
    bun = omp_host.bin_dir() / "bun"
    done = subprocess.run([str(bun), str(script)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    monkeypatch.setenv("COMMONKEEP_NOW", NOW)
    queue = backlog(root)
    assert (said["count"], said["oldest"]) == (queue.count, queue.oldest) == (3, "2026-09-01T00:00:00.000Z")
    assert said["line"] == queue.line() == "3 memories wait for review (oldest 3 months): run `commonkeep review`"


def test_a_session_start_says_what_waits(world: OmpWorld, omp_acp_cmd: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["omp", "install", "--root", str(world.root), "--agent-dir", str(world.agent_dir)]) == 0
    _queue(world.root, monkeypatch)
    with AcpClient(omp_acp_cmd, env=world.env(), cwd=world.project) as client:
        client.initialize()
        session_id = client.new_session()
        assert client.prompt(session_id, "/commonkeep-doctor") == "end_turn"  # the session file is written by now
    entries = [e for e in world.session_entries(session_id) if e.get("customType") == "commonkeep-review-waiting"]
    assert len(entries) == 1, entries
    data = entries[0].get("data") or entries[0].get("details") or entries[0]
    assert data["count"] == 3 and data["oldest"] == "2026-09-01T00:00:00.000Z"
    assert data["line"].startswith("3 memories wait for review (oldest ") and data["line"].endswith(": run `commonkeep review`")
