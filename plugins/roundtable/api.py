"""``LocalRoundtable``: a broker plus one session per role, for demos and Python hosts.

    with LocalRoundtable(agent_dir) as rt:
        rt.post("planner", "design", "Decision: GCRA locally ...")
        print(rt.digest("reviewer", "design", budget=700).text)
        result = rt.export("librarian", "design", "raw/design.md")   # ExportResult, metadata only
        print(rt.memory("librarian", "ingest", source="raw/design.md"))
        print(rt.memory("reviewer", "query", question="rate limiting decision"))

Every call goes through the same code as the CLI, the MCP tools and the contract tests (gate,
path rules, cursors untouched by export, argv vector for the backend). The broker is a real
process (``in_process=False``, the default) or a thread of this one; either way it is stopped,
by its own pid or handle, when the block ends.
"""

from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path
from typing import Any

from commonkeep_roundtable.broker import BrokerThread
from commonkeep_roundtable.client import BrokerClient, start_broker_process
from commonkeep_roundtable.digest import DEFAULT_BUDGET, DEFAULT_PER_MESSAGE, DigestResult, digest_room
from commonkeep_roundtable.export import ExportResult, export_room
from commonkeep_roundtable.memory import memory_call
from commonkeep_roundtable.paths import DEFAULT_WRITER_ROLE, MemoryConfig, default_memory_command


class LocalRoundtable:
    """A private broker under ``agent_dir`` and the sessions of the roles that use it."""

    def __init__(
        self,
        agent_dir: Path,
        *,
        memory_dir: Path | None = None,
        writer_role: str = DEFAULT_WRITER_ROLE,
        memory_command: tuple[str, ...] | None = None,
        in_process: bool = False,
    ) -> None:
        self.agent_dir = Path(agent_dir).absolute()
        self.config = MemoryConfig(
            command=memory_command or default_memory_command(),
            memory_dir=(Path(memory_dir) if memory_dir else self.agent_dir / "memory").absolute(),
            writer_role=writer_role,
        )
        self.in_process = in_process
        self.sessions: dict[str, BrokerClient] = {}
        self._thread: BrokerThread | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    # -- lifetime -----------------------------------------------------------------------------
    def start(self) -> LocalRoundtable:
        if self.in_process:
            self._thread = BrokerThread(self.agent_dir).start()
        else:
            self._proc = start_broker_process(self.agent_dir)
        return self

    def close(self) -> None:
        for client in self.sessions.values():
            client.close()
        self.sessions.clear()
        if self._thread is not None:
            self._thread.stop()
            self._thread = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def __enter__(self) -> LocalRoundtable:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what roles do ------------------------------------------------------------------------
    def session(self, role: str) -> BrokerClient:
        """The open session of ``role`` (connected and registered on first use)."""
        client = self.sessions.get(role)
        if client is None:
            client = BrokerClient.connect(role, base=self.agent_dir, start=False)
            self.sessions[role] = client
        return client

    def post(self, role: str, room: str, text: str, *, topic: str | None = None, reply_to: str | None = None) -> dict[str, Any]:
        """``role`` joins ``room`` (creating it) and posts; returns the stored message."""
        client = self.session(role)
        client.join(room, topic)
        return client.post(room, text, reply_to)

    def digest(
        self, role: str, room: str, *, budget: int = DEFAULT_BUDGET, per_message: int = DEFAULT_PER_MESSAGE, peek: bool = False
    ) -> DigestResult:
        client = self.session(role)  # no join: a digest never creates a room
        return digest_room(client, room, budget=budget, per_message=per_message, peek=peek)

    def export(self, role: str, room: str, path: str) -> ExportResult:
        """Export as ``role`` (the gate refuses anyone but the writer before connecting)."""
        return export_room(room, path, role=role, config=self.config, base=self.agent_dir)

    def memory(self, role: str, action: str, *, question: str | None = None, source: str | None = None) -> str:
        return memory_call(action, role=role, question=question, source=source, config=self.config)
