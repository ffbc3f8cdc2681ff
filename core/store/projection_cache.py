"""How each record is shown in the projection, remembered across processes.

``render_all`` redacts every record before it renders it (records written through patches are
already redacted; this covers hand edits), which for 2,000 records costs a new process about
0.1 s, and, when a record holds a token-like run, loading the maintained secret rules (0.3-0.5
s). The result for a record depends only on its JSON and on the code that redacts and renders,
so it is kept in ``runtime/projection-cache.json``: the block, layer, status and project name
of every record the projection showed, keyed by a hash of the record's JSON. A record whose JSON
changed, or any record after that code or an installed rule set changed (``fingerprint``), is
redacted and rendered again. The file is derived, like ``rendered/MEMORY.md``, and machine-local
(``runtime/`` is never shared); it holds the blocks of the records as they are now and nothing
else, so a purged record leaves it at the render that follows the purge.
A missing, unreadable or foreign file is simply not used.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Any

from commonkeep.store.layout import Layout

NAME = "projection-cache.json"
_HERE = Path(__file__).resolve().parent
# the code a record's shown form depends on: rendering, and redaction (ours and the packages it loads)
_SOURCES = ("store/render.py", "store/projection_cache.py", "secrets",
            "recall/search/data/minilm-tokenizer.json")  # the words ``secrets.identifier`` knows names by
_PACKAGES = ("kingfisher_sdk", "mnemonic", "confusable_homoglyphs")


def source_files() -> list[Path]:
    """Our sources a record's shown form depends on (``_SOURCES``, a folder by its ``*.py``)."""
    files: list[Path] = []
    for rel in _SOURCES:
        p = _HERE.parent / rel
        files += sorted(p.glob("*.py")) if p.is_dir() else [p]
    return files


@lru_cache(maxsize=1)
def fingerprint() -> str:
    """A hash of what a record's shown form depends on besides the record: the sources of
    rendering and redaction and the installed secret-rule packages (by file size and time)."""
    h = hashlib.blake2b(digest_size=16)
    files = source_files()
    for name in _PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        if spec is not None and spec.origin and not locations:
            files.append(Path(spec.origin))
        for where in locations:
            files += sorted(q for q in Path(where).iterdir() if q.is_file())
        h.update(f"{name}:{bool(spec)};".encode())
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        h.update(f"{f}:{st.st_size}:{st.st_mtime_ns};".encode())
    return h.hexdigest()


def digest(key: bytes) -> str:
    """The cache key of a record's JSON (``orjson.dumps`` of the record)."""
    return hashlib.blake2b(key, digest_size=16).hexdigest()


_LOADED: dict[Path, tuple[tuple[int, int, int], dict[str, list[Any]]]] = {}  # a server reads the file once


class ProjectionCache:
    """The shown form of records by the hash of their JSON: read when first needed, written back
    with exactly the records the render used when that set changed."""

    def __init__(self, layout: Layout) -> None:
        self.path = layout.runtime_dir / NAME
        self.used: dict[str, list[Any]] = {}
        self._rows: dict[str, list[Any]] | None = None  # the stored entries, looked up once per cache (one render)

    def get(self, d: str) -> tuple[str, Any, Any, Any] | None:
        """The shown form kept for the record whose JSON has the :func:`digest` ``d``."""
        row = self._stored().get(d)
        if row is None:
            return None
        self.used[d] = row
        return (row[0], row[1], row[2], row[3])

    def put(self, d: str, shown: tuple[str, Any, Any, Any]) -> None:
        self.used[d] = list(shown)

    def save(self) -> None:
        """Write the entries the render used, when they differ from the stored ones (best effort:
        the cache is derived, a failed write only costs the next render its speed)."""
        if self.used.keys() == self._stored().keys():
            return
        import os
        import tempfile

        import orjson

        tmp = ""
        try:  # renamed into place, not fsynced: a file cut short by a crash reads as no cache
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{NAME}.tmp-", dir=self.path.parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps({"fingerprint": fingerprint(), "records": self.used}))
            os.replace(tmp, self.path)
            _LOADED[self.path] = (_stamp(self.path), self.used)
        except (OSError, TypeError):
            _LOADED.pop(self.path, None)
            if tmp:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)

    def _stored(self) -> dict[str, list[Any]]:
        """The stored entries, as the file is when this cache first needs them (one ``stat`` per
        render, not one per record; a server re-reads the file only when its stamp moved)."""
        if self._rows is not None:
            return self._rows
        stamp = _stamp(self.path)
        got = _LOADED.get(self.path)
        if got is not None and got[0] == stamp:
            self._rows = got[1]
            return got[1]
        rows = _read(self.path) if stamp != (0, 0, 0) else {}
        _LOADED[self.path] = (stamp, rows)
        self._rows = rows
        return rows


def _stamp(path: Path) -> tuple[int, int, int]:
    try:
        st = path.stat()
    except OSError:
        return (0, 0, 0)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _read(path: Path) -> dict[str, list[Any]]:
    try:
        import orjson

        doc = orjson.loads(path.read_bytes())
    except (OSError, ValueError, ImportError):
        return {}
    if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint() or not isinstance(doc.get("records"), dict):
        return {}
    rows = doc["records"]
    good = all(isinstance(v, list) and len(v) == 4 and isinstance(v[0], str) for v in rows.values())
    return rows if good else {}
