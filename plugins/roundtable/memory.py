"""The ``memory`` tool: explicit-fetch access to the wiki (contracts/roundtable.md §8).

Order: unknown action, role gate, argv, run, format. The backend is spawned as an argv vector
(agent text is data, never a command) with cwd = the memory dir and no ``--project``, so any
Dossier-compatible CLI works: by default our own ``python -m commonkeep.dossier``, or whatever
``ORPHUS_MEMORY_COMMAND`` names. Output is collected as bytes and decoded once (a multi-byte
character split across reads survives) and capped; a run that exceeds the cap is killed.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

from commonkeep.errors import EXIT_FINDINGS, EXIT_USAGE, BadInput, CommonkeepError
from commonkeep_roundtable.gate import require_role
from commonkeep_roundtable.paths import MemoryConfig, resolve_memory_config

ACTIONS = ("query", "doctor", "ingest", "gardener")
# set in the backend's environment: a `commonkeep memory` that finds it was started by itself
BACKEND_MARK = "COMMONKEEP_MEMORY_BACKEND_OF"
MAX_CAPTURE_BYTES = 4 * 1024 * 1024
DEFAULT_TIMEOUT_SECONDS = 600.0


class BackendUnreachable(CommonkeepError):
    """The backend could not be started or was aborted (the contract's "not reachable" notice)."""

    exit_code = EXIT_FINDINGS


class BackendFailed(CommonkeepError):
    """The backend ran and failed (non-zero exit, or output over the capture cap)."""

    exit_code = EXIT_FINDINGS


@dataclass(frozen=True)
class BackendRun:
    code: int
    stdout: str
    stderr: str


def unreachable(reason: str) -> BackendUnreachable:
    return BackendUnreachable(
        f"Memory backend not reachable ({reason}). Configure it with ORPHUS_MEMORY_COMMAND / "
        "ORPHUS_MEMORY_DIR — see docs/memory.md."
    )


def _is_commonkeep_memory(command: tuple[str, ...]) -> bool:
    """True when ``command`` is ``commonkeep memory`` (as a script or ``python -m commonkeep``)."""
    for i, word in enumerate(command[:-1]):
        name = os.path.basename(word)
        if command[i + 1] == "memory" and name in ("commonkeep", "commonkeep.cli"):
            return True
    return False


def refuse_self_backend(config: MemoryConfig) -> None:
    """Refuse a backend that is ``commonkeep memory`` itself: it would call itself without end.

    Caught two ways: the configured command names ``commonkeep memory``, or this process was
    started as a memory backend (``COMMONKEEP_MEMORY_BACKEND_OF`` is set), whatever its name.
    """
    parent = os.environ.get(BACKEND_MARK, "").strip()
    if _is_commonkeep_memory(config.command) or parent:
        started = f" (this process was started as the backend of pid {parent})" if parent else ""
        raise BadInput(
            f"ORPHUS_MEMORY_COMMAND runs `{' '.join(config.command)}`, which is `commonkeep memory` itself{started}; "
            "it would call itself without end, so nothing was run",
            hint="point ORPHUS_MEMORY_COMMAND at a Dossier-compatible backend, e.g. `python -m commonkeep.dossier` "
            "(the default when it is unset)",
        )


def build_argv(action: str, question: str | None = None, source: str | None = None) -> list[str]:
    """The arguments appended to the base command (§8.1); the question is one element."""
    for name, value in (("question", question), ("source", source)):
        if value and "\x00" in value:
            raise BadInput(f"memory {action}: the {name} contains a NUL character, which no program argument can carry")
    if action == "query":
        if not question or not question.strip():
            raise BadInput("memory query requires a 'question'")
        return ["query", question.strip()]
    if action == "ingest":
        if not source or not source.strip():
            raise BadInput("memory ingest requires a 'source' path")
        return ["ingest", source.strip()]
    if action in ("gardener", "doctor"):
        return [action]
    raise BadInput(f"Unknown memory action: {action}", hint=f"use one of {', '.join(ACTIONS)}")


def run_backend(
    config: MemoryConfig,
    args: list[str],
    *,
    max_bytes: int = MAX_CAPTURE_BYTES,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    role: str | None = None,
) -> BackendRun:
    """Run ``config.command + args`` in the memory dir without a shell and capture its output.

    Raises :class:`BackendUnreachable` when it cannot start or times out, and
    :class:`BackendFailed` when its output passes ``max_bytes``. Death by a signal is code 1
    with ``process terminated by signal X`` appended to stderr. The child sees the acting role
    and the writer role (``COMMONKEEP_ROLE``, ``COMMONKEEP_WRITER_ROLE``), so our own wiki CLI's
    gate agrees with this one instead of trusting whatever role the host's environment carries.
    """
    argv = [*config.command, *args]
    env = dict(os.environ)
    env.pop("COMMONKEEP_ROLE", None)
    if role:
        env["COMMONKEEP_ROLE"] = role
    env["COMMONKEEP_WRITER_ROLE"] = config.writer_role
    env[BACKEND_MARK] = str(os.getpid())
    config.memory_dir.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.Popen(
            argv, cwd=config.memory_dir, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except OSError as exc:
        raise unreachable(f"{argv[0]}: {exc.strerror or exc}") from None
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: dict[int, bytearray] = {out_fd: bytearray(), err_fd: bytearray()}
    total = 0
    deadline = time.monotonic() + timeout
    failure: CommonkeepError | None = None
    with selectors.DefaultSelector() as selector:
        for stream in (proc.stdout, proc.stderr):
            selector.register(stream, selectors.EVENT_READ)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                failure = unreachable(f"timed out after {timeout:.0f}s")
                break
            for key, _ in selector.select(timeout=min(remaining, 1.0)):
                data = os.read(key.fd, 65536)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                chunks[key.fd].extend(data)
                total += len(data)
            if total > max_bytes:
                failure = BackendFailed(f"memory {args[0]} failed: captured output exceeded {max_bytes} bytes")
                break
    if failure is not None:
        proc.kill()
    try:
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        code = proc.wait()
        failure = failure or unreachable(f"timed out after {timeout:.0f}s")
    finally:
        proc.stdout.close()
        proc.stderr.close()
    if failure is not None:
        raise failure
    stdout = bytes(chunks[out_fd]).decode("utf-8", errors="replace")
    stderr = bytes(chunks[err_fd]).decode("utf-8", errors="replace")
    if code < 0:
        stderr += ("\n" if stderr and not stderr.endswith("\n") else "") + f"process terminated by signal {signal.Signals(-code).name}"
        code = 1
    return BackendRun(code=code, stdout=stdout, stderr=stderr)


def memory_call(
    action: str,
    *,
    role: str | None,
    question: str | None = None,
    source: str | None = None,
    config: MemoryConfig | None = None,
    max_bytes: int = MAX_CAPTURE_BYTES,
) -> str:
    """Run one memory action as ``role`` and return its text; failures raise with the contract's texts."""
    if action not in ACTIONS:
        raise BadInput(f"Unknown memory action: {action}", hint=f"use one of {', '.join(ACTIONS)}")
    config = resolve_memory_config() if config is None else config
    refuse_self_backend(config)
    require_role(action, role, config.writer_role)
    args = build_argv(action, question, source)
    run = run_backend(config, args, max_bytes=max_bytes, role=role)
    if run.code != 0:
        detail = run.stderr.strip() or run.stdout.strip() or f"exited {run.code}"
        failed = BackendFailed(f"memory {action} failed: {detail}")
        if run.code == EXIT_USAGE:  # the backend refused the input (a bad path, say): so do we
            failed.exit_code = EXIT_USAGE
        raise failed
    return run.stdout.strip() or f"memory {action} completed."
