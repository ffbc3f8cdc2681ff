"""The entry points of the ``commonkeep`` group, remembered between processes.

Finding third-party plugins through ``importlib.metadata`` costs every new process about 15 ms
(importing it pulls in the ``email`` package, then every installed distribution's metadata is
read), which a one-shot command such as ``commonkeep review --approve`` pays for nothing when
no plugin changed. So the entry points found are kept in a file (in a virtual environment,
``<venv>/var/cache/commonkeep/entry-points.json``; else in the user's cache folder,
``$XDG_CACHE_HOME/commonkeep/`` or ``~/.cache/commonkeep/``, one file per Python interpreter;
``COMMONKEEP_PLUGIN_CACHE`` names another), beside a fingerprint of where they came from: every folder and file on
``sys.path``, and in each folder every ``*.dist-info``/``*.egg-info`` and the size, time and
inode of its ``entry_points.txt``; and the finders on ``sys.meta_path``. Installing, removing
or upgrading a package changes the fingerprint, and the next process asks ``importlib.metadata``
again. The fingerprint holds the first folder on ``sys.path`` (the working directory under
``python -m``, a script's folder) and ``PYTHONPATH``, so the file keeps the last ``KEEP``
fingerprints with their entry points, not only the last one: commands run from two folders in
turn (or beside an older checkout on ``PYTHONPATH``, as ``bench web --cli-against`` runs them)
would otherwise each find the other's and ask ``importlib.metadata`` every time. A missing,
unreadable or foreign cache file is simply not used; a folder that cannot be written to costs
only the lookup. ``COMMONKEEP_NO_PLUGIN_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

GROUP = "commonkeep"
KEEP = 8  # fingerprints remembered, newest first
_INFO = (".dist-info", ".egg-info")


def _cache_file() -> Path:
    """``COMMONKEEP_PLUGIN_CACHE``; else, in a virtual environment, a file inside it (its packages
    are what the file describes; nothing is written to the user's home); else the user's cache."""
    given = os.environ.get("COMMONKEEP_PLUGIN_CACHE")
    if given:
        return Path(given)
    if sys.prefix != sys.base_prefix:
        return Path(sys.prefix) / "var" / "cache" / "commonkeep" / "entry-points.json"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tag = hashlib.blake2b(sys.executable.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()
    return Path(base) / "commonkeep" / f"entry-points-{tag}.json"


def fingerprint() -> str:
    """A hash of what ``importlib.metadata`` would read entry points from (see the module doc)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr([type(f).__module__ + "." + type(f).__qualname__ for f in sys.meta_path]).encode())
    for entry in sys.path:
        where = entry or os.getcwd()
        h.update(f"\0{where}".encode("utf-8", "surrogateescape"))
        try:
            with os.scandir(where) as it:
                names = sorted(e.name for e in it if e.name.endswith(_INFO))
        except NotADirectoryError:
            try:
                st = os.stat(where)
            except OSError:
                continue
            h.update(f"|file:{st.st_size}:{st.st_mtime_ns}:{st.st_ino}".encode())
            continue
        except OSError:
            continue
        for name in names:
            try:
                st = os.stat(os.path.join(where, name, "entry_points.txt"))
                mark = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
            except OSError:
                mark = "-"
            h.update(f"|{name}:{mark}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _looked_up(group: str) -> list[tuple[str, str]]:
    from importlib.metadata import entry_points

    return [(ep.name, ep.value) for ep in entry_points(group=group)]


def entry_points(group: str = GROUP) -> list[tuple[str, str]]:
    """``(name, value)`` of each entry point of ``group``, as ``importlib.metadata`` lists them."""
    if os.environ.get("COMMONKEEP_NO_PLUGIN_CACHE"):
        return _looked_up(group)
    mark, path = fingerprint(), _cache_file()
    try:
        raw: Any = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        raw = None
    known = _entries(raw, group)
    for entry in known:
        if entry["fingerprint"] == mark:
            return [(str(n), str(v)) for n, v in entry[group]]
    found = _looked_up(group)
    earlier = [e for e in known if e["fingerprint"] != mark][: KEEP - 1]
    _save(path, {"fingerprint": mark, group: [list(x) for x in found], "earlier": earlier})
    return found


def _entries(raw: Any, group: str) -> list[dict[str, Any]]:
    """The well-formed entries of a cache file, newest first: the file's own (``fingerprint`` and
    ``group``), then those of ``earlier``; anything else in it is left out."""
    if not isinstance(raw, dict):
        return []
    earlier = raw.get("earlier")
    out = []
    for entry in [raw, *(earlier if isinstance(earlier, list) else [])]:
        if not isinstance(entry, dict) or not isinstance(entry.get("fingerprint"), str):
            continue
        got = entry.get(group)
        if isinstance(got, list) and all(isinstance(x, list) and len(x) == 2 and all(isinstance(y, str) for y in x) for x in got):
            out.append({"fingerprint": entry["fingerprint"], group: got})
    return out


def _save(path: Path, body: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(body, fh)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def load(value: str) -> Any:
    """What an entry point's ``module:attr.path [extras]`` value names (as ``EntryPoint.load``)."""
    spec = value.split("[", 1)[0].strip()
    module, _, attrs = spec.partition(":")
    obj: Any = importlib.import_module(module.strip())
    for part in filter(None, attrs.strip().split(".")):
        obj = getattr(obj, part)
    return obj
