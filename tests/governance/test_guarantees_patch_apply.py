"""Guarantees of applying a patch's ops to canonical memory (the ``patch-apply`` mutation module).

Each test applies a real patch to a real root (files on disk, under the writer lock) and asserts
what a user depends on: a record added once and never duplicated, an update or a supersede applied
exactly as decided, a refused op skipped with its reason and nothing half-applied, a stale op of a
candidate decided since left alone.
"""

from __future__ import annotations
