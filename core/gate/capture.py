"""The one path by which any agent writes a long-term candidate.

The CLI (``commonkeep write``), the Hermes plugin, the MCP server and scripts all call
``capture``: build the candidate (secrets redacted, provenance stamped), bind the writer's own
stamp in the stamp journal when it carries one (``commonkeep.gate.stamps``), score it with the
governance rules when that part is present, append it to the shared inbox.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.gate.writer import configured_writer_role
from commonkeep.store.candidates import new_candidate
from commonkeep.store.core import Store


@dataclass
class Captured:
    """What ``capture`` wrote: the candidate and the kinds of secrets it redacted."""

    candidate: dict[str, Any]
    redacted: list[str] = field(default_factory=list)
    inbox: Path | None = None
    #: the agent host whose tool ran this write (the writer's stamp was not bound), else ``None``
    agent_shell: str | None = None


def score(store: Store, cand: dict[str, Any], writer_role: str | None = None) -> dict[str, Any]:
    """Attach the governance scores (trust, worth, risk, matches) when that part is installed;
    ``writer_role``: the root's configured writer role when the caller has it already."""
    try:
        from commonkeep.gate import scoring
    except ImportError:
        return cand
    fn = getattr(scoring, "score_candidate", None)
    if fn is None:
        return cand
    scored: dict[str, Any] = fn(cand, store) if writer_role is None else fn(cand, store, writer_role=writer_role)
    return scored


#: Provenance keys only a host adapter sets (``commonkeep.gate.user_turn``).
STAMP_KEYS = ("stamped_by", "origin", "user_turn", "write_origin")

_STORES: dict[str, tuple[Store, tuple[int, ...]]] = {}
_STORES_LOCK = threading.Lock()


_INBOX_DIRS: dict[str, str] = {}  # root -> its inbox folder (joined once)


def _stamp(root: str) -> tuple[int, ...]:
    """What changes when a folder of the root is created, removed, renamed or replaced by a link
    (the root's own entry list), or when the inbox folder's entries change."""
    inbox = _INBOX_DIRS.get(root)
    if inbox is None:
        inbox = _INBOX_DIRS[root] = os.path.join(root, "inbox")
    try:
        top, box = os.lstat(root), os.lstat(inbox)
    except OSError:
        return ()
    return (top.st_ino, top.st_mtime_ns, top.st_mode, box.st_ino, box.st_mtime_ns, box.st_mode)


def store_for(root: Path | str) -> Store:
    """A ready ``Store`` for ``root``, kept per root for the life of the process: a host calls
    ``capture`` thousands of times, and the layout check (~50 system calls) need not run each
    time. Two ``lstat`` calls re-validate it; any change to the root's folders redoes the check."""
    key = os.fspath(root)
    stamp = _stamp(key)
    with _STORES_LOCK:
        hit = _STORES.get(key)
    if hit is not None and stamp and hit[1] == stamp:
        hit[0].problems.clear()
        return hit[0]
    store = Store(root)
    store.ensure()
    with _STORES_LOCK:
        _STORES[key] = (store, _stamp(key))
    return store


def capture(root: Path | str, text: str, **kwargs: Any) -> Captured:
    """Write one candidate into the inbox of ``root``; keyword arguments as ``new_candidate``.

    A caller never sets a host stamp: ``provenance.stamped_by`` / ``origin`` / ``user_turn`` are set
    only by a host adapter from what it observed (``commonkeep.gate.user_turn``), so they are dropped
    here from whatever the CLI, an agent tool or the MCP server passes (``stamp_dropped`` says so).

    The writer's own stamp (the writer role's ``--trust``, ``autoapply.claimed_stamp``) is a person's
    word: it is bound in the stamp journal here, before the line reaches the inbox, unless this
    process runs inside an agent (``agent_shell.inside_agent``): then the candidate carries
    ``provenance.tool: "<host> shell"`` and waits for review (``Captured.agent_shell``).
    """
    kwargs = _unstamped(kwargs)
    store = store_for(root)
    findings: list[str] = []
    cand = new_candidate(text, findings=findings, **kwargs)
    writer = configured_writer_role(store.root)  # read once for the stamp and the scores
    shell = _bind_writer_stamp(store, cand, writer)
    cand = score(store, cand, writer)
    store.append_candidate(cand, redacted=True)  # new_candidate redacted every field; scoring only derives
    return Captured(cand, findings, store.layout.inbox, shell)


def _bind_writer_stamp(store: Store, cand: dict[str, Any], writer: str | None = None) -> str | None:
    """Bind the writer's stamp ``cand`` claims; returns the agent host when it is refused (module doc).
    ``writer``: the root's configured writer role (read here when not given)."""
    # the module from its package: ~1 µs less a capture than the name from the module
    from commonkeep.gate import autoapply

    claim = autoapply.claimed_stamp(cand, configured_writer_role(store.root) if writer is None else writer)
    if claim is None:
        return None
    from commonkeep.gate.agent_shell import inside_agent, shell_tool

    host = inside_agent()
    if host is not None:  # an agent's tool ran this: the writer's own stamp is never earned here
        cand["provenance"] = {**cand.get("provenance", {}), "tool": shell_tool(host)}
        return host
    from commonkeep.gate import stamps

    try:
        stamps.record_stamp(store.root, cand, *claim)
    except (OSError, stamps.KeyUnsafe) as exc:  # unbound, the stamp earns nothing: the candidate waits for review
        import logging

        logging.getLogger("commonkeep").warning("the writer's stamp could not be recorded (%s); the candidate waits "
                                                "for review", exc)
    return None


def _unstamped(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with the stamp keys removed from ``provenance`` (named in ``stamp_dropped``)."""
    prov = kwargs.get("provenance")
    if not isinstance(prov, dict):
        return kwargs
    dropped = [k for k in STAMP_KEYS if k in prov]
    if not dropped:
        return kwargs
    clean = {k: v for k, v in prov.items() if k not in STAMP_KEYS}
    clean["stamp_dropped"] = ",".join(dropped)
    return {**kwargs, "provenance": clean}
