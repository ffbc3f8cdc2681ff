"""``commonkeep review --approve`` as a person runs it: a new process that does only what approving
one candidate needs (issue 23), and still scans whatever is new.

Approving loads the maintained provider secret rules (0.3-0.5 s of a new process) only when a
string of the patch looks like a token (the digits of our ids and dates do not); an edited
statement is scanned by every layer. The projection (``rendered/MEMORY.md``) is redacted and
rendered only for records that changed (``runtime/projection-cache.json``); a record edited by
hand is redacted as before, and a purged statement leaves the cache.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.governance.conftest import WRITER, read_rows, run_cli, write_candidate, writer_args

# a Databricks token: only the maintained provider rules know its shape (our own rules pass it)
TOKEN = "dapi88e498e656e46a5c9cfc4b1d85a6c844"
# a commit id: a run of letters and digits that wakes the provider pre-check, and no secret
SHA_TEXT = "Pin the release build to commit 3f9a1c2b7d4e5f60aa when the tests pass."


def _files_holding(root: Path, needle: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle.encode() in p.read_bytes())


def _approve_in_a_new_process(root: Path, *args: str) -> tuple[int, str, set[str]]:
    """``commonkeep review --approve …`` run as ``main`` in a fresh interpreter: exit code, stderr,
    and what was loaded in it of the costly parts ("provider rules", "pydantic")."""
    code = (
        "import sys\n"
        "from commonkeep.cli import main\n"
        "from commonkeep.secrets import provider\n"
        f"rc = main({['review', *writer_args(root), *args]!r})\n"
        "print(['provider rules'] * ('scanner' in provider._STATE) + ['pydantic'] * ('pydantic' in sys.modules))\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    return done.returncode, done.stderr, set(ast.literal_eval(done.stdout.strip().splitlines()[-1]))


def test_an_edited_approve_is_scanned_by_the_provider_rules(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cand = write_candidate(root, "Run the nightly job from the CI runner.")
    code, out, err = run_cli(capsys, "review", "--approve", cand["id"], "--text", f"Run the nightly job with {TOKEN} in CI.",
                             *writer_args(root))
    assert code == 0, err
    assert "[REDACTED:databricks_api_token]" in out
    [rec] = read_rows(root / "memory" / "L2.playbooks.jsonl")
    assert rec["statement"] == "Run the nightly job with [REDACTED:databricks_api_token] in CI."
    assert _files_holding(root, TOKEN) == []


def test_an_approve_loads_no_provider_rules_nor_pydantic_unless_a_string_looks_like_a_token(root: Path) -> None:
    plain = write_candidate(root, "Tag every release with the build number of the pipeline run.")
    code, err, loaded = _approve_in_a_new_process(root, "--approve", plain["id"])
    assert code == 0, err
    assert loaded == set()  # the digits of its id and dates are no token; the patch is plainly valid
    # a token-like run is scanned by the provider rules, approved as it is too: a candidate in the
    # shared inbox may come from OmpKeep's memory_write, which our gate never saw
    sha = write_candidate(root, SHA_TEXT)
    code, err, loaded = _approve_in_a_new_process(root, "--approve", sha["id"])
    assert code == 0, err
    assert "provider rules" in loaded
    assert [r["statement"] for r in read_rows(root / "memory" / "L2.playbooks.jsonl")] == [plain["text"], SHA_TEXT]
    assert SHA_TEXT in (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")


def test_a_bad_or_decided_id_is_a_clear_error_and_changes_nothing(root: Path) -> None:
    cand = write_candidate(root, "Use ruff for linting Python code.")
    inbox = (root / "inbox" / "captured.jsonl").read_bytes()
    code, err, _ = _approve_in_a_new_process(root, "--approve", "cap_20261202000000_nope")
    assert code == 2
    assert "candidate cap_20261202000000_nope is not in the inbox; nothing was applied" in err
    assert "Traceback" not in err
    assert (root / "inbox" / "captured.jsonl").read_bytes() == inbox
    assert read_rows(root / "memory" / "L2.playbooks.jsonl") == []
    code, err, _ = _approve_in_a_new_process(root, "--approve", cand["id"])
    assert code == 0, err
    code, err, _ = _approve_in_a_new_process(root, "--approve", cand["id"])
    assert code == 2 and f"candidate {cand['id']} was already approved; nothing was applied" in err
    assert len(read_rows(root / "memory" / "L2.playbooks.jsonl")) == 1


def test_the_projection_redacts_a_hand_edited_record_and_forgets_a_purged_one(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep = write_candidate(root, "Deploy the docs site from the main branch only.")
    gone = write_candidate(root, "The staging database lives on the second rack.")
    for cand in (keep, gone):
        code, _, err = run_cli(capsys, "review", "--approve", cand["id"], *writer_args(root))
        assert code == 0, err
    cache = root / "runtime" / "projection-cache.json"
    assert "staging database" in (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")  # spliced in (no cache)
    # a hand edit puts a token into a record: the next render redacts it, from the cache too
    l2 = root / "memory" / "L2.playbooks.jsonl"
    l2.write_bytes(l2.read_bytes().replace(b"main branch only.", f"main branch only, token {TOKEN}.".encode()))
    code, _, err = run_cli(capsys, "render", "--root", str(root))
    assert code == 0, err
    shown = (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")
    assert "main branch only, token [REDACTED:" in shown and TOKEN not in shown  # (the kind: which rule read it first)
    assert TOKEN not in cache.read_text(encoding="utf-8")
    # a privacy purge: its statement leaves the projection and the cache
    code, _, err = run_cli(capsys, "forget", gone["id"], "--reason", "privacy_sensitive",
                           "--purge", "--root", str(root), "--role", WRITER)
    assert code == 0, err
    assert "staging database" not in (root / "rendered" / "MEMORY.md").read_text(encoding="utf-8")
    assert "staging database" not in cache.read_text(encoding="utf-8")
    assert "Deploy the docs site" in cache.read_text(encoding="utf-8")


def test_an_approve_refreshes_a_registered_hermes_home_and_imports_no_hermes_config_code_without_one(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "no-hermes-here"))
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom commonkeep.cli import main\n"
                           f"main({['review', *writer_args(root), '--approve', write_candidate(root, 'Run mypy in strict mode.')['id']]!r})\n"
                           "print(sorted(m for m in sys.modules if m.startswith(('commonkeep_hermes.install', 'ruamel'))))"],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"  # no Hermes home: its install and YAML code stay unloaded
    home = tmp_path / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text(f"memory:\n  provider: commonkeep\n  commonkeep:\n    root: {root}\n", encoding="utf-8")
    (root / "runtime" / "hermes-homes.json").write_text(json.dumps([str(home)]), encoding="utf-8")
    third = write_candidate(root, "Keep the changelog in the repository root.")
    code, _, err = run_cli(capsys, "review", "--approve", third["id"], *writer_args(root))
    assert code == 0, err
    assert "Keep the changelog in the repository root." in (home / "memories" / "MEMORY.md").read_text(encoding="utf-8")
