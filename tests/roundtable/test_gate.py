"""The role gate's exact denial texts (contracts/roundtable.md §6)."""

from __future__ import annotations

import pytest

from commonkeep.errors import EXIT_REFUSED, RoleRefused
from commonkeep_roundtable.gate import gate_action, require_role


@pytest.mark.parametrize("action", ["query", "doctor"])
@pytest.mark.parametrize("role", ["planner", None, "", "librarian"])
def test_reads_are_open_to_everyone_including_unnamed_sessions(action: str, role: str | None) -> None:
    assert gate_action(action, role, "librarian") is None


@pytest.mark.parametrize("action", ["ingest", "gardener"])
def test_named_non_writer_gets_the_contract_text(action: str) -> None:
    assert gate_action(action, "planner", "librarian") == (
        f'Only the "librarian" role may {action} into memory; this session is "planner". Ask the librarian to write.'
    )


@pytest.mark.parametrize("role", [None, "", "   "])
def test_unnamed_session_can_never_write(role: str | None) -> None:
    assert gate_action("ingest", role, "librarian") == (
        'Only the "librarian" role may ingest into memory; this session has no role name (launch it with --name librarian).'
    )


def test_export_uses_the_same_shape_with_its_own_verb() -> None:
    assert gate_action("export", "planner", "librarian") == (
        'Only the "librarian" role may export rooms for memory; this session is "planner". Ask the librarian to write.'
    )
    assert gate_action("export", None, "librarian") == (
        'Only the "librarian" role may export rooms for memory; this session has no role name (launch it with --name librarian).'
    )


def test_writer_role_is_an_exact_match_and_is_substituted() -> None:
    assert gate_action("gardener", "archivist", "archivist") is None
    assert gate_action("gardener", "Librarian", "librarian") is not None
    assert gate_action("gardener", "librarian", "archivist") == (
        'Only the "archivist" role may gardener into memory; this session is "librarian". Ask the archivist to write.'
    )


def test_require_role_raises_role_refused_with_exit_code_3() -> None:
    with pytest.raises(RoleRefused) as err:
        require_role("ingest", "critic", "librarian")
    assert err.value.exit_code == EXIT_REFUSED
    assert str(err.value).startswith('Only the "librarian" role may ingest into memory; this session is "critic".')
    require_role("ingest", "librarian", "librarian")
