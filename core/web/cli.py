"""``commonkeep serve``: the local web review app for one memory root (extra ``[web]``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from commonkeep.errors import BadInput
from commonkeep.util.extras import install_hint


def run(args: argparse.Namespace) -> int:
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise BadInput(f"commonkeep serve needs the web extra ({exc.name} is not installed)",
                       hint=install_hint("web")) from exc
    from commonkeep.gate.writer import acting_role
    from commonkeep.governance.cli import _root
    from commonkeep.web.server import prepare

    root = Path(_root(args))
    wiki = Path(args.wiki).expanduser() if args.wiki else None
    if wiki is not None and not wiki.is_dir():
        raise BadInput(f"--wiki {args.wiki}: no such folder", hint="give a `commonkeep dossier` project folder")
    running, sock = prepare(root, acting_role(args.role), host=args.host, port=args.port,
                            allow_remote=args.allow_remote, wiki=wiki)
    w = running.web.writer
    mode = f"as the writer ({w.role})" if w.can_write else f"read-only (role {w.role or 'unset'}; the writer role is {w.writer_role})"
    print(f"commonkeep serve: {root} {mode}")
    print(f"  open {running.token_url}", flush=True)
    print("  (the token in the URL is required; Ctrl-C stops the server)", flush=True)
    _warm_up_notice(running.web.queue)
    running._server.run(sockets=[sock])  # type: ignore[attr-defined]
    running.web.queue.settle(timeout=10)  # rendered/ and the search index owed after the last decisions
    return 0


def _warm_up_notice(queue: object) -> None:
    """Say that the review queue is being scored in the background, and when it is ready (pages
    work meanwhile: the inbox unscored, a candidate's page computed for it alone)."""
    import threading
    import time

    if queue.wait_ready(0.5):  # type: ignore[attr-defined]
        return
    print("  warming up: scoring the review queue in the background; pages work meanwhile", flush=True)
    t0 = time.monotonic()

    def done() -> None:
        queue.wait_ready()  # type: ignore[attr-defined]
        err = getattr(queue, "error", None)
        said = f"the review queue could not be computed: {err}" if err else f"review queue ready ({time.monotonic() - t0:.1f} s)"
        print(f"  {said}", flush=True)

    threading.Thread(target=done, daemon=True, name="ck-web-warm-up").start()


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; others need --allow-remote)")
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host (the token is then the only lock)")
    parser.add_argument("--wiki", metavar="DIR", help="a wiki project folder to show on the Wiki page")
    parser.set_defaults(run=run)
