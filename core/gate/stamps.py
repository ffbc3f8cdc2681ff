"""Stamps bound at write time: a journal outside the memory root, authenticated with a key that never sits in it.

A stamp in a candidate's provenance (``stamped_by``/``origin``, or the writer's own ``--trust``) is a
plain field in a file the model's own tools can write: copied onto another line, edited into a held
candidate, or set to a value no adapter sets. So the moment a stamp is set (``capture`` for the
writer's ``--trust``, the Hermes adapter for ``user_turn`` and ``import``, OMP's stamping pass for
``user_turn``), it is also recorded here, and the policy (``autoapply.stamped_trust``) honours a stamp
only when this journal holds it **for that exact text, candidate, root and stamp**.

Where (per user, never inside a memory root): ``$COMMONKEEP_STAMPS_DIR`` (tests), else
``$XDG_STATE_HOME/commonkeep``, else ``~/.local/state/commonkeep``; the folder ``0700``:

- ``stamps.key``: 32 random bytes (hex), ``0600``, created on first use (written to a temp file and
  linked into place, so two processes never make two keys);
- ``stamps.jsonl``: one entry a line, ``0600``, appended whole (``O_APPEND``). Each entry carries
  ``mac``: HMAC-SHA256 under the key of the JSON array :data:`FIELDS` (compact, not ASCII-escaped;
  the OMP extension computes the same bytes in TypeScript, ``plugins/omp/commonkeep.ts``).

The kinds of entry:

- ``stamp``: ``stamp`` (``writer``, ``commonkeep_hermes/user_turn``, ``commonkeep_hermes/import``,
  ``commonkeep_omp/user_turn``), ``trust``, ``root`` (real path), ``candidate`` (id) and ``text``
  (:func:`content_sha256`: the SHA-256 of everything of the candidate its record is made of — its
  text as stored, secrets already redacted, and its folder (the record's scope), layer, tags,
  evidence, conditions, exceptions, kind of rule and confidence). A stamp vouches for the record the
  person stood behind, not for a text that another scope, condition or layer turns into another;
- ``revoke``: ``root`` and ``candidate``: a person decided on a stamped candidate (rejected it, or
  undid its decision); its stamp never counts again, whatever its line says later (``status`` set
  back to ``new``, the undo's mark taken out);
- ``installed``: ``root``, ``host`` and ``session`` (the host's profile folder): a host's own memory
  file was imported into this root (``hermes install``'s first run, stamped ``import``); a later
  install finds that entry and stamps nothing more, whatever state file of the host says otherwise;
- ``edit``: ``root``, ``stamp`` (``<patch id>/<op id>``) and ``text`` (the SHA-256 of the edited
  statement): a person's edit of an op (``review --text``, ``audit --apply-edited``), recorded as it
  was made; an op's ``edited`` block the journal does not hold is no edit (``patches.verify``);
- ``typed``: what a person typed into a host, seen by the host adapter when the host received it:
  ``host``, ``session`` and ``text`` (its SHA-256; the text itself is never kept here). OMP's
  stamping pass counts a user message of a session file only when it was typed (a line the model's
  file tool appends to that file has no entry);
- ``apply``: an apply journal (``runtime/journal/<patch>.apply``, ``commonkeep.patches.apply_journal``)
  as ``apply`` wrote it: ``stamp`` (the patch id), ``root`` and ``text`` (the SHA-256 of its bytes).
  The next writer finishes an interrupted apply from that file, so a file written there by hand
  would write records; one the journal does not hold is not run.

A line whose ``mac`` does not verify (hand-written, or made under another key) counts for nothing and
is named by ``doctor`` (``forged_stamp_journal_line``).

**The limit.** The key is a file of the same user. It keeps out a model whose tools cannot reach it
(the host plugins refuse file tools that touch this folder, ``docs/security.md``); a model with an
unrestricted shell running as the user can read it and write entries, as it can do anything the user
can. The host settings that close that gap are in ``docs/security.md`` ("The remaining limit").
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Overrides where the journal and its key live (tests; a person who wants them elsewhere).
ENV_DIR = "COMMONKEEP_STAMPS_DIR"
JOURNAL = "stamps.jsonl"
KEY = "stamps.key"
VERSION = 1
#: The fields an entry's ``mac`` covers, in this order ("" for a field the entry does not have).
FIELDS = ("v", "kind", "stamp", "trust", "root", "candidate", "host", "session", "text", "at")
#: The stamp of the writer's own ``commonkeep write --trust``.
WRITER = "writer"


def state_dir() -> Path:
    """The folder of the journal and its key (module doc)."""
    override = os.environ.get(ENV_DIR, "").strip()
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME", "").strip()
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "commonkeep"
    return Path(os.environ.get("HOME") or Path.home()) / ".local" / "state" / "commonkeep"


def journal_path() -> Path:
    return state_dir() / JOURNAL


def key_path() -> Path:
    return state_dir() / KEY


def text_sha256(text: str) -> str:
    """SHA-256 of a text as stored (lone surrogates kept, as JSON can carry them)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def real_root(root: Path | str) -> str:
    return os.path.realpath(os.fspath(root))


class KeyUnsafe(Exception):
    """The key file is not a private regular file of this user: nothing it signed is honoured."""


def _check_private(path: Path) -> None:
    st = os.lstat(path)
    import stat as statmod

    if not statmod.S_ISREG(st.st_mode):
        raise KeyUnsafe(f"{path} is not a regular file (a link or a folder)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise KeyUnsafe(f"{path} belongs to another user (uid {st.st_uid})")
    if st.st_mode & 0o077:
        raise KeyUnsafe(f"{path} can be read or written by others (mode {st.st_mode & 0o777:o}); it must be 600")


def _read_key(path: Path) -> bytes | None:
    try:
        _check_private(path)
        raw = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise KeyUnsafe(f"{path} cannot be read ({exc})") from None
    try:
        key = bytes.fromhex(raw)
    except ValueError:
        raise KeyUnsafe(f"{path} does not hold a hex key") from None
    if len(key) < 32:
        raise KeyUnsafe(f"{path} holds a key of {len(key)} bytes; 32 are needed")
    return key


def _make_dir(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if folder.stat().st_mode & 0o077:
        os.chmod(folder, 0o700)


def load_key(create: bool = False) -> bytes | None:
    """The journal's key; created (``0600``, in a ``0700`` folder) when ``create`` and missing.
    Raises ``KeyUnsafe`` when the file is not a private regular file of this user."""
    path = key_path()
    key = _read_key(path)
    if key is not None or not create:
        return key
    import secrets  # only to make the key, once per machine

    _make_dir(path.parent)
    tmp = path.parent / f".{KEY}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # fails when another process made the key first: then that one is the key
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_key(path)


def _message(entry: dict[str, Any]) -> bytes:
    values = [entry.get(f, "") for f in FIELDS]
    return json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _mac(key: bytes, entry: dict[str, Any]) -> str:
    return hmac.new(key, _message(entry), hashlib.sha256).hexdigest()


def _append(entry: dict[str, Any]) -> None:
    from commonkeep.util.timeutil import now_iso

    key = load_key(create=True)
    assert key is not None
    entry = {"v": VERSION, **entry, "at": now_iso()}
    entry["mac"] = _mac(key, entry)
    line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")
    path = journal_path()
    before = _identity(path, key_path())
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)  # one write of one line: appends of several processes never interleave
    finally:
        os.close(fd)
    with _LOCK:  # the book as read plus this entry, unless another process wrote in between (then read again)
        hit = _BOOKS.pop(str(path), None)
        after = _identity(path, key_path())
        grew = len(before) == len(after) == 8 and after[0] == before[0] and after[1] == before[1] + len(line)
        if hit is not None and hit[0] == before and grew and after[4:] == before[4:]:
            _add(hit[1], entry)
            _BOOKS[str(path)] = (after, hit[1])


#: What of a candidate its record is made of (``patches.curate.record_from_candidate``) beside its text
#: and folder: a stamp is bound to all of it.
CONTENT = ("tags", "evidence_refs", "proposed_layer", "layer", "proposed_applies_when", "proposed_does_not_apply_when",
           "proposed_known_exceptions", "memory_kind", "ruleType", "resource_id", "profile_id", "thread_id", "record_id")


def content_sha256(cand: dict[str, Any], confidence: bool = True) -> str:
    """SHA-256 of what ``cand``'s record is made of (module doc); of its text alone when it has nothing
    else (as stamps were bound before 0.4). ``confidence``: with the candidate's confidence, when it has
    one (the writer's ``--trust`` is bound before scoring gives it one: then it is bound without)."""
    text = str(cand.get("text", ""))
    extra = {k: cand[k] for k in CONTENT if cand.get(k) not in (None, "", [], {})}
    source = cand.get("source")
    cwd = source.get("cwd") if isinstance(source, dict) else None
    if cwd:
        extra["source.cwd"] = cwd
    if confidence and cand.get("confidence") is not None:
        extra["confidence"] = cand["confidence"]
    if not extra:
        return text_sha256(text)
    data = json.dumps([text, extra], sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(data.encode("utf-8", "surrogatepass")).hexdigest()


def record_stamp(root: Path | str, cand: dict[str, Any], stamp: str, trust: str) -> None:
    """Bind ``cand``'s ``stamp`` (trust class ``trust``) to its id, what its record is made of and ``root``."""
    _append({"kind": "stamp", "stamp": stamp, "trust": trust, "root": real_root(root), "candidate": str(cand.get("id", "")),
             "text": content_sha256(cand)})


def record_revoke(root: Path | str, candidate_ids: Iterable[str]) -> None:
    """A person decided on these candidates: whatever stamp they carry never counts again (module doc)."""
    for cid in dict.fromkeys(str(c) for c in candidate_ids if c):
        _append({"kind": "revoke", "root": real_root(root), "candidate": cid})


def record_installed(root: Path | str, host: str, profile: str) -> None:
    """``host``'s memory files of ``profile`` were imported into ``root`` (module doc)."""
    _append({"kind": "installed", "host": host, "session": profile, "root": real_root(root)})


def installed(root: Path | str, host: str, profile: str) -> bool:
    """Whether ``host``'s memory files of ``profile`` were imported into ``root`` already."""
    return (real_root(root), host, profile) in book().installed


def record_edit(root: Path | str, patch_id: str, op_id: str, statement_sha256: str) -> None:
    """A person's edit of op ``op_id`` of ``patch_id``, to the statement of that SHA-256 (module doc)."""
    _append({"kind": "edit", "stamp": f"{patch_id}/{op_id}", "root": real_root(root), "text": statement_sha256})


def record_apply(root: Path | str, patch_id: str, data: bytes) -> None:
    """Bind an apply journal's exact bytes (``apply_journal.write``) to its patch and ``root``."""
    _append({"kind": "apply", "stamp": patch_id, "root": real_root(root), "text": hashlib.sha256(data).hexdigest()})


def record_typed(host: str, session: str, text: str) -> None:
    """Record that a person typed ``text`` into ``host``'s session ``session`` (its hash only)."""
    _append({"kind": "typed", "host": host, "session": session, "text": text_sha256(text)})


@dataclass
class Book:
    """The journal as read: the stamps and typed inputs whose ``mac`` verifies, and the lines that do not."""

    stamps: set[tuple[str, str, str, str, str]] = field(default_factory=set)  # (root, candidate, text, stamp, trust)
    typed: set[tuple[str, str, str]] = field(default_factory=set)  # (host, session, text)
    applies: set[tuple[str, str, str]] = field(default_factory=set)  # (root, patch id, sha256 of the apply journal)
    revoked: set[tuple[str, str]] = field(default_factory=set)  # (root, candidate id) a person decided on
    edits: set[tuple[str, str, str]] = field(default_factory=set)  # (root, "<patch>/<op>", sha256 of the statement)
    installed: set[tuple[str, str, str]] = field(default_factory=set)  # (root, host, profile) imported once
    forged: list[tuple[int, str]] = field(default_factory=list)  # (line number, why) of lines that count for nothing
    problem: str | None = None  # why nothing counts (the key is unsafe)

    def holds(self, root: Path | str, cand: dict[str, Any], stamp: str, trust: str) -> bool:
        where, cid = real_root(root), str(cand.get("id", ""))
        if (where, cid) in self.revoked:
            return False
        return any((where, cid, content_sha256(cand, confidence=c), stamp, trust) in self.stamps for c in (True, False))

    def was_revoked(self, root: Path | str, cand: dict[str, Any]) -> bool:
        return (real_root(root), str(cand.get("id", ""))) in self.revoked

    def was_typed(self, host: str, session: str, text: str) -> bool:
        return (host, session, text_sha256(text)) in self.typed


_BOOKS: dict[str, tuple[tuple[int, ...], Book]] = {}
_LOCK = threading.Lock()


def _identity(*paths: Path) -> tuple[int, ...]:
    out: list[int] = []
    for p in paths:
        try:
            st = os.stat(p)
            out += (st.st_ino, st.st_size, st.st_mtime_ns, st.st_mode)
        except OSError:
            out += (-1,)
    return tuple(out)


def book() -> Book:
    """The journal, verified; read again only when it (or its key) changed since the last read."""
    path, kpath = journal_path(), key_path()
    ident = _identity(path, kpath)
    with _LOCK:
        hit = _BOOKS.get(str(path))
    if hit is not None and hit[0] == ident:
        return hit[1]
    found = _read_book(path)
    with _LOCK:
        _BOOKS[str(path)] = (ident, found)
    return found


def _read_book(path: Path) -> Book:
    out = Book()
    try:
        key = load_key()
    except KeyUnsafe as exc:
        out.problem = f"the stamp key is unsafe: {exc}; no stamp is honoured"
        return out
    try:
        data = path.read_bytes()
    except OSError:
        return out
    if key is None:
        if data.strip():
            out.problem = f"{path} has entries but the key {key_path()} is missing; no stamp is honoured"
        return out
    for n, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8", "surrogatepass"))
        except (ValueError, UnicodeDecodeError):
            out.forged.append((n, "not a JSON object"))
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("mac"), str):
            out.forged.append((n, "no mac"))
            continue
        if not hmac.compare_digest(entry["mac"], _mac(key, entry)):
            out.forged.append((n, "its mac does not verify under the key (written by hand, or under another key)"))
            continue
        _add(out, entry)
    return out


def _add(out: Book, entry: dict[str, Any]) -> None:
    """Index one verified entry."""
    if entry.get("v") != VERSION:
        return
    if entry.get("kind") == "stamp":
        out.stamps.add((str(entry.get("root", "")), str(entry.get("candidate", "")), str(entry.get("text", "")),
                        str(entry.get("stamp", "")), str(entry.get("trust", ""))))
    elif entry.get("kind") == "typed":
        out.typed.add((str(entry.get("host", "")), str(entry.get("session", "")), str(entry.get("text", ""))))
    elif entry.get("kind") == "apply":
        out.applies.add((str(entry.get("root", "")), str(entry.get("stamp", "")), str(entry.get("text", ""))))
    elif entry.get("kind") == "revoke":
        out.revoked.add((str(entry.get("root", "")), str(entry.get("candidate", ""))))
    elif entry.get("kind") == "installed":
        out.installed.add((str(entry.get("root", "")), str(entry.get("host", "")), str(entry.get("session", ""))))
    elif entry.get("kind") == "edit":
        out.edits.add((str(entry.get("root", "")), str(entry.get("stamp", "")), str(entry.get("text", ""))))


def holds(root: Path | str | None, cand: dict[str, Any], stamp: str, trust: str) -> bool:
    """Whether the journal binds ``stamp`` (at ``trust``) to ``cand`` as it is now, in ``root``."""
    if root is None:
        return False
    return book().holds(root, cand, stamp, trust)


def apply_bound(root: Path | str, patch_id: str, data: bytes) -> bool:
    """Whether ``apply`` wrote these exact apply-journal bytes for ``patch_id`` in ``root``."""
    return (real_root(root), patch_id, hashlib.sha256(data).hexdigest()) in book().applies


def revoked(root: Path | str | None, cand: dict[str, Any]) -> bool:
    """Whether a person decided on ``cand`` in ``root`` (its stamp never counts again)."""
    return root is not None and book().was_revoked(root, cand)


def edit_bound(root: Path | str | None, patch_id: str, op_id: str, statement_sha256: str) -> bool:
    """Whether a person made this edit of op ``op_id`` of ``patch_id`` in ``root``."""
    return root is not None and (real_root(root), f"{patch_id}/{op_id}", statement_sha256) in book().edits


def typed(host: str, session: str, texts: Iterable[str]) -> list[str]:
    """The texts of ``texts`` a person typed into ``host``'s session ``session`` (journal ``typed`` entries)."""
    found = book()
    return [t for t in texts if found.was_typed(host, session, t)]
