"""Which project a folder belongs to (OmpKeep §6.7 ``inferProjectName``): the scope of a project fact."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1024)
def infer_project_name(cwd: str) -> str:
    """``inferProjectName`` (§6.7): nearest ``package.json`` name (or its folder), git root, basename."""
    start = Path(cwd)
    for d in [start, *start.parents]:
        pkg = d / "package.json"
        if pkg.is_file():
            try:
                name = json.loads(pkg.read_text(encoding="utf-8")).get("name")
            except (OSError, ValueError, AttributeError, RecursionError):
                name = None
            return str(name) if isinstance(name, str) and name else d.name
    for d in [start, *start.parents]:
        if (d / ".git").exists():
            return d.name
    return start.name or "project"
