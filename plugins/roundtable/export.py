"""Export a room's retained transcript into the memory dir's ``raw/`` (contracts/roundtable.md §7).

Order matters: the role gate first, then the path rules, and only then the broker. The export
reads straight from the broker (``fetch(room, 0, 500)``), never through a digest (which would
collapse messages) and never moving a cursor (so it cannot steal anyone's catch-up). It returns
metadata only; the transcript never enters the caller's context.

Secrets never reach the file: every line is redacted (``commonkeep.secrets``) before the first
byte is written, and the result reports how many were redacted and of which kinds (never the
values) as an extra sentence of ``text`` and, only when something was redacted, an extra
``redacted`` key in ``details`` (the contract's keys stay as they are).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.secrets import summarize
from commonkeep.store import exitgate
from commonkeep_roundtable.client import BrokerClient
from commonkeep_roundtable.gate import require_role
from commonkeep_roundtable.jsunits import js_len, utf8_text
from commonkeep_roundtable.paths import MemoryConfig, resolve_memory_config
from commonkeep_roundtable.rooms import DEFAULT_ROOM_CAPACITY

_RULE = "give a relative path of a file under raw/, e.g. raw/design.md or raw/nested/design.md"


@dataclass(frozen=True)
class ExportResult:
    """What an export reports: where it wrote and how much, never the transcript itself."""

    room: str
    path: Path
    messages: int
    chars: int
    first_seq: int
    last_seq: int
    redacted: tuple[str, ...] = ()
    """The kinds of secret redacted from the transcript before it was written, one per secret."""

    @property
    def dropped_before(self) -> int:
        """Messages older than the oldest retained one (the ring buffer had already let them go)."""
        return max(0, self.first_seq - 1)

    @property
    def truncated(self) -> bool:
        return self.dropped_before > 0

    @property
    def text(self) -> str:
        text = f"Exported {self.messages} retained message(s) from #{self.room} to {self.path} ({self.chars} chars)."
        if self.dropped_before > 0:
            text += f" {self.dropped_before} older message(s) were no longer retained."
        if self.redacted:
            text += f" Redacted {len(self.redacted)} secret(s) before writing: {summarize(list(self.redacted))}."
        return text

    @property
    def details(self) -> dict[str, Any]:
        """The contract's keys, plus ``redacted: {count, kinds}`` when a secret was redacted."""
        details: dict[str, Any] = {
            "room": self.room,
            "path": str(self.path),
            "messages": self.messages,
            "chars": self.chars,
            "firstSeq": self.first_seq,
            "lastSeq": self.last_seq,
            "droppedBefore": self.dropped_before,
            "truncated": self.truncated,
        }
        if self.redacted:
            details["redacted"] = {"count": len(self.redacted), "kinds": dict(sorted(Counter(self.redacted).items()))}
        return details


def _within(child: Path, parent: Path, *, strictly: bool) -> bool:
    if child == parent:
        return not strictly
    return parent in child.parents


def _refuse(path: str, why: str) -> BadInput:
    return BadInput(f"export path {path!r} refused: {why}", hint=_RULE)


def check_export_path(memory_dir: Path, path: str) -> Path:
    """Validate ``path`` against the rules and return the absolute target (not yet created).

    Refused: empty, absolute, any ``..``, anything not strictly inside ``raw/`` (``raw`` itself,
    ``design.md``), a ``raw/`` resolving outside the memory dir, a symlinked ancestor resolving
    outside ``raw/`` (realpath of the nearest existing ancestor), a target that is a symlink or
    a directory.
    """
    if not path or not path.strip():
        raise _refuse(path, "it is empty")
    if "\x00" in path:
        raise _refuse(path, "it contains a NUL character")
    if os.path.isabs(path) or path.startswith("\\"):
        raise _refuse(path, "absolute paths are not allowed")
    pure = PurePosixPath(path.replace("\\", "/"))
    if ".." in pure.parts:
        raise _refuse(path, '".." may not appear in it')
    parts = [p for p in pure.parts if p not in ("", ".")]
    if len(parts) < 2 or parts[0] != "raw":
        raise _refuse(path, "it must name a file strictly inside raw/")
    memory_real = Path(os.path.realpath(memory_dir))
    raw = memory_dir / "raw"
    raw_real = Path(os.path.realpath(raw))
    if not _within(raw_real, memory_real, strictly=True):
        raise _refuse(path, f"{raw} resolves to {raw_real}, outside the memory dir {memory_real}")
    target = memory_dir.joinpath(*parts)
    ancestor = target.parent
    while not ancestor.exists() and ancestor != memory_dir and ancestor.parent != ancestor:
        ancestor = ancestor.parent
    ancestor_real = Path(os.path.realpath(ancestor))
    inside_raw = ancestor == raw or raw in ancestor.parents
    if inside_raw and not _within(ancestor_real, raw_real, strictly=False):
        raise _refuse(path, f"{ancestor} resolves to {ancestor_real}, outside {raw_real}")
    if inside_raw and not ancestor.is_dir():
        raise _refuse(path, f"{ancestor} is not a directory")
    if target.is_symlink():
        raise _refuse(path, f"the target {target} is a symlink")
    if target.is_dir():
        raise _refuse(path, f"the target {target} is a directory")
    return target


def iso_utc(timestamp_ms: int) -> str:
    """JavaScript's ``toISOString()`` form: ``YYYY-MM-DDTHH:MM:SS.sssZ``."""
    moment = datetime.fromtimestamp(timestamp_ms // 1000, tz=UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{timestamp_ms % 1000:03d}Z"


def render_transcript(messages: list[dict[str, Any]], findings: list[str] | None = None) -> str:
    """One ``[<ISO UTC>] <name>#<seq>: <text>`` line per message, newline at the end.

    Each line is redacted (name and text, whatever a client sent): a secret becomes
    ``[REDACTED:<kind>]`` and its kind is appended to ``findings``; other text stays as is.
    """
    lines = []
    for message in messages:
        sender = message.get("from") or {}
        name = sender.get("name", "?") if isinstance(sender, dict) else sender
        # the room's messages are written by other programs (any client): the exit gate
        lines.append(exitgate.text(f"[{iso_utc(int(message.get('timestamp', 0)))}] {name}#{message['seq']}: "
                                   f"{message.get('text', '')}", findings))
    # a lone surrogate from the wire is written as U+FFFD, the bytes Node's writeFile writes
    return utf8_text("\n".join(lines) + "\n") if lines else ""


def _write(memory_dir: Path, path: str, target: Path, content: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    # again after mkdir: a directory swapped for a symlink meanwhile must not be written through
    if check_export_path(memory_dir, path) != target:
        raise _refuse(path, "the target changed while exporting")
    fd, tmp = tempfile.mkstemp(prefix=".export-", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if target.is_symlink():
            raise _refuse(path, f"the target {target} became a symlink")
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def export_room(
    room: str,
    path: str,
    *,
    role: str | None,
    config: MemoryConfig | None = None,
    base: Path | None = None,
    client: BrokerClient | None = None,
) -> ExportResult:
    """Export ``room`` to ``<memory dir>/<path>`` as ``role``; see the module docstring.

    ``client`` reuses an open broker session; otherwise one is opened as ``role`` on the broker
    under ``base`` (default: the agent dir) and closed again. No broker is started: without one
    there is no room to export.
    """
    config = resolve_memory_config(base=base) if config is None else config
    require_role("export", role, config.writer_role)
    config.memory_dir.mkdir(parents=True, exist_ok=True)
    target = check_export_path(config.memory_dir, path)
    own = client is None
    session = BrokerClient.connect(role or "", base=base, start=False) if client is None else client
    try:
        reply = session.fetch(room, after_seq=0, limit=DEFAULT_ROOM_CAPACITY)
    finally:
        if own:
            session.close()
    messages: list[dict[str, Any]] = list(reply["messages"])
    findings: list[str] = []
    content = render_transcript(messages, findings)
    _write(config.memory_dir, path, target, content)
    return ExportResult(
        room=room,
        path=Path(os.path.abspath(target)),
        messages=len(messages),
        chars=js_len(content.removesuffix("\n")),  # as Orphus: JavaScript units, the final newline not counted
        first_seq=int(messages[0]["seq"]) if messages else 0,
        last_seq=int(messages[-1]["seq"]) if messages else 0,
        redacted=tuple(findings),
    )
