"""``rendered/MEMORY.md`` and ``rendered/projects/<slug>.md``, byte for byte as upstream
(contracts/ompkeep-store.md §7)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from contextvars import ContextVar
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, NamedTuple

from commonkeep.store.layout import Layout, slug
from commonkeep.store.projection_cache import ProjectionCache, digest

HEADER = ("# Long-Term Memory", "", "> Generated from canonical JSONL. Do not edit directly.", "")


# C0/C1 controls (ESC, CR, BEL …), line/paragraph separators and the bidi/zero-width/invisible
# characters that can hide or reorder text (the same set ``jsonout`` escapes, plus C0).
_UNSAFE_FOR_TERMINAL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


# a surrogate left alone in a str (JSON can carry "\\ud800"); Node writes it as U+FFFD, EF BF BD
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def terminal_safe(text: str) -> str:
    """``text`` for one line of a person's terminal: controls and hidden characters shown as escapes
    (``\\x1b``, ``\\u202e``), so stored text can neither move the cursor nor disguise itself.
    Only for display; the files keep their bytes."""
    return _UNSAFE_FOR_TERMINAL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                    else f"\\u{ord(m.group()):04x}", text)


def to_fixed2(x: float) -> str:
    """JS ``x.toFixed(2)``: the exact binary value, ties rounded up (0.125 -> ``0.13``; §7.4)."""
    return str(Decimal(x).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def render_record(r: dict[str, Any]) -> str:
    """One record block; empty elements are dropped so the block has no blank lines."""
    scope = r.get("scope") or {}
    scope_text = f"{scope.get('type')}:{scope['project']}" if scope.get("project") else f"{scope.get('type')}"
    review = r.get("review") or {}
    lines = [
        f"### {r['id']}",
        f"**Status**: {r['status']}",
        f"**Confidence**: {to_fixed2(r['confidence'])}",
        f"**Stability**: {r['stability']}",
        f"**Tags**: {' '.join('#' + t for t in r.get('tags') or [])}",
        f"**Scope**: {scope_text}",
        f"**Next review**: {review.get('next_review')}",
        r["statement"],
        "**Evidence**",
        *(f"- {e.get('ref')} — {e.get('note')}" for e in r.get("evidence") or []),
        "**Change condition**",
        str(review.get("change_condition", "")),
    ]
    tail = []
    if r.get("supersedes"):
        tail.append(f"**Supersedes**: {', '.join(r['supersedes'])}")
    if r.get("superseded_by"):
        tail.append(f"**Superseded by**: {', '.join(r['superseded_by'])}")
    if r.get("vault_ref"):
        tail.append(f"**Vault ref**: {r['vault_ref']}")
    block = "\n".join(line for line in lines if line)
    return block + ("\n\n" + "\n".join(tail) if tail else "")


def render_memory_markdown(records: Iterable[dict[str, Any]]) -> str:
    """The whole MEMORY.md for records in file order (only ``status == "deleted"`` is left out)."""
    return _page([_Shown(render_record(r) if r.get("status") != "deleted" else "", r.get("layer"), r.get("status"), None)
                  for r in records])


class _Shown(NamedTuple):
    """A record as the projection shows it: its block, layer, status and project name (or None)."""

    block: str
    layer: Any
    status: Any
    project: Any


_SHOWN: dict[bytes, _Shown] = {}  # a record's JSON -> how it is shown, redacted (a server renders after each decision)
_SHOWN_MAX = 200_000


_CACHE: ContextVar[ProjectionCache | None] = ContextVar("commonkeep_projection_cache", default=None)  # set by render_all


def _shown(r: dict[str, Any], cache: ProjectionCache | None = None) -> _Shown:
    """``r`` redacted (records written through patches are already; this covers hand edits) and
    rendered, remembered by its JSON so an unchanged record is not redacted and rendered again
    (in this process, and across processes through ``cache``, by default the one ``render_all``
    set: ``projection_cache``; what a record shows depends on its JSON alone, so any cache fits)."""
    cache = cache if cache is not None else _CACHE.get()
    try:
        import orjson

        key: bytes | None = orjson.dumps(r)
    except (ImportError, TypeError):  # orjson.JSONEncodeError is a TypeError (an int past 64 bits)
        key = None
    hit = _SHOWN.get(key) if key is not None else None
    d = digest(key) if cache is not None and key is not None else ""  # the cache's key, worked out once
    if hit is None and d:
        kept = cache.get(d) if cache is not None else None
        hit = _Shown(*kept) if kept is not None else None
    if hit is not None:
        if cache is not None and d:
            cache.put(d, hit)
        return hit
    from commonkeep.secrets import redact_obj

    red = redact_obj(r)
    scope = red.get("scope") or {}
    project = scope.get("project") if scope.get("type") == "project" and scope.get("project") else None
    out = _Shown(render_record(red) if red.get("status") != "deleted" else "", red.get("layer"), red.get("status"), project)
    if key is not None:
        if cache is not None and d:
            cache.put(d, out)
        if len(_SHOWN) >= _SHOWN_MAX:
            _SHOWN.clear()
        _SHOWN[key] = out
    return out


def _page(shown: list[_Shown]) -> str:
    kept = [s for s in shown if s.status != "deleted"]
    l1 = [s.block for s in kept if s.layer == "L1"]
    l2 = [s.block for s in kept if s.layer == "L2"]
    parts = [
        *HEADER,
        "## L1 — Identity",
        "",
        "\n\n".join(l1) if l1 else "_No L1 records._",
        "",
        "## L2 — Playbooks",
        "",
        "\n\n".join(l2) if l2 else "_No L2 records._",
        "",
    ]
    return "\n".join(parts)


def _synced(path: Path) -> None:
    """A page kept as it is made durable with its name: a splice writes MEMORY.md without fsync
    (``rendered_index`` module doc), and the index ``render_all`` leaves vouches for it across a
    crash. Cheap when the kernel has written it back already."""
    from commonkeep.store.jsonl import fsync_dir

    if path.is_symlink():
        return  # not a page a splice starts from (``rendered_index._page_stamp``)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path.parent)


def render_all(layout: Layout, records_by_file: dict[Path, list[dict[str, Any]]] | None = None) -> list[Path]:
    """Re-render MEMORY.md and every project projection; returns the files written.

    Files whose bytes would not change are left untouched (no churn for watchers). When the
    record files were read whole and plainly clean (or, with ``records_by_file``, their lines are
    those records, id by id), it leaves the index ``render_splice.render_changed`` splices the
    next apply's pages from (``runtime/rendered-index.bin``).
    """
    cache = ProjectionCache(layout)  # how each record is shown, kept across processes (``_shown``)
    _CACHE.set(cache)
    from commonkeep.store import rendered_index, rendered_source
    from commonkeep.store.jsonl import atomic_write_bytes

    rendered_index.forget(layout)  # the pages are about to change: the old index vouches for nothing
    if records_by_file is None:
        records_by_file, source = rendered_source.read_source(layout)  # lines read before in this process: not parsed again
        if records_by_file is None:
            from commonkeep.store.core import Store

            records_by_file = Store(layout.root).records_by_file()
    else:
        source = rendered_source.vouch(layout, records_by_file)
    files = layout.canonical_files()
    ordered = [_shown(r) for path in files for r in records_by_file.get(path, [])]
    outputs: dict[Path, str] = {layout.rendered_memory: _page(ordered)}
    # As upstream's renderMemoryToDisk: group by the project *name* in first-seen order, skip project
    # scope without a name, and write one page per name, so when two names share a slug ("Foo Bar",
    # "foo-bar") the later name's page wins. A project file with no valid records gets no page.
    projects: dict[str, list[_Shown]] = {}
    for r in ordered:
        if r.project is not None:
            projects.setdefault(str(r.project), []).append(r)
    for name, recs in projects.items():
        outputs[layout.rendered_projects_dir / f"{slug(name)}.md"] = _page(recs)
    written = []
    for path, text in outputs.items():
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: written as U+FFFD, as Node does
            data = _LONE_SURROGATE.sub("\ufffd", text).encode("utf-8")
        try:  # a page of another size differs: not read to be compared
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                if path == layout.rendered_memory:
                    _synced(path)  # a splice may have left it unsynced: the index written below says it is not
                continue
        except FileNotFoundError:
            pass
        atomic_write_bytes(path, data)
        written.append(path)
    cache.save()
    if source is not None:
        rendered_source.keep(layout, source, files, ordered, list(outputs))
    return written
