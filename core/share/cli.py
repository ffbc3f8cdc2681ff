"""``commonkeep share init|sync``: share a root between machines through a git remote."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from commonkeep.util.jsonout import print_json


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="share_command", metavar="SUBCOMMAND")
    p_init = sub.add_parser("init", help="make the root a git repository ready to merge by id (idempotent)")
    p_init.add_argument("--remote", metavar="URL", help="add this URL as the remote 'origin'")
    p_init.add_argument("--json", action="store_true", help="print the result as JSON")
    p_init.set_defaults(run=run_init)
    _common(p_init)
    p_sync = sub.add_parser("sync", help="commit, pull (merge by id), contested lines -> candidates, reindex, push (writer only)")
    p_sync.add_argument("--remote", metavar="NAME", help="the git remote (default: the branch's, then 'origin')")
    p_sync.add_argument("--no-push", action="store_true", help="merge and commit locally, do not push")
    p_sync.add_argument("--json", action="store_true", help="print the result as JSON")
    p_sync.set_defaults(run=run_sync)
    _common(p_sync)
    p_hist = sub.add_parser("purge-history", help="rewrite the git history without the text of records purged for "
                                                   "privacy (git filter-repo), push it with --force-with-lease (writer only)")
    p_hist.add_argument("--remote", metavar="NAME", help="the git remote (default: the branch's, then 'origin')")
    p_hist.add_argument("--no-push", action="store_true", help="rewrite locally, do not push")
    p_hist.add_argument("--json", action="store_true", help="print the result as JSON")
    p_hist.set_defaults(run=run_purge_history)
    _common(p_hist)
    p_adopt = sub.add_parser("adopt-history", help="move this clone onto a remote history another clone rewrote "
                                                   "with purge-history (writer only)")
    p_adopt.add_argument("--remote", metavar="NAME", help="the git remote (default: the branch's, then 'origin')")
    p_adopt.set_defaults(run=run_adopt_history)
    _common(p_adopt)
    parser.set_defaults(run=_usage(parser))


def _common(p: argparse.ArgumentParser) -> None:
    # also after the subcommand; SUPPRESS keeps a value given before it (`share --root X sync`)
    p.add_argument("--root", metavar="DIR", default=argparse.SUPPRESS, help="memory root")
    p.add_argument("--role", metavar="ROLE", default=argparse.SUPPRESS, help="acting role (default: $COMMONKEEP_ROLE)")


def _usage(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    return run


def _root(args: argparse.Namespace) -> Path:
    from commonkeep.store.root import resolve_root

    return resolve_root(explicit=getattr(args, "root", None)).path


def run_init(args: argparse.Namespace) -> int:
    from commonkeep.share.sync import init

    rep = init(_root(args), remote_url=args.remote)
    if args.json:
        print_json(rep.__dict__)
        return 0
    if rep.changed:
        print(f"shared root ready: {rep.root}" + (" (new git repository)" if rep.created_repo else ""))
        print(f"  set: {', '.join(rep.changed)}" + ("; committed" if rep.committed else ""))
    else:
        print(f"already set up for sharing: {rep.root} (nothing changed)")
    for item in rep.redacted:
        print(f"redacted in place (written by another program): {item} (audit/log.jsonl)")
    print("next: `commonkeep share sync --role <writer>` (on every other machine: clone, `commonkeep share init`, sync)")
    return 0


def run_sync(args: argparse.Namespace) -> int:
    from commonkeep.gate.writer import acting_role
    from commonkeep.share.sync import sync

    rep = sync(_root(args), role=acting_role(args.role), remote=args.remote, push=not args.no_push)
    if args.json:
        print_json(rep.as_dict())
        return 0
    if rep.local_commit:
        print(f"committed local changes: {', '.join(rep.local_commit[:8])}" + (" …" if len(rep.local_commit) > 8 else ""))
    if rep.pulled:
        print(f"merged from {rep.remote} ({(rep.remote_commit or '')[:12]}): {len(rep.added)} record(s) added, "
              f"{len(rep.updated)} updated, {len(rep.removed)} removed")
    elif rep.remote:
        print(f"nothing to pull: {rep.remote} has no branch {rep.branch} yet")
    print(f"contested candidates created: {len(rep.contested)}" + (f" ({', '.join(rep.contested)})" if rep.contested else ""))
    if rep.pushed:
        print(f"pushed to {rep.remote} {rep.branch}")
    for note in rep.notes:
        print(f"note: {note}")
    print(f"next: {rep.next_step}")
    return 0


def run_purge_history(args: argparse.Namespace) -> int:
    from commonkeep.gate.writer import acting_role
    from commonkeep.share.history import rewrite

    rep = rewrite(_root(args), role=acting_role(args.role), remote=args.remote, push=not args.no_push)
    if args.json:
        print_json(rep.__dict__)
        return 0
    if not rep.texts:
        print("the git history holds no text of a record purged for privacy: nothing to rewrite")
        return 0
    print(f"rewrote the git history: {rep.texts} statement(s) of {rep.records} purged record(s) are now [deleted] "
          "in every commit")
    if rep.pushed:
        print(f"pushed to {rep.remote} {rep.branch} (--force-with-lease)")
    else:
        print("not pushed: the remote still holds the old history (run again without --no-push)")
    for line in rep.others:
        print(line)
    return 0


def run_adopt_history(args: argparse.Namespace) -> int:
    from commonkeep.gate.writer import acting_role
    from commonkeep.share.history import adopt

    for line in adopt(_root(args), role=acting_role(args.role), remote=args.remote):
        print(line)
    print("next: `commonkeep share sync`")
    return 0
