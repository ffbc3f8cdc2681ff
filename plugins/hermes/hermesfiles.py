"""Render the governed projection into Hermes' ``MEMORY.md`` / ``USER.md``, and notice hand edits.

Hermes reads these two files into a frozen snapshot when an agent is built
(contracts/hermes-host.md §5.3), so commonkeep writes them *before* a session starts: at install,
when a session finalizes or resets, and after every applied patch. Format and safety rules
(§5.1, §5.4, §10.4):

- entries joined by ``"\\n§\\n"``, no trailing newline; every entry and the joined total within
  the profile's ``memory_char_limit`` / ``user_char_limit``;
- written atomically (temp file, fsync, ``os.replace``) while holding ``fcntl.flock`` on
  ``<file>.lock``, the lock Hermes' own ``MemoryStore`` takes;
- a sidecar ``$HERMES_HOME/commonkeep/projection.json`` keeps the hash and entries of the last
  render. If the file on disk differs, someone edited it: the new entries become candidates
  (origin ``external_edit``), removed ones become "forget" candidates, and a backup copy is kept
  under ``$HERMES_HOME/commonkeep/backups/`` before the file is re-rendered — never a silent
  overwrite.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from commonkeep_hermes.settings import TARGET_FILES, HermesProfile

DELIMITER = "\n§\n"


def split_entries(text: str) -> list[str]:
    """Hermes' reader: split on the delimiter, strip, drop empties, de-duplicate in order."""
    seen: set[str] = set()
    out: list[str] = []
    for part in text.split(DELIMITER):
        entry = part.strip()
        if entry and entry not in seen:
            seen.add(entry)
            out.append(entry)
    return out


def pack_entries(entries: list[tuple[str, str]], limit: int) -> list[tuple[str, str]]:
    """Greedy-pack ``(record_id, text)`` pairs, in order, so the joined text fits ``limit``.

    An entry longer than the limit on its own is skipped (Hermes' drift guard refuses files with
    such entries, §5.4); duplicates are dropped.
    """
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    used = 0
    for rid, raw in entries:
        text = raw.strip()
        if not text or text in seen or len(text) > limit:
            continue
        cost = len(text) + (len(DELIMITER) if out else 0)
        if used + cost > limit:
            continue
        out.append((rid, text))
        seen.add(text)
        used += cost
    return out


@contextlib.contextmanager
def hermes_lock(path: Path) -> Iterator[None]:
    """Hold Hermes' own lock for ``path`` (``<file>.lock``, ``fcntl.flock`` exclusive)."""
    lock_path = path.with_suffix(path.suffix + ".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+", encoding="utf-8") as fd:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _new_file_mode() -> int:
    """The mode ``open()`` would give a new file here (0666 minus the umask).

    Linux states the umask in ``/proc/self/status``; reading it there avoids setting the
    process-wide umask, which other threads of a running Hermes would see for a moment.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: Path, text: str) -> None:
    """Temp file in the same folder, fsync, ``os.replace`` (readers see old or new, never half).

    The file keeps its mode (a 0644 ``config.yaml`` or ``MEMORY.md`` stays 0644); a new file gets
    the mode ``open()`` would give it, not the temp file's 0600.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = _new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".commonkeep_", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def sidecar_path(profile: HermesProfile) -> Path:
    return profile.state_dir / "projection.json"


def load_sidecar(profile: HermesProfile) -> dict[str, Any]:
    try:
        data = json.loads(sidecar_path(profile).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


TRUNCATED = "…"


def rendered_map(profile: HermesProfile) -> dict[str, str]:
    """``{entry text: record id}`` of the last render (to resolve ``old_text`` to records)."""
    out: dict[str, str] = {}
    for target in TARGET_FILES:
        for item in load_sidecar(profile).get(target, {}).get("entries", []):
            out[str(item.get("text", ""))] = str(item.get("id", ""))
    return out


def fully_shown_ids(profile: HermesProfile) -> set[str]:
    """Ids of records whose whole statement is in the files (cut entries end with ``…``)."""
    return {rid for text, rid in rendered_map(profile).items() if rid and not text.endswith(TRUNCATED)}


def projection_entries(root: Path, limits: dict[str, int]) -> dict[str, list[tuple[str, str]]]:
    """The budgeted ``§`` projection of the store: ``{target: [(record_id, text), …]}``.

    The recall engine (``commonkeep.recall.projection``) chooses, orders and packs the records (USER.md:
    L1 identity records; MEMORY.md: L2); :func:`pack_entries` re-checks Hermes' limits before
    anything is written. No entry may take more than half a file (longer statements are cut with
    ``…``; prefetch recalls them whole), so one long record never crowds out the rest.
    """
    from commonkeep.recall.projection import build_projection

    out: dict[str, list[tuple[str, str]]] = {}
    for target in TARGET_FILES:
        proj = build_projection(root, limits[target], fmt="hermes", target=target,
                                max_entry_chars=max(1, limits[target] // 2))
        out[target] = [(e.id, e.text) for e in proj.entries]
    return out


def refresh(profile: HermesProfile, root: Path, reason: str = "refresh") -> dict[str, Any]:
    """Re-render both files from the store; capture hand edits first. Returns a report.

    One refresh at a time per Hermes home (a lock on the sidecar): the librarian's after-apply
    listener and a Hermes session boundary may fire together, and neither may mistake the other's
    render for a hand edit.
    """
    profile.state_dir.mkdir(parents=True, exist_ok=True)
    with hermes_lock(sidecar_path(profile)):
        return _refresh(profile, root, reason)


def _refresh(profile: HermesProfile, root: Path, reason: str) -> dict[str, Any]:
    from commonkeep_hermes.capture import capture_entries, entry_key, harvest_pending

    limits = profile.char_limits()
    sidecar = load_sidecar(profile)
    wanted = projection_entries(root, limits)
    report: dict[str, Any] = {"reason": reason, "root": str(root), "captured": [], "backups": [], "targets": {}}
    report["harvested"] = harvest_pending(profile.home / "pending" / "memory", profile.state_dir / "harvested", root)
    profile.memories_dir.mkdir(parents=True, exist_ok=True)
    for target in TARGET_FILES:
        path = profile.memory_file(target)
        limit = limits[target]
        packed = pack_entries(wanted.get(target, []), limit)
        text = DELIMITER.join(t for _, t in packed)
        last = sidecar.get(target) or {}
        with hermes_lock(path):
            raw = path.read_bytes() if path.exists() else b""
            on_disk = raw.decode("utf-8", errors="replace")  # a hand edit may not be UTF-8: the backup keeps its bytes
            last_texts = [str(e.get("text", "")) for e in last.get("entries", [])]
            ours = {entry_key(target, t) for t in last_texts} | {entry_key(target, t) for _, t in packed}
            # anything not ours is a hand edit: `commonkeep hermes install` imported what was there before
            # (its one stamped import); a file found without the sidecar (deleted, or a plugin enabled by
            # hand) is not imported again with a stamp: its entries wait for a person like any edit
            edited = _sha(on_disk) != last.get("sha256") if last else bool(on_disk.strip())
            if edited:
                disk_entries = split_entries(on_disk)
                report["captured"] += capture_entries(root, {target: disk_entries}, "external_edit", known=ours)
                removed = [t for t in last_texts if t not in disk_entries]
                if removed and last:
                    report["captured"] += _capture_removals(root, target, removed, last)
                backup = _backup(profile, path, raw, root)
                report["backups"].append(str(backup))
            changed = on_disk != text
            if changed:
                atomic_write(path, text)
        sidecar[target] = {
            "sha256": _sha(text),
            "entries": [{"id": rid, "text": t} for rid, t in packed],
            "chars": len(text),
            "limit": limit,
        }
        report["targets"][target] = {"entries": len(packed), "chars": len(text), "limit": limit, "changed": changed}
    profile.state_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(sidecar_path(profile), json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n")
    return report


def _capture_removals(root: Path, target: str, removed: list[str], last: dict[str, Any]) -> list[str]:
    """A rendered entry deleted by hand becomes a "forget" candidate naming its record."""
    from commonkeep.store.core import Store
    from commonkeep_hermes.capture import MemoryOp, Provenance, candidate_for, captured_keys, entry_key

    ids = {str(e.get("text")): str(e.get("id")) for e in last.get("entries", [])}
    done = captured_keys(root)
    out: list[str] = []
    store = Store(root)
    for text in removed:
        op = MemoryOp("remove", target, "", text)
        if entry_key(target, text) in done:
            continue
        cand = candidate_for(op, Provenance(origin="external_edit"), {text: ids.get(text, "")})
        store.append_candidate(cand)
        out.append(str(cand["id"]))
    return out


def _backup(profile: HermesProfile, path: Path, data: bytes, root: Path) -> Path:
    """A copy of the file as Hermes' model (or a person) left it, before it is re-rendered: passed
    through the exit gate (a secret the model wrote is redacted, other bytes kept as they are,
    even when not UTF-8), with an audit line in the root when something was removed."""
    from commonkeep.store import exitgate
    from commonkeep.store.jsonl import atomic_write_bytes
    from commonkeep.util.timeutil import now

    folder = profile.state_dir / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"{path.name}.{now().strftime('%Y%m%dT%H%M%S%f')}"
    clean, kinds = exitgate.blob(data, path.name)
    atomic_write_bytes(dest, clean)
    if kinds:
        exitgate.note(root, exitgate.Swept(str(dest), kinds), reason="hermes backup",
                      writer=f"Hermes' {path.name} (the model's memory tool, or a hand edit)")
    return dest
