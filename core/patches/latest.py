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
    ``BadInput`` when none waits, or when a patch file newer than it cannot be read (it may be the
    latest proposed patch: applying an older one instead would be a surprise)."""
    folder = Path(root) / "patches"
    found: list[tuple[str, str, str]] = []
    broken: list[tuple[str, str]] = []
    for path in folder.glob("*.json") if folder.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            broken.append((path.name, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"))
            continue
        except (OSError, ValueError, RecursionError) as exc:
            broken.append((path.name, f"cannot be read: {exc}"))
            continue
        if isinstance(doc, dict) and doc.get("status") == "proposed":
            found.append((str(doc.get("created_at") or ""), path.name, str(doc.get("patch_id") or path.stem)))
    newest = max(found) if found else None
    newer = sorted(b for b in broken if newest is None or b[0] > newest[1])
    if newer:
        named = "; ".join(f"{folder / name}: {why}" for name, why in newer[:5])
        raise BadInput(f"the latest patch file cannot be used ({named}); nothing was applied",
                       hint="fix it or move it out of patches/, or name the patch to apply (`commonkeep patches` "
                            "lists them; `commonkeep doctor` names every unreadable file)")
    if newest is None:
        raise BadInput(f"no proposed patch waits in {folder}; nothing was applied",
                       hint="`commonkeep curate` proposes one from the inbox; `commonkeep patches` lists them all")
    return newest[2]
