"""commonkeep: one governed long-term memory shared by the agents on a host.

This module stays import-light on purpose: hosts shell out to the CLI on every tool call, so
``import commonkeep`` must not pull in pydantic, sqlite or git.
"""

__version__ = "0.1.0"

from commonkeep import _moved

_moved.install()

__all__ = ["__version__"]
