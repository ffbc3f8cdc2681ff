"""Id formats of the OmpKeep store (contracts/ompkeep-store.md §5)."""

from __future__ import annotations

import os
from datetime import datetime
from hashlib import sha256
from typing import Any

from commonkeep.util.timeutil import iso

_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _suffix(n: int) -> str:
    """``n`` uniform base36 characters from one ``os.urandom`` call (``secrets.choice`` per
    character cost a system call each, on the hot capture path)."""
    # the low n base36 digits of 8n random bits (as ``secrets.randbits``, without importing it for
    # every process): bias below 36**n / 2**(8n) (< 1e-5)
    value = int.from_bytes(os.urandom(n), "big")
    out = []
    for _ in range(n):
        value, digit = divmod(value, 36)
        out.append(_B36[digit])
    return "".join(out)


def _stamp14(when: datetime) -> str:
    """``YYYYMMDDHHMMSS`` of ``when`` in UTC."""
    stamp = iso(when)
    return stamp[0:4] + stamp[5:7] + stamp[8:10] + stamp[11:13] + stamp[14:16] + stamp[17:19]


def candidate_id(when: datetime) -> str:
    """``cap_<YYYYMMDDHHMMSS>_<suffix>``.

    Upstream uses 4 base36 chars, which collide often at commonkeep's write rates (10,000
    candidates in one second give ~30 collisions), and a record id is derived from the
    candidate id. commonkeep uses 8 chars; the shape (and the ``mem_`` regex of §9.2) holds.
    """
    return f"cap_{_stamp14(when)}_{_suffix(8)}"


def memory_id_for(candidate_id: str) -> str:
    """Record id derived from its candidate: ``cap_`` becomes ``mem_``."""
    return "mem_" + candidate_id[4:] if candidate_id.startswith("cap_") else "mem_" + candidate_id


def record_id_of(cand: dict[str, Any]) -> str:
    """The id the record of candidate ``cand`` gets: ``memory_id_for`` its id, or, once an undo put it
    back in the queue, the fresh id the undo gave it (``record_id``: ``<memory id>_u<n>``; the
    record of the undone decision keeps the plain one)."""
    given = cand.get("record_id")
    cid = str(cand.get("id"))
    return given if isinstance(given, str) and is_record_of(cid, given) else memory_id_for(cid)


def is_record_of(candidate_id: str, record_id: str) -> bool:
    """Whether ``record_id`` is (a generation of) the record candidate ``candidate_id`` becomes."""
    base = memory_id_for(candidate_id)
    if record_id == base:
        return True
    n = record_id[len(base) + 2:] if record_id.startswith(base + "_u") else ""
    return n.isdigit()


def patch_id(when: datetime) -> str:
    """``patch_<YYYYMMDDHHMM>_ck<6 base36>``.

    OMP names its patches ``patch_<minute>_001`` and a second curation in the same minute
    overwrites the first (§5); our suffix can never equal OMP's numeric one.
    """
    minute = _stamp14(when)[:12]
    return f"patch_{minute}_ck{_suffix(6)}"


def h(text: str, n: int) -> str:
    """First ``n`` lowercase hex chars of sha256 over UTF-8 (lone surrogates as U+FFFD, §14.11)."""
    return sha256(text.encode("utf-8", "replace")).hexdigest()[:n]


def tombstone_id(record_id: str, deleted_at: str) -> str:
    return f"tomb_{record_id}_{h(record_id + chr(10) + deleted_at, 10)}"


def reinforcement_id(memory_id: str, outcome: str, timestamp: str, notes: str | None) -> str:
    return f"rein_{memory_id}_{h(chr(10).join([memory_id, outcome, timestamp, notes or '']), 10)}"


def inquiry_id(question: str, profile_id: str | None) -> str:
    norm = " ".join(question.lower().split()).rstrip("?!.")
    return f"inq_{h(norm + chr(10) + (profile_id or ''), 12)}"


def handoff_id(profile: str, now_iso: str) -> str:
    return f"handoff_{h(profile + chr(10) + now_iso, 12)}"


def intent_id(goal: str, now_iso: str) -> str:
    return f"intent_{h(goal + chr(10) + now_iso, 12)}"


def evidence_id(
    profile_id: str,
    thread: str | None,
    source_kind: str,
    source_ref: str | None,
    excerpt_or_summary: str,
) -> str:
    """Content address of an evidence record (§4.4)."""
    norm = " ".join(excerpt_or_summary.split())
    return h("\n".join([profile_id, thread or "no-thread", source_kind, source_ref or "", norm]), 32)
