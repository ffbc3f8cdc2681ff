"""Whether commonkeep's modules have compiled bytecode Python can use.

A wheel install compiles every module (pip does); an editable install (``pip install -e .``, a
checkout) compiles nothing, and Python writes the ``__pycache__`` files itself on first import,
unless the environment says not to (``PYTHONDONTWRITEBYTECODE=1``, ``-B``): then every command
compiles each module it imports again, about 90 ms of a ``commonkeep review --approve``.
``scripts/test`` and the README's install line compile them once (``python -m compileall``);
``commonkeep doctor`` names the modules whose bytecode is missing or older than their source.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

PACKAGES = ("commonkeep", "commonkeep_hermes", "commonkeep_omp", "commonkeep_roundtable")


def _folders() -> list[Path]:
    out = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        for where in (spec.submodule_search_locations or []) if spec is not None else []:
            out.append(Path(where))
    return out


def _current(source: Path) -> bool:
    """Whether the ``.pyc`` Python would use for ``source`` exists and matches it (timestamp pycs:
    the source's modification time and size, as the import system checks them)."""
    try:
        cached = Path(importlib.util.cache_from_source(str(source)))
        with cached.open("rb") as fh:
            head = fh.read(16)
        st = source.stat()
    except (OSError, ValueError, NotImplementedError):
        return False
    if len(head) < 16 or head[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(head[4:8], "little")
    if flags & 1:  # a hash-based pyc: current by its own rule
        return True
    return int.from_bytes(head[8:12], "little") == int(st.st_mtime) & 0xFFFFFFFF and \
        int.from_bytes(head[12:16], "little") == st.st_size & 0xFFFFFFFF


def stale_sources() -> tuple[list[Path], int]:
    """The modules of commonkeep's packages without current bytecode, and how many there are."""
    sources = [p for folder in _folders() for p in folder.rglob("*.py") if "__pycache__" not in p.parts]
    return [p for p in sources if not _current(p)], len(sources)


def finding() -> dict[str, object] | None:
    """``doctor``'s note when bytecode is missing and this Python will not write it."""
    if not sys.dont_write_bytecode:
        return None  # Python writes what is missing on the next import
    stale, total = stale_sources()
    if not stale:
        return None
    folders = " ".join(sorted({str(f) for f in _folders()}))
    return {"code": "bytecode_missing", "severity": "info",
            "message": f"{len(stale)} of {total} commonkeep modules have no current compiled bytecode and this "
                       "environment does not write it (PYTHONDONTWRITEBYTECODE or -B): every command compiles them "
                       f"again (about 90 ms a call); compile them once: {os.path.basename(sys.executable)} -m compileall -q {folders}"}
