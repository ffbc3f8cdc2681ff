"""The bounded digest of unread messages (contracts/roundtable.md §4), deterministic and model-free.

Newest first, full bodies (each capped at ``per_message``) while they fit the budget, then
one-line headlines, then everything older collapses into one marker line that says where to
fetch it. The output reads oldest first and is at most ``budget`` plus the marker line.

The same messages give the same bytes as Orphus's ``buildDigest`` and its tool's header
(issue 39): lengths in JavaScript string units and JavaScript's ``trimEnd`` (``jsunits``), every
line costs its length plus one, ``HH:MM`` in local time, "1 older message", a header that counts
the messages fetched, and ``consumedSeq`` 0 when there was nothing to read. The one difference is
in the bytes Orphus cannot write either: a split emoji's half or a lone surrogate is U+FFFD.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from commonkeep_roundtable.jsunits import js_len, js_slice, js_trim_end, utf8_text

DEFAULT_BUDGET = 2000
MIN_BUDGET = 200
DEFAULT_PER_MESSAGE = 600
MIN_PER_MESSAGE = 80
DEFAULT_HEADLINE_CAP = 100
MIN_HEADLINE_CAP = 40
MARKER_CAP = 200
EMPTY = "No new messages."


@dataclass(frozen=True)
class DigestBody:
    """The rendered lines (oldest first), what each message became, the newest seq covered (0: none)."""

    lines: list[str]
    total: int
    verbatim: int
    headlines: int
    collapsed: int
    consumed_seq: int

    @property
    def text(self) -> str:
        """The body as written: one entry a line (an entry may span lines), always encodable."""
        return utf8_text("\n".join(self.lines))

    @property
    def chars(self) -> int:
        """The body's length in JavaScript units; 0 for an empty digest, as Orphus reports it."""
        return js_len(self.text) if self.total else 0


def _author(message: dict[str, Any]) -> str:
    sender = message.get("from") or {}
    return str(sender.get("name", "?")) if isinstance(sender, dict) else str(sender)


def _clock(timestamp_ms: int) -> str:
    """``HH:MM`` in local time, as JavaScript's ``getHours``/``getMinutes``."""
    try:
        return datetime.fromtimestamp(timestamp_ms / 1000).strftime("%H:%M")
    except (OverflowError, OSError, ValueError):
        return "NaN:NaN"


def cap_text(text: str, cap: int) -> tuple[str, int]:
    """The text without trailing whitespace, cut at ``cap`` units; and how many units were cut."""
    text = js_trim_end(text)
    size = js_len(text)
    if size <= cap:
        return text, 0
    return js_slice(text, cap), size - cap


def verbatim_line(message: dict[str, Any], per_message: int) -> str:
    """``[HH:MM] name#seq (reply to <id>): text``, the text capped with `` …(+N chars)``."""
    text, cut = cap_text(str(message.get("text", "")), per_message)
    marker = f" …(+{cut} chars)" if cut else ""
    reply = f" (reply to {message['replyTo']})" if message.get("replyTo") else ""
    return f"[{_clock(int(message.get('timestamp', 0)))}] {_author(message)}#{message['seq']}{reply}: {text}{marker}"


def headline_line(message: dict[str, Any], cap: int) -> str:
    """``· name#seq: firstline …``; the ellipsis when the body goes on past what is shown."""
    body = str(message.get("text", ""))
    first = body.split("\n", 1)[0]
    text, cut = cap_text(first, cap)
    more = cut > 0 or len(body) > len(first)
    return f"· {_author(message)}#{message['seq']}: {text}{' …' if more else ''}"


def collapse_marker(count: int, after_seq: int) -> str:
    """The one line standing for every collapsed message."""
    plural = "" if count == 1 else "s"
    marker = f"({count} older message{plural} collapsed — fetch with after_seq {after_seq} to read them)"
    marker = js_trim_end(" ".join(marker.splitlines()))
    return marker if js_len(marker) <= MARKER_CAP else js_slice(marker, MARKER_CAP - 1) + "…"


def build_digest(
    messages: Sequence[dict[str, Any]],
    budget: int = DEFAULT_BUDGET,
    per_message: int = DEFAULT_PER_MESSAGE,
    headline_cap: int = DEFAULT_HEADLINE_CAP,
) -> DigestBody:
    """Render ``messages`` (any order; sorted by seq) within ``budget`` characters."""
    if not messages:
        return DigestBody([EMPTY], total=0, verbatim=0, headlines=0, collapsed=0, consumed_seq=0)
    budget = max(MIN_BUDGET, budget)
    per_message = max(MIN_PER_MESSAGE, per_message)
    headline_cap = max(MIN_HEADLINE_CAP, headline_cap)
    newest_first = sorted(messages, key=lambda m: int(m["seq"]), reverse=True)
    verbatims: list[str] = []  # newest first
    headlines: list[str] = []
    spent = 0
    collapsed = 0
    full = True
    for index, message in enumerate(newest_first):
        if full:
            line = verbatim_line(message, per_message)
            if spent + js_len(line) + 1 <= budget:
                verbatims.append(line)
                spent += js_len(line) + 1
                continue
            full = False
        line = headline_line(message, headline_cap)
        if spent + js_len(line) + 1 <= budget:
            headlines.append(line)
            spent += js_len(line) + 1
            continue
        # once one headline does not fit, everything older collapses too (budget in seq order)
        collapsed = len(newest_first) - index
        break
    lines = [collapse_marker(collapsed, int(newest_first[-1]["seq"]) - 1)] if collapsed else []
    lines += reversed(headlines)
    lines += reversed(verbatims)
    return DigestBody(
        lines,
        total=len(newest_first),
        verbatim=len(verbatims),
        headlines=len(headlines),
        collapsed=collapsed,
        consumed_seq=int(newest_first[0]["seq"]),
    )


@dataclass(frozen=True)
class DigestResult:
    """What the ``digest``/``peek`` action returns: the text and its ``details``."""

    text: str
    details: dict[str, Any]


def digest_header(room: str, body: DigestBody, *, peek: bool) -> str:
    """``#room · N unread · showing V verbatim, H headline(s), C collapsed · X chars``."""
    header = (
        f"#{room} · {body.total} unread · showing {body.verbatim} verbatim, "
        f"{body.headlines} headline(s), {body.collapsed} collapsed · {body.chars} chars"
    )
    return utf8_text(header + (" · peek (cursor unchanged)" if peek else ""))


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
    200 oldest unread messages and advances the cursor only to the newest of those; "N unread" in
    the header counts the messages fetched, as Orphus's does.
    """
    cursor_before = client.cursor(room)
    reply = client.fetch(room, after_seq=cursor_before)
    body = build_digest(list(reply["messages"]), budget=budget, per_message=per_message)
    if not peek and body.consumed_seq > 0:
        client.set_cursor(room, body.consumed_seq)
    details = {
        "room": room,
        "lastSeq": int(reply["lastSeq"]),
        "cursorBefore": int(reply["cursor"]),
        "consumedSeq": body.consumed_seq,
        "chars": body.chars,
    }
    return DigestResult(f"{digest_header(room, body, peek=peek)}\n{body.text}", details)
