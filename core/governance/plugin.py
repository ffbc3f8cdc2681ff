"""Governance's doctor checks (a default plugin, hook ``commonkeep_doctor_checks``).

Codes (``contracts/ompkeep-store.md`` §4.11 where the contract names them):

- ``secret_like_content_detected`` (error): a store file holds text the secret scanner would
  redact — written by something that bypassed commonkeep (OMP, a hand edit). Names the file, the
  line and the kinds, never the value; ``commonkeep forget ID --purge`` or an edit removes it.
- ``active_record_redacted_evidence`` (warning): an active record cites redacted or deleted evidence.
- ``duplicate_normalized_keys`` (info): active records sharing a ``normalized_key``.
- ``writer_lock_stale`` (info): the writer lock names a process that is gone (recovered on next use).
- ``review_pending`` (info): candidates waiting and proposed patches not applied yet.
- ``purged_text_in_inbox``, ``purged_text_in_patches``, ``share_scrub_owed``,
  ``purged_text_in_history``: see :mod:`commonkeep.share.checks`.
- ``unexplained_record_lines`` (warning): record lines no applied patch explains (``commonkeep audit``).
- ``apply_unfinished`` (warning): an interrupted apply's journal is waiting to be finished.
- ``forged_stamp`` (error): an inbox line claims a stamp the stamp journal does not bind to it;
  ``ticked_op`` (error): an op of a waiting patch was marked selected by hand; ``edited_op`` (error):
  an op's ``edited`` block no person made, or a record its candidate does not make; ``stamp_journal``
  (error): a journal line that does not verify, or a key that is not private
  (:mod:`commonkeep.patches.stamp_audit`, also in ``commonkeep audit``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from commonkeep.hookspecs import hookimpl

SCANNED_DIRS = ("memory", "inbox", "patches", "daily", "rendered")


def _finding(code: str, severity: str, message: str, **where: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, **{k: v for k, v in where.items() if v is not None}}


def _secret_findings(root: Path) -> list[dict[str, Any]]:
    from commonkeep.secrets import summarize
    from commonkeep.secrets.scan import scan_file
    from commonkeep.store import exitgate

    out = []
    paths = [p for rel in SCANNED_DIRS if (root / rel).is_dir() for p in sorted((root / rel).rglob("*"))]
    paths += [p for p in (root / "scratchpad.md",) if p.is_file()]
    outside = {p.resolve() for p in exitgate.outside_files(root)}
    for path in paths:
        if not path.is_file() or path.name.startswith(".") or path.suffix not in (".jsonl", ".json", ".md"):
            continue
        try:
            found = list(scan_file(path))
        except OSError:
            continue
        for n, kinds in found:
            if kinds:
                where = path.relative_to(root).as_posix()
                if path.resolve() in outside:  # a file other programs write: the exit gate's
                    fix = (f"written by {exitgate.writer_of(where)}, not through commonkeep; commonkeep redacts it "
                           "before any copy, commit or index (share sync, reindex), and `commonkeep doctor --redact` "
                           "does it now (an audit line in audit/log.jsonl)")
                else:
                    fix = ("it was not written through commonkeep. Remove it: edit the line, or `commonkeep forget ID "
                           "--purge` for a record")
                out.append(_finding("secret_like_content_detected", "error",
                                    f"{where}:{n}: looks like a secret ({summarize(kinds)}); {fix}", file=where, line=n))
    return out


def _unfinished_applies(lay: Any) -> list[dict[str, Any]]:
    """An apply that was cut off left its journal (``runtime/journal/``): the store is half-written
    until the next writer finishes it; say so, and how (read only: nothing is finished here)."""
    from commonkeep.patches.apply_journal import SUFFIX, journal_dir

    folder = journal_dir(lay)
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.iterdir()):
        if path.name.endswith(SUFFIX) and not path.name.startswith("."):
            patch_id = path.name[: -len(SUFFIX)]
            out.append(_finding("apply_unfinished", "warning",
                                f"the apply of patch {patch_id} was interrupted ({lay.rel(path)}): some files hold its "
                                f"changes and others not yet; `commonkeep apply {patch_id}` finishes it (so does the "
                                "next curate, apply, forget or share sync)", file=lay.rel(path)))
    return out


@hookimpl
def commonkeep_doctor_checks(root: str) -> list[dict[str, Any]]:
    from commonkeep.patches.curate import waiting_in
    from commonkeep.patches.lock import pid_alive, read_lock_info
    from commonkeep.store.core import Store

    store = Store(root, warn=False)
    lay = store.layout
    if not lay.memory_dir.is_dir():
        return []
    found = _secret_findings(lay.root)
    from commonkeep.share.checks import share_findings

    found += share_findings(lay.root)  # purged text in the inbox, patches, git history; a sync's owed scrub
    records = store.records()
    bad_ev = {str(e.get("id")) for e in store.rows(lay.evidence) if e.get("redaction_status") in ("redacted", "deleted")}
    keys: dict[str, list[str]] = {}
    for r in records:
        cited = [e.get("ref") for e in r.get("evidence") or [] if e.get("ref") in bad_ev]
        if cited:
            found.append(_finding("active_record_redacted_evidence", "warning",
                                  f"{r['id']} cites redacted or deleted evidence {', '.join(map(str, cited))}; review it"))
        if r.get("normalized_key"):
            keys.setdefault(str(r["normalized_key"]), []).append(str(r["id"]))
    for key, ids in keys.items():
        if len(ids) > 1:
            found.append(_finding("duplicate_normalized_keys", "info", f"{len(ids)} active records share {key}: {', '.join(ids[:5])}"))
    info = read_lock_info(lay.lock_dir / "writer.lock")
    if info is not None and not pid_alive(info.pid):
        found.append(_finding("writer_lock_stale", "info",
                              f"the writer lock names pid {info.pid} ({info.role}, since {info.since}), which is gone; the next writer recovers it"))
    statuses = {str(c.get("id")): c.get("status") for c in store.candidates()}
    new = sum(1 for s in statuses.values() if s == "new")
    waiting = 0  # patches with ops still to apply: proposed, or partially applied with unselected ops
    for path in lay.patches_dir.glob("*.json") if lay.patches_dir.is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        waiting += isinstance(doc, dict) and bool(waiting_in(doc, statuses))  # stale ops (candidate decided) do not wait
    from commonkeep.patches.audit import audit

    found_audit = audit(lay.root)
    unexplained = found_audit.problems
    codes = {"forged": "forged_stamp", "ticked": "ticked_op", "edited": "edited_op", "journal": "stamp_journal",
             "apply": "forged_apply_journal"}
    for kind, code in codes.items():  # one finding a kind, the first five named (``commonkeep audit`` lists them all)
        some = [s for s in found_audit.stamps if s.kind == kind]
        if some:
            more = f"; and {len(some) - 5} more" if len(some) > 5 else ""
            found.append(_finding(code, "error", f"{len(some)} stamp problem(s) no stamp journal explains: "
                                  + "; ".join(s.sentence() for s in some[:5]) + more + "; see `commonkeep audit`",
                                  file=some[0].file, line=some[0].line or None))
    if unexplained:
        first = unexplained[0]
        found.append(_finding("unexplained_record_lines", "warning",
                              f"{len(unexplained)} record line(s) no patch explains (first {first.file}:{first.line} {first.record_id}: "
                              f"{first.why}); they were written around the gate. See `commonkeep audit`, remove them with "
                              "`commonkeep forget ID`", file=first.file, line=first.line))
    found += _unfinished_applies(lay)
    if new or waiting:
        from commonkeep.store.backlog import backlog

        queue = backlog(lay.root)
        oldest = f" (oldest {queue.age()})" if new and queue.age() else ""
        found.append(_finding("review_pending", "info",
                              f"{new} candidate(s) wait for curation or review{oldest}; {waiting} patch(es) hold ops not applied yet "
                              "(`commonkeep review`, `commonkeep patches`)"))
    from commonkeep.store.backlog import write_digest

    write_digest(lay.root)  # reports/review-digest.txt follows the count (never created for an empty queue)
    return found
