"""``commonkeep search QUERY`` and ``commonkeep reindex``.

On hosts' hot path: this module imports only argparse and json at load; the search modules load
when the command runs, numpy and the embedder only for semantic/deep searches with the extra.
Output lines follow ``memory_search`` (contract §9.4): ``- <id> [<layer>, conf <0.00>[, <ruleType>]] <statement>``,
the statement with role markers neutralised (``commonkeep.recall.projection.neutralize``; ``--json`` is raw data).
``--notes`` adds a block after them (a blank line, ``Notes (daily logs and evidence):``, then
``- <ref> [<kind>, <date>] <snippet>`` lines, redacted and terminal-safe); without it the output is
unchanged.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _root(args: argparse.Namespace) -> str:
    """The chosen root; exit 2 (creating nothing) when it is not a memory root."""
    from commonkeep.store.cli import root_of
    from commonkeep.store.root import require_root

    return str(require_root(root_of(args).path))


def run_search(args: argparse.Namespace) -> int:
    from commonkeep.errors import BadInput
    from commonkeep.recall.projection import neutralize
    from commonkeep.recall.search.hybrid import search
    from commonkeep.store.render import to_fixed2

    if not args.query.strip():
        raise BadInput("the search query is empty; nothing was searched", hint='name what to look for: commonkeep search "pytest"')
    resp = search(_root(args), args.query, args.mode, args.limit, expand=args.expand, notes=args.notes)
    if args.json:
        from commonkeep.util.jsonout import print_json

        print_json(resp.to_json())
        return 0
    if resp.mode == "auto":
        # stdout keeps memory_search's lines; what auto resolved to goes to stderr.
        print(f"commonkeep: search mode auto -> {resp.resolved} ({resp.used})", file=sys.stderr)
    if not resp.results:
        print("No memory matched.")
    for r in resp.results:
        extra = f", {r.rule_type}" if r.rule_type else ""
        print(f"- {r.id} [{r.layer}, conf {to_fixed2(r.confidence)}{extra}] {neutralize(r.statement)}")
    if resp.notes is not None:
        print_notes(resp.notes)
    return 0


def note_line(note: Any) -> str:
    """``- <ref> [<kind>, <date>] <snippet>``: one terminal-safe line, secrets redacted, role
    markers neutralised."""
    from commonkeep.recall.projection import neutralize
    from commonkeep.secrets import redact
    from commonkeep.store.render import terminal_safe

    where = f"{note.kind}, {note.date}" if note.date else note.kind
    return terminal_safe(f"- {note.ref} [{where}] {neutralize(redact(note.snippet or note.text).text)}")


def print_notes(notes: list[Any]) -> None:
    """The notes block after the records: a blank line, a heading, one line per note."""
    print()
    print("Notes (daily logs and evidence):")
    if not notes:
        print("No note matched.")
    for note in notes:
        print(note_line(note))


def run_reindex(args: argparse.Namespace) -> int:
    import time

    from commonkeep.recall.search import index, sync
    from commonkeep.util import progress

    if args.json:
        progress.set_quiet()
    root = _root(args)
    if args.recreate:
        from commonkeep.store.layout import Layout

        index.forget_readers()

        lay = Layout(root)
        for path in (lay.search_db, index.recall_db_path(lay.root)):
            for suffix in ("", "-wal", "-shm"):
                p = path.with_name(path.name + suffix)
                if p.exists():
                    p.unlink()
    started = time.perf_counter()
    report = sync.sync_root(root, full=True, embed=not args.no_embed)
    elapsed = time.perf_counter() - started
    if args.json:
        data = json.loads(sync.describe(report))
        data["seconds"] = round(elapsed, 3)
        from commonkeep.util.jsonout import print_json

        print_json(data, indent=None)
    else:
        for moved in report.moved_aside:
            print(f"moved the damaged {moved} (kept for inspection) and rebuilt it")
        print(
            f"indexed {report.total} active record(s) in {elapsed:.2f} s; vectors embedded: {report.vectors}"
        )
    return 0


def configure(parser: argparse.ArgumentParser) -> None:
    """Configure ``search`` or ``reindex`` (whichever ``parser`` is)."""
    name = parser.prog.split()[-1]
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    if name == "search":
        parser.add_argument("query", help="what to look for (any text; hyphens and quotes are fine)")
        parser.add_argument(
            "--mode",
            choices=["auto", "keyword", "semantic", "deep", "rerank", "llm"],
            default="keyword",
            help="keyword (default: FTS5 BM25, ~0.1 s per process, the hot path of hosts); "
            "auto: rerank when a semantic backend is available, else keyword (loads the embedder: "
            "~0.6 s more per process); semantic: the semantic backend; "
            "deep: RRF of both (the contract's); rerank: keyword candidates and the embedder's nearest records, scored by BM25 + cosine; "
            "llm: auto's top 20 reordered by the LLM at $COMMONKEEP_RERANK_LLM_URL (optional, off unless set: "
            "auto's results and a notice otherwise)",
        )
        parser.add_argument(
            "--expand",
            action="store_true",
            help="expand the keyword query by pseudo-relevance feedback (RM3-style; off by default: "
            "it lowered hit@5 on the LoCoMo dev split)",
        )
        parser.add_argument(
            "--notes",
            action="store_true",
            help="also search the daily logs (daily/*.md) and evidence records (memory/evidence.jsonl); "
            "their hits follow the records in a separate block (--json: \"notes\")",
        )
        parser.add_argument("--limit", type=int, default=8, help="how many results (default 8, notes too)")
        parser.set_defaults(run=run_search)
    else:
        parser.add_argument(
            "--recreate",
            action="store_true",
            help="delete the index files first (e.g. after a schema problem)",
        )
        parser.add_argument(
            "--no-embed",
            action="store_true",
            help="skip computing vectors even when the embedder is installed",
        )
        parser.set_defaults(run=run_reindex)
