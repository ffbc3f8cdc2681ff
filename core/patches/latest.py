"""Which patch ``commonkeep apply`` applies when none is named: the newest one still proposed.

The tour's ``apply "$OMP_MEMORY_ROOT"/patches/patch_*.json`` works only while one patch file
exists; ``commonkeep apply`` (or ``--latest``) works every time.
"""

from __future__ import annotations

import json
from pathlib import Path

from commonkeep.errors import BadInput


def latest_proposed(root: str | Path) -> str:
    """The id of the newest patch whose status is ``proposed`` (by ``created_at``, then file name);
    ``BadInput`` when none waits."""
    folder = Path(root) / "patches"
    found: list[tuple[str, str, str]] = []
    for path in folder.glob("*.json") if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue  # `commonkeep patches` names unreadable files; apply by id refuses them
        if isinstance(doc, dict) and doc.get("status") == "proposed":
            found.append((str(doc.get("created_at") or ""), path.name, str(doc.get("patch_id") or path.stem)))
    if not found:
        raise BadInput(f"no proposed patch waits in {folder}; nothing was applied",
                       hint="`commonkeep curate` proposes one from the inbox; `commonkeep patches` lists them all")
    return max(found)[2]
