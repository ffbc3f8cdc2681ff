"""Selecting memory for a prompt: the injection block of ``contracts/ompkeep-store.md`` §10.

``select_for_prompt(root, prompt)`` builds the ``# Persistent Intelligence Context`` block and
writes ``runtime/context.md``, ``runtime/selected_memory.json`` (the selected records, pretty JSON
plus ``"\\n"``) and ``runtime/injection-stats.json``, as upstream's ``before_agent_start`` does.

- Skipped (nothing written) when the prompt is empty, shorter than 4 characters, starts with
  ``/`` or is a trivial acknowledgement.
- ``config.json`` ``retrieval.injectionMode``: ``scoped`` (default), or ``policy_only`` /
  ``wakeup`` (a short policy block, ``selected_memory.json = []``).
- Scoped: total ≤ 14,000 chars. Sections, in order, each within its cap: ``## Hard Rules``
  (§6.11, ≤ 8; 2,000), ``## Selected Memory`` (≤ 12 records, ≤ 4 L1 and ≤ 8 L2, by search
  relevance; 6,000), ``## Scratchpad`` (open items; 800), ``## Contested Memory`` (800),
  ``## Open Inquiries`` (≤ 3, high priority first; 800 — upstream injects up to 3 inquiries
  without naming the section; by id unless commonkeep wrote the question), ``## Daily Log (<date>)``
  (the most recent part of today's log; 3,000). Daily-log and scratchpad lines that score
  ``medium``/``high`` poisoning risk are withheld with a note saying where to read them. ``retrieval.maxRecords`` / ``maxL1Records`` / ``maxL2Records`` override the counts.
- Packing: a line that does not fit its section's room is skipped and the next ones still may
  fit (one long record never empties a section); a statement longer than 1,000 chars is cut
  with ``…`` in the block.
- Role markers and chat-template tokens in the block (``<|im_start|>``, ``</system>``,
  ``[INST]``…) are broken up visibly (``commonkeep.recall.projection.neutralize``); the records in
  ``selected_memory.json`` and the canonical JSONL are left as they are.
- Relevance: keyword search; prompts of more than 8 words also use the semantic backend when
  one is available (``deep`` RRF), as upstream runs qmd only for such prompts.
- Records: the hard rules, the contested records and the whole records of the search hits come
  from ``search/recall.db`` (``record_at``: where each record's line is; ``select_rows``; ``commonkeep.recall.search.index``), re-synced
  first when the canonical files changed since the last sync: an unchanged store is not read. The
  output is the one reading the store gives (tombstoned ids left out, the last active line of an id).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HEADER = "# Persistent Intelligence Context"
TOTAL_BUDGET = 14_000
CAPS = {
    "hard_rules": 2_000,
    "selected": 6_000,
    "scratchpad": 800,
    "contested": 800,
    "inquiries": 800,
    "daily": 3_000,
}
MAX_HARD_RULES = 8
MAX_RECORDS, MAX_L1, MAX_L2 = 12, 4, 8
MAX_INQUIRIES = 3
# A statement longer than this is cut with "…" in the block (the records in selected_memory.json
# stay whole), so one pasted wall of text cannot crowd out a section.
MAX_ENTRY_STATEMENT = 1_000
TRIVIAL = frozenset(
    [
        "ok",
        "okay",
        "k",
        "kk",
        "yes",
        "y",
        "no",
        "n",
        "yep",
        "nope",
        "sure",
        "thanks",
        "thank",
        "thx",
        "ty",
        "cool",
        "nice",
        "great",
        "fine",
        "done",
        "go",
        "continue",
        "proceed",
        "lgtm",
        "ack",
        "alright",
        "right",
        "good",
        "perfect",
    ]
)
_WORDS = re.compile(r"[\w']+")


@dataclass
class Selection:
    """What was selected for a prompt (``skipped`` says why nothing was, when so)."""

    prompt: str
    mode: str = "scoped"
    skipped: str | None = None
    text: str = ""
    hard_rules: list[dict[str, Any]] = field(default_factory=list)
    selected: list[dict[str, Any]] = field(default_factory=list)
    contested: list[dict[str, Any]] = field(default_factory=list)
    inquiries: list[dict[str, Any]] = field(default_factory=list)
    daily_chars: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    paths: list[Path] = field(default_factory=list)


def skip_reason(prompt: str) -> str | None:
    """Why a prompt gets no injection (``None`` when it gets one)."""
    p = prompt.strip()
    if not p:
        return "empty prompt"
    if len(p) < 4:
        return "prompt shorter than 4 characters"
    if p.startswith("/"):
        return "slash command"
    words = [w.lower() for w in _WORDS.findall(p)]
    if words and len(words) <= 3 and all(w in TRIVIAL for w in words):
        return "trivial acknowledgement"
    return None


def _config(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / "config.json").read_text(encoding="utf-8"))
        retrieval = data.get("retrieval", {}) if isinstance(data, dict) else {}
        return retrieval if isinstance(retrieval, dict) else {}
    except (OSError, ValueError, RecursionError):
        return {}


def _line(record: Mapping[str, Any]) -> str:
    from commonkeep.recall.projection import entry_text
    from commonkeep.store.exitgate import rules_obj
    from commonkeep.store.render import to_fixed2

    rule = f", {record['ruleType']}" if record.get("ruleType") else ""
    # a record another program wrote (OmpKeep's curator, a shell) reaches the agent's context only
    # through the redactor's rules (cached by text: a statement seen before costs a lookup)
    statement = entry_text(rules_obj(str(record.get("statement", ""))), MAX_ENTRY_STATEMENT)
    return f"- [{record.get('id')}] {statement} ({record.get('layer')}, conf {to_fixed2(float(record.get('confidence', 0) or 0))}{rule})"


def _section(title: str, lines: list[str], cap: int) -> tuple[str, list[int]]:
    """``## title`` plus the whole lines that fit in ``cap`` chars, in order; a line that does not
    fit is skipped and the packing goes on with the next. Returns (text, indexes of the lines used)."""
    out = f"## {title}"
    used: list[int] = []
    for i, line in enumerate(lines):
        if len(out) + 1 + len(line) <= cap:
            out += "\n" + line
            used.append(i)
    return (out, used) if used else ("", [])


SWEEP_BEFORE_PROMPT = 1 << 20  # bytes: a larger scratchpad or daily log is redacted where replayed, not swept


def _withhold_risky(lines: list[str], where: str) -> list[str]:
    """Lines of unvetted text (daily log, scratchpad) with those the poisoning rules score
    ``medium`` or ``high`` replaced by a neutral note: they are read in the file, not replayed.
    Other programs write these files (OmpKeep): they passed the exit gate first (``select_for_prompt``)."""
    return [_withheld(line, where) for line in lines]


def _withheld(line: str, where: str) -> str:
    from commonkeep.gate.poisoning import assess_text

    found = assess_text(line) if line.strip() else None
    if found is not None and found.risk in ("medium", "high"):
        return f"- (a line withheld here: {found.risk} poisoning risk, {', '.join(found.reasons[:3])}; read it in {where})"
    return line


def _tail_text(path: Path, cap: int) -> str:
    """The end of a daily log that can hold the last ``cap`` characters: the whole file when it is
    small, else its last ``8 * cap`` bytes from the first line boundary in them (a day's log may
    be megabytes; a prompt must not read it all)."""
    window = 8 * cap + 16
    with open(path, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - window))
        data = fh.read()
    if size > window:
        cut = data.find(b"\n")
        # no line boundary in the window: one long line, of which only its end can be shown
        data = data[cut + 1:] if 0 <= cut < len(data) - 1 else data
    return data.decode("utf-8", errors="ignore" if size > window else "strict")


def _daily_digest(path: Path, cap: int) -> str:
    """The most recent part of today's log that fits ``cap`` (cut at a line boundary); lines that
    score ``medium``/``high`` poisoning risk are withheld (``_withhold_risky``)."""
    try:
        text = _tail_text(path, cap).strip()
    except (OSError, UnicodeDecodeError):
        return ""
    # only the lines the tail can reach are scored (from the end, each as withheld), not the whole
    # day's log on every prompt; the tail is the same as that of the whole log withheld. A line
    # longer than the cap is scored by the end of it that can be shown.
    kept: list[str] = []
    size = -1
    for line in reversed(text.splitlines()):
        kept.append(_withheld(line[-(cap + 1):], f"daily/{path.name}"))
        size += len(kept[-1]) + 1
        if size > cap:
            break
    text = "\n".join(reversed(kept))
    if len(text) <= cap:
        return text
    tail = text[-cap:]
    cut = tail.find("\n")
    return tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail


def _relevant(root: Path, prompt: str, limit: int) -> tuple[list[str], str]:
    from commonkeep.recall.search.hybrid import search

    mode = "deep" if len(prompt.split()) > 8 else "keyword"
    resp = search(root, prompt, mode, limit)
    return [r.id for r in resp.results], resp.used


def _standing(root: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The store's active hard rules (§6.11, at most ``MAX_HARD_RULES``) and its contested
    records, each in ``projection.priority_key`` order."""
    from commonkeep.recall.search import index

    # recall.db keeps them, re-synced first when the canonical files changed (a new bad line is
    # then named once on stderr by that sync): the JSONL is not read when nothing changed.
    conn = index.open_fresh(root)
    return index.ranked_records(conn, "hard", MAX_HARD_RULES), index.ranked_records(conn, "contested")


def _records_by_id(root: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The whole active records of ``ids`` (search hits), as the store holds them: read from their
    lines through the index (synced at most once here, by ``open_fresh``). When a writer changed
    the files between that sync and the read (OMP appending mid-read), the lines that name one
    of the ids are read straight from the files (:func:`_read_records`), not the whole store
    re-synced again."""
    from commonkeep.recall.search import index

    try:
        return index.records_by_id(index.open_fresh(root), ids, root)
    except index.Moved:
        return _read_records(root, ids)


_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]+")


def _read_records(root: Path, ids: list[str]) -> dict[str, dict[str, Any]]:
    """The active, not tombstoned records of ``ids`` from the canonical files, the last line of an
    id winning (as ``Store.records``): only the lines that contain one of the ids are parsed."""
    from commonkeep.store.core import Store
    from commonkeep.store.records import memory_record_problem

    store = Store(root)
    wanted = set(ids)
    if not all(_PLAIN_ID.fullmatch(i) for i in wanted):  # an id JSON would escape: read the store
        return {str(r["id"]): r for r in store.records() if r["id"] in wanted}
    dead = store.tombstoned_ids()
    needles = [f'"{i}"'.encode() for i in sorted(wanted)]
    out: dict[str, dict[str, Any]] = {}
    for path in store.layout.canonical_files():
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue
        starts: set[int] = set()
        for needle in needles:
            at = data.find(needle)
            while at >= 0:
                starts.add(data.rfind(b"\n", 0, at) + 1)
                at = data.find(needle, at + len(needle))
        for start in sorted(starts):
            end = data.find(b"\n", start)
            try:
                rec = json.loads(data[start : end if end >= 0 else len(data)])
            except (ValueError, RecursionError):
                continue
            if (isinstance(rec, dict) and rec.get("id") in wanted and rec.get("status") == "active"
                    and rec["id"] not in dead and not memory_record_problem(rec)):
                out[str(rec["id"])] = rec
    return out


def select_for_prompt(root: Path | str, prompt: str, *, write: bool = True) -> Selection:
    """Select memory for ``prompt`` and (``write``) write the three runtime files."""
    from commonkeep.recall.projection import neutralize
    from commonkeep.store.core import Store
    from commonkeep.store.jsonjs import dumps_pretty
    from commonkeep.store.layout import Layout
    from commonkeep.store.root import require_root
    from commonkeep.util.timeutil import now_iso, today

    started = time.perf_counter()
    lay = Layout(require_root(root))
    sel = Selection(prompt)
    reason = skip_reason(prompt)
    if reason:
        sel.skipped = reason
        return sel
    cfg = _config(lay.root)
    sel.mode = str(cfg.get("injectionMode", "scoped"))
    store = Store(lay.root)
    sections: list[str] = []
    timings: dict[str, float] = {}
    used_search = "none"
    if sel.mode in ("policy_only", "wakeup"):
        sections.append(
            "## Memory Policy\nPersistent memory (L1/L2) is governed: search it with `commonkeep search` "
            "or the memory_search tool before acting, and propose durable facts as candidates; the librarian curates them."
        )
    else:
        hard, contested = _standing(lay.root)
        text, used = _section("Hard Rules", [_line(r) for r in hard], CAPS["hard_rules"])
        sel.hard_rules = [hard[i] for i in used]
        if text:
            sections.append(text)
        max_records = int(cfg.get("maxRecords", MAX_RECORDS))
        caps = {"L1": int(cfg.get("maxL1Records", MAX_L1)), "L2": int(cfg.get("maxL2Records", MAX_L2))}
        t0 = time.perf_counter()
        ranked, used_search = _relevant(lay.root, prompt, max(max_records * 3, 24))
        timings["searchMs"] = round((time.perf_counter() - t0) * 1000, 3)
        by_id = _records_by_id(lay.root, ranked)
        shown = {str(r["id"]) for r in sel.hard_rules}
        # By relevance within the count caps; a line that does not fit the section's room is
        # skipped (not counted) and the next relevant record may take its place.
        text = "## Selected Memory"
        counts = {"L1": 0, "L2": 0}
        for rid in ranked:
            rec = by_id.get(rid)
            if rec is None or rid in shown or len(sel.selected) >= max_records:
                continue
            layer = str(rec.get("layer"))
            if counts.get(layer, 0) >= caps.get(layer, 0):
                continue
            line = _line(rec)
            if len(text) + 1 + len(line) > CAPS["selected"]:
                continue
            text += "\n" + line
            counts[layer] += 1
            sel.selected.append(rec)
            shown.add(rid)
        if sel.selected:
            sections.append(text)
        # the scratchpad and today's log are written by other programs (OmpKeep) and replayed as they
        # are: they pass the exit gate first, in place (only what was appended since the last check is
        # scanned; a secret found is redacted in the file, with an audit line)
        from commonkeep.store import exitgate

        date = today()
        # (a file too large to scan whole before a prompt: only what is replayed is redacted, here)
        replayed = {p: p.stat().st_size <= SWEEP_BEFORE_PROMPT for p in (lay.scratchpad, lay.daily_file(date)) if p.is_file()}
        exitgate.sweep(lay.root, reason="select", files=[p for p, small in replayed.items() if small])
        try:
            pad = lay.scratchpad.read_text(encoding="utf-8").splitlines()
        except OSError:
            pad = []
        pad = [ln for ln in pad if ln.startswith("- [ ]")]
        if not replayed.get(lay.scratchpad, True):
            pad = [exitgate.text(ln) for ln in pad]
        text, _ = _section("Scratchpad", _withhold_risky(pad, "scratchpad.md"),
                           CAPS["scratchpad"])
        if text:
            sections.append(text)
        text, used = _section("Contested Memory", [_line(r) for r in contested], CAPS["contested"])
        sel.contested = [contested[i] for i in used]
        if text:
            sections.append(text)
        order = {"high": 0, "medium": 1, "low": 2}
        from commonkeep.store.inquiries import describe

        inquiries = [q for q in store.rows(lay.inquiries) if q.get("status") == "open" and q.get("question")]
        inquiries.sort(key=lambda q: str(q.get("id")))
        inquiries.sort(key=lambda q: str(q.get("last_seen", "")), reverse=True)  # most recently seen first
        inquiries.sort(key=lambda q: order.get(str(q.get("priority")), 3))  # stable: priority wins
        text, used = _section(
            "Open Inquiries",
            [f"? {describe(q)}" for q in inquiries[:MAX_INQUIRIES]],  # never unvetted text verbatim
            CAPS["inquiries"],
        )
        sel.inquiries = [inquiries[i] for i in used]
        if text:
            sections.append(text)
        heading = f"## Daily Log ({date})"
        digest = _daily_digest(lay.daily_file(date), CAPS["daily"] - len(heading) - 1)
        if not replayed.get(lay.daily_file(date), True):
            digest = exitgate.text(digest)
        if digest:
            sections.append(f"{heading}\n{digest}")
            sel.daily_chars = len(digest)
    # Last, one line, only when it fits: how many candidates wait for a person (issue 36), for the
    # agent to mention; never at the cost of a record.
    from commonkeep.recall.projection import review_footer

    footer = review_footer(lay.root)
    if footer:
        sections.append(f"## Review Queue\n{footer}")
    block = HEADER
    for part in sections:
        if len(block) + 2 + len(part) <= TOTAL_BUDGET:
            block += "\n\n" + part
    # Statements are cut/neutralised in ``_line``; this also covers the scratchpad, inquiries
    # and daily log (one character for one: the budgets still hold). A lone surrogate (an id or
    # rule type a JS writer left half a pair of) becomes U+FFFD, so context.md can be written.
    from commonkeep.recall.search.fts import encodable

    sel.text = encodable(neutralize(block)) + "\n"
    records = [*sel.hard_rules, *sel.selected]
    timings["totalMs"] = round((time.perf_counter() - started) * 1000, 3)
    sel.stats = {
        "generated_at": now_iso(),
        "injectionMode": sel.mode,
        "charCount": len(sel.text),
        "selectedMemoryCount": len(records),
        "hardRuleCount": len(sel.hard_rules),
        "contestedMemoryCount": len(sel.contested),
        "inquiryCount": len(sel.inquiries),
        "dailyDigestChars": sel.daily_chars,
        "search": used_search,
        "timings": timings,
    }
    if write:
        from commonkeep.store.exitgate import rules_obj
        from commonkeep.store.jsonl import atomic_write_bytes

        lay.runtime_dir.mkdir(parents=True, exist_ok=True)
        files = {
            lay.runtime_dir / "context.md": sel.text,
            lay.runtime_dir / "selected_memory.json": dumps_pretty([rules_obj(r) for r in records] if sel.mode == "scoped" else []),
            lay.runtime_dir / "injection-stats.json": dumps_pretty(sel.stats),
        }
        for path, content in files.items():
            atomic_write_bytes(path, content.encode("utf-8"))
            sel.paths.append(path)
        from commonkeep.store.backlog import write_digest

        write_digest(lay.root)  # reports/review-digest.txt, rewritten only when the count changed
    return sel
