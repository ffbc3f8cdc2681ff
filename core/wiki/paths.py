"""Path safety for ingest: only regular files strictly inside ``raw/`` are accepted.

Refused, each with a message that says what and where (``contracts/roundtable.md §7``): absolute
paths, ``..`` components, anything outside ``raw/`` (including ``raw`` itself), any symlink on
the way (``raw`` itself, a folder, or the file), and a ``raw/`` that resolves outside the project.

A secret in a source's *path* (``raw/notes-ghp_….md``) would reach the slug, the page file
names, front matter, ``log.md``, ``facts.db``, git trees and commit messages, so ingest first
moves the file to its redacted name (``redact_source_name``), as it rewrites redacted content.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path, PurePosixPath

from commonkeep.errors import BadInput
from commonkeep.secrets import redact_name
from commonkeep.wiki.layout import WikiLayout

MAX_SOURCE_BYTES = 8 * 1024 * 1024
_HINT = "pass a relative path to a file under raw/ in the project, e.g. raw/design.md"


def resolve_source(layout: WikiLayout, given: str) -> tuple[Path, str]:
    """Check ``given`` and return (absolute path, project-relative POSIX path)."""
    text = given.strip()
    if not text:
        raise BadInput("ingest needs a source path; got an empty string", hint=_HINT)
    if "\x00" in text:
        raise BadInput(f"source path {given!r} contains a NUL byte", hint=_HINT)
    pure = PurePosixPath(text.replace("\\", "/"))
    if pure.is_absolute() or Path(text).is_absolute():
        raise BadInput(f"source path {text} is absolute; refused (only paths relative to {layout.project} are accepted)", hint=_HINT)
    if ".." in pure.parts:
        raise BadInput(f"source path {text} contains '..'; refused because it could escape {layout.raw}", hint=_HINT)
    parts = [p for p in pure.parts if p not in ("", ".")]
    if not parts or parts[0] != "raw":
        raise BadInput(f"source path {text} is outside raw/ of {layout.project}; refused", hint=_HINT)
    if len(parts) == 1:
        raise BadInput(f"source path {text} names the raw/ folder itself, not a file in it", hint=_HINT)
    current = layout.project
    for i, part in enumerate(parts):
        current = current / part
        where = "/".join(parts[: i + 1])
        if current.is_symlink():
            raise BadInput(f"{where} in {layout.project} is a symlink; refused (sources must be real files under raw/)", hint=_HINT)
        if not current.exists():
            raise BadInput(f"source {text} does not exist in {layout.project} ({where} is missing)", hint=_HINT)
    if layout.raw.resolve() != layout.project.resolve() / "raw":
        raise BadInput(f"raw/ of {layout.project} resolves outside the project; refused", hint=_HINT)
    if not current.is_file():
        raise BadInput(f"source {text} in {layout.project} is not a regular file", hint=_HINT)
    if current.stat().st_size > MAX_SOURCE_BYTES:
        raise BadInput(f"source {text} is larger than {MAX_SOURCE_BYTES // (1024 * 1024)} MiB; refused",
                       hint="split it into smaller files under raw/")
    return current, "/".join(parts)


def read_source(path: Path, rel: str) -> str:
    """Read a source as UTF-8, naming the byte offset of the first undecodable byte."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInput(f"source {rel} is not UTF-8 text (byte {exc.start}, line {line})",
                       hint="convert it to UTF-8 and ingest it again") from None


def redacted_rel(rel: str) -> tuple[str, list[str]]:
    """``rel`` with a secret in any of its parts redacted (``commonkeep.secrets.redact_name``), and the kinds."""
    parts, kinds = [], []
    for part in rel.split("/"):
        red = redact_name(part)
        parts.append(red.text)
        kinds += red.findings
    return "/".join(parts), kinds


def redact_source_name(layout: WikiLayout, path: Path, rel: str) -> tuple[Path, str, list[str]]:
    """Move a source whose path holds a secret to its redacted path; returns (path, rel, kinds found).

    The new name is stable (the redacted name is its own redaction) and unique: when another
    file already has it, ``-2``, ``-3``, ... goes before the extension. Folders emptied by the
    move are removed, so no name holding the secret is left under ``raw/``.
    """
    new_rel, kinds = redacted_rel(rel)
    if not kinds:
        return path, rel, []
    base = PurePosixPath(new_rel)
    n = 1
    while (layout.project / new_rel).exists() or (layout.project / new_rel).is_symlink():
        n += 1
        new_rel = str(base.with_name(f"{base.stem}-{n}{base.suffix}"))
    target = layout.project / new_rel
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.parent.resolve().is_relative_to(layout.raw.resolve()):
            raise BadInput(f"a folder on the way to the redacted name of a source in {layout.project} is a symlink; refused",
                           hint=_HINT)
        os.rename(path, target)
    except OSError as exc:
        raise BadInput(f"the path of a source under raw/ holds a secret and could not be renamed ({exc.strerror})",
                       hint="rename the file yourself so its path holds no secret, then ingest it") from None
    folder = path.parent
    while folder != layout.raw and layout.raw in folder.parents:
        if redact_name(folder.name).findings:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when the move emptied it
        folder = folder.parent
    return target, new_rel, kinds
