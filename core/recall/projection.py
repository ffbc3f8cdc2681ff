"""Budgeted projection: the best subset of memory that fits a host's character budget.

``render_projection(root, budget, fmt="hermes", target="memory")`` returns the exact bytes a host
file should hold. In Hermes' format (``contracts/hermes-host.md`` §5) entries are joined by
``"\\n§\\n"``; every entry and the joined total stay within the budget (Hermes refuses edits to a
file whose single entry exceeds its limit, and counts ``len("\\n§\\n".join(entries))``).

Which records, in which order (deterministic: the same store gives the same bytes):

- ``target="user"`` holds the L1 identity records; ``target="memory"`` the L2 records (global
  and project scope). Only active, non-tombstoned records — never candidates.
- Priority: hard rules first (§6.11: confidence ≥ 0.85 and an avoid/prefer/correction/convention
  ruleType), then confidence descending, then most recently updated, then id.
- Each entry is the statement with whitespace collapsed to single spaces (so it can never
  contain the delimiter) and role markers / chat-template tokens broken up (:func:`neutralize`);
  an entry longer than ``max_entry_chars`` is cut with ``…``.
- Greedy packing in priority order: an entry that does not fit is skipped and smaller ones
  after it may still fit. Exact duplicates are dropped (Hermes de-duplicates on read).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.recall.hard_rules import HARD_RULE_MIN_CONFIDENCE as HARD_RULE_MIN_CONFIDENCE  # here as ever
from commonkeep.recall.hard_rules import HARD_RULE_TYPES as HARD_RULE_TYPES
from commonkeep.recall.hard_rules import is_hard_rule as is_hard_rule
from commonkeep.recall.search.fts import encodable

HERMES_DELIMITER = "\n§\n"
HERMES_LIMITS = {"memory": 2200, "user": 1375}
FORMATS = ("hermes", "markdown", "plain")
_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class Entry:
    """One projected entry: the record it comes from and its text."""

    id: str
    text: str


@dataclass
class Projection:
    """A rendered projection: the text, the entries in it and the ids left out for lack of room."""

    text: str
    entries: list[Entry] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    budget: int = 0
    fmt: str = "hermes"


def priority_key(record: Mapping[str, Any]) -> tuple[int, float, str, str]:
    """Sort key: hard rules, then confidence desc, then updated_at desc, then id."""
    updated = str(record.get("updated_at", ""))
    # Descending date as an ascending key: invert each character.
    inverted = "".join(chr(0x10FFFF - ord(c)) for c in updated)
    return (
        0 if is_hard_rule(record) else 1,
        -float(record.get("confidence", 0) or 0),
        inverted,
        str(record.get("id", "")),
    )


# Role markers and chat-template tokens (ChatML ``<|im_start|>``, Llama 3 ``<|eot_id|>``, DeepSeek's
# full-width ``<｜…｜>``, Llama 2 ``[INST]`` / ``<<SYS>>``, Gemma ``<start_of_turn>``, and
# XML-style role tags such as ``</system>`` or ``<assistant>``). Approved statements are data,
# but a model reading them in its context must never see one of these as a real turn boundary.
_ROLE_TAGS = (
    "system|assistant|user|human|developer|model|tool|tools|tool_call|tool_calls|tool_result|"
    "tool_response|function_call|function_calls|function_results|invoke|instructions?|"
    "system[-_]reminder|system[-_]prompt|im_start|im_end|start_of_turn|end_of_turn|s"
)
_ROLE_MARKERS = re.compile(
    r"<\|[^<>|\n]{0,64}\|>"  # <|im_start|>, <|eot_id|>, <|system|>, <|endoftext|>
    r"|<｜[^<>｜\n]{0,64}｜>"  # <｜begin▁of▁sentence｜>
    r"|\[/?INST\]|<</?SYS>>"  # Llama 2
    rf"|</?\s*(?:[\w-]+:)?(?:{_ROLE_TAGS})\b[^<>\n]{{0,200}}>",  # <system>, </assistant>, <tool_call name=x>
    re.IGNORECASE,
)
# One character for one: the text keeps its length (budgets are unchanged) and stays legible.
_DEFANG = str.maketrans({"<": "‹", ">": "›", "|": "¦", "｜": "¦", "[": "⟦", "]": "⟧"})


def neutralize(text: str) -> str:
    """``text`` with every role marker or chat-template token broken up visibly (``<|im_start|>``
    becomes ``‹¦im_start¦›``, ``</system>`` becomes ``‹/system›``); same length, nothing else
    changed. For text rendered into an agent's context; the canonical JSONL is never rewritten."""
    return _ROLE_MARKERS.sub(lambda m: m.group(0).translate(_DEFANG), text)


def entry_text(statement: str, max_chars: int) -> str:
    """The statement on one line, role markers neutralised (:func:`neutralize`), cut to
    ``max_chars`` (with ``…``) when longer."""
    # a stored "\udcff" escape (JS strings may hold one) cannot be UTF-8: U+FFFD (``fts.encodable``)
    text = encodable(neutralize(_WS.sub(" ", statement).strip()))
    if len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "…" if max_chars > 1 else text[:max_chars]
    return text


def records_for(target: str, records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The active records of a target (``user``: L1; ``memory``: L2), in priority order."""
    layer = "L1" if target == "user" else "L2"
    return sorted(
        (r for r in records if r.get("layer") == layer and r.get("status") == "active"), key=priority_key
    )


def pack(candidates: Iterable[Entry], budget: int, delimiter: str) -> tuple[list[Entry], list[str]]:
    """Greedy packing: keep entries in order while ``len(delimiter.join(kept)) <= budget``."""
    kept: list[Entry] = []
    omitted: list[str] = []
    seen: set[str] = set()
    used = 0
    for entry in candidates:
        if not entry.text or entry.text in seen:
            continue
        cost = len(entry.text) + (len(delimiter) if kept else 0)
        if used + cost <= budget:
            kept.append(entry)
            seen.add(entry.text)
            used += cost
        else:
            omitted.append(entry.id)
    return kept, omitted


def project_records(
    records: Iterable[Mapping[str, Any]],
    budget: int,
    *,
    fmt: str = "hermes",
    target: str = "memory",
    max_entry_chars: int | None = None,
) -> Projection:
    """The projection of already-loaded records (pure: no files read)."""
    from commonkeep.errors import BadInput

    if fmt not in FORMATS:
        raise BadInput(f"unknown projection format {fmt!r}; use one of {', '.join(FORMATS)}")
    if target not in HERMES_LIMITS:
        raise BadInput(f"unknown projection target {target!r}; use memory or user")
    if budget < 0:
        raise BadInput(f"budget must be >= 0, got {budget}")
    if max_entry_chars is not None and max_entry_chars < 1:
        raise BadInput(f"max_entry_chars (--max-entry-chars) must be >= 1, got {max_entry_chars}: entries cut to nothing would drop every record",
                       hint="leave it out to cut entries only to the budget")
    prefix = "- " if fmt == "markdown" else ""
    delimiter = HERMES_DELIMITER if fmt == "hermes" else "\n"
    cap = budget if max_entry_chars is None else min(budget, max_entry_chars)
    from commonkeep.store import exitgate

    # a record OmpKeep's curator (or a hand edit) wrote never passed capture: the exit gate redacts it here
    cands = [
        Entry(str(r["id"]), prefix + entry_text(exitgate.text(str(r.get("statement", ""))), cap - len(prefix)))
        for r in records_for(target, records)
        if cap > len(prefix)
    ]
    kept, omitted = pack(cands, budget, delimiter)
    return Projection(delimiter.join(e.text for e in kept), kept, omitted, budget, fmt)


def build_projection(
    root: Path | str,
    budget: int | None = None,
    *,
    fmt: str = "hermes",
    target: str = "memory",
    max_entry_chars: int | None = None,
) -> Projection:
    """Load the root's active records and project them (``budget`` defaults to Hermes' limit)."""
    from commonkeep.store.core import Store
    from commonkeep.store.root import require_root

    records = Store(require_root(root)).records(active_only=True)  # a new bad line is named once on stderr
    return project_records(
        records,
        HERMES_LIMITS[target] if budget is None else budget,
        fmt=fmt,
        target=target,
        max_entry_chars=max_entry_chars,
    )


def review_footer(root: Path | str, room: int = 200) -> str:
    """One line for the agent to mention, when candidates wait for review: ``12 memories wait for
    review (oldest 8 weeks): run `commonkeep review``` ("" when none waits or it is longer than
    ``room`` characters). Cheap at any queue size (``commonkeep.store.backlog``)."""
    from commonkeep.store.backlog import backlog

    line = backlog(root).line()
    return line if line and len(line) <= room else ""


def render_projection(
    root: Path | str,
    budget: int | None = None,
    fmt: str = "hermes",
    target: str = "memory",
    *,
    max_entry_chars: int | None = None,
) -> str:
    """The projection text for a host file, e.g. Hermes ``MEMORY.md`` (``target="memory"``) or
    ``USER.md`` (``target="user"``). Deterministic; ``len(result) <= budget`` always."""
    return build_projection(root, budget, fmt=fmt, target=target, max_entry_chars=max_entry_chars).text
