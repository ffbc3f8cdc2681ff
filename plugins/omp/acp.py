"""Drive ``omp acp`` from Python: plain JSON-RPC 2.0 over stdio, no SDK (contracts/omp-host.md §6, §10).

:class:`AcpClient` spawns the agent, sends requests and waits for their answers with a timeout,
collects ``session/update`` notifications, and answers the agent's own requests (permission asks
are cancelled, file-system and terminal calls refused: this client advertises no capabilities).
:func:`dispatch` is the one-call path omp-suite and the tests use: attach the handoff
(``commonkeep_hermes.handoff.attach_handoff``: the shared root and ``OMPKEEP_HANDOFF`` in the env,
and/or a first prompt block), start ``omp acp``, ``initialize``, ``session/new``, send the task,
return the session id and stop reason. :func:`run_session` does the same without a handoff.

Every failure raises :class:`AcpError` naming the method, the agent's error and the tail of its
stderr. ``omp acp`` exits when stdin closes, after running its ``session_shutdown`` handlers.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from commonkeep.errors import CommonkeepError

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 60.0
CLIENT_INFO = {"name": "commonkeep", "version": "0.1.0"}


def find_omp(env: Mapping[str, str] | None = None) -> str | None:
    """The ``omp`` executable: ``$COMMONKEEP_OMP``, else ``omp`` on PATH, else the test-host cache
    (``$COMMONKEEP_HOST_CACHE`` or ``~/.cache/commonkeep-hosts``, ``omp/node_modules/.bin/omp``)."""
    env = os.environ if env is None else env
    explicit = env.get("COMMONKEEP_OMP")
    if explicit:
        return explicit
    found = shutil.which("omp", path=env.get("PATH"))
    if found:
        return found
    cache = env.get("COMMONKEEP_HOST_CACHE")
    base = Path(cache).expanduser() if cache else Path(env.get("HOME") or Path.home()) / ".cache" / "commonkeep-hosts"
    cached = base / "omp" / "node_modules" / ".bin" / "omp"
    return str(cached) if cached.exists() else None


class AcpError(CommonkeepError):
    """``omp acp`` could not be started, answered with an error, timed out or exited early."""

    def __init__(self, message: str, *, hint: str | None = None, code: int | None = None, data: Any = None) -> None:
        super().__init__(message, hint=hint)
        self.code = code
        self.data = data


def _text_blocks(prompt: str | Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if isinstance(prompt, str):
        return [{"type": "text", "text": prompt}]
    return [dict(block) for block in prompt]


class AcpClient:
    """One ``omp acp`` child process and its JSON-RPC conversation.

    Use as a context manager; :meth:`close` closes stdin (so ``session_shutdown`` handlers run)
    and waits for the exit, killing the process only if it does not stop in time.
    """

    def __init__(
        self,
        cmd: Sequence[str] = ("omp", "acp"),
        *,
        env: Mapping[str, str] | None = None,
        cwd: Path | str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.cmd = [str(part) for part in cmd]
        self.env = dict(os.environ if env is None else env)
        self.cwd = str(Path(cwd).resolve()) if cwd is not None else os.getcwd()
        self.timeout = timeout
        self.notifications: list[dict[str, Any]] = []
        self.agent_requests: list[dict[str, Any]] = []
        self._stderr: collections.deque[str] = collections.deque(maxlen=200)
        self._responses: dict[int, dict[str, Any]] = {}
        self._cond = threading.Condition()
        self._write_lock = threading.Lock()
        self._next_id = 0
        self._eof = False
        self._proc: subprocess.Popen[str] | None = None
        self._threads: list[threading.Thread] = []

    # -- process ---------------------------------------------------------------------------

    def start(self) -> AcpClient:
        """Spawn the agent process (idempotent)."""
        if self._proc is not None:
            return self
        try:
            self._proc = subprocess.Popen(
                self.cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                bufsize=1,
                env=self.env,
                cwd=self.cwd,
            )
        except OSError as exc:
            raise AcpError(
                f"could not start {self.cmd[0]!r}: {exc}",
                hint="install OMP (npm @oh-my-pi/pi-coding-agent with bun) or pass the omp path",
            ) from exc
        for target in (self._read_stdout, self._read_stderr):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __enter__(self) -> AcpClient:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def stderr_tail(self, lines: int = 40) -> str:
        """The last lines the agent wrote to stderr (its diagnostics and extensions' console output)."""
        return "\n".join(list(self._stderr)[-lines:])

    def close(self, timeout: float = 30.0) -> int | None:
        """Close stdin, wait for the exit (``session_shutdown`` runs first); returns the exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.stdin and not proc.stdin.closed:
            try:
                with self._write_lock:
                    proc.stdin.close()
            except OSError:
                pass
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait(timeout=10)
        for thread in self._threads:
            thread.join(timeout=5)
        return code

    # -- reading ---------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                self._stderr.append(f"[non-JSON on stdout] {line[:500]}")
                continue
            if not isinstance(msg, dict):
                continue
            if "method" in msg and "id" in msg:
                self._answer_agent_request(msg)
            elif "method" in msg:
                with self._cond:
                    self.notifications.append(msg)
                    self._cond.notify_all()
            elif "id" in msg:
                with self._cond:
                    self._responses[msg["id"]] = msg
                    self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    def _answer_agent_request(self, msg: dict[str, Any]) -> None:
        self.agent_requests.append(msg)
        if msg["method"] == "session/request_permission":
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"], "result": {"outcome": {"outcome": "cancelled"}}}
        else:
            reply = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": f"commonkeep ACP client does not support {msg['method']}"},
            }
        with contextlib.suppress(AcpError):  # the agent exited; the reader will see EOF
            self._send(reply)

    # -- writing ---------------------------------------------------------------------------

    def _send(self, msg: Mapping[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise AcpError("omp acp is not running; call start() first")
        try:
            with self._write_lock:
                proc.stdin.write(json.dumps(msg, ensure_ascii=False) + "\n")
                proc.stdin.flush()
        except (OSError, ValueError) as exc:
            raise AcpError(
                f"omp acp closed its input ({exc}); exit code {proc.poll()}",
                hint=f"agent stderr:\n{self.stderr_tail()}",
            ) from exc

    def notify(self, method: str, params: Mapping[str, Any]) -> None:
        """Send a JSON-RPC notification (no answer expected), e.g. ``session/cancel``."""
        self._send({"jsonrpc": "2.0", "method": method, "params": dict(params)})

    def request(self, method: str, params: Mapping[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Send a request and wait for its result; raises :class:`AcpError` on error, timeout or exit."""
        self.start()
        with self._cond:
            self._next_id += 1
            req_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": req_id, "method": method, "params": dict(params)})
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            while req_id not in self._responses:
                left = deadline - time.monotonic()
                if self._eof:
                    code = self._proc.poll() if self._proc else None
                    raise AcpError(
                        f"omp acp exited (code {code}) before answering {method}",
                        hint=f"agent stderr:\n{self.stderr_tail()}",
                    )
                if left <= 0:
                    raise AcpError(
                        f"omp acp did not answer {method} within {limit:g} s",
                        hint=f"agent stderr:\n{self.stderr_tail()}",
                    )
                self._cond.wait(timeout=min(left, 1.0))
            msg = self._responses.pop(req_id)
        if "error" in msg:
            err: dict[str, Any] = msg["error"] if isinstance(msg["error"], dict) else {"message": str(msg["error"])}
            code = err.get("code")
            data = err.get("data")
            detail = data.get("details") if isinstance(data, dict) else data
            raise AcpError(
                f"omp acp {method} failed: {err.get('message')} (code {err.get('code')})"
                + (f": {detail}" if detail else ""),
                code=code if isinstance(code, int) else None,
                data=data,
            )
        result = msg.get("result")
        return result if isinstance(result, dict) else {"value": result}

    # -- ACP methods -----------------------------------------------------------------------

    def initialize(self, timeout: float | None = None) -> dict[str, Any]:
        return self.request(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": {}, "clientInfo": CLIENT_INFO},
            timeout,
        )

    def new_session(self, cwd: Path | str | None = None, timeout: float | None = None) -> str:
        """``session/new`` (cwd must be absolute; defaults to the process cwd); returns the session id."""
        result = self.request(
            "session/new", {"cwd": str(Path(cwd or self.cwd).resolve()), "mcpServers": []}, timeout
        )
        session_id = result.get("sessionId")
        if not isinstance(session_id, str):
            raise AcpError(f"omp acp session/new returned no sessionId: {result!r}")
        return session_id

    def prompt(
        self, session_id: str, prompt: str | Sequence[Mapping[str, Any]], timeout: float | None = None
    ) -> str:
        """``session/prompt``; returns the stop reason (``end_turn`` when a slash command ran)."""
        result = self.request("session/prompt", {"sessionId": session_id, "prompt": _text_blocks(prompt)}, timeout)
        return str(result.get("stopReason"))

    def extensions(self, cwd: Path | str | None = None, timeout: float | None = None) -> list[dict[str, Any]]:
        """OMP's ``_omp/extensions`` listing: ``[{id, kind, name, path, state, source, …}]``."""
        result = self.request("_omp/extensions", {"cwd": str(Path(cwd or self.cwd).resolve())}, timeout)
        items = result.get("extensions")
        return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []

    def wait_for_update(self, session_id: str, kind: str, timeout: float | None = None) -> dict[str, Any]:
        """The first ``session/update`` of ``kind`` (e.g. ``available_commands_update``), waiting for it."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        with self._cond:
            while True:
                for update in self._updates_locked(session_id):
                    if update.get("sessionUpdate") == kind:
                        return update
                left = deadline - time.monotonic()
                if self._eof or left <= 0:
                    raise AcpError(f"omp acp sent no {kind} for session {session_id} within {limit:g} s",
                                   hint=f"agent stderr:\n{self.stderr_tail()}")
                self._cond.wait(timeout=min(left, 1.0))

    def _updates_locked(self, session_id: str | None) -> list[dict[str, Any]]:
        out = []
        for note in self.notifications:
            params = note.get("params")
            if note.get("method") != "session/update" or not isinstance(params, dict):
                continue
            if session_id is None or params.get("sessionId") == session_id:
                update = params.get("update")
                if isinstance(update, dict):
                    out.append(update)
        return out

    def session_updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The ``session/update`` payloads received so far (optionally for one session)."""
        with self._cond:
            return self._updates_locked(session_id)


@dataclass
class DispatchResult:
    """What :func:`dispatch` returns."""

    session_id: str
    stop_reason: str
    exit_code: int | None
    agent: dict[str, Any] = field(default_factory=dict)
    updates: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    #: The shared root and snapshot the child was given (``None`` without a handoff).
    root: Path | None = None
    handoff_path: Path | None = None
    handoff_notice: str | None = None


HANDOFF_MODES = ("env", "prompt", "both", "none")


def with_bun_on_path(omp: str, env: Mapping[str, str]) -> dict[str, str]:
    """``omp`` starts with ``#!/usr/bin/env bun``: when the bun of an npm install sits beside it
    (``node_modules/.bin``), put that folder first on the child's PATH."""
    out = dict(env)
    folder = Path(omp).parent
    if (folder / "bun").exists():
        parts = out.get("PATH", "").split(os.pathsep) if out.get("PATH") else []
        if str(folder) not in parts:
            out["PATH"] = os.pathsep.join([str(folder), *parts])
    return out


def run_session(
    task: str | Sequence[Mapping[str, Any]],
    *,
    cwd: Path | str,
    cmd: Sequence[str] = ("omp", "acp"),
    env: Mapping[str, str] | None = None,
    prompt_prefix: Sequence[Mapping[str, Any]] = (),
    timeout: float = DEFAULT_TIMEOUT,
    prompt_timeout: float | None = None,
) -> DispatchResult:
    """Start ``cmd``, ``initialize``, ``session/new``, send ``prompt_prefix`` + ``task``; close; report.

    ``env`` is the child's whole environment. ``timeout`` bounds each setup request,
    ``prompt_timeout`` (default: ``timeout``) the task.
    """
    client = AcpClient(cmd, env=env, cwd=cwd, timeout=timeout)
    exit_code: int | None = None
    try:
        client.start()
        agent = client.initialize()
        session_id = client.new_session(cwd)
        blocks = [dict(b) for b in prompt_prefix] + _text_blocks(task)
        stop_reason = client.prompt(session_id, blocks, timeout=prompt_timeout or timeout)
    finally:
        exit_code = client.close()
    return DispatchResult(
        session_id=session_id,
        stop_reason=stop_reason,
        exit_code=exit_code,
        agent=agent,
        updates=client.session_updates(session_id),
        stderr=client.stderr_tail(200),
    )


def dispatch(
    task: str | Sequence[Mapping[str, Any]],
    *,
    cwd: Path | str,
    goal: str | None = None,
    handoff: str = "env",
    root: Path | str | None = None,
    omp: Sequence[str] = ("omp",),
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    prompt_timeout: float | None = None,
) -> DispatchResult:
    """Dispatch ``task`` to a fresh ``omp acp`` with the parent's memory attached.

    ``handoff``: ``"env"`` (``OMPKEEP_HANDOFF`` names the snapshot; the commonkeep extension adds
    it to the session at start), ``"prompt"`` (the snapshot goes first in the task's prompt),
    ``"both"``, or ``"none"`` (shared root only, no snapshot). In every mode the child's
    ``OMP_MEMORY_ROOT``/``OMPKEEP_ROOT``/``PI_MEMORY_ROOT`` name the shared root (``root``, else
    Hermes' configured root, else the resolution rules), so what it writes lands in the same inbox.
    ``omp`` is the command before ``acp``; ``env`` defaults to this process's environment.
    """
    if handoff not in HANDOFF_MODES:
        raise AcpError(f"unknown handoff mode {handoff!r}; use one of {', '.join(HANDOFF_MODES)}")
    from commonkeep_hermes.handoff import ROOT_VARS, attach_handoff

    cmd = [*omp, "acp"]
    attached = attach_handoff(cmd, env, goal if handoff != "none" else None, root=root)
    child_env = with_bun_on_path(omp[0], attached.env)
    prefix: list[dict[str, Any]] = []
    if handoff in ("prompt", "both"):
        prefix = list(attached.prompt_prefix())
    if handoff in ("prompt", "none"):
        for var in ("OMPKEEP_HANDOFF", "OMPKEEP_HANDOFF_FORMAT"):
            child_env.pop(var, None)
    unset = [var for var in ROOT_VARS if child_env.get(var) != str(attached.root)]
    if unset:
        raise AcpError(f"attach_handoff did not point {', '.join(unset)} at the shared root {attached.root}")
    result = run_session(
        task, cwd=cwd, cmd=attached.cmd, env=child_env, prompt_prefix=prefix,
        timeout=timeout, prompt_timeout=prompt_timeout,
    )
    result.root = attached.root
    result.handoff_path = attached.path if handoff != "none" else None
    result.handoff_notice = attached.notice
    return result
