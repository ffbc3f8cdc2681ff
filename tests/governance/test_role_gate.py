"""The role gate compares role names exactly, and a changed writerRole is in the audit log (issue 15 §6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.governance.conftest import run_cli, write_candidate


def _state(root: Path) -> tuple[bytes, list[str]]:
    return (root / "inbox" / "captured.jsonl").read_bytes(), sorted(p.name for p in (root / "patches").glob("*.json"))


@pytest.mark.parametrize("role", [" librarian ", "librarian\n", "Librarian", "\tlibrarian"])
def test_a_role_that_is_not_exactly_the_writer_is_refused_with_a_clear_message(
    root: Path, capsys: pytest.CaptureFixture[str], role: str
) -> None:
    write_candidate(root, "Run the linters before every commit.")
    before = _state(root)
    code, out, err = run_cli(capsys, "curate", "--root", str(root), "--role", role)
    assert code != 0
    assert f"role {role!r} is not exactly the writer role 'librarian'" in err and "Traceback" not in err
    assert _state(root) == before  # nothing was curated


def test_commonkeep_role_with_spaces_is_refused_too(root: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    write_candidate(root, "Run the linters before every commit.")
    before = _state(root)
    monkeypatch.setenv("COMMONKEEP_ROLE", " librarian ")
    code, _, err = run_cli(capsys, "curate", "--auto", "--root", str(root))
    assert code != 0 and "not exactly the writer role 'librarian'" in err
    assert _state(root) == before
    monkeypatch.setenv("COMMONKEEP_ROLE", "librarian")
    assert run_cli(capsys, "curate", "--root", str(root))[0] == 0


def test_mcp_passes_the_role_as_given_so_the_gate_sees_the_spaces() -> None:
    from commonkeep.gate.writer import require_writer
    from commonkeep.tools.mcp import resolve_role

    role = resolve_role(" librarian ", None, env={})
    assert role == " librarian "
    with pytest.raises(Exception, match="not exactly the writer role"):
        require_writer("apply", role)


def _set_writer(root: Path, role: str | None) -> None:
    cfg = root / "config.json"
    data = json.loads(cfg.read_text(encoding="utf-8")) if cfg.exists() else {}
    section = data.setdefault("commonkeep", {})
    if role is None:
        section.pop("writerRole", None)
    else:
        section["writerRole"] = role
    cfg.write_text(json.dumps(data), encoding="utf-8")


def test_a_change_of_writer_role_in_config_json_is_written_to_the_audit_log(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = root / "audit" / "log.jsonl"
    assert run_cli(capsys, "curate", "--root", str(root), "--role", "librarian")[0] == 0
    assert not log.exists()  # the default, never changed: nothing to note

    _set_writer(root, "curator")
    code, _, err = run_cli(capsys, "curate", "--root", str(root), "--role", "librarian")
    assert code != 0 and "'curator'" in err  # refused, and the change is noted all the same
    assert run_cli(capsys, "curate", "--root", str(root), "--role", "curator")[0] == 0
    _set_writer(root, None)
    assert run_cli(capsys, "curate", "--root", str(root), "--role", "librarian")[0] == 0

    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(r["event"], r["from"], r["to"], r["source"]) for r in rows] == [
        ("writer_role_changed", None, "curator", "config.json"),
        ("writer_role_changed", "curator", None, "config.json"),
    ]
    assert rows[0]["noticed_by"]["role"] == "librarian" and rows[0]["noticed_by"]["action"]
    assert rows[0]["noticed_at"] and rows[1]["noticed_by"]["role"] == "librarian"


def test_an_audit_log_with_a_stray_byte_or_a_deep_line_is_read_around_not_a_traceback(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = root / "audit" / "log.jsonl"
    _set_writer(root, "curator")
    assert run_cli(capsys, "curate", "--root", str(root), "--role", "curator")[0] == 0
    noted = log.read_bytes()
    with log.open("ab") as fh:  # a half-written line from a crash, and a line no parser can nest into
        fh.write(b'{"event": "writer_role_changed", "to": "\xff\xfe"\n' + b"[" * 100_000 + b"\n")
    assert run_cli(capsys, "curate", "--root", str(root), "--role", "curator")[0] == 0
    assert log.read_bytes().startswith(noted)
    assert log.read_bytes().count(b"writer_role_changed") == 2  # the change stays known: nothing noted again
