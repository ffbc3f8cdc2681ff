"""Keep the agent's own tools out of what the stamps rest on.

A stamp is only as good as the files around it: the memory root (inbox, records, patches,
``config.json``), the stamp journal and its key (``commonkeep.gate.stamps``), and the host files an
adapter reads (Hermes' ``MEMORY.md`` / ``USER.md`` and ``config.yaml``; OMP's session transcripts
and extensions). The host plugins ask :func:`refusal` before a model's tool runs (Hermes'
``pre_tool_call`` hook; the OMP extension holds the same rules in TypeScript, in
``plugins/omp/commonkeep.ts``) and block the call with the reason, which the model reads:

- a **file tool** that writes (Hermes ``write_file`` / ``patch``, OMP ``write`` / ``edit``) a path
  under one of them, after ``~``, relative paths and symbolic links are resolved;
- a **file tool that reads** the stamp journal or its key (with the key a model could sign a forged
  stamp);
- best effort, a **shell or code tool** (Hermes ``terminal`` / ``execute_code``, OMP ``bash`` /
  ``eval``) whose text names one of those paths (a path inside the root; ``--root ROOT`` alone is
  fine), a file of the root by its name (``captured.jsonl`` …), the stamp files, or the agent mark
  (``COMMONKEEP_AGENT_HOST``), or clears the environment (``env -i``) around ``commonkeep``.

Best effort is the word: a shell can build a path no text scan sees (variables, ``cd`` then a
relative name, base64). What closes that is the host's own sandbox (``docs/security.md``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Names of the root's files a shell command should never name (best effort, beside full paths).
ROOT_FILES = ("captured.jsonl", "L1.identity.jsonl", "L2.playbooks.jsonl", "tombstones.jsonl", "reinforcement.jsonl")
STAMP_FILES = ("stamps.key", "stamps.jsonl")
#: Hermes' tools: those that write a file (argument names holding paths), read one, or run code.
HERMES_WRITE = {"write_file": ("path",), "patch": ("path",)}
HERMES_READ = {"read_file": ("path",), "search_files": ("path",)}
HERMES_SHELL = {"terminal": ("command",), "execute_code": ("code",)}
_PATCH_PATHS = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_CLEARS_ENV = re.compile(r"\benv\s+(?:-\w*i\b|--ignore-environment\b)")


@dataclass(frozen=True)
class Protected:
    """What the model's tools must not touch: ``write`` (folders and files no tool may write) and
    ``secret`` (not even read: the stamp journal and its key); ``roots``: memory roots, whose own
    path a shell command may name (``--root``), though not a path inside them."""

    write: tuple[str, ...]
    secret: tuple[str, ...]
    roots: tuple[str, ...] = ()
    home: str = field(default_factory=lambda: os.environ.get("HOME") or str(Path.home()))


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(os.fspath(path)))


def protected(roots: Iterable[str | Path], host_files: Iterable[str | Path] = ()) -> Protected:
    """The protected set for memory ``roots`` and the host's own files (``host_files``)."""
    from commonkeep.gate.stamps import state_dir

    real_roots = tuple(dict.fromkeys(_real(r) for r in roots if str(r)))
    secret = (_real(state_dir()),)
    write = tuple(dict.fromkeys([*real_roots, *secret, *(_real(p) for p in host_files if str(p))]))
    return Protected(write, secret, real_roots)


def _under(path: str, places: Iterable[str]) -> str | None:
    for place in places:
        if path == place or path.startswith(place.rstrip("/") + "/"):
            return place
    return None


def resolve(path: str, cwd: str) -> str:
    """An argument path as the tool would open it: ``~`` expanded, relative to ``cwd``, links resolved."""
    expanded = os.path.expanduser(path.strip())
    return os.path.realpath(expanded if os.path.isabs(expanded) else os.path.join(cwd, expanded))


def _spellings(path: str, home: str) -> list[str]:
    out = [path]
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        rest = path[len(home.rstrip("/")):]
        out += [f"~{rest}", f"$HOME{rest}", f"${{HOME}}{rest}"]
    return out


def shell_refusal(text: str, prot: Protected) -> str | None:
    """Why a shell command or a piece of code must not run (best effort, module doc); ``None`` if it may."""
    from commonkeep.gate.agent_shell import MARK

    if MARK in text:
        return f"it names {MARK}, the mark that tells commonkeep a command runs inside an agent"
    if "commonkeep" in text and _CLEARS_ENV.search(text):
        return "it clears the environment around commonkeep (the agent mark goes with it)"
    for place in prot.write:
        inside_only = place in prot.roots  # `--root ROOT` is how commands name a root; a path inside it is a file
        for spelled in _spellings(place, prot.home):
            needle = spelled.rstrip("/") + "/" if inside_only else spelled
            if needle in text:
                return f"it names {spelled if not inside_only else needle}, which {_what(place, prot)}"
    for name in (*STAMP_FILES, *ROOT_FILES):
        if name in text:
            return f"it names {name}, a file {'of the stamp journal' if name in STAMP_FILES else 'of the memory root'}"
    return None


def _what(place: str, prot: Protected) -> str:
    if place in prot.secret:
        return "holds the stamp journal and its key"
    if place in prot.roots:
        return "is the memory root (its files change only through commonkeep)"
    return "is a file commonkeep's stamps are read from"


def _patch_paths(args: Mapping[str, Any]) -> list[str]:
    body = args.get("patch")
    if not isinstance(body, str):
        return []
    return [m.group(1) or m.group(2) for m in _PATCH_PATHS.finditer(body)]


def refusal(tool: str, args: Mapping[str, Any] | None, prot: Protected, cwd: str | None = None) -> str | None:
    """Why Hermes must not run ``tool`` with ``args`` (a message for the model); ``None`` when it may."""
    args = args if isinstance(args, Mapping) else {}
    cwd = cwd or os.getcwd()
    why: str | None = None
    if tool in HERMES_WRITE:
        paths = [str(args.get(k) or "") for k in HERMES_WRITE[tool]] + _patch_paths(args)
        for raw in paths:
            hit = _under(resolve(raw, cwd), prot.write) if raw.strip() else None
            if hit is not None:
                why = f"{tool} would write {raw}, which {_what(hit, prot)}"
                break
    elif tool in HERMES_READ:
        for raw in (str(args.get(k) or "") for k in HERMES_READ[tool]):
            hit = _under(resolve(raw, cwd), prot.secret) if raw.strip() else None
            if hit is not None:
                why = f"{tool} would read {raw}, which {_what(hit, prot)}"
                break
    elif tool in HERMES_SHELL:
        for key in HERMES_SHELL[tool]:
            text = args.get(key)
            if isinstance(text, str) and (found := shell_refusal(text, prot)):
                why = f"{tool}: {found}"
                break
    if why is None:
        return None
    return (f"refused by commonkeep: {why}. Memory changes only through commonkeep's own tools (the `memory` tool "
            "stages a candidate for review); the stamp journal, the memory root and the files stamps are read from "
            "are not for an agent's file or shell tools. Ask the person to make this change in their own terminal.")
