"""Recall: how memory reaches an agent.

- ``search``: keyword (FTS5), semantic and hybrid search over the root (a package of its own).
- ``select``: memory selected for one prompt (``runtime/``), ``projection``: the budgeted view a
  host renders (Hermes' ``§`` files), ``handoff``: snapshots for another agent.
- ``cli``: the ``select``, ``project`` and ``handoff`` commands.
"""
