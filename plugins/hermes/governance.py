"""The Hermes general plugin ``commonkeep-governance``: governed memory writes and recall tools.

Loaded by Hermes through the ``hermes_agent.plugins`` entry point and enabled with
``plugins.enabled: [commonkeep-governance]`` (contracts/hermes-host.md §2.1). ``register(ctx)``:

- wraps tool execution (``tool_execution`` middleware, Hermes ≥ 0.17) so the built-in ``memory``
  tool never writes ``MEMORY.md`` / ``USER.md`` itself: each write becomes a candidate in the
  shared inbox, stamped with provenance from the harness, and the model gets a short
  "staged for review" result (§10.3). Errors fail *closed* — the write is refused with an error
  result, never passed through (an exception before ``next_call`` would fail open, §4);
- falls back to a ``pre_tool_call`` hook that blocks the write after staging it where the
  middleware is missing (or when ``COMMONKEEP_HERMES_GATE=hook`` forces it, for tests);
- re-renders the projection at discovery (before the agent snapshot is taken) and on
  ``on_session_finalize`` / ``on_session_reset`` — never on ``on_session_end``, which fires
  every turn (§3);
- when ``memory.commonkeep.auto_curate`` is ``propose`` or ``high-only`` (default ``off``),
  auto-curates the shared inbox on ``on_session_finalize``, before that re-render, as the role
  ``memory.commonkeep.role`` (else ``$COMMONKEEP_ROLE``) — only if it is the writer role, waiting
  at most ``AUTO_CURATE_LOCK_WAIT`` seconds for the writer lock; everything else is a logged
  warning, never an exception into Hermes;
- registers the recall tools (and the roundtable tools, when installed) into the ``memory``
  toolset, so they are offered whenever Hermes' memory tools are;
- points ``OMP_MEMORY_ROOT`` / ``OMPKEEP_ROOT`` / ``PI_MEMORY_ROOT`` of the Hermes process at the
  profile's shared root, so the core tools and any spawned ``omp`` use the same store;
- marks the Hermes process (``COMMONKEEP_AGENT_HOST``, ``commonkeep.gate.agent_shell``) at load, so
  every command its terminal and code tools run, detached or not, is known to run inside an agent:
  a person's decisions and the writer's stamp are refused there;
- keeps the model's file, terminal and code tools away from the memory root, the stamp journal and
  its key, and Hermes' own memory files and ``config.yaml`` (a ``pre_tool_call`` hook that blocks
  the call and says why, ``commonkeep.gate.tool_guard``).

Keep the provider class name and its registration call out of this file, comments included:
Hermes classifies a plugin whose source mentions them as a provider and never loads it (§2.1).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from commonkeep.errors import CommonkeepError
from commonkeep.gate.user_turn import message_text
from commonkeep_hermes.settings import PROVIDER_NAME, HermesProfile, current_profile
from commonkeep_hermes.typed import typed_text

log = logging.getLogger("commonkeep_hermes")

_sessions: dict[str, dict[str, Any]] = {}
_lock = threading.Lock()
#: What the person typed per session (``pre_llm_call`` ``user_message``, without what Hermes added to
#: it), in memory only: what the ``user_turn`` stamp is verified against. Never written anywhere;
#: capped per session.
_said: dict[str, list[str]] = {}
_agent_sessions: set[str] = set()  # child sessions of ``delegate_task``: their "user" is the model
USER_TURNS_KEPT = 200
#: Platforms whose user message is not typed by a person: cron jobs (a prompt the model may have
#: written with the cronjob tool), delegated subagents (the parent model's goal), Hermes' curator.
NOT_A_PERSON = frozenset({"cron", "subagent", "curator"})


def hermes_version() -> str:
    try:
        from importlib.metadata import version

        return version("hermes-agent")
    except Exception:
        return ""


def write_origin() -> str:
    """``background_review`` inside Hermes' review fork, else ``foreground``."""
    try:
        from tools.write_approval import current_origin

        origin = str(current_origin())
    except Exception:
        try:
            from tools.skill_provenance import get_current_write_origin

            origin = str(get_current_write_origin())
        except Exception:
            origin = "foreground"
    return "background_review" if origin == "background_review" else "foreground"


class Gate:
    """Turns ``memory`` tool calls into candidates; one per loaded plugin."""

    def __init__(self, profile: HermesProfile, profile_name: str = "") -> None:
        self.profile = profile
        self.profile_name = profile_name
        self.version = hermes_version()

    def stage(self, args: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        """Stage one ``memory`` call; returns the tool result (never raises)."""
        from commonkeep_hermes.capture import Provenance, stage_memory_call
        from commonkeep_hermes.hermesfiles import rendered_map

        session_id = str(ctx.get("session_id") or "")
        with _lock:
            platform = str(_sessions.get(session_id, {}).get("platform", ""))
        prov = Provenance(
            origin=write_origin(),
            session_id=session_id,
            turn_id=str(ctx.get("turn_id") or ""),
            task_id=str(ctx.get("task_id") or ""),
            tool_call_id=str(ctx.get("tool_call_id") or ""),
            platform=platform,
            profile=self.profile_name,
            hermes_version=self.version,
            said=user_messages(session_id),
        )
        try:
            root, _rule = self.profile.shared_root()
            return stage_memory_call(root, args, prov, rendered_map(self.profile))
        except (ValueError, CommonkeepError) as exc:
            return {"success": False, "error": f"memory write not staged: {exc}"}
        except Exception as exc:  # fail closed: nothing reaches MEMORY.md ungoverned
            log.warning("commonkeep: staging a memory write failed: %s", exc)
            return {
                "success": False,
                "error": (f"memory is governed by commonkeep and the write could not be staged ({exc}); "
                          "it was NOT saved. Run `commonkeep hermes status` to diagnose."),
            }

    # -- Hermes callbacks (keyword arguments only) -----------------------------------------
    def tool_execution(self, tool_name: str = "", args: Any = None, next_call: Callable[[Any], Any] | None = None,
                       **kw: Any) -> Any:
        if tool_name != "memory":
            if next_call is None:
                raise RuntimeError("tool_execution middleware called without next_call")
            return next_call(args)
        return json.dumps(self.stage(dict(args or {}), kw))

    def pre_tool_call(self, tool_name: str = "", args: Any = None, **kw: Any) -> dict[str, Any] | None:
        if tool_name != "memory":
            return None
        result = self.stage(dict(args or {}), kw)
        return {"action": "block", "message": result.get("message") or result.get("error") or "not staged"}


def refresh_projection(profile: HermesProfile, reason: str) -> None:
    """Re-render MEMORY.md / USER.md; a failure is logged, never raised into Hermes."""
    try:
        from commonkeep_hermes.hermesfiles import refresh

        if profile.memory_section().get("provider") != PROVIDER_NAME:
            return  # not installed for this profile: Hermes' own files stay Hermes' own
        root, _rule = profile.shared_root()
        refresh(profile, root, reason=reason)
    except Exception as exc:
        log.warning("commonkeep: could not refresh Hermes memory files (%s): %s", reason, exc)


#: How long Hermes' exit waits for another writer's lock before giving up on auto-curation.
AUTO_CURATE_LOCK_WAIT = 2.0


def auto_curate_at_finalize(profile: HermesProfile, lock_wait: float = AUTO_CURATE_LOCK_WAIT) -> str | None:
    """Run ``commonkeep.patches.curate.auto_curate`` per ``memory.commonkeep.auto_curate``.

    Returns what was done (``None`` when nothing ran); failures, a role that is not the writer
    and a busy writer lock are logged as warnings, never raised into Hermes.
    """
    from commonkeep_hermes.settings import AUTO_CURATE_KEY, CONFIG_BLOCK, ROLE_KEY

    setting = f"memory.{CONFIG_BLOCK}.{AUTO_CURATE_KEY}"
    try:
        if profile.memory_section().get("provider") != PROVIDER_NAME:
            return None
        policy = profile.auto_curate_policy()
        if policy == "off":
            return None
        from commonkeep.errors import LockHeld
        from commonkeep.gate.writer import acting_role, configured_writer_role
        from commonkeep.patches.curate import auto_curate
        from commonkeep.patches.lock import writer_lock

        root, _rule = profile.shared_root()
        role = acting_role(profile.configured_role())
        writer = configured_writer_role(root)
        if role != writer:
            log.warning("commonkeep: %s is %s but Hermes acts as %s, not the writer role %r; nothing was "
                        "curated (set memory.%s.%s: %s or COMMONKEEP_ROLE=%s for the Hermes process, "
                        "or run `commonkeep curate --auto` as the writer)",
                        setting, policy, f"role {role!r}" if role else "no role", writer, CONFIG_BLOCK,
                        ROLE_KEY, writer, writer)
            return None
        try:
            # Held here so the waits inside auto_curate are re-entrant: Hermes' exit waits at most lock_wait.
            with writer_lock(root, role, "auto-curate", wait=lock_wait):
                done = auto_curate(root, role=role, policy=policy)
        except LockHeld as exc:
            log.warning("commonkeep: %s: skipped this time: %s", setting, exc)
            return None
        summary = done.describe()
        log.info("commonkeep: %s", summary)
        return summary
    except Exception as exc:
        log.warning("commonkeep: %s failed: %s", setting, exc)
        return None


def _on_session_finalize(profile: HermesProfile) -> None:
    auto_curate_at_finalize(profile)  # first, so the new records reach MEMORY.md at once
    refresh_projection(profile, "session_finalize")
    try:  # what this session staged now counts in reports/review-digest.txt
        from commonkeep.store.backlog import write_digest

        write_digest(profile.shared_root()[0])
    except Exception as exc:
        log.debug("commonkeep: review digest not written: %s", exc)


def _on_session_start(session_id: str = "", platform: str = "", profile: HermesProfile | None = None, **kw: Any) -> None:
    with _lock:
        _sessions[str(session_id)] = {"platform": platform}
    if profile is not None:
        announce_queue(profile, str(platform or ""))


def _show(text: str) -> None:
    """A line the person sees in Hermes' terminal: through Hermes' own printer when its CLI runs
    (a bare print is swallowed while prompt_toolkit owns the terminal), else on stdout."""
    import sys

    host = sys.modules.get("cli")
    show = getattr(host, "_cli_visible_print", None)
    if callable(show):
        show(text)
    else:
        print(text, flush=True)


def announce_queue(profile: HermesProfile, platform: str = "cli") -> str:
    """At a session start: how many candidates wait for review and the oldest one's age, shown in
    Hermes' terminal (``cli``; on a messaging platform it is logged, and the agent's system
    prompt says it), and ``reports/review-digest.txt`` brought up to date. Returns the line ("" when
    nothing waits); a failure is logged, never raised into Hermes."""
    try:
        from commonkeep.store.backlog import backlog, write_digest

        root, _rule = profile.shared_root()
        queue = backlog(root)
        write_digest(root, queue)
        line = queue.line()
        if line:
            if platform in ("", "cli"):
                _show(f"commonkeep: {line} (or the Memory tab of `hermes dashboard`)")
            else:
                log.info("commonkeep: %s", line)
        return line
    except Exception as exc:
        log.debug("commonkeep: review queue not announced: %s", exc)
        return ""


def record_user_message(session_id: str = "", user_message: Any = None, platform: str = "", **kw: Any) -> None:
    """``pre_llm_call``: keep what the person typed in the turn (``commonkeep_hermes.typed``: the
    turn's user message without the attached context, reply quote and notes Hermes added), unless
    the turn is not a person's: Hermes' background review (its prompt is Hermes' own text; the
    write origin is set before this hook runs), a cron job, a delegated subagent or Hermes' curator."""
    sid = str(session_id or "")
    text = typed_text(message_text(user_message))
    if not sid or not text.strip() or write_origin() != "foreground" or str(platform or "") in NOT_A_PERSON:
        return
    with _lock:
        if sid in _agent_sessions:
            return
        said = _said.setdefault(sid, [])
        said.append(text)
        del said[:-USER_TURNS_KEPT]


def _on_subagent_start(child_session_id: Any = None, **kw: Any) -> None:
    if child_session_id:
        with _lock:
            _agent_sessions.add(str(child_session_id))
            _said.pop(str(child_session_id), None)


def user_messages(session_id: str) -> tuple[str, ...]:
    """The person's messages recorded for ``session_id`` (oldest first)."""
    with _lock:
        return tuple(_said.get(session_id, ()))


def register_tools(ctx: Any, profile: HermesProfile) -> list[str]:
    """Register the recall tools (and roundtable tools when present) in the ``memory`` toolset."""
    from commonkeep_hermes.tools import hermes_tools

    names: list[str] = []
    for tool in hermes_tools(profile):
        try:
            ctx.register_tool(name=tool.name, toolset="memory", schema=tool.schema, handler=tool.handler,
                              description=tool.description, emoji="🧠")
            names.append(tool.name)
        except Exception as exc:
            log.warning("commonkeep: tool %s not registered: %s", tool.name, exc)
    return names


def pin_root_env(profile: HermesProfile) -> None:
    """Point this Hermes process (and every child it spawns, e.g. omp-suite's ``omp acp``) at the
    profile's shared root, so tools, handoffs and OMP all use the store Hermes' files come from."""
    block = profile.commonkeep_block()
    if not block.get("root"):
        return
    root = str(profile.shared_root()[0])
    for var in ("OMP_MEMORY_ROOT", "OMPKEEP_ROOT", "PI_MEMORY_ROOT"):
        old = os.environ.get(var)
        if old and old != root:
            log.warning("commonkeep: %s=%s differs from Hermes' shared root %s; using the shared root", var, old, root)
        os.environ[var] = root
    os.environ.setdefault("COMMONKEEP_AGENT", "hermes")


def guarded_paths(profile: HermesProfile) -> Any:
    """What the model's tools must not touch in this profile (``commonkeep.gate.tool_guard.protected``)."""
    from commonkeep.gate.tool_guard import protected

    roots: list[Any] = []
    try:
        roots.append(profile.shared_root()[0])
    except (ValueError, CommonkeepError) as exc:  # no root yet: the journal and Hermes' files are still guarded
        log.warning("commonkeep: %s", exc)
    return protected(roots, [profile.memories_dir, profile.state_dir, profile.config_path])


def guard_tool_call(profile: HermesProfile, tool_name: str = "", args: Any = None, **kw: Any) -> dict[str, Any] | None:
    """``pre_tool_call``: block a file, terminal or code tool that would touch what stamps rest on.
    Fails closed for the tools it checks: an error while checking blocks the call."""
    from commonkeep.gate import tool_guard

    if tool_name not in (*tool_guard.HERMES_WRITE, *tool_guard.HERMES_READ, *tool_guard.HERMES_SHELL):
        return None
    try:
        why = tool_guard.refusal(tool_name, args if isinstance(args, dict) else {}, guarded_paths(profile),
                                 os.environ.get("TERMINAL_CWD") or os.getcwd())
    except Exception as exc:
        why = f"refused by commonkeep: the call could not be checked ({exc})"
    return {"action": "block", "message": why} if why else None


def register(ctx: Any) -> None:
    """Hermes entry point (``hermes_agent.plugins`` group)."""
    from commonkeep.gate.agent_shell import set_kernel_mark, set_mark

    set_mark("hermes")  # first: every child of this process (terminal, code tools) inherits it
    set_kernel_mark()  # and the mark no child can shed (its hard limit of file locks; agent_shell)
    profile = current_profile()
    try:
        pin_root_env(profile)
    except ValueError as exc:  # unreadable config.yaml: the gate reports it on first use
        log.warning("commonkeep: %s", exc)
    gate = Gate(profile, str(getattr(ctx, "profile_name", "") or ""))
    middleware = hasattr(ctx, "register_middleware") and os.environ.get("COMMONKEEP_HERMES_GATE") != "hook"
    if middleware:
        ctx.register_middleware("tool_execution", gate.tool_execution)

    def pre_tool_call(**kw: Any) -> dict[str, Any] | None:  # one hook: the tool guard, then (without middleware) the gate
        return guard_tool_call(profile, **kw) or (None if middleware else gate.pre_tool_call(**kw))

    ctx.register_hook("pre_tool_call", pre_tool_call)
    ctx.register_hook("on_session_start", lambda **kw: _on_session_start(profile=profile, **kw))
    ctx.register_hook("pre_llm_call", record_user_message)
    ctx.register_hook("subagent_start", _on_subagent_start)
    ctx.register_hook("on_session_finalize", lambda **kw: _on_session_finalize(profile))
    ctx.register_hook("on_session_reset", lambda **kw: refresh_projection(profile, "session_reset"))
    register_tools(ctx, profile)
    # Discovery runs before the agent takes its frozen snapshot of the files (§5.3, §10.4).
    refresh_projection(profile, "plugin_load")
