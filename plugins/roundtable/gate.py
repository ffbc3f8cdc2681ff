"""The role gate (contracts/roundtable.md §6): who may write memory and export rooms.

A coordination convention between sessions of the same user, not a security boundary. It runs
before anything connects to the broker or spawns a backend, so a refused call does no work.
The denial texts are the contract's, byte for byte, with the role names substituted.
"""

from __future__ import annotations

from commonkeep.errors import RoleRefused

READ_ACTIONS = frozenset({"query", "doctor"})
WRITE_ACTIONS = frozenset({"ingest", "gardener", "export"})


def _clean(role: str | None) -> str | None:
    if role is None:
        return None
    return role.strip() or None


def gate_action(action: str, role: str | None, writer_role: str) -> str | None:
    """``None`` when ``role`` may perform ``action``, otherwise the contract's denial text.

    Reads are open to everyone, unnamed sessions included; writes need an exact match with
    ``writer_role``; an unnamed (``None`` or blank) session can never write.
    """
    if action in READ_ACTIONS:
        return None
    who = _clean(role)
    if who is not None and who == writer_role:
        return None
    verb = "export rooms for memory" if action == "export" else f"{action} into memory"
    start = f'Only the "{writer_role}" role may {verb}'
    if who is None:
        return f"{start}; this session has no role name (launch it with --name {writer_role})."
    return f'{start}; this session is "{who}". Ask the {writer_role} to write.'


def require_role(action: str, role: str | None, writer_role: str) -> None:
    """Raise :class:`RoleRefused` with the denial text when the gate refuses ``action``."""
    denial = gate_action(action, role, writer_role)
    if denial is not None:
        raise RoleRefused(denial)
