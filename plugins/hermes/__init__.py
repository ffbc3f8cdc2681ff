"""Hermes Agent host plugin for commonkeep.

- ``commonkeep_hermes.governance``: the Hermes general plugin ``commonkeep-governance`` (memory
  tool writes → governed candidates; recall tools; projection refresh on session boundaries);
- ``commonkeep_hermes.provider``: the Hermes memory provider ``commonkeep`` (reads, prefetch);
- ``commonkeep_hermes.hermesfiles``: the budgeted ``§`` projection written into MEMORY.md / USER.md;
- ``commonkeep_hermes.install`` / ``cliplugin``: ``commonkeep hermes install|uninstall|status|sync``;
- ``commonkeep_hermes.handoff``: ``attach_handoff`` and the ``commonkeep-omp`` wrapper.

Importing this package imports nothing from Hermes (only ``provider`` does, inside Hermes).
"""

from __future__ import annotations

from typing import Any

__all__ = ["attach_handoff"]


def __getattr__(name: str) -> Any:
    if name == "attach_handoff":
        from commonkeep_hermes.handoff import attach_handoff

        return attach_handoff
    raise AttributeError(name)
