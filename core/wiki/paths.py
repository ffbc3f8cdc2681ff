"""Path safety for ingest: only regular files strictly inside ``raw/`` are accepted.

Refused, each with a message that says what and where (``contracts/roundtable.md §7``): absolute
paths, ``..`` components, anything outside ``raw/`` (including ``raw`` itself), any symlink on
the way (``raw`` itself, a folder, or the file), and a ``raw/`` that resolves outside the project.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from commonkeep.errors import BadInput
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
