"""Roundtable host plugin for commonkeep: broker client and local broker, export and memory tools.

The public API is imported lazily (hosts load this package through the plugin entry point on
every CLI call, so importing it must stay cheap):

- :class:`LocalRoundtable` - a broker plus one session per role (the demo uses it);
- :class:`BrokerClient`, :class:`BrokerThread`, :func:`start_broker_process` - the wire protocol;
- :func:`export_room` / :class:`ExportResult`, :func:`digest_room`, :func:`memory_call`;
- :func:`gate_action`, :func:`resolve_memory_config` / :class:`MemoryConfig`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from commonkeep_roundtable.api import LocalRoundtable
    from commonkeep_roundtable.broker import BrokerThread
    from commonkeep_roundtable.client import BrokerClient, start_broker_process
    from commonkeep_roundtable.digest import digest_room
    from commonkeep_roundtable.export import ExportResult, export_room
    from commonkeep_roundtable.gate import gate_action
    from commonkeep_roundtable.memory import memory_call
    from commonkeep_roundtable.paths import MemoryConfig, resolve_memory_config

_WHERE = {
    "LocalRoundtable": "api",
    "BrokerThread": "broker",
    "BrokerClient": "client",
    "start_broker_process": "client",
    "digest_room": "digest",
    "ExportResult": "export",
    "export_room": "export",
    "gate_action": "gate",
    "memory_call": "memory",
    "MemoryConfig": "paths",
    "resolve_memory_config": "paths",
}

__all__ = [
    "BrokerClient",
    "BrokerThread",
    "ExportResult",
    "LocalRoundtable",
    "MemoryConfig",
    "digest_room",
    "export_room",
    "gate_action",
    "memory_call",
    "resolve_memory_config",
    "start_broker_process",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'commonkeep_roundtable' has no attribute {name!r}")
    return getattr(importlib.import_module(f"commonkeep_roundtable.{module}"), name)
