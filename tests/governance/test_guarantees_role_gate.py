"""``reinforce`` and ``inquiries --answer/--withdraw`` change the shared memory: only the writer role
may run them (issue 28: both once answered without the role check and every test passed).

Real root, the real CLI in process; a refusal names the writer role, exits non-zero and writes
nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.governance.conftest import WRITER, run_cli, write_candidate


def _promoted(root: Path, capsys: pytest.CaptureFixture[str]) -> str:
    write_candidate(root, "Use black for formatting Python code.")
    code, out, err = run_cli(capsys, "curate", "--root", str(root), "--role", WRITER, "--json")
    assert code == 0, err
    pid = json.loads(out)["patch_id"]
    assert run_cli(capsys, "apply", pid, "--root", str(root), "--role", WRITER)[0] == 0
    return str(json.loads((root / "patches" / f"{pid}.json").read_text())["ops"][0]["record"]["id"])


def _reinforcements(root: Path) -> bytes:
    path = root / "memory" / "reinforcement.jsonl"
    return path.read_bytes() if path.exists() else b""


@pytest.mark.parametrize("role", ["planner", None])
def test_reinforce_is_refused_to_a_role_that_is_not_the_writer(
        root: Path, capsys: pytest.CaptureFixture[str], role: str | None) -> None:
    mid = _promoted(root, capsys)
    before = _reinforcements(root)
    code, out, err = run_cli(capsys, "reinforce", mid, "--root", str(root), *(["--role", role] if role else []))
    assert code != 0 and out == ""
    assert "'reinforce'" in err and "only the writer role 'librarian'" in err and "Traceback" not in err
    assert _reinforcements(root) == before
    # the writer may
    assert run_cli(capsys, "reinforce", mid, "--root", str(root), "--role", WRITER)[0] == 0
    assert _reinforcements(root) != before


def test_the_reinforce_api_refuses_too(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from commonkeep.errors import RoleRefused
    from commonkeep.patches.reinforce import reinforce

    mid = _promoted(root, capsys)
    with pytest.raises(RoleRefused):
        reinforce(root, mid, outcome="explicit_reinforcement", role="planner")
    assert _reinforcements(root) == b""


def _inquiry(root: Path) -> str:
    from commonkeep.store.inquiries import upsert_inquiries

    (iid,) = upsert_inquiries(root, [{"question": "Which formatter does the project use?", "context": "two answers"}])
    return iid


def _inquiries(root: Path) -> bytes:
    return (root / "memory" / "inquiries.jsonl").read_bytes()


@pytest.mark.parametrize("flag", ["--answer", "--withdraw"])
@pytest.mark.parametrize("role", ["planner", None])
def test_closing_an_inquiry_is_refused_to_a_role_that_is_not_the_writer(
        root: Path, capsys: pytest.CaptureFixture[str], flag: str, role: str | None) -> None:
    iid = _inquiry(root)
    before = _inquiries(root)
    code, out, err = run_cli(capsys, "inquiries", flag, iid, "--root", str(root), *(["--role", role] if role else []))
    assert code != 0 and out == ""
    assert "'inquiries'" in err and "only the writer role 'librarian'" in err and "Traceback" not in err
    assert _inquiries(root) == before
    code, out, err = run_cli(capsys, "inquiries", flag, iid, "--root", str(root), "--role", WRITER, "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == ("answered" if flag == "--answer" else "withdrawn")


def test_listing_inquiries_needs_no_role(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    iid = _inquiry(root)
    code, out, err = run_cli(capsys, "inquiries", "--root", str(root), "--json")
    assert code == 0, err
    assert [r["id"] for r in json.loads(out)] == [iid]
