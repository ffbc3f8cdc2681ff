"""The single writer: the role gate.

Only the configured writer role (default ``librarian``) may apply patches, curate, forget,
review, ratify, reinforce or answer inquiries; every other role only appends candidates. This
is a coordination convention between agents of one user on one machine (``DESIGN.md``
principle 4), not a security boundary. The gate runs before any work is done, and a refusal
says which role may act and how to become it.

The acting role comes from, in order: ``--role``, ``$COMMONKEEP_ROLE``, the host (a host plugin
passes its configured role). The writer role comes from ``$COMMONKEEP_WRITER_ROLE``, then
``config.json`` → ``"commonkeep": {"writerRole": ...}``, then ``librarian``.

The writer lock itself (``locks/writer.lock``) is ``commonkeep.patches.lock``: the names it had
here keep importing from this module.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from commonkeep.errors import RoleRefused

DEFAULT_WRITER_ROLE = "librarian"


def configured_writer_role(root: Path | str | None = None) -> str:
    """The role allowed to mutate the store."""
    env = os.environ.get("COMMONKEEP_WRITER_ROLE", "").strip()
    if env:
        return env
    if root is not None:
        from commonkeep.gate import audit_log  # the module from its package: ~0.3 µs less every capture

        role = audit_log.configured_value(root)
        if role is not None:
            return role.strip()
    return DEFAULT_WRITER_ROLE


def acting_role(explicit: str | None = None, host_role: str | None = None) -> str | None:
    """The role this process acts as: ``--role``, then ``$COMMONKEEP_ROLE``, then the host's."""
    for value in (explicit, os.environ.get("COMMONKEEP_ROLE"), host_role):
        if value and value.strip():
            return value  # as given: the gate compares names exactly (" librarian " is refused)
    return None


def require_writer(action: str, role: str | None, root: Path | str | None = None) -> str:
    """Refuse (``RoleRefused``) unless ``role`` is the writer role; returns the role. An ill-typed
    or unknown setting in ``config.json`` refuses too (``BadConfig``): the writer role may be one."""
    if root is not None:
        from commonkeep.store.config_check import require_valid

        require_valid(root, action)
    writer = configured_writer_role(root)
    if root is not None:
        from commonkeep.gate.audit_log import note_writer_role

        note_writer_role(root, role, action)  # a changed writerRole in config.json goes to audit/log.jsonl
    if role == writer:
        return role
    if role and role.strip().casefold() == writer.casefold():
        raise RoleRefused(
            f"refused before doing anything: role {role!r} is not exactly the writer role {writer!r}; roles are "
            f"compared exactly (no spaces around the name, same case), so '{action}' was not done.",
            hint=f"act as the writer with --role {writer} or COMMONKEEP_ROLE={writer}",
        )
    who = f"role {role!r}" if role else "no role (neither --role nor $COMMONKEEP_ROLE is set)"
    raise RoleRefused(
        f"refused before doing anything: '{action}' changes the shared memory and only the writer role "
        f"{writer!r} may do it; this process has {who}. Other roles may only append candidates "
        f"(`commonkeep write TEXT`).",
        hint=f"act as the writer with --role {writer} or COMMONKEEP_ROLE={writer} "
        "(the writer role is set by $COMMONKEEP_WRITER_ROLE or config.json commonkeep.writerRole)",
    )


#: the writer lock moved up to the patch path in 0.3; its names keep importing from here
_MOVED_UP = {name: "commonkeep.patches.lock" for name in (
    "DEFAULT_LOCK_WAIT", "LockInfo", "pid_alive", "read_lock_info", "lock_wait_seconds", "Acquired", "writer_lock")}


def __getattr__(name: str) -> Any:
    from commonkeep._moved import moved_up

    return moved_up(__name__, _MOVED_UP, name)
