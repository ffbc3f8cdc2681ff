"""Export (contracts/roundtable.md §7) against a real broker: gate first, path rules, metadata."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from commonkeep.errors import BadInput, RoleRefused
from commonkeep_roundtable.client import BrokerClient, BrokerError
from commonkeep_roundtable.export import check_export_path, export_room, iso_utc
from commonkeep_roundtable.paths import resolve_memory_config

DENIAL = 'Only the "librarian" role may export rooms for memory; this session is "planner". Ask the librarian to write.'


def connect(base: Path, name: str) -> BrokerClient:
    return BrokerClient.connect(name, base=base, start=False)


def test_501_posts_export_the_500_retained_and_say_one_was_dropped(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "librarian") as lib:
        lib.join("design")
        for i in range(1, 502):
            lib.post("design", f"message {i}")
        result = export_room("design", "raw/design.md", role="librarian", client=lib)
    assert result.details == {
        "room": "design",
        "path": str(agent_base / "memory" / "raw" / "design.md"),
        "messages": 500,
        "chars": result.chars,
        "firstSeq": 2,
        "lastSeq": 501,
        "droppedBefore": 1,
        "truncated": True,
    }
    content = (agent_base / "memory" / "raw" / "design.md").read_text(encoding="utf-8")
    lines = content.split("\n")
    assert lines[0].endswith("librarian#2: message 2")
    assert lines[-2].endswith("librarian#501: message 501") and lines[-1] == ""
    assert result.chars == len(content) - 1  # as Orphus: the file's final newline is not counted
    assert result.text == (
        f"Exported 500 retained message(s) from #design to {agent_base / 'memory' / 'raw' / 'design.md'} "
        f"({len(content) - 1} chars). 1 older message(s) were no longer retained."
    )


def test_export_moves_no_cursor(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "planner") as planner, connect(agent_base, "reviewer") as reviewer:
        planner.join("design")
        reviewer.join("design")
        for i in range(6):
            planner.post("design", f"point {i}")
        assert reviewer.set_cursor("design", 2) == 2
        result = export_room("design", "raw/d.md", role="librarian")
        assert result.messages == 6 and not result.truncated
        assert "no longer retained" not in result.text
        assert reviewer.cursor("design") == 2
        assert planner.cursor("design") == 6
    with connect(agent_base, "librarian") as lib:
        assert lib.cursor("design") == 0


def test_file_format_iso_lines_multiline_text_as_is_and_overwrite(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "critic") as critic:
        critic.join("fmt")
        posted = critic.post("fmt", "line one\nline two — naïve ☃")
        target = agent_base / "memory" / "raw" / "nested" / "deep" / "fmt.md"
        target.parent.mkdir(parents=True)
        target.write_text("old content that must go\n" * 10, encoding="utf-8")
        export_room("fmt", "raw/nested/deep/fmt.md", role="librarian")
    expected = f"[{iso_utc(posted['timestamp'])}] critic#1: line one\nline two — naïve ☃\n"
    assert target.read_text(encoding="utf-8") == expected


def test_iso_timestamps_have_milliseconds_and_z() -> None:
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"
    assert iso_utc(1_767_225_600_123) == "2026-01-01T00:00:00.123Z"


def test_empty_room_exports_an_empty_file(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with connect(agent_base, "librarian") as lib:
        lib.join("quiet")
        result = export_room("quiet", "raw/quiet.md", role="librarian", client=lib)
    assert (agent_base / "memory" / "raw" / "quiet.md").read_bytes() == b""
    assert (result.messages, result.chars, result.dropped_before, result.truncated) == (0, 0, 0, False)


def test_unknown_room_writes_nothing(agent_base: Path, broker: subprocess.Popen[bytes]) -> None:
    with pytest.raises(BrokerError, match='Room "ghost" does not exist'):
        export_room("ghost", "raw/ghost.md", role="librarian")
    assert not (agent_base / "memory" / "raw" / "ghost.md").exists()


@pytest.mark.parametrize("role", ["planner", None])
def test_gate_runs_before_anything_connects(agent_base: Path, role: str | None) -> None:
    # no broker runs: a refused export must fail on the gate, never reach for the socket
    with pytest.raises(RoleRefused) as err:
        export_room("design", "raw/design.md", role=role)
    if role:
        assert str(err.value) == DENIAL
    else:
        assert "this session has no role name (launch it with --name librarian)." in str(err.value)
    assert not (agent_base / "roundtable").exists()
    assert not (agent_base / "memory").exists()


def test_gate_follows_the_configured_writer_role(agent_base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ORPHUS_MEMORY_WRITER_ROLE", "archivist")
    with pytest.raises(RoleRefused, match='Only the "archivist" role may export rooms for memory; this session is "librarian"'):
        export_room("design", "raw/design.md", role="librarian")


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/tmp/design.md", "absolute paths are not allowed"),
        ("../design.md", '".." may not appear'),
        ("raw/../design.md", '".." may not appear'),
        ("raw/../../etc/x.md", '".." may not appear'),
        ("design.md", "strictly inside raw/"),
        ("raw", "strictly inside raw/"),
        ("raw/", "strictly inside raw/"),
        ("./raw", "strictly inside raw/"),
        ("wiki/design.md", "strictly inside raw/"),
        ("", "it is empty"),
        ("raw/nul\x00.md", "NUL character"),
    ],
)
def test_refused_paths_fail_before_the_broker_is_asked(agent_base: Path, path: str, why: str) -> None:
    # no broker runs: the path error proves the path is checked before connecting
    with pytest.raises(BadInput) as err:
        export_room("design", path, role="librarian")
    assert why in str(err.value)
    assert "raw/design.md" in str(err.value)  # says what to do


def test_symlinked_ancestor_resolving_outside_raw_is_refused(agent_base: Path, tmp_path: Path) -> None:
    memory = agent_base / "memory"
    (memory / "raw").mkdir(parents=True)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, memory / "raw" / "link")
    with pytest.raises(BadInput, match="outside"):
        export_room("design", "raw/link/design.md", role="librarian")
    with pytest.raises(BadInput, match="outside"):
        export_room("design", "raw/link/new/dir/design.md", role="librarian")
    assert list(outside.iterdir()) == []


def test_symlink_inside_raw_pointing_inside_raw_is_allowed(agent_base: Path) -> None:
    memory = agent_base / "memory"
    (memory / "raw" / "real").mkdir(parents=True)
    os.symlink(memory / "raw" / "real", memory / "raw" / "alias")
    assert check_export_path(memory, "raw/alias/x.md") == memory / "raw" / "alias" / "x.md"


def test_raw_resolving_outside_the_memory_dir_is_refused(agent_base: Path, tmp_path: Path) -> None:
    memory = agent_base / "memory"
    memory.mkdir()
    outside = tmp_path / "raw-elsewhere"
    outside.mkdir()
    os.symlink(outside, memory / "raw")
    with pytest.raises(BadInput, match="outside the memory dir"):
        export_room("design", "raw/design.md", role="librarian")
    assert list(outside.iterdir()) == []


def test_target_that_is_a_symlink_is_refused(agent_base: Path, tmp_path: Path) -> None:
    memory = agent_base / "memory"
    (memory / "raw").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me", encoding="utf-8")
    os.symlink(victim, memory / "raw" / "design.md")
    with pytest.raises(BadInput, match="is a symlink"):
        export_room("design", "raw/design.md", role="librarian")
    # a dangling symlink target is refused too
    os.symlink(tmp_path / "nowhere", memory / "raw" / "dangling.md")
    with pytest.raises(BadInput, match="is a symlink"):
        export_room("design", "raw/dangling.md", role="librarian")
    assert victim.read_text(encoding="utf-8") == "keep me"


def test_target_that_is_a_directory_is_refused(agent_base: Path) -> None:
    memory = agent_base / "memory"
    (memory / "raw" / "design.md").mkdir(parents=True)
    with pytest.raises(BadInput, match="is a directory"):
        export_room("design", "raw/design.md", role="librarian")


def test_memory_dir_comes_from_the_environment(agent_base: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ORPHUS_MEMORY_DIR", str(tmp_path / "wiki-home"))
    assert resolve_memory_config().memory_dir == tmp_path / "wiki-home"
