"""Where memory goes: a mistyped or empty root never becomes a new store, and `hermes install`
changes nothing on a machine without Hermes (issue 27). Real CLI subprocesses, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BIN = str(Path(sys.executable).parent)


def ck(*args: str, home: Path, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_ROOT") and k not in ("HERMES_HOME", "COMMONKEEP_ROLE")}
    env.update(HOME=str(home), PATH=f"{BIN}:/usr/bin:/bin")  # no `hermes` on PATH
    return subprocess.run([sys.executable, "-m", "commonkeep.cli", *args], capture_output=True, text=True, env=env,
                          cwd=cwd or home, input=stdin, timeout=60)


def _seeded(tmp_path: Path) -> Path:
    """A root holding one record (so Hermes' MEMORY.md gets an entry)."""
    root = tmp_path / "root"
    assert ck("init", "--root", str(root), home=tmp_path).returncode == 0
    cid = json.loads(ck("write", "Always run pytest -q before committing.", "--root", str(root), "--json", home=tmp_path).stdout)
    done = ck("review", "--approve", cid["candidate"], "--role", "librarian", "--root", str(root), home=tmp_path)
    assert done.returncode == 0, done.stderr
    return root


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_write_to_a_root_never_initialised_is_refused_with_the_init_hint(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    out = ck("write", "A fact worth keeping.", "--root", str(typo), home=tmp_path)
    assert out.returncode == 2, out.stdout
    assert f"no memory root at {typo}" in out.stderr and "commonkeep init" in out.stderr and "--init" in out.stderr
    assert "Traceback" not in out.stderr
    assert not typo.exists()
    daily = ck("write", "A note.", "--daily", "--root", str(typo), home=tmp_path)
    assert daily.returncode == 2 and not typo.exists()


def test_write_with_init_creates_the_root_and_an_initialised_root_takes_writes(tmp_path: Path) -> None:
    root = tmp_path / "new"
    out = ck("write", "Deploys go through staging.", "--root", str(root), "--init", "--json", home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (root / "memory").is_dir() and (root / "inbox" / "captured.jsonl").read_text().count("\n") == 1
    again = ck("write", "A second fact.", "--root", str(root), home=tmp_path)
    assert again.returncode == 0, again.stderr


def test_an_empty_root_is_an_error_and_touches_the_default_root_not_at_all(tmp_path: Path) -> None:
    for args in (["write", "A fact."], ["write", "A fact.", "--init"], ["init"], ["inbox"], ["search", "x"], ["curate"]):
        out = ck(*args, "--root", "", home=tmp_path)
        assert out.returncode == 2, (args, out.stdout)
        assert "--root is empty" in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)
    assert _tree(tmp_path) == []  # neither ~/.omp/agent/omp-memory nor anything else was created


def test_host_entry_points_still_create_their_root_on_first_use(tmp_path: Path) -> None:
    """Hosts are configured for their root (Hermes' config, MCP's environment, OMP's extension), so
    their writes create it on first use: capture() and the agent tool keep doing so, and OMP's
    /commonkeep-remember passes --init."""
    from commonkeep.gate.capture import capture
    from commonkeep.tools.agent import core_tools

    done = capture(tmp_path / "hermes-root", "Use uv for Python environments here.")
    assert (tmp_path / "hermes-root" / "inbox" / "captured.jsonl").read_text().count(done.candidate["id"]) == 1
    write = next(t for t in core_tools() if t.name == "commonkeep_write")
    old = os.environ.get("OMP_MEMORY_ROOT")
    os.environ["OMP_MEMORY_ROOT"] = str(tmp_path / "mcp-root")
    try:
        assert "Wrote candidate" in write.call({"text": "The staging port is 5401."}, None)
    finally:
        if old is None:
            del os.environ["OMP_MEMORY_ROOT"]
        else:
            os.environ["OMP_MEMORY_ROOT"] = old
    assert (tmp_path / "mcp-root" / "memory").is_dir()
    ts = (Path(__file__).parents[2] / "plugins" / "omp" / "commonkeep.ts").read_text()
    assert '"write", "--init", "--root", STATE.root' in ts


def test_hermes_install_without_hermes_says_so_and_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "root"
    assert ck("init", "--root", str(root), home=tmp_path).returncode == 0
    before = _tree(tmp_path)
    out = ck("hermes", "install", "--root", str(root), home=tmp_path)
    assert out.returncode == 2, out.stdout
    assert "Hermes is not installed here" in out.stderr and f"{tmp_path}/.hermes" in out.stderr
    assert "--force" in out.stderr and "Traceback" not in out.stderr
    assert _tree(tmp_path) == before


def test_hermes_install_forced_then_uninstall_leaves_no_trace(tmp_path: Path) -> None:
    root = _seeded(tmp_path)
    out = ck("hermes", "install", "--root", str(root), "--force", home=tmp_path)
    assert out.returncode == 0, out.stderr
    hermes = tmp_path / ".hermes"
    assert (hermes / "config.yaml").is_file() and (hermes / "memories" / "MEMORY.md").is_file()
    gone = ck("hermes", "uninstall", home=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert not hermes.exists(), _tree(hermes)
    assert "removed" in gone.stdout and "MEMORY.md" in gone.stdout


def test_hermes_uninstall_keeps_memory_files_someone_wrote(tmp_path: Path) -> None:
    root = _seeded(tmp_path)
    hermes = tmp_path / ".hermes"
    (hermes / "memories").mkdir(parents=True)
    (hermes / "memories" / "USER.md").write_text("The user prefers short answers.")
    assert ck("hermes", "install", "--root", str(root), home=tmp_path).returncode == 0
    memory = hermes / "memories" / "MEMORY.md"
    memory.write_text(memory.read_text() + "\n§\nA hand-written entry.")  # edited after install: the user's now
    gone = ck("hermes", "uninstall", "--json", home=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert memory.read_text().endswith("A hand-written entry.")
    assert (hermes / "memories" / "USER.md").is_file()  # there before install: never removed
    assert any("kept" in c and "MEMORY.md" in c for c in json.loads(gone.stdout)["changed"])
