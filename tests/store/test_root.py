"""Root resolution follows the contract's table exactly (ompkeep-store.md §1.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commonkeep.store.root import resolve_root


def _settings(cwd: Path, rel: str, key: str, local: str) -> None:
    p = cwd / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(p.read_text()) if p.exists() else {}
    data[key] = {"localPath": local}
    p.write_text(json.dumps(data))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    return h


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    c = tmp_path / "proj"
    c.mkdir()
    return c


def test_each_rule_wins_over_every_lower_one(home: Path, cwd: Path, tmp_path: Path) -> None:
    env = {"HOME": str(home)}
    assert resolve_root(env, cwd).path == home / ".omp/agent/omp-memory"
    (home / ".pi/agent/pi-memory").mkdir(parents=True)
    assert resolve_root(env, cwd).rule.startswith("legacy")
    _settings(cwd, ".pi/settings.json", "pi-pi", str(tmp_path / "pipi"))
    assert resolve_root(env, cwd).path == tmp_path / "pipi" / "pi-memory"
    _settings(cwd, ".pi/settings.json", "pi-persistent-intelligence", str(tmp_path / "pipi2"))
    assert resolve_root(env, cwd).path == tmp_path / "pipi2"
    _settings(cwd, ".omp/settings.json", "omp", str(tmp_path / "o"))
    assert resolve_root(env, cwd).path == tmp_path / "o" / "omp-memory"
    _settings(cwd, ".omp/settings.json", "ompkeep", str(tmp_path / "ok"))
    assert resolve_root(env, cwd).path == tmp_path / "ok"
    env["PI_MEMORY_ROOT"] = str(tmp_path / "pi")
    assert resolve_root(env, cwd) .rule == "$PI_MEMORY_ROOT"
    env["OMPKEEP_ROOT"] = str(tmp_path / "keep")
    assert resolve_root(env, cwd).path == tmp_path / "keep"
    env["OMP_MEMORY_ROOT"] = str(tmp_path / "omp")
    choice = resolve_root(env, cwd)
    assert (choice.path, choice.rule) == (tmp_path / "omp", "$OMP_MEMORY_ROOT")
    assert resolve_root(env, cwd, explicit=str(tmp_path / "flag")).rule == "--root"


def test_missing_legacy_directory_falls_through_to_the_omp_default(home: Path, cwd: Path) -> None:
    choice = resolve_root({"HOME": str(home)}, cwd)
    assert choice.path == home / ".omp/agent/omp-memory"
    assert choice.rule.startswith("default")


def test_a_broken_settings_file_is_ignored_not_fatal(home: Path, cwd: Path) -> None:
    (cwd / ".omp").mkdir()
    (cwd / ".omp/settings.json").write_text("{not json")
    assert resolve_root({"HOME": str(home)}, cwd).rule.startswith("default")


def test_a_relative_or_padded_root_variable_is_used_as_written_and_named(home: Path, cwd: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """OmpKeep uses ``$OMP_MEMORY_ROOT`` as written, so commonkeep does too (both agree), but a
    relative path moves with the folder a command runs in: each agent started elsewhere would use
    another root without a word. The choice says so (``root``, ``init`` and ``doctor`` show it)."""
    monkeypatch.chdir(cwd)
    rel = resolve_root(env={"HOME": str(home), "OMP_MEMORY_ROOT": "mem"}, cwd=cwd)
    assert rel.path == (cwd / "mem").resolve()
    [note] = rel.notes
    assert note.startswith("$OMP_MEMORY_ROOT is a relative path ('mem')") and "set an absolute path" in note
    padded = resolve_root(env={"HOME": str(home), "OMPKEEP_ROOT": f" {home}/m"}, cwd=cwd)
    assert padded.notes == (f"$OMPKEEP_ROOT has spaces around its value (' {home}/m'): they are part of the path; remove them",)
    assert resolve_root(env={"HOME": str(home), "OMP_MEMORY_ROOT": str(home / "m")}, cwd=cwd).notes == ()
    assert resolve_root(env={"HOME": str(home), "OMP_MEMORY_ROOT": "~/m"}, cwd=cwd).notes == ()  # ~ is the home


def test_doctor_names_a_relative_root_variable(home: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.cli import main

    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("OMP_MEMORY_ROOT", "mem")
    for var in ("OMPKEEP_ROOT", "PI_MEMORY_ROOT"):
        monkeypatch.delenv(var, raising=False)
    assert main(["init"]) == 0
    assert "warning: $OMP_MEMORY_ROOT is a relative path ('mem')" in capsys.readouterr().err
    main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    [finding] = [f for f in report["findings"] if f["code"] == "root_variable"]
    assert finding["severity"] == "warning" and "agents started elsewhere use other roots" in finding["message"]
