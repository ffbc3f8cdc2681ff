"""``commonkeep roundtable ...`` and ``commonkeep memory ...``: the tools for scripts and operators.

The role comes from ``--role`` or ``$COMMONKEEP_ROLE``; the broker is found under the agent dir
(``--agent-dir`` or the contract's variables). Exit codes are the CLI's: 0 ok, 1 the backend or
broker failed, 2 bad input, 3 refused by the role gate.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from commonkeep.errors import BadInput
from commonkeep.util.jsonout import print_json
from commonkeep_roundtable import broker as broker_module
from commonkeep_roundtable.client import BrokerClient
from commonkeep_roundtable.digest import DEFAULT_BUDGET, DEFAULT_PER_MESSAGE, digest_room
from commonkeep_roundtable.export import export_room
from commonkeep_roundtable.jsunits import utf8_text
from commonkeep_roundtable.memory import ACTIONS, memory_call
from commonkeep_roundtable.paths import agent_dir


def _role(args: argparse.Namespace) -> str | None:
    role = getattr(args, "role", None) or os.environ.get("COMMONKEEP_ROLE", "")
    return role.strip() or None


def _base(args: argparse.Namespace) -> Path:
    given = getattr(args, "agent_dir", None)
    return Path(given).expanduser().absolute() if given else agent_dir()


def _sub_common(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a --role given before the subcommand must not be reset by this parser's default
    parser.add_argument("--role", default=argparse.SUPPRESS, help="acting role (default: $COMMONKEEP_ROLE)")
    parser.add_argument("--agent-dir", metavar="DIR", help="agent dir holding roundtable/broker.sock")


def _client(args: argparse.Namespace, start: bool = True) -> BrokerClient:
    role = _role(args)
    return BrokerClient.connect(role or f"session-{os.getpid()}", base=_base(args), start=start)


def _say(text: str) -> None:
    """Print room text. To a terminal, other agents' words go through ``terminal_safe`` line by
    line (an ESC or bidi character is shown, not obeyed); to a pipe (an agent reading the output)
    they stay exact."""
    if sys.stdout.isatty():
        from commonkeep.store.render import terminal_safe

        text = "\n".join(terminal_safe(line) for line in text.split("\n"))
    print(utf8_text(text))  # a lone surrogate from the wire has no UTF-8 form: U+FFFD, as Node


def _print(details: Any, text: str, as_json: bool) -> None:
    if as_json:
        print_json(details, indent=None, ensure_ascii=True)
    else:
        _say(text)


def _run_export(args: argparse.Namespace) -> int:
    result = export_room(args.room, args.path, role=_role(args), base=_base(args))
    _print(result.details, result.text, args.json)
    return 0


def _run_post(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise BadInput(f"nothing to post to #{args.room}: the message is empty", hint="give the message text as TEXT")
    with _client(args) as client:
        client.join(args.room, args.topic)
        message = client.post(args.room, args.text, args.reply_to)
    print(f"Posted to #{args.room} as {client.name}#{message['seq']}.")
    return 0


def _run_digest(args: argparse.Namespace) -> int:
    with _client(args) as client:  # no join: a digest never creates a room (Room "x" does not exist)
        result = digest_room(client, args.room, budget=args.budget, per_message=args.per_message, peek=args.peek)
    _print(result.details, result.text, args.json)
    return 0


def _run_fetch(args: argparse.Namespace) -> int:
    with _client(args, start=False) as client:
        after = client.cursor(args.room) if args.after_seq is None else args.after_seq
        reply = client.fetch(args.room, after_seq=after, limit=args.limit)
    for message in reply["messages"]:
        _say(f"[{message['from']['name']}#{message['seq']}] {message['text']}")
    return 0


def configure_roundtable(parser: argparse.ArgumentParser) -> None:
    """``commonkeep roundtable broker|export|post|digest|fetch``."""
    parser.set_defaults(
        root_unused="rooms live in the broker and exports go to the wiki memory dir "
        "($ORPHUS_MEMORY_DIR, else <agentDir>/memory)"
    )
    sub = parser.add_subparsers(dest="roundtable_command", metavar="ACTION", required=True)
    p = sub.add_parser("broker", help="run the local broker in the foreground (exits once idle)")
    broker_module.configure(p)
    p.set_defaults(run=broker_module.run_from_args)
    p = sub.add_parser("export", help="export ROOM's retained transcript to PATH under the memory dir's raw/ (writer only)")
    _sub_common(p)
    p.add_argument("room", metavar="ROOM")
    p.add_argument("path", metavar="PATH", help="relative, strictly under raw/, e.g. raw/design.md")
    p.add_argument("--json", action="store_true", help="print the metadata as JSON")
    p.set_defaults(run=_run_export)
    p = sub.add_parser("post", help="join ROOM (creating it) and post TEXT; starts a broker if none runs")
    _sub_common(p)
    p.add_argument("room", metavar="ROOM")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--topic", help="room topic, used only when the room is created")
    p.add_argument("--reply-to", metavar="ID", help="id of the message replied to")
    p.set_defaults(run=_run_post)
    p = sub.add_parser("digest", help="bounded digest of this role's unread messages (advances the cursor)")
    _sub_common(p)
    p.add_argument("room", metavar="ROOM")
    p.add_argument("--budget", type=int, default=DEFAULT_BUDGET, help=f"total characters (default {DEFAULT_BUDGET}, floor 200)")
    p.add_argument("--per-message", type=int, default=DEFAULT_PER_MESSAGE, help=f"characters per message (default {DEFAULT_PER_MESSAGE})")
    p.add_argument("--peek", action="store_true", help="leave the cursor where it is")
    p.add_argument("--json", action="store_true", help="print the details as JSON")
    p.set_defaults(run=_run_digest)
    p = sub.add_parser("fetch", help="raw messages after a seq (default: this role's cursor); cursor unchanged")
    _sub_common(p)
    p.add_argument("room", metavar="ROOM")
    p.add_argument("--after-seq", type=int, default=None)
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(run=_run_fetch)


def _run_memory(args: argparse.Namespace) -> int:
    from commonkeep_roundtable.paths import resolve_memory_config

    config = resolve_memory_config()
    question = " ".join(args.question) if getattr(args, "question", None) else None
    text = memory_call(args.memory_action, role=_role(args), question=question, source=getattr(args, "source", None),
                       config=config)
    found_nothing = args.memory_action == "query" and "\ncandidates (0):" in f"\n{text}" and "\nevidence (0," in f"\n{text}"
    if getattr(args, "json", False):
        from commonkeep.util.jsonout import print_json

        print_json({"action": args.memory_action, "question": question, "memory_dir": str(config.memory_dir),
                    "backend": list(config.command), "found": not found_nothing, "output": text})
        return 0
    sys.stdout.write(text + "\n")
    if found_nothing:  # say where we looked (stderr: stdout is the backend's, in Dossier's format)
        print(f"memory query: nothing found in the wiki at {config.memory_dir} (backend: {' '.join(config.command)})",
              file=sys.stderr)
    return 0


def configure_memory(parser: argparse.ArgumentParser) -> None:
    """``commonkeep memory query|doctor|ingest|gardener``: ``commonkeep dossier`` as a roundtable
    room's agent reaches it (Orphus' memory tool): the same four actions, run through the configured
    backend (``$ORPHUS_MEMORY_COMMAND``, default ``python -m commonkeep.dossier``) in the rooms'
    memory dir (``$ORPHUS_MEMORY_DIR``, else ``<agentDir>/memory``), after Orphus' role gate."""
    parser.set_defaults(root_unused="the wiki tool uses the memory dir ($ORPHUS_MEMORY_DIR, else <agentDir>/memory)")
    sub = parser.add_subparsers(dest="memory_action", metavar="ACTION", required=True)
    helps = {
        "query": "ask the wiki (anyone)",
        "doctor": "check the backend (anyone)",
        "ingest": "compile a raw/ file into the wiki (writer only)",
        "gardener": "consolidate and lint the wiki (writer only)",
    }
    for action in ACTIONS:
        p = sub.add_parser(action, help=helps[action])
        p.add_argument("--role", default=argparse.SUPPRESS, help="acting role (default: $COMMONKEEP_ROLE)")
        if action == "query":
            p.add_argument("question", nargs="+", metavar="QUESTION")
            p.add_argument("--json", action="store_true", help="print the answer, the memory dir and the backend as JSON")
        elif action == "ingest":
            p.add_argument("source", metavar="SOURCE", help="e.g. raw/design.md, relative to the memory dir")
        p.set_defaults(run=_run_memory)
