"""The memory profile of a working folder, resolved and upserted into ``memory/profiles.jsonl``
as OmpKeep's ``/memory-handoff`` does (``contracts/ompkeep-store.md`` §4.8).

The project id is found, first hit wins: ``<cwd>/.pi/settings.json``
``"pi-persistent-intelligence".projectIdentity.project_id`` (``explicit_config``); the ``origin``
url in the nearest ``.git/config`` (``git-<sha256(url)[:16]>``, ``git_remote``); the nearest git
root (``gitroot-<sha256(path)[:16]>``, ``git_root``); the nearest ``package.json`` name
(``package_name``); the folder's own name (``cwd_fallback``). Every name is slugged (lowercase,
runs outside ``[a-z0-9]`` become ``-``, an empty result becomes ``default``).

The upsert keeps the line of the same ``profile_id`` and ``resource_id`` in its place, its
``created_at`` kept and every other field refreshed; failing that, the first line of the same
``profile_id`` (its ``resource_id`` kept: never two lines for one profile); a new profile is
appended. The user is ``$USER``, as OmpKeep under Bun names it (:func:`resource_id`). OmpKeep stamps it
with the wall clock; commonkeep with its clock (``COMMONKEEP_NOW`` pins it), the same instant the
handoff carries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

Row = dict[str, Any]
_ORIGIN = re.compile(r'\[remote "origin"\][\s\S]*?\n\s*url\s*=\s*(.+)')


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.strip().lower()).strip("-") or "default"


def _hash16(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _find_up(start: Path, name: str) -> Path | None:
    current = start
    while True:
        if (current / name).exists():
            return current / name
        if current.parent == current:
            return None
        current = current.parent


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _explicit(cwd: Path) -> Row | None:
    settings = _read_json(cwd / ".pi" / "settings.json")
    config = settings.get("pi-persistent-intelligence") if isinstance(settings, dict) else None
    ident = config.get("projectIdentity") if isinstance(config, dict) else None
    pid = ident.get("project_id") if isinstance(ident, dict) else None
    if not isinstance(ident, dict) or not isinstance(pid, str) or not pid.strip():
        return None
    out: Row = {"project_id": slug(pid), "source": "explicit_config"}
    if isinstance(ident.get("aliases"), list):
        out["aliases"] = [a for a in ident["aliases"] if isinstance(a, str)]
    return out


def _git_remote(cwd: Path) -> Row | None:
    git = _find_up(cwd, ".git")
    if git is None:
        return None
    try:
        text = (git / "config").read_text(encoding="utf-8")
    except OSError:
        return None
    match = _ORIGIN.search(text)
    remote = match.group(1).strip() if match else ""
    if not remote:
        return None
    return {"project_id": f"git-{_hash16(remote)}", "source": "git_remote", "git_remote_hash": _hash16(remote),
            "git_root": str(git.parent)}


def _git_root(cwd: Path) -> Row | None:
    git = _find_up(cwd, ".git")
    if git is None:
        return None
    return {"project_id": f"gitroot-{_hash16(str(git.parent))}", "source": "git_root", "git_root": str(git.parent)}


def _package(cwd: Path) -> Row | None:
    pkg = _find_up(cwd, "package.json")
    if pkg is None:
        return None
    data = _read_json(pkg)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not name.strip():
        name = pkg.parent.name
    return {"project_id": slug(name), "source": "package_name", "package_name": name}


def project_identity(cwd: Path | str) -> Row:
    """The ``project_identity`` of ``cwd`` (module doc for the order)."""
    where = Path(os.path.abspath(cwd))
    return (_explicit(where) or _git_remote(where) or _git_root(where) or _package(where)
            or {"project_id": slug(where.name), "source": "cwd_fallback"})


def resource_id() -> str:
    """``user:<slug($USER)>``, ``user:unknown`` when ``USER`` is unset: what OmpKeep writes.

    OmpKeep takes ``os.userInfo().username``, and OMP runs it under Bun, whose ``userInfo()``
    returns ``$USER`` (``"unknown"`` without it), where Node reads the passwd entry of the uid
    (checked with Bun 1.4.5 and Node 20: ``USER=x`` gives ``x`` under Bun, the login name under
    Node). commonkeep follows Bun, so both writers name the same user the same way.
    """
    return f"user:{slug(os.environ.get('USER', 'unknown'))}"


def resolve_profile(root: Path | str, cwd: Path | str, now: str) -> Row:
    """Resolve the profile of ``cwd`` and upsert it into ``<root>/memory/profiles.jsonl``; returns it."""
    from commonkeep.store.core import Store

    ident = project_identity(cwd)
    store = Store(root)
    profile: Row = {
        "profile_id": f"project:{ident['project_id']}",
        "profile_type": "project",
        "resource_id": resource_id(),
        "project_identity": ident,
        "storage_root": str(store.layout.root),
        "created_at": now,
        "updated_at": now,
    }
    out: list[Row] = []

    def upsert(rows: list[Row]) -> list[Row]:
        same = [i for i, row in enumerate(rows) if row.get("profile_id") == profile["profile_id"]]
        # the line of this user, else any line of this profile: its resource_id is kept, so a
        # process with another $USER (a service, sudo) never adds a second line for one profile
        mine = [i for i in same if rows[i].get("resource_id") == profile["resource_id"]] or same
        if mine:
            row = rows[mine[0]]
            rows[mine[0]] = {**row, **profile, "resource_id": row.get("resource_id", profile["resource_id"]),
                             "created_at": row.get("created_at", now), "updated_at": now}
            out.append(rows[mine[0]])
            return rows
        out.append(profile)
        return [*rows, profile]

    store.rewrite(store.layout.profiles, upsert)
    return out[0]
