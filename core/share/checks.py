"""``commonkeep doctor`` findings of a shared root (called from the governance doctor checks).

- ``share_scrub_owed`` (warning): an interrupted ``share sync`` left its journal: the scrub of the
  purged records it names is owed; ``commonkeep share sync`` finishes it.
- ``purged_text_in_inbox`` / ``purged_text_in_patches`` (error): a candidate or a patch op still
  holds the text of a record purged for privacy (brought by a merge, or written by hand).
- ``purged_text_in_history`` (warning): commits of the root's git history still hold the text
  of purged records; ``commonkeep share purge-history`` rewrites them.

Findings name files, ids and commits, never the text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from commonkeep.store.layout import Layout


def _finding(code: str, severity: str, message: str, **where: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "message": message, **{k: v for k, v in where.items() if v is not None}}


def share_findings(root: Path) -> list[dict[str, Any]]:
    from commonkeep.share import journal
    from commonkeep.share.settle import tombs_here, traces

    lay = Layout(root)
    found: list[dict[str, Any]] = []
    purged = tombs_here(lay).purged
    by_file: dict[str, list[tuple[str, str]]] = {}
    for file, rid, _ in traces(lay, purged):
        by_file.setdefault(file, []).append((rid, file))
    fix = "`commonkeep share sync`" if (root / ".git").is_dir() else "`commonkeep forget ID --reason privacy_sensitive --purge`"
    for file, hits in by_file.items():
        code = "purged_text_in_inbox" if file.startswith("inbox/") else "purged_text_in_patches"
        ids = sorted({rid for rid, _ in hits})
        found.append(_finding(code, "error", f"{file} still holds the text of {len(ids)} record(s) purged for privacy "
                              f"({', '.join(ids[:5])}); {fix} scrubs it", file=file))
    gitdir = root / ".git"
    if not gitdir.is_dir():
        return found
    owed = journal.load(gitdir)
    if owed is not None and owed.stage in ("merge", "settle"):
        found.append(_finding("share_scrub_owed", "warning",
                              f"a share sync was interrupted (pid {owed.pid}, {owed.started_at or '?'}, stage {owed.stage}); "
                              f"it owes the scrub of {len(owed.purged)} purged record(s): run `commonkeep share sync` "
                              "to finish it"))
    if purged:
        from commonkeep.share.history import scan

        held = scan(root).held
        if held:
            commits = sorted({c for cs in held.values() for c in cs})
            found.append(_finding("purged_text_in_history", "warning",
                                  f"the git history still holds the text of {len(held)} record(s) purged for privacy "
                                  f"({', '.join(sorted(held)[:5])}; in {len(commits)} commit(s), e.g. {commits[0]}); "
                                  "`commonkeep share purge-history` rewrites it (then every other clone adopts it)"))
    return found
