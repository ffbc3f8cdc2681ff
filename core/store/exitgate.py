"""The exit gate: no byte leaves the root unredacted, whoever wrote it.

commonkeep redacts what it writes itself (``commonkeep.gate.capture``); other programs write into
the same root without it: OMP's OmpKeep appends to the daily logs (``daily/*.md``), the scratchpad
and the inbox with its own, narrower patterns, its curator may write records and patches, and a
model with a shell or file tool can append anywhere. Hermes' model edits ``MEMORY.md`` and
``USER.md`` in the Hermes home. Every path by which commonkeep copies, commits, indexes or replays
such bytes calls this module, instead of trusting them:

- :func:`sweep` redacts the files other programs write **in place** (:data:`OUTSIDE`), before
  ``share`` stages them (so a token appended to today's log never reaches a git object) and from
  ``commonkeep doctor --fix``; each file it changes gets one line in ``audit/log.jsonl``
  (``event: "outside_secret_redacted"``: the file, the kinds and counts, who wrote it as far as
  the path says, never the value). The leading bytes of each file found clean are remembered in
  ``runtime/exit-clean.json`` (length and checksums, as ``clean_memo``; and the file's inode, size
  and mtime when all of it was), so an unchanged file is not read again and an appended daily log
  costs its new lines only. Lines appended while a file is rewritten are kept
  (``jsonl.rewrite_bytes``) and redacted by the next sweep.
- :func:`text` and :func:`obj` redact on the way out, for the paths that copy outside-written
  text into a file of their own (``select``'s ``runtime/context.md``, projections, handoffs,
  exports, the web app's views, the Hermes backups): whatever is on disk at that moment.
- :func:`blob` gives the redacted form of a file's bytes (JSONL line by line as JSON, markdown by
  paragraphs, JSON whole), keeping bytes that are not UTF-8 as they are.
- :func:`findings` lists what an outside-written file still holds (``doctor``'s
  ``outside_secret_unredacted``).

The redactor itself is :mod:`commonkeep.secrets` (its rules decide what a secret is); this module
only decides *where* it runs.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EVENT = "outside_secret_redacted"
MEMO_NAME = "exit-clean.json"
# files of a root other programs write (OMP's OmpKeep, a model's shell or file tool, a person):
# relative patterns (``fnmatch``; ``DIR/**`` is every file under DIR, at any depth), and who writes
# them as far as the path says. Together they are every file ``share`` commits (``share.setup.
# CANONICAL_PATHS``, less its own ``.gitignore``/``.gitattributes``): a file nobody expected there
# (``daily/notes.txt``, ``memory/archive/old.jsonl``, ``schemas/x.json``) passes the gate like the rest.
OUTSIDE: tuple[tuple[str, str], ...] = (
    ("daily/**", "OmpKeep's memory_write and session markers, or a shell"),
    ("scratchpad.md", "OmpKeep's scratchpad tool, or a shell"),
    ("inbox/**", "OmpKeep's memory_write (long_term), or a shell"),
    ("memory/**", "OmpKeep's curator, or a shell"),
    ("patches/**", "OmpKeep's curator, or a shell"),
    ("schemas/**", "OmpKeep's install, or a shell"),
    ("config.json", "a person, OmpKeep's settings, or a shell"),
)
CHUNK = 16 * 1024  # markdown is redacted by paragraphs, joined up to this size (never a whole 10 MB log at once)


@dataclass
class Swept:
    """One file the gate changed: its path relative to the root and the kinds it removed."""

    file: str
    kinds: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, "kinds": summarize(self.kinds)}


def summarize(kinds: list[str]) -> str:
    """``"2 github_token, 1 password"`` (as ``secrets.summarize``, without importing the scanner)."""
    counts: dict[str, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


# --- on the way out ----------------------------------------------------------------------------


def text(value: str, findings: list[str] | None = None) -> str:
    """``value`` redacted (kinds appended to ``findings``); long text by paragraphs."""
    out, kinds = _md(value)
    if findings is not None:
        findings.extend(kinds)
    return out


def obj(value: Any, findings: list[str] | None = None) -> Any:
    """A JSON-like value with every string redacted (``secrets.redact_obj``)."""
    from commonkeep.secrets import redact_obj

    return redact_obj(value, findings)


def blob(data: bytes, name: str) -> tuple[bytes, list[str]]:
    """The redacted form of a file's bytes, by its kind (``name``'s suffix), and the kinds removed.

    JSONL is redacted line by line as JSON (so an escape cannot hide a token and a line stays valid
    JSON: only changed lines are written again, ``JSON.stringify``'s layout); ``.json`` whole;
    anything else as text by paragraphs. Bytes that are not UTF-8 are kept as they are."""
    kinds: list[str] = []
    if name.endswith(".jsonl"):
        return _jsonl(data, kinds), kinds
    text_in = data.decode("utf-8", "surrogateescape")
    if name.endswith(".json"):
        try:
            doc = json.loads(text_in)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict | list):
            clean = obj(doc, kinds)
            if not kinds:
                return data, []
            from commonkeep.store.jsonjs import dumps_pretty

            return dumps_pretty(clean, trailing_newline=data.endswith(b"\n")).encode("utf-8"), kinds
    out, kinds = _md(text_in)
    return (out.encode("utf-8", "surrogateescape") if kinds else data), kinds


def rules_obj(value: Any) -> Any:
    """A JSON-like value with every string of 8 characters or more through the redactor's rules only
    (``redact_again``: cached by text, no provider scan): what commonkeep shows or indexes of records
    another program may have written, where the whole gate's cost would sit on every read."""
    from commonkeep.secrets import redact_again

    if isinstance(value, str):
        return redact_again(value).text if len(value) >= 8 else value
    if isinstance(value, dict):
        return {k: rules_obj(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rules_obj(v) for v in value]
    return value


def holds_secret(values: list[Any]) -> bool:
    """Whether the redactor's rules would change one of ``values`` (:func:`rules_obj`)."""
    return any(rules_obj(v) != v for v in values)


def _paragraphs(value: str) -> Iterator[str]:
    """``value`` in pieces that join back to it: paragraphs (a PEM block or a config stanza has no
    blank line inside) gathered up to ``CHUNK`` characters, a longer paragraph on its own."""
    start = 0
    piece_start = 0
    while True:
        gap = value.find("\n\n", start)
        end = len(value) if gap == -1 else gap + 2
        if end - piece_start > CHUNK and start > piece_start:
            yield value[piece_start:start]
            piece_start = start
        if gap == -1:
            break
        start = end
    if piece_start < len(value):
        yield value[piece_start:]


def _md(value: str) -> tuple[str, list[str]]:
    # imported when text is read, not by every command that imports this module
    from commonkeep.secrets import redact

    if len(value) <= CHUNK:
        got = redact(value)
        return got.text, got.findings
    kinds: list[str] = []
    parts = []
    for para in _paragraphs(value):
        for piece in _lines(para) if len(para) > CHUNK else (para,):
            got = redact(piece)
            parts.append(got.text)
            kinds += got.findings
    return "".join(parts), kinds


def _lines(value: str) -> Iterator[str]:
    """A paragraph longer than ``CHUNK`` in pieces of whole lines up to ``CHUNK`` characters (a
    longer line on its own), so no single scan reads megabytes at once."""
    piece_start = 0
    start = 0
    while start < len(value):
        nl = value.find("\n", start)
        end = len(value) if nl == -1 else nl + 1
        if end - piece_start > CHUNK and start > piece_start:
            yield value[piece_start:start]
            piece_start = start
        start = end
    if piece_start < len(value):
        yield value[piece_start:]


def _jsonl(data: bytes, kinds: list[str]) -> bytes:
    from commonkeep.store.jsonjs import encode_line

    out: list[bytes] = []
    changed = False
    for raw in data.splitlines(keepends=True):
        body = raw.rstrip(b"\r\n")
        end = raw[len(body):]
        if len(body) < 8:
            out.append(raw)
            continue
        found: list[str] = []
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict | list):
            clean = obj(doc, found)
            new = encode_line(clean) if found else body
        else:
            line, found = _md(body.decode("utf-8", "surrogateescape"))
            new = line.encode("utf-8", "surrogateescape") if found else body
        if found:
            kinds += found
            changed = True
        out.append(new + end)
    return b"".join(out) if changed else data


# --- in place ----------------------------------------------------------------------------------


def outside_files(root: Path | str) -> list[Path]:
    """The files of ``root`` other programs write (:data:`OUTSIDE`), that exist, sorted."""
    base = Path(root)
    out: list[Path] = []
    for pattern, _ in OUTSIDE:
        found = base.glob(pattern[:-2] + "**/*") if pattern.endswith("/**") else base.glob(pattern)
        for path in sorted(found):
            rel = path.relative_to(base).parts
            if path.is_file() and not path.is_symlink() and not any(part.startswith(".") for part in rel):
                out.append(path)
    return out


def writer_of(rel: str) -> str:
    """Who writes the file at ``rel`` (relative to the root), as far as its path says."""
    import fnmatch

    for pattern, who in OUTSIDE:
        if fnmatch.fnmatchcase(rel, pattern):
            return who
    return "another program"


def _memo(root: Path) -> Path:
    return root / "runtime" / MEMO_NAME


# runtime/exit-clean.json: per file, the leading bytes found clean ("clean": length, CRC-32,
# Adler-32, as ``clean_memo``) and the file's (inode, size, mtime) when all of it was ("stat").
# A cache: a missing, torn or stale entry only costs a scan; two processes may overwrite each
# other's entries; an entry is used only for bytes that hash the same.
Memo = dict[str, dict[str, list[int]]]


def _load(root: Path) -> Memo:
    try:
        raw: Any = json.loads(_memo(root).read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    files = raw.get("files") if isinstance(raw, dict) and raw.get("version") == 1 else None
    return files if isinstance(files, dict) else {}


def _save(root: Path, entries: Memo) -> None:
    from commonkeep.store.jsonl import atomic_write_bytes

    if not (root / "runtime").is_dir():
        return
    with contextlib.suppress(OSError):
        atomic_write_bytes(_memo(root), json.dumps({"version": 1, "files": entries}, sort_keys=True).encode())


def _stat_of(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns]


def _digest(data: bytes | memoryview) -> list[int]:
    import zlib

    return [len(data), zlib.crc32(data), zlib.adler32(data)]


def _known_clean(entries: Memo, path: Path, data: bytes) -> int:
    """How many leading bytes of ``data`` an earlier check found clean (0: none known)."""
    entry = entries.get(str(path))
    got = entry.get("clean") if isinstance(entry, dict) else None
    if not (isinstance(got, list) and len(got) == 3 and all(type(x) is int for x in got)):
        return 0
    size = got[0]
    if not 0 < size <= len(data) or data[size - 1:size] != b"\n":
        return 0
    return size if _digest(memoryview(data)[:size]) == got else 0


def _remember(entries: Memo, path: Path, data: bytes, st: os.stat_result | None) -> None:
    cut = data.rfind(b"\n") + 1  # whole lines only: the next check reads what follows
    if not cut:
        entries.pop(str(path), None)
        return
    entry = {"clean": _digest(memoryview(data)[:cut])}
    if st is not None and cut == len(data) == st.st_size:
        entry["stat"] = _stat_of(st)
    entries[str(path)] = entry


def _start(data: bytes, clean: int, name: str) -> int:
    """Where to scan ``data`` from, when its first ``clean`` bytes were found clean: the file's
    tail, from the paragraph the clean part ends in (markdown: a block straddling it is read whole)."""
    if clean <= 0:
        return 0
    if name.endswith(".jsonl"):
        return clean
    if name.endswith(".json"):
        return 0
    gap = data.rfind(b"\n\n", 0, clean)
    return 0 if gap == -1 else gap + 2


def scan(path: Path, root: Path | str | None = None) -> list[str]:
    """The kinds of secret ``path`` holds (read only; the clean-prefix memo of ``root`` is used)."""
    try:
        data = path.read_bytes()
    except OSError:
        return []
    return clean_form(root, path, data)[1]


def _tail_kinds(data: bytes, clean: int, name: str) -> list[str]:
    if clean == len(data):  # nothing appended since it was found clean (no scanner is loaded)
        return []
    tail = data[_start(data, clean, name):]
    if len(tail.strip()) < 8:  # nothing a rule could match
        return []
    return blob(tail, name)[1]


def clean_form(root: Path | str | None, path: Path, data: bytes) -> tuple[bytes, list[str]]:
    """``data`` (the bytes of ``path``, on disk or staged) redacted, and the kinds removed; only the
    part after the leading bytes the memo of ``root`` knows clean is scanned, unless it holds one."""
    clean = _known_clean(_load(Path(root)), path, data) if root is not None else 0
    return blob(data, path.name) if _tail_kinds(data, clean, path.name) else (data, [])


def sweep_file(root: Path | str, path: Path, *, reason: str) -> Swept | None:
    """Redact ``path`` (a file of ``root`` another program writes) in place; ``None`` when it held
    nothing. Lines appended meanwhile are kept (``rewrite_bytes``). A file unchanged since it was
    last found clean (same inode, size and mtime) is not even read."""
    from commonkeep.store.jsonl import atomic_write_bytes, file_lock, rewrite_bytes

    root = Path(root)
    entries = _load(root)
    try:
        st = os.stat(path)
        entry = entries.get(str(path))
        if isinstance(entry, dict) and entry.get("stat") == _stat_of(st):
            return None
        data = path.read_bytes()
    except OSError:
        return None
    kinds = _tail_kinds(data, _known_clean(entries, path, data), path.name)
    if not kinds:
        _remember(entries, path, data, st)
        _save(root, entries)
        return None
    found: list[str] = []
    built: list[bytes] = [b""]  # the redacted bytes written (clean: the memo starts from them)
    if path.suffix == ".json":  # a whole document nobody appends to (patch files)
        with file_lock(path):
            now = path.read_bytes()
            clean, found = blob(now, path.name)
            if found:
                atomic_write_bytes(path, clean)
                built[0] = clean
    else:
        def build(now: bytes) -> bytes:
            found.clear()
            clean, got = blob(now, path.name)
            found.extend(got)
            built[0] = clean
            return clean

        rewrite_bytes(path, build)
        # an unfinished last line (no newline yet) is left for its writer by rewrite_bytes; one
        # that holds a secret is redacted now, under the file's lock
        with file_lock(path):
            now = path.read_bytes()
            cut = now.rfind(b"\n") + 1
            if cut < len(now):
                last, more = blob(now[cut:], path.name)
                if more:
                    atomic_write_bytes(path, now[:cut] + last)
                    found += more
    with contextlib.suppress(OSError):
        st = os.stat(path)
        data = path.read_bytes()
        if built[0] and data.startswith(built[0]):
            # what was redacted is clean now; bytes appended meanwhile are checked by the next sweep
            _remember(entries, path, built[0], st if data == built[0] else None)
            _save(root, entries)
    swept = Swept(_rel(root, path), found or kinds)
    note(root, swept, reason=reason)
    return swept


def _rel(root: Path, path: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def sweep(root: Path | str, *, reason: str, files: list[Path] | None = None) -> list[Swept]:
    """Redact in place every file of ``root`` other programs write (or ``files``), one audit line
    per file changed; returns what was changed."""
    root = Path(root)
    out = []
    for path in outside_files(root) if files is None else files:
        got = sweep_file(root, path, reason=reason)
        if got is not None:
            out.append(got)
    return out


def sweep_inbox(root: Path | str, *, reason: str) -> list[Swept]:
    """:func:`sweep` of the inbox alone, before a command shows candidates (``inbox``, the review
    queue): OmpKeep appends them raw. Cheap when nothing was appended since the last check (the
    memo: one checksum of the file's bytes)."""
    path = Path(root) / "inbox" / "captured.jsonl"
    return sweep(root, reason=reason, files=[path]) if path.is_file() else []


def findings(root: Path | str) -> list[tuple[str, list[str]]]:
    """``(file relative to the root, kinds)`` of each outside-written file that holds a secret."""
    root = Path(root)
    out = []
    for path in outside_files(root):
        kinds = scan(path, root)
        if kinds:
            out.append((_rel(root, path), kinds))
    return out


# --- the audit line ----------------------------------------------------------------------------


def note(root: Path | str, swept: Swept, *, reason: str, writer: str | None = None) -> dict[str, Any] | None:
    """Append one ``outside_secret_redacted`` line to ``audit/log.jsonl``: which file, which kinds
    (and how many), who writes it, what commonkeep was doing. Never a value. An unwritable log is
    a warning on stderr (the redaction is done either way)."""
    from commonkeep.store.audit_lines import append_event
    from commonkeep.util.timeutil import now_iso

    counts: dict[str, int] = {}
    for kind in swept.kinds:
        counts[kind] = counts.get(kind, 0) + 1
    event = {"event": EVENT, "file": swept.file, "kinds": dict(sorted(counts.items())),
             "written_by": writer or writer_of(swept.file), "during": reason, "noticed_at": now_iso(),
             "pid": os.getpid()}
    if not append_event(Path(root) / "audit" / "log.jsonl", event, 0o600,
                        unwritten=f"{swept.file}: redacted {summarize(swept.kinds)}"):
        return None
    return event


def events(root: Path | str) -> list[dict[str, Any]]:
    """The gate's audit lines, oldest first."""
    from commonkeep.store.audit_lines import read_events

    return [row for row in read_events(Path(root) / "audit" / "log.jsonl") if row.get("event") == EVENT]
