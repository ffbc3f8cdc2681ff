"""A patch's file: ``patches/<patch_id>.json``, its name, its bytes (as OmpKeep writes them),
written with secrets redacted and read back validated against the contract's patch model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.secrets import redact_obj
from commonkeep.store import jsonl
from commonkeep.store.jsonjs import _normalise, dumps_pretty
from commonkeep.store.layout import Layout

Row = dict[str, Any]

__all__ = ["load_patch", "patch_bytes", "patch_path", "write_patch"]


_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,199}")


def patch_path(layout: Layout, patch_id: str) -> Path:
    """``patches/<patch_id>.json``; an id that is not a plain file name is refused (no path escape)."""
    if not _SAFE_ID.fullmatch(patch_id) or ".." in patch_id:
        raise BadInput(f"patch id {patch_id!r} is not a plain name (letters, digits, '_', '-', '.'); nothing was applied")
    return layout.patches_dir / f"{patch_id}.json"


def write_patch(layout: Layout, patch: Row) -> tuple[Path, list[str]]:
    """Write ``patches/<patch_id>.json`` (pretty JSON + newline), secrets redacted; returns path and findings."""
    findings: list[str] = []
    clean = redact_obj(patch, findings)
    patch.clear()
    patch.update(clean)
    path = patch_path(layout, str(patch["patch_id"]))
    jsonl.atomic_write_bytes(path, patch_bytes(patch))
    return path, findings


def patch_bytes(patch: Row) -> bytes:
    """The patch file's bytes: ``dumps_pretty`` (``JSON.stringify(patch, null, 2)`` + newline).

    Through orjson's two-space indent when it gives the same bytes (measured on a 20,000-op
    patch: 0.05 s against 0.94 s for the standard library's pure-Python indenting encoder):
    values ``dumps_pretty`` formats its own way (floats JS prints differently, integers beyond
    64 bits, lone surrogates, non-string keys) take ``dumps_pretty`` itself."""
    norm, custom = _normalise(patch)
    if not custom:
        try:
            import orjson
        except ImportError:
            pass
        else:
            try:
                return orjson.dumps(norm, option=orjson.OPT_INDENT_2) + b"\n"
            except (TypeError, ValueError):
                pass  # orjson.JSONEncodeError is a TypeError
    return dumps_pretty(patch).encode("utf-8")


def load_patch(layout: Layout, ref: str) -> tuple[Row, Path]:
    """A patch by id (``patch_…``) or by file path; validated against the contract's schema."""
    candidates = [Path(ref), layout.patches_dir / f"{ref}.json", layout.patches_dir / ref]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        raise BadInput(
            f"no patch {ref!r}: not a file and not in {layout.patches_dir}",
            hint="list patches with `commonkeep patches`; propose one with `commonkeep curate`",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise BadInput(f"cannot read patch {path}: {exc}", hint="fix or remove the file; nothing was applied") from None
    if not isinstance(data, dict):
        raise BadInput(f"patch {path} is not a JSON object; nothing was applied")
    from commonkeep.store.patch_shape import validate_patch

    validate_patch(data, where=str(path))  # pydantic (0.1 s to import) only when not plainly valid
    return data, path
