# mypy: disable-error-code="empty-body"
"""The hooks through which host plugins and optional parts attach to the core.

Every hook is prefixed ``commonkeep_``. Core code never calls ``pm.hook.*`` directly: it calls
the typed facade in ``commonkeep.plugins`` (``plugin_manager().after_apply(...)``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import pluggy

hookspec = pluggy.HookspecMarker("commonkeep")
hookimpl = pluggy.HookimplMarker("commonkeep")


@hookspec
def commonkeep_cli_commands() -> dict[str, tuple[Callable[[argparse.ArgumentParser], None], str]]:
    """Contribute CLI subcommands.

    Called when the CLI builds its full command list (``--help``) or meets a name that is not
    built in. Return ``{name: (configure, help)}``; ``configure(parser)`` adds arguments and sets
    ``run``. Results of all plugins are merged; a built-in name always wins.
    """


@hookspec
def commonkeep_after_apply(root: str, patch: dict[str, Any], applied_ops: list[str]) -> None:
    """Fires after a patch was applied and the projection re-rendered.

    ``root`` is the memory root, ``patch`` the final patch document as written to
    ``patches/<patch_id>.json``, ``applied_ops`` the op ids that took effect (may be empty).
    Listeners (search index sync, the Hermes projection) must not raise; an exception is
    reported and the remaining listeners still run.
    """


@hookspec
def commonkeep_semantic_backends() -> list[Any]:
    """Contribute semantic search backends.

    Each item has ``name: str``, ``available() -> str | None`` (``None`` when usable, else the
    reason it is not) and ``search(root, query, limit) -> list[str]`` (record ids, best first).
    All plugins' lists are concatenated; the first available backend is used.
    """


@hookspec
def commonkeep_agent_tools() -> list[Any]:
    """Contribute agent tools (served by the MCP server and registered in host adapters).

    Each item has ``name``, ``description``, ``input_schema`` (JSON schema dict) and
    ``call(arguments: dict, role: str | None) -> str``. All plugins' lists are concatenated.
    """


@hookspec
def commonkeep_doctor_checks(root: str) -> list[dict[str, Any]]:
    """Contribute ``doctor`` findings: dicts with ``code``, ``severity`` (ok|info|warning|error)
    and ``message``. Called once per ``commonkeep doctor`` run; all results are concatenated."""


@hookspec
def commonkeep_wiki_extractors() -> list[Any]:
    """Contribute fact extractors to ``wiki ingest`` (run after the deterministic extractor).

    Each item has ``name: str`` and ``propose(body: str) -> list[dict]``: raw proposals
    ``{"kind", "subject", "value", "other"?, "sentence"}`` for the redacted source ``body``. The
    core admits a proposal only when its sentence is found verbatim in the source and no name
    holds a secret (``commonkeep.wiki.extractors.admit``). Called once per ingest; all lists are
    concatenated. An extractor (or implementation of this hook) that raises or returns something
    else is left out with a notice; the ingest goes on.
    """


@hookspec
def commonkeep_stamp_candidates(store: Any, candidates: list[dict[str, Any]]) -> list[str]:
    """Verify candidates a host wrote outside commonkeep (OMP: OmpKeep's own tools) against that host's
    transcript, and set their ``user_turn`` stamp where the person explicitly asked, in what they
    typed, to remember exactly that (``commonkeep.gate.user_turn``). Called by ``curate`` under the writer lock before it
    proposes; returns the ids stamped. An implementation that raises stamps nothing: the
    candidates wait for review."""
