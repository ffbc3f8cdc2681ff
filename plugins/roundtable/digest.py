"""The bounded digest of unread messages (contracts/roundtable.md §4), deterministic and model-free.

Newest first, full bodies (each capped at ``per_message``) while they fit the budget, then
one-line headlines, then everything older collapses into one marker line that says where to
fetch it. The output reads oldest first and is at most ``budget`` plus the marker line. Lengths
are JavaScript string units, as Orphus counts them (``jsunits``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from commonkeep_roundtable.jsunits import js_cut, js_len

DEFAULT_BUDGET = 2000
MIN_BUDGET = 200
DEFAULT_PER_MESSAGE = 600
MIN_PER_MESSAGE = 80
DEFAULT_HEADLINE_CAP = 100
MIN_HEADLINE_CAP = 40
MARKER_CAP = 200


@dataclass(frozen=True)
class DigestBody:
    """The rendered lines and what each message became."""

    lines: list[str]
    verbatim: int
    headlines: int
    collapsed: int

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _author(message: dict[str, Any]) -> str:
    sender = message.get("from") or {}
    return str(sender.get("name", "?")) if isinstance(sender, dict) else str(sender)


def _clock(timestamp_ms: int) -> str:
    return datetime.fromtimestamp(timestamp_ms / 1000, tz=UTC).strftime("%H:%M")


def verbatim_line(message: dict[str, Any], per_message: int) -> str:
    """``[HH:MM] name#seq (reply to <id>): text``, the text capped with `` …(+N chars)``."""
    text = str(message.get("text", ""))
    size = js_len(text)
    if size > per_message:
        kept = js_cut(text, per_message)
        text = f"{kept} …(+{size - js_len(kept)} chars)"
    reply = f" (reply to {message['replyTo']})" if message.get("replyTo") else ""
    return f"[{_clock(int(message.get('timestamp', 0)))}] {_author(message)}#{message['seq']}{reply}: {text}"


def headline_line(message: dict[str, Any], cap: int) -> str:
    """``· name#seq: firstline …``; the ellipsis only when something was left out."""
    text = str(message.get("text", ""))
    first, _, rest = text.partition("\n")
    cut = js_len(first) > cap or bool(rest.strip())
    first = js_cut(first, cap)
    return f"· {_author(message)}#{message['seq']}: {first}{' …' if cut else ''}"


def build_digest(
    messages: Sequence[dict[str, Any]],
    budget: int = DEFAULT_BUDGET,
    per_message: int = DEFAULT_PER_MESSAGE,
    headline_cap: int = DEFAULT_HEADLINE_CAP,
) -> DigestBody:
    """Render ``messages`` (oldest first, as fetched) within ``budget`` characters."""
    budget = max(MIN_BUDGET, budget)
    per_message = max(MIN_PER_MESSAGE, per_message)
    headline_cap = max(MIN_HEADLINE_CAP, headline_cap)
    kept: list[str] = []  # newest first
    used = 0
    verbatim = headlines = 0
    full = True
    collapsed: Sequence[dict[str, Any]] = ()
    newest_first = list(reversed(messages))
    for index, message in enumerate(newest_first):
        if full:
            line = verbatim_line(message, per_message)
            cost = js_len(line) + (1 if kept else 0)
            if used + cost <= budget:
                kept.append(line)
                used += cost
                verbatim += 1
                continue
            full = False
        line = headline_line(message, headline_cap)
        cost = js_len(line) + (1 if kept else 0)
        if used + cost <= budget:
            kept.append(line)
            used += cost
            headlines += 1
            continue
        collapsed = list(reversed(newest_first[index:]))
        break
    lines = list(reversed(kept))
    if collapsed:
        after = int(collapsed[0]["seq"]) - 1
        marker = f"({len(collapsed)} older messages collapsed — fetch with after_seq {after} to read them)"
        lines.insert(0, js_cut(marker, MARKER_CAP))
    return DigestBody(lines=lines, verbatim=verbatim, headlines=headlines, collapsed=len(collapsed))


@dataclass(frozen=True)
class DigestResult:
    """What the ``digest``/``peek`` action returns: the text and its ``details``."""

    text: str
    details: dict[str, Any]


def digest_room(
    client: Any,
    room: str,
    *,
    budget: int = DEFAULT_BUDGET,
    per_message: int = DEFAULT_PER_MESSAGE,
    peek: bool = False,
) -> DigestResult:
    """Digest ``room``'s unread messages for ``client``'s role; advance the cursor unless ``peek``.

    Like upstream, the broker's default fetch limit (200) applies, so a digest covers at most the
    200 oldest unread messages and advances the cursor only to the newest of those.
    """
    cursor_before = client.cursor(room)
    reply = client.fetch(room, after_seq=cursor_before)
    messages: list[dict[str, Any]] = list(reply["messages"])
    last_seq = int(reply["lastSeq"])
    details: dict[str, Any] = {"room": room, "lastSeq": last_seq, "cursorBefore": cursor_before}
    if not messages:
        return DigestResult("No new messages.", {**details, "consumedSeq": cursor_before, "chars": 0})
    body = build_digest(messages, budget=budget, per_message=per_message)
    consumed = int(messages[-1]["seq"])
    if not peek:
        client.set_cursor(room, consumed)
    header = (
        f"#{room} · {last_seq - cursor_before} unread · showing {body.verbatim} verbatim, "
        f"{body.headlines} headline(s), {body.collapsed} collapsed · {js_len(body.text)} chars"
    )
    if peek:
        header += " · peek (cursor unchanged)"
    return DigestResult(f"{header}\n{body.text}", {**details, "consumedSeq": consumed, "chars": js_len(body.text)})
